//! [`RingView`]: what every ring-shaped placement answers beyond
//! [`Placement`]. Kept apart from `ring.rs` so that the registry's trait
//! (`algo/params.rs`) can name it without depending on the ring, which
//! itself implements the registry's trait.

use crate::algo::ring::points::Width;
use crate::node::NodeId;
use crate::placement::Placement;
use crate::stats::PlacementStats;

/// What every ring-shaped placement answers beyond [`Placement`], as one
/// object-safe view ([`crate::AnyPlacement::as_ring`]), whatever its point
/// scheme.
pub trait RingView: Placement {
    /// Points per node, exact ownership shares and their spread. O(P + N).
    fn stats(&self) -> PlacementStats;
    /// Number of points on the ring.
    fn point_count(&self) -> usize;
    /// How the peer writes a point.
    fn width(&self) -> Width;
    /// `(point, owner)` in ring order.
    fn points(&self) -> Box<dyn Iterator<Item = (u64, NodeId)> + '_>;
    /// Zone-aware replicas: see [`crate::Ring::zoned_replicas_into`].
    fn zoned_replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>);
}
