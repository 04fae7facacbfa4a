//! The integration tests of `ringwise-zookeeper`, as modules of one
//! binary: each starts its own real ZooKeeper (Debian's `zookeeper`,
//! installed by scripts/install-test-deps) on loopback ports with a fresh
//! data directory, and kills it by pid when it ends, however it ends.
//! `live` is membership on a healthy server (churn, names, bad data,
//! digest auth, member processes that die or leave, a paused watch);
//! `faults` the server away for 10 s and an ensemble losing its leader;
//! `source` the crate as the commands take it (a `zk://` URL, boxed);
//! `budget` a member whose points the ring cannot hold, left out.

mod budget;
mod common;
mod faults;
mod live;
mod source;
mod support;
