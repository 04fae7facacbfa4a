//! The integration tests of `ringwise-etcd`, as modules of one binary:
//! each starts its own real etcd (Debian's `etcd-server`, installed by
//! scripts/install-test-deps) on loopback ports with a fresh data
//! directory, and kills it by pid when it ends, however it ends. `errors`
//! checks what a call etcd does not take says (unreachable, TLS, users);
//! `stored_values` the values that are not what they seem, malformed endpoints,
//! and etcd servers that die with the process that started them; `budget`
//! a member whose points the ring cannot hold, left out and named.

mod budget;
mod errors;
mod live;
mod soak;
mod stored_values;
mod support;
