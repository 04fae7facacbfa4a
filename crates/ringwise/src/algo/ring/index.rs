//! Ring storage: packed `(point, owner)` entries and the bucket index that
//! answers about half of all lookups with one memory read.
//!
//! Points are uniform 64-bit hashes, so their top `b` bits spread them evenly
//! over `2^b` buckets, `2^b` the power of two in `(P, 2P]` for `P` points.
//! The answer for a hash `h` in bucket `k` is the first entry whose bucket is
//! `>= k` and whose point is `>= h`:
//!
//! - if bucket `k` holds no point, that is simply the first entry after the
//!   bucket, the same for every hash in it, so the index stores its **owner**
//!   and the lookup is one read. With `P / 2^b = λ` points per bucket on
//!   average (`λ` in `[0.5, 1)`), a share `e^-λ` of buckets is empty: 47 % at
//!   100,000 points (`λ = 0.76`);
//! - otherwise the index stores where the bucket's entries start, and the
//!   answer is the bucket's first entry or the one after it (chosen without
//!   a branch), unless the bucket holds two points below `h` (then a search
//!   of the bucket): every entry before lies in a lower bucket (`< h`),
//!   every entry after the bucket in a higher one (`> h`).
//!
//! Each bucket has a `u16` slot, and each group of 16 buckets one `u32`
//! `base`, the position of the group's first entry; a slot's start is an
//! offset from its group's base. Example: points with top bits `0001, 0001,
//! 0011` in a ring of 16 buckets owned by nodes `A, B, C`: `base = [0, 3]`,
//! slot 0 says "empty, owner A" (the first point after bucket 0 is A's),
//! slot 1 says "offset 0", slot 2 says "empty, owner C", slot 3 "offset 2",
//! slots 4..16 say "empty, owner A" (wrapping to the first point).
//!
//! Slot values: `0..0x7FFF` an offset, `0x8000 + id` an empty bucket owned by
//! `id < 0x7FFF`. Two values mark what does not fit, and send the lookup to a
//! binary search of the group (still exact, O(log) instead of O(1)): `0xFFFF`
//! an empty bucket whose owner id is `>= 0x7FFF` (rings of more than 32,766
//! nodes), `0x7FFF` a bucket whose entries start `>= 0x7FFF` entries after its
//! group's (a hasher so skewed that one group holds 32,767 points).
//!
//! Labels: an entry's owner is a label, which stays while its node is a
//! member; the index maps labels to ids (name ranks), which change when a
//! node joins or leaves. So a join or leave renumbers that small table and
//! the slots (one vectorised pass), and copies the entries with `memcpy`
//! instead of renumbering 100,000 owners. Slots hold ids, not labels: an
//! empty bucket still answers in one read.
//!
//! Sizes: entries are 12 bytes, the owner next to its point; the index is
//! `2.25` bytes per bucket, `2.25..4.5` per point (2.95 for the benchmark's
//! 100,000 points, and 256 KiB of slots: they stay in a core's L2), plus 4
//! bytes per node. A lookup that finds an empty bucket reads one slot; the
//! others read the slot and the bucket's first entry (two dependent reads,
//! the second usually the only one that misses the cache) and the label's
//! id (in L1).

use crate::node::NodeId;

/// One point and the label of the node that owns it, 12 bytes (no padding).
///
/// Ordered by `(point, owner)`, which is the ring order when labels rank
/// like the tie rule (ids, at a build): equal points by node name. Fields
/// are read by value only (it is packed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub(super) struct Entry {
    pub(super) point: u64,
    pub(super) owner: NodeId,
}

impl Entry {
    /// The same point with another owner.
    #[inline]
    pub(super) fn with_owner(self, owner: NodeId) -> Entry {
        Entry {
            point: self.point,
            owner,
        }
    }
}

/// Buckets per group (`2^GROUP_BITS`): one `u32` base per 16 `u16` slots.
const GROUP_BITS: u32 = 4;
const GROUP: usize = 1 << GROUP_BITS;
/// Slots at or above this mark an empty bucket: `slot - EMPTY` is its owner.
const EMPTY: u16 = 0x8000;
/// An empty bucket whose owner id does not fit: search the group.
const EMPTY_FAR: u16 = 0xFFFF;
/// A bucket with points whose offset does not fit: search the group.
const FULL_FAR: u16 = 0x7FFF;
/// Entries a lookup scans from its bucket's first before it switches to a
/// binary search (a bucket holds 1.4 points on average when it holds any).
const SCAN: usize = 4;
/// Hashes the batch lookup resolves together; `u8` positions index them.
pub(super) const BLOCK: usize = 128;
/// The id of a free label.
const GONE: NodeId = NodeId::MAX;

#[derive(Debug, Clone, Default)]
pub(super) struct BucketIndex {
    /// One per bucket: an owner, an offset from the group base, or a marker
    /// (see the module docs).
    slots: Vec<u16>,
    /// Position of the first entry of each group of `GROUP` buckets, then
    /// the number of entries.
    base: Vec<u32>,
    /// `bucket(h) = h >> shift`, `shift = 64 - b` (`b >= GROUP_BITS >= 1`).
    shift: u32,
    /// The id (name rank) of each label. Entries carry labels, which stay
    /// while their node is a member, so a join or leave renumbers this
    /// small table and the slots, not every entry. `GONE` for a free label.
    ids: Vec<NodeId>,
}

impl BucketIndex {
    /// Indexes `entries` (sorted), whose labels `ids` maps to ids, in
    /// O(P + buckets).
    pub(super) fn new(entries: &[Entry], ids: Vec<NodeId>) -> Self {
        let bits = bucket_bits(entries.len());
        let groups = 1usize << (bits - GROUP_BITS);
        let mut index = BucketIndex {
            slots: vec![0; 1 << bits],
            base: vec![0; groups + 1],
            shift: 64 - bits,
            ids,
        };
        for g in 0..groups {
            index.base[g + 1] = index.fill_group(entries, g) as u32;
        }
        index
    }

    /// The id of the node labelled `label`.
    #[inline]
    pub(super) fn id(&self, label: NodeId) -> NodeId {
        self.ids[label as usize]
    }

    #[inline]
    fn bucket(&self, point: u64) -> usize {
        (point >> self.shift) as usize
    }

    /// Writes the slots of group `g` from `entries` (sorted), given its
    /// `base`; returns the position after the group's entries. Counts the
    /// group's entries per bucket, then sets every slot without branching
    /// on the (random) counts.
    fn fill_group(&mut self, entries: &[Entry], g: usize) -> usize {
        let lo = self.base[g] as usize;
        let ids = &self.ids;
        let slots = &mut self.slots[g * GROUP..(g + 1) * GROUP];
        if entries.is_empty() {
            slots.fill(EMPTY_FAR);
            return lo;
        }
        let shift = self.shift;
        let mut counts = [0u32; GROUP];
        let mut end = lo;
        while end < entries.len() && (entries[end].point >> shift) as usize >> GROUP_BITS == g {
            counts[(entries[end].point >> shift) as usize & (GROUP - 1)] += 1;
            end += 1;
        }
        let mut start = 0;
        for (slot, &count) in slots.iter_mut().zip(&counts) {
            // An empty bucket's owner is that of the next entry (the next
            // bucket's first, or the next group's, or the ring's first).
            let empty = owner_slot(ids[first_owner(entries, lo + start) as usize]);
            *slot = if count > 0 { offset_slot(start) } else { empty };
            start += count as usize;
        }
        end
    }

    /// The owner of the first entry with point `>= hash`, wrapping;
    /// `entries` must not be empty. One read when the bucket is empty.
    #[inline]
    pub(super) fn owner(&self, entries: &[Entry], hash: u64) -> NodeId {
        let k = self.bucket(hash);
        let slot = self.slots[k];
        if slot < FULL_FAR {
            let g = k >> GROUP_BITS;
            let (lo, hi) = (self.base[g] as usize, self.base[g + 1] as usize);
            return self.id(bucket_owner(entries, hash, lo + usize::from(slot), hi));
        }
        if slot != EMPTY_FAR && slot >= EMPTY {
            return NodeId::from(slot - EMPTY);
        }
        self.id(first_owner(entries, self.search(entries, hash, k, slot)))
    }

    /// Position of the first entry with point `>= hash` (`entries.len()`
    /// when there is none).
    #[inline]
    pub(super) fn lower_bound(&self, entries: &[Entry], hash: u64) -> usize {
        let k = self.bucket(hash);
        self.search(entries, hash, k, self.slots[k])
    }

    /// The lower bound of `hash` in bucket `k`, whose slot is `slot`: a short
    /// scan from the bucket's first entry, else a binary search of the group
    /// (whose entries before the bucket are `< hash` and after it `> hash`).
    #[inline]
    fn search(&self, entries: &[Entry], hash: u64, k: usize, slot: u16) -> usize {
        let g = k >> GROUP_BITS;
        let (lo, hi) = (self.base[g] as usize, self.base[g + 1] as usize);
        let mut from = lo;
        if slot < FULL_FAR {
            from += usize::from(slot);
            let stop = hi.min(from + SCAN);
            while from < stop {
                if entries[from].point >= hash {
                    return from;
                }
                from += 1;
            }
        }
        from + entries[from..hi].partition_point(|e| e.point < hash)
    }

    /// The owners of `hashes` (at most [`BLOCK`], any order) into `out`
    /// (same length); `entries` must not be empty.
    ///
    /// One lookup at a time guesses wrong half the time whether its bucket
    /// is empty, and each wrong guess throws away the work (and the memory
    /// reads) already started for the next keys. Here no pass branches on
    /// the data (no mispredicted branch per hash, against 0.7), and the
    /// passes that read memory are a few instructions per hash, so dozens
    /// of reads are in flight together: all slots; then the answers for
    /// empty buckets; then the first entry of every other bucket; then their
    /// answers, from L1.
    pub(super) fn owners_block(&self, entries: &[Entry], hashes: &[u64], out: &mut [NodeId]) {
        debug_assert!(hashes.len() <= BLOCK && out.len() == hashes.len());
        // Every slot, in a loop so short that dozens of reads are in flight.
        let mut slots = [0u16; BLOCK];
        for (slot, &hash) in slots.iter_mut().zip(hashes) {
            *slot = self.slots[self.bucket(hash)];
        }
        // Empty buckets are answered (`slot - EMPTY` below `0x7FFF`); the
        // others are queued with where their bucket's entries start
        // (meaningless for far slots, which are searched instead).
        let mut queue = [0u8; BLOCK];
        let mut start = [0u32; BLOCK];
        let mut queued = 0;
        let all = hashes
            .iter()
            .zip(&slots)
            .zip(out.iter_mut())
            .zip(&mut start);
        for (j, (((&hash, &slot), out), start)) in all.enumerate() {
            let owner = slot.wrapping_sub(EMPTY);
            *out = NodeId::from(owner);
            *start = self.base[self.bucket(hash) >> GROUP_BITS] + u32::from(slot);
            queue[queued % BLOCK] = j as u8;
            queued += usize::from(owner >= EMPTY_FAR - EMPTY);
        }
        let queue = &queue[..queued];
        // The first entry of each queued bucket, read in a short loop too,
        // only to have it in L1 for the last pass.
        let last = entries.len() - 1;
        let mut touched = 0u64;
        for &j in queue {
            touched ^= entries[(start[usize::from(j)] as usize).min(last)].point;
        }
        std::hint::black_box(touched);
        for &j in queue {
            let j = usize::from(j);
            let (hash, slot) = (hashes[j], slots[j]);
            let k = self.bucket(hash);
            let label = if slot < FULL_FAR {
                let end = self.base[(k >> GROUP_BITS) + 1] as usize;
                bucket_owner(entries, hash, start[j] as usize, end)
            } else {
                first_owner(entries, self.search(entries, hash, k, slot))
            };
            out[j] = self.id(label);
        }
    }

    /// The entries and index after node `at` joins with its sorted `fresh`
    /// points; ids from `at` on move up by one (in the label table only).
    /// O(P), one pass: each fresh point's place is found through this
    /// index, the runs of old entries between two fresh ones are copied
    /// whole (`memcpy`), and each group with a fresh point is filled again
    /// right after its entries are written, while they are in L1.
    ///
    /// Equal points must rank by id (the ring's ties by name).
    pub(super) fn joined(&self, old: &[Entry], fresh: &[u64], at: NodeId) -> (Vec<Entry>, Self) {
        // The new node takes the first free label.
        let free = self.ids.iter().position(|&id| id == GONE);
        let label = free.unwrap_or(self.ids.len()) as NodeId;
        let mut ids: Vec<NodeId> = self
            .ids
            .iter()
            .map(|&id| id + NodeId::from(id >= at && id != GONE))
            .collect();
        match ids.get_mut(label as usize) {
            Some(id) => *id = at,
            None => ids.push(at),
        }
        // Where each fresh point goes among the old entries: independent
        // searches, so their reads overlap. Old entries on the same point
        // stay before the new one when their node sorts before it.
        let mut places = Vec::with_capacity(fresh.len());
        let mut from = 0;
        for &point in fresh {
            let mut to = self.lower_bound(old, point).max(from);
            while to < old.len() && old[to].point == point && self.id(old[to].owner) < at {
                to += 1;
            }
            places.push(to);
            from = to;
        }
        let mut out = Vec::with_capacity(old.len() + fresh.len());
        let len = out.capacity();
        let mut refill = Refill::new(self, fresh, Some(&places), at, len, &ids);
        let mut from = 0;
        for (&point, &to) in fresh.iter().zip(&places) {
            out.extend_from_slice(&old[from..to]);
            out.push(Entry {
                point,
                owner: label,
            });
            from = to;
            if let Some(refill) = &mut refill {
                refill.fill_ready(&out);
            }
        }
        out.extend_from_slice(&old[from..]);
        let index = Refill::index(refill, &out, ids);
        (out, index)
    }

    /// The entries and index after node `at` leaves; ids above it move
    /// down by one (in the label table only), the order of the others,
    /// ties included, stays. O(P), like [`BucketIndex::joined`].
    pub(super) fn left(&self, old: &[Entry], at: NodeId) -> (Vec<Entry>, Self) {
        let label = self.ids.iter().position(|&id| id == at);
        let label = label.map_or(GONE, |l| l as NodeId);
        let mut ids: Vec<NodeId> = self
            .ids
            .iter()
            .map(|&id| match id {
                GONE => GONE,
                id if id == at => GONE,
                id => id - NodeId::from(id > at),
            })
            .collect();
        while ids.last() == Some(&GONE) {
            ids.pop();
        }
        let gone: Vec<usize> = (0..old.len()).filter(|&i| old[i].owner == label).collect();
        let points: Vec<u64> = gone.iter().map(|&i| old[i].point).collect();
        let mut out = Vec::with_capacity(old.len() - gone.len());
        let len = out.capacity();
        let mut refill = Refill::new(self, &points, None, at, len, &ids);
        let mut from = 0;
        for &i in &gone {
            out.extend_from_slice(&old[from..i]);
            from = i + 1;
            if let Some(refill) = &mut refill {
                refill.fill_ready(&out);
            }
        }
        out.extend_from_slice(&old[from..]);
        let index = Refill::index(refill, &out, ids);
        (out, index)
    }

    /// The slots of group `t` after node `at` joined with one point there
    /// (its slots hold the old values, owners renumbered), worked out from
    /// the point's bucket and place among the old entries without reading
    /// any entry; `false` when a far marker is in the way.
    ///
    /// Example: a group's slots `[owner 3, offset 0, owner 5, offset 2,
    /// owner 5, ...]` and a point in bucket 2 at old place 2 (after bucket
    /// 1's two entries): bucket 2 becomes `offset 2`, bucket 3 (its entries
    /// now one further) `offset 3`, and nothing below changes, bucket 1
    /// having points. Had the point gone into bucket 1 before its entries
    /// (place 0), bucket 0 would have become `owner at`.
    fn join_one(&mut self, t: &Touched, at: NodeId) -> bool {
        let local = t.bucket & (GROUP - 1);
        let slots = &mut self.slots[t.group * GROUP..(t.group + 1) * GROUP];
        let old = slots[local];
        if old == FULL_FAR {
            return false;
        }
        for slot in &mut slots[local + 1..] {
            // The carry past the last offset makes `FULL_FAR`, as it should.
            *slot += u16::from(*slot < FULL_FAR);
        }
        let was_empty = old >= EMPTY;
        if was_empty {
            slots[local] = offset_slot(t.offset);
        }
        // Is the point its bucket's first? Then the empty buckets right
        // below it are now the new node's.
        if was_empty || usize::from(old) == t.offset {
            let owner = owner_slot(at);
            for slot in slots[..local].iter_mut().rev() {
                if *slot < EMPTY {
                    break;
                }
                *slot = owner;
            }
        }
        true
    }

    /// Sets the empty buckets right below bucket `end` (down to `floor`, or
    /// the first bucket with points) to `owner`.
    fn fill_empty_before(&mut self, end: usize, floor: usize, owner: u16) {
        for slot in self.slots[floor..end].iter_mut().rev() {
            if *slot < EMPTY {
                break;
            }
            *slot = owner;
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 2 + (self.base.capacity() + self.ids.capacity()) * 4
    }
}

/// The index of a ring being rewritten by a join or leave, filled in as the
/// new entries are written.
///
/// Groups without a changed point keep their slots (owners renumbered;
/// offsets count from the group's own base, which moves by the number of
/// changed points below it). Groups with one are filled again from the new
/// entries. And the empty buckets before such a group, whose owner is the
/// first entry after them, take the owner of the group's first entry: a
/// walk down from the group, ending at the first bucket with points (or at
/// the group above the previous changed one, which walks on its own).
struct Refill {
    next: BucketIndex,
    /// Groups with a changed point, ascending.
    touched: Vec<Touched>,
    /// How many of them are filled.
    ready: usize,
    /// The joining node's id, or `None` for a leave.
    joining: Option<NodeId>,
}

/// A group with changed points.
struct Touched {
    group: usize,
    /// How many.
    count: u32,
    /// The first one's bucket and, when joining, its place among the old
    /// entries counted from the group's first.
    bucket: usize,
    offset: usize,
}

impl Refill {
    /// The index of `out`: the refilled one, or a fresh build where the
    /// change gave no refill.
    fn index(refill: Option<Refill>, out: &[Entry], ids: Vec<NodeId>) -> BucketIndex {
        match refill {
            Some(refill) => refill.finish(out),
            None => BucketIndex::new(out, ids),
        }
    }

    /// `None` when the new length `len` calls for another bucket count
    /// (then the index is built anew). `changed` are the joining or leaving
    /// node's points, `places` (when joining) where each goes among the old
    /// entries; `ids` the new label ids.
    fn new(
        old: &BucketIndex,
        changed: &[u64],
        places: Option<&[usize]>,
        at: NodeId,
        len: usize,
        ids: &[NodeId],
    ) -> Option<Self> {
        if len == 0 || bucket_bits(len) != 64 - old.shift {
            return None;
        }
        let mut below = vec![0u32; old.base.len()];
        let mut touched: Vec<Touched> = Vec::new();
        for (n, &point) in changed.iter().enumerate() {
            let bucket = old.bucket(point);
            let group = bucket >> GROUP_BITS;
            below[group + 1] += 1;
            match touched.last_mut() {
                Some(t) if t.group == group => t.count += 1,
                _ => touched.push(Touched {
                    group,
                    count: 1,
                    bucket,
                    offset: places.map_or(0, |p| p[n] - old.base[group] as usize),
                }),
            }
        }
        let mut sum = 0;
        for count in &mut below {
            sum += *count;
            *count = sum;
        }
        let grow = places.is_some();
        let base = old.base.iter().zip(&below);
        let base = if grow {
            base.map(|(&b, &n)| b + n).collect()
        } else {
            base.map(|(&b, &n)| b - n).collect()
        };
        let next = BucketIndex {
            slots: renumbered(&old.slots, at, grow),
            base,
            shift: old.shift,
            ids: ids.to_vec(),
        };
        Some(Refill {
            next,
            touched,
            ready: 0,
            joining: grow.then_some(at),
        })
    }

    /// Fills the changed groups whose entries, and the entry after them,
    /// are all in `out` now.
    fn fill_ready(&mut self, out: &[Entry]) {
        while let Some(t) = self.touched.get(self.ready) {
            if self.next.base[t.group + 1] as usize >= out.len() {
                break;
            }
            self.fill(out);
        }
    }

    /// Fills the next changed group and walks down from it.
    fn fill(&mut self, out: &[Entry]) {
        let n = self.ready;
        let t = &self.touched[n];
        let g = t.group;
        let one = match self.joining {
            Some(at) if t.count == 1 => self.next.join_one(t, at),
            _ => false,
        };
        if one {
            // The group's last empty buckets own the first entry after it,
            // which may be a fresh one in a later group.
            let after = first_owner(out, self.next.base[g + 1] as usize);
            let owner = owner_slot(self.next.id(after));
            self.next
                .fill_empty_before((g + 1) * GROUP, g * GROUP, owner);
        } else {
            self.next.fill_group(out, g);
        }
        let floor = n
            .checked_sub(1)
            .map_or(0, |m| (self.touched[m].group + 1) * GROUP);
        let first = first_owner(out, self.next.base[g] as usize);
        let owner = owner_slot(self.next.id(first));
        self.next.fill_empty_before(g * GROUP, floor, owner);
        self.ready += 1;
    }

    /// The index of the complete `out`.
    fn finish(mut self, out: &[Entry]) -> BucketIndex {
        while self.ready < self.touched.len() {
            self.fill(out);
        }
        // The empty buckets after the last point own the first point.
        let end = self.next.slots.len();
        let owner = owner_slot(self.next.id(out[0].owner));
        self.next.fill_empty_before(end, 0, owner);
        self.next
    }
}

/// `b` with `2^b` in `(len, 2·len]`, at least one group, capped so that the
/// index of a huge ring stays within 2.25 bytes per point.
fn bucket_bits(len: usize) -> u32 {
    (len.max(1).ilog2() + 1).clamp(GROUP_BITS, 28)
}

fn offset_slot(offset: usize) -> u16 {
    if offset < usize::from(FULL_FAR) {
        offset as u16
    } else {
        FULL_FAR
    }
}

fn owner_slot(owner: NodeId) -> u16 {
    if owner < NodeId::from(EMPTY_FAR - EMPTY) {
        EMPTY + owner as u16
    } else {
        EMPTY_FAR
    }
}

/// The owner (label) for `hash` in its bucket, which has points, the first at `i`,
/// in a group whose entries end at `hi`: the first entry's if its point is
/// `>= hash`, else the next entry's (the bucket's second, or the first after
/// the bucket, or past the last the ring's first). Chosen without a branch;
/// only a bucket with two or more points below `hash` is searched further.
#[inline]
fn bucket_owner(entries: &[Entry], hash: u64, i: usize, hi: usize) -> NodeId {
    let first = entries[i];
    let j = i + 1;
    let second = entries[if j == entries.len() { 0 } else { j }];
    // A second entry in the group (`j < hi`) below `hash` lies in this
    // bucket, and more may follow (then the first is below `hash` too: the
    // entries are sorted). Rare, so a well-predicted branch.
    if second.point < hash && j < hi {
        let rest = &entries[j + 1..hi];
        return first_owner(entries, j + 1 + rest.partition_point(|e| e.point < hash));
    }
    // Whether the hash is past the first point is a coin flip: select with
    // a mask. (`black_box` keeps the compiler from turning the mask back
    // into a branch, which it does for a plain `if` or mask: 0.2 more
    // mispredictions per lookup.)
    let past = std::hint::black_box(0u32.wrapping_sub(u32::from(first.point < hash)));
    first.owner ^ ((first.owner ^ second.owner) & past)
}

/// The owner (label) of the entry at `i`, wrapping past the last to the
/// first.
#[inline]
fn first_owner(entries: &[Entry], i: usize) -> NodeId {
    entries[if i == entries.len() { 0 } else { i }].owner
}

/// The slots after node `at` joined (`grow`: ids `>= at` move up) or left
/// (ids `> at` move down). Offsets and far markers are unchanged; an owner
/// that grows past the 15 bits becomes `EMPTY_FAR` by the carry itself.
/// Branch-free, so the loop runs on vector registers.
fn renumbered(slots: &[u16], at: NodeId, grow: bool) -> Vec<u16> {
    // Owners from `at` on are the slots from `EMPTY + at` on (no owner
    // slot at all when `at` does not fit in 15 bits).
    let from = owner_slot(at);
    if grow {
        let up = |s: u16| s + u16::from(s >= from && s != EMPTY_FAR);
        slots.iter().map(|&s| up(s)).collect()
    } else {
        let down = |s: u16| s - u16::from(s > from && s != EMPTY_FAR);
        slots.iter().map(|&s| down(s)).collect()
    }
}

/// Sorts entries by `(point, owner)` in O(P) expected and returns them with
/// their index; `ids` maps their owners (labels) to ids.
///
/// A counting sort on the index's bucket bits puts each entry into its
/// bucket; then one pass over the buckets, from the last down, sorts each
/// (a few entries: two are swapped without a branch, more go to an
/// insertion sort) and writes its slot. Downwards, an empty bucket's owner
/// (the first entry after it) is in a bucket already sorted; the ring's
/// first bucket, which the empty buckets after the last point own, is
/// sorted before the pass.
pub(super) fn sort_entries(entries: Vec<Entry>, ids: Vec<NodeId>) -> (Vec<Entry>, BucketIndex) {
    if entries.is_empty() {
        return (entries, BucketIndex::new(&[], ids));
    }
    let len = entries.len();
    let shift = 64 - bucket_bits(len);
    let buckets = 1usize << (64 - shift);
    let bucket = |e: &Entry| (e.point >> shift) as usize;
    // `end[k + 1]` counts bucket k, then (summed) is where bucket k ends;
    // the scatter fills each bucket from its end, moving `end[k + 1]` back
    // to where bucket k starts.
    let mut end = vec![0u32; buckets + 1];
    for e in &entries {
        end[bucket(e) + 1] += 1;
    }
    for k in 1..end.len() {
        end[k] += end[k - 1];
    }
    let mut sorted = vec![Entry { point: 0, owner: 0 }; len];
    for e in entries {
        let place = &mut end[bucket(&e) + 1];
        sorted[(*place - 1) as usize] = e;
        *place -= 1;
    }
    // Now `end[k + 1]` is bucket k's start: shifted down, `start[k]` is.
    end.rotate_left(1);
    end[buckets] = len as u32;
    let start = end;
    let first = start.iter().position(|&s| s > 0).map_or(buckets, |k| k - 1);
    sort_small(&mut sorted[..start[first + 1] as usize]);
    let wrap = ids[sorted[0].owner as usize];
    let base: Vec<u32> = start.iter().step_by(GROUP).copied().collect();
    let mut slots = vec![0u16; buckets];
    for k in (0..buckets).rev() {
        let (lo, hi) = (start[k] as usize, start[k + 1] as usize);
        sort_bucket(&mut sorted, lo, hi);
        let owner = sorted.get(lo).map_or(wrap, |e| ids[e.owner as usize]);
        let empty = owner_slot(owner);
        let full = offset_slot(lo - base[k >> GROUP_BITS] as usize);
        slots[k] = if hi > lo { full } else { empty };
    }
    let index = BucketIndex {
        slots,
        base,
        shift,
        ids,
    };
    (sorted, index)
}

/// Sorts the bucket `entries[lo..hi]`: two entries by a swap without a
/// branch on their order (a coin flip), more by [`sort_small`].
#[inline]
fn sort_bucket(entries: &mut [Entry], lo: usize, hi: usize) {
    if hi - lo == 2 {
        let key = |e: Entry| (u128::from(e.point) << 32) | u128::from(e.owner);
        let (a, b) = (entries[lo], entries[lo + 1]);
        let swap = key(b) < key(a);
        entries[lo] = [a, b][usize::from(swap)];
        entries[lo + 1] = [b, a][usize::from(swap)];
    } else if hi - lo > 2 {
        sort_small(&mut entries[lo..hi]);
    }
}

/// Insertion sort for the usual bucket of a few entries; the standard sort
/// for the big buckets a skewed hasher can make.
fn sort_small(bucket: &mut [Entry]) {
    if bucket.len() > 16 {
        bucket.sort_unstable();
        return;
    }
    for i in 1..bucket.len() {
        let mut j = i;
        while j > 0 && bucket[j] < bucket[j - 1] {
            bucket.swap(j, j - 1);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests;
