//! The point budget: how many virtual nodes and ring points a build may
//! make, and how much memory such a build holds at its peak.
//!
//! A ring's memory is its points, so the budget caps the points before
//! anything is allocated: [`MAX_VNODES`] per unit of weight, [`MAX_POINTS`]
//! per ring unless raised, at most [`MAX_POINTS_CEILING`]. The peak of a
//! build is [`PEAK_BYTES_PER_POINT`] per point; a build whose peak is large
//! first reserves it ([`reserve::reserve_peak`]), so a process under a
//! memory limit gets an error instead of an abort half-way.
//!
//! Only constants live here, with nothing to import, so that the error
//! texts (`error.rs`) can quote them while the reservation, which returns
//! an error, lives one file down (`budget/reserve.rs`).

pub(crate) mod reserve;

/// Most virtual nodes per unit of weight.
pub const MAX_VNODES: u32 = 1_000_000;

/// Most points one ring may hold unless raised (2^24 = 16,777,216: 200 MB
/// once built, a peak of 640 MiB ([`PEAK_BYTES_PER_POINT`]) and a few
/// seconds while building, far above what a deployment needs;
/// ketama's 160 points per node reach it only at 100,000 nodes). Raise it
/// per ring with [`crate::Params::max_points`], [`crate::RingBuilder::max_points`] or a
/// cluster file's `max_points`, up to [`MAX_POINTS_CEILING`].
pub const MAX_POINTS: u64 = 1 << 24;

/// The highest point budget that may be asked for (2^28: 4 GiB of points
/// would not fit the `u32` index). A ring at the ceiling holds 3.2 GiB and
/// peaks at 10 GiB while it is built: raising the budget this far is for
/// a machine that has the memory; a process whose limit is lower gets
/// [`crate::Error::OutOfMemory`] before the build allocates anything large.
pub const MAX_POINTS_CEILING: u64 = 1 << 28;

/// The most heap bytes per point a ring build holds at once (measured with
/// a peak-tracking allocator by `tests/peak.rs`: 40.0 at 2^24 points, where
/// the bucket index is largest; 32 to 35 at 10^6 points): the points (12),
/// their sorted copy (12), the bucket starts and cursors (4 + 4) and the
/// index (up to 4.5), node table aside. Every ring-shaped algorithm
/// (ring, ketama, nginx, envoy-ring, cassandra) builds this way.
pub const PEAK_BYTES_PER_POINT: u64 = 40;
