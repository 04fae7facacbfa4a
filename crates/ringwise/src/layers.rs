//! Layers over any placement: key bytes ([`Keyed`]), load bounds
//! ([`Bounded`]) and a shared current snapshot ([`Live`]). Each takes a
//! [`crate::Placement`] and adds one concern, so every algorithm gets all
//! three without code of its own.

pub(crate) mod bounded;
pub(crate) mod keyed;
pub(crate) mod live;

pub use crate::hash::HashTag;
pub use bounded::{Bounded, Lease};
pub use keyed::Keyed;
pub use live::{Live, Snapshot};
