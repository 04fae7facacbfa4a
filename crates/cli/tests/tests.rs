//! The `ringwise` binary end to end, as one test binary (one link instead
//! of one per file): the modules share the helpers in `support`.
//! `compat` runs the real programs ringwise claims to match (libmemcached,
//! uhashring, libketama, twemproxy over memcached, nginx, a Redis Cluster,
//! cassandra-driver, grpcio); see its docs. `etcd` runs `join`, `watch` and
//! `config` against a real etcd. `docs` runs every page's console
//! examples and checks that its Rust examples are doctests.

// `compat` and the etcd crate's server helper (used by `etcd`) both
// include the core's process helpers by path: two copies of one small file.
#![allow(clippy::duplicate_mod)]

mod support;

mod allocate;
mod atomic_writes;
mod bounded_memory;
mod cli;
mod compat;
mod compat_cli;
mod docs;
mod etcd;
mod generated_scripts;
mod gossip;
mod help;
mod join_budget;
mod json_numbers;
mod key_lines;
mod lookup_output;
mod membership;
mod plan;
mod plan_removed;
mod plan_shares;
mod regressions;
mod scale;
mod simulate;
mod simulate_peer;
mod zookeeper;
