//! Helpers of the etcd tests: real etcd servers (`support/etcd.rs`) and the
//! core tests' SplitMix64.

pub mod etcd;

#[path = "../../ringwise/tests/support/rng.rs"]
pub mod rng;
