//! AnchorHash's membership updates, as the reference's `UpdateRemoval` and
//! `UpdateNewBucket`: a join undoes the last removal exactly (LIFO).

use super::{Anchor, Cell};

impl Anchor {
    /// `UpdateRemoval(b)`: `W[N-1]` takes `b`'s position.
    pub(super) fn remove_bucket(&mut self, b: u32) {
        self.size -= 1;
        let (n, bu) = (self.size as usize, b as usize);
        let last = self.w[n];
        self.w[self.l[bu] as usize] = last;
        self.l[last as usize] = self.l[bu];
        self.cells[bu] = Cell {
            a: self.size,
            k: last,
        };
        if self.removed.is_empty() && self.fresh == self.size + 1 && b == self.size {
            self.fresh = b; // the state of a fresh build with one node less
        } else {
            self.removed.push(b);
        }
    }

    /// `UpdateNewBucket()`: the last removed bucket comes back.
    pub(super) fn restore_bucket(&mut self) -> Option<u32> {
        let b = match self.removed.pop() {
            Some(b) => b,
            None if self.fresh < self.capacity() => {
                self.fresh += 1;
                self.fresh - 1
            }
            None => return None,
        };
        let n = self.size as usize;
        self.l[self.w[n] as usize] = self.size;
        self.w[self.l[b as usize] as usize] = b;
        self.size += 1;
        self.cells[b as usize] = Cell { a: 0, k: b };
        Some(b)
    }
}
