//! Helpers of the ZooKeeper tests: real ZooKeeper servers
//! (`support/zookeeper.rs`), member processes (`support/member.rs`) and the
//! core tests' SplitMix64.

pub mod member;
pub mod zookeeper;

#[path = "../../ringwise/tests/support/rng.rs"]
pub mod rng;
