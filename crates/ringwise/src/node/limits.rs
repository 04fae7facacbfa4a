//! The limits of a node table: weights, node count, name length and ids.
//!
//! Constants only, with nothing to import: [`crate::Node::validate`] and
//! [`crate::NodeTable`] check against them, and the error texts
//! (`error.rs`) quote them, so they live apart from both.

/// Heaviest weight a node may have. With `vnodes = 1000` this is 10^9 points
/// before the [`crate::MAX_POINTS`] limit stops it.
pub const MAX_WEIGHT: f64 = 1_000_000.0;

/// Lightest weight a node may have (absolute, like [`MAX_WEIGHT`]): shares
/// span at most 12 orders of magnitude, so they stay printable and a node
/// never weighs so little that its fair share rounds to nothing
/// (`1e-308` would).
pub const MIN_WEIGHT: f64 = 1e-6;

/// Most nodes one cluster may have (2^20 = 1,048,576). Checked before
/// anything is built for them: every algorithm holds O(N) per node (a
/// build peaks at about 130 bytes per node plus the names, see
/// RELIABILITY.md), rendezvous reads every node per lookup, and a
/// cluster of more members is a mistake in the input, not a deployment.
pub const MAX_NODES: usize = 1 << 20;

/// Longest node name, in bytes.
pub const MAX_NAME_LEN: usize = 1024;

/// Largest numeric node id (`id = N` in a cluster file): HAProxy's server
/// ids are positive C `int`s, so 2^31 - 1.
pub const MAX_NODE_ID: u32 = i32::MAX as u32;
