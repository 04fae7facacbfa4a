//! The `ringwise` binary end to end, as one test binary (one link instead
//! of one per file): the modules share the helpers in `support`.
//! `compat` runs the real programs ringwise claims to match (libmemcached,
//! uhashring, libketama, twemproxy over memcached, nginx, a Redis Cluster,
//! cassandra-driver); see its docs.

mod support;

mod cli;
mod compat;
mod compat_cli;
mod issue8;
mod plan;
mod regressions;
mod simulate;
mod simulate_peer;
