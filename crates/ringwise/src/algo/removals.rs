//! The removed buckets of the algorithms that let any node leave
//! (`memento`, `anchor`, `dx`), as a cluster file's `removed` list gives
//! them. Not an algorithm: the one check all three run before replaying
//! the list on their own state.
//!
//! Their state after any history of joins and leaves is that of a build
//! over every bucket in use (working or removed), followed by the
//! removals still pending, in the order they happened: a join undoes the
//! last removal exactly (LIFO), so undone pairs leave no trace. A file
//! therefore needs the working nodes in bucket order plus `removed`, the
//! pending removals' bucket numbers in removal order; the nodes fill the
//! buckets `removed` leaves out. Example: nodes a, b, c with
//! `removed = [1, 3]` are buckets 0 = a, 2 = b, 4 = c; bucket 1 left
//! first, 3 last, so the next join takes 3 back, the one after it 1.
//!
//! Cost: O(m log m) for m removed buckets.

use crate::Error;
// From its defining module: `algo/params.rs` re-exports `Params` and reads
// `READ_BY` from here, so naming it through that re-export would make the
// two files depend on each other.
use crate::param::Params;

/// What `removed` means and who reads it, for the refusal of the others.
pub(crate) const READ_BY: &str = "`removed` lists buckets whose node left, which only memento, \
                                  anchor and dx keep: delete the line, or use one of those";

/// A problem with one entry of `removed`: its index in the list and what
/// to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Index in `removed` of the entry at fault (`None`: the list as a whole).
    pub index: Option<usize>,
    pub message: String,
}

/// Checks `removed` against `working` nodes: at most [`crate::MAX_NODES`]
/// entries, every one a bucket of `0..working + removed.len()`, none
/// twice, at least one node left.
pub(crate) fn check(removed: &[u32], working: usize) -> Result<(), Problem> {
    if removed.is_empty() {
        return Ok(());
    }
    let total = working as u64 + removed.len() as u64;
    if removed.len() > crate::MAX_NODES {
        return Err(Problem {
            index: Some(crate::MAX_NODES),
            message: format!(
                "{} removed buckets are more than the {} nodes a cluster may ever hold; \
                 a list this long is a mistake in the input",
                removed.len(),
                crate::MAX_NODES
            ),
        });
    }
    if working == 0 {
        return Err(Problem {
            index: None,
            message: format!(
                "every bucket is removed ({} removed, no node works): keep at least one node",
                removed.len()
            ),
        });
    }
    if let Some((i, &b)) = removed
        .iter()
        .enumerate()
        .find(|&(_, &b)| u64::from(b) >= total)
    {
        return Err(Problem {
            index: Some(i),
            message: format!(
                "bucket {b} is out of range: {working} nodes and {} removed buckets are \
                 buckets 0 to {} (counted from 0); list only buckets whose node left",
                removed.len(),
                total - 1
            ),
        });
    }
    let mut sorted: Vec<(u32, usize)> = removed.iter().copied().zip(0..).collect();
    sorted.sort_unstable();
    // The later of two equal entries is the one at fault.
    let twice = sorted.windows(2).find(|w| w[0].0 == w[1].0);
    if let Some(&[(b, first), (_, i)]) = twice {
        return Err(Problem {
            index: Some(i),
            message: format!(
                "bucket {b} is listed twice in `removed` (entries {} and {}): a bucket \
                 leaves once until a join takes it back; keep one",
                first + 1,
                i + 1
            ),
        });
    }
    Ok(())
}

/// [`check`] as the library's error.
pub(crate) fn validate(removed: &[u32], working: usize) -> Result<(), Error> {
    check(removed, working).map_err(|p| Error::InvalidLayout {
        node: None,
        message: format!("removed: {}", p.message),
    })
}

/// The capacity of an `algorithm` (anchor, dx) with `working` nodes and
/// `removed` removed buckets, which keep their numbers: `capacity` when it
/// holds them all, or for 0 the default of a build over all of them
/// ([`Params::capacity_for`]).
pub(crate) fn capacity_with_removed(
    algorithm: &'static str,
    capacity: u32,
    working: usize,
    removed: usize,
) -> Result<u32, Error> {
    let total = working.saturating_add(removed);
    // Over `capacity` only with removals (`total` = `working` without):
    // a capacity below the nodes alone is `capacity_for`'s own error.
    if capacity != 0 && total > capacity as usize && working <= capacity as usize {
        return Err(Error::InvalidParameter {
            algorithm,
            parameter: "capacity",
            value: format!("{capacity} (for {working} nodes and {removed} removed buckets)"),
            expected: "at least the nodes plus the removed buckets (a removed bucket keeps its \
                       number until a join takes it back), and at most 4194304 (2^22)",
        });
    }
    Params {
        capacity,
        ..Params::DEFAULT
    }
    .capacity_for(algorithm, total)
}

/// For each bucket of `0..total`, whether it works (is not in `removed`).
/// O(total + m).
pub(crate) fn working_mask(removed: &[u32], total: usize) -> Vec<bool> {
    let mut mask = vec![true; total];
    for &b in removed {
        if let Some(slot) = mask.get_mut(b as usize) {
            *slot = false;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_entry_at_fault() {
        assert_eq!(check(&[], 0), Ok(()));
        assert_eq!(check(&[1, 3], 3), Ok(()));
        assert_eq!(check(&[3], 3), Ok(()));
        assert_eq!(check(&[4], 3).map_err(|p| p.index), Err(Some(0)));
        assert_eq!(check(&[0, 9], 3).map_err(|p| p.index), Err(Some(1)));
        assert_eq!(check(&[2, 0, 2], 3).map_err(|p| p.index), Err(Some(2)));
        assert_eq!(check(&[0], 0).map_err(|p| p.index), Err(None));
        let message = check(&[2, 2], 3).expect_err("twice").message;
        assert!(message.contains("listed twice"), "{message}");
    }

    #[test]
    fn masks_the_removed_buckets() {
        assert_eq!(working_mask(&[1, 3], 5), [true, false, true, false, true]);
    }
}
