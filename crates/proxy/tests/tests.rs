//! The proxy against real programs, as modules of one test binary.
//!
//! Every test starts its own `memcached`s (Debian's 1.6.18), the
//! `ringwise-proxy` built with this crate, and for the twemproxy test a
//! real `nutcracker`, each on a free loopback port through `setpriv
//! --pdeathsig KILL` and killed by its pid when the test ends, however it
//! ends (`process::Guard`). `scripts/install-test-deps` installs memcached
//! and nutcracker; a missing one fails the test with that hint, never
//! skips it.
//!
//! - `changes`: several membership changes in a row (a server that leaves
//!   and returns, a change that moves nothing, a file over the cap);
//! - `conformance`: the same requests to one memcached directly and
//!   through the proxy (to one server, and to a pool of three): the
//!   answers are byte for byte the same;
//! - `consistency`: randomized concurrent clients while the membership
//!   flaps and servers stall, die and restart; every read judged by the
//!   history checker (`ringwise-history`) against the stated promise;
//! - `docs`: docs/proxy.md's examples, run as a checked transcript;
//! - `failures`: a server SIGKILLed or SIGSTOPped (ejected, its keys to
//!   their next server, taken back), and a client that never reads;
//! - `isolation`: one client's pathological retrievals (a value named
//!   thousands of times, many keys pipelined) in bounded memory, and its
//!   padded or odd lines never break the server connection other clients
//!   share nor count against the server;
//! - `hot_keys`: a key with 30 % of the reads spread over its replicas
//!   within the load bound, and a write seen by every read after it;
//! - `live`: membership from a real etcd, followed across a join and a
//!   leave;
//! - `routing`: keys set through the proxy land on the server the
//!   library's placement names, for several algorithms of a cluster file;
//! - `twemproxy`: one `nutcracker.yml` given to nutcracker and to the
//!   proxy; what one writes the other reads, from the same memcached;
//! - `warm_up`: a membership change through the proxy's file, with and
//!   without a warm-up window, and versioned writes read back across it.

#![allow(clippy::duplicate_mod)]

#[path = "../../etcd/tests/support/etcd.rs"]
#[allow(
    dead_code,
    reason = "the etcd crate's helpers; one member is enough here"
)]
mod etcd;
#[path = "../../ringwise/tests/support/process.rs"]
#[allow(dead_code, reason = "shared with the other crates' tests")]
mod process;
#[path = "../../ringwise/tests/support/rng.rs"]
mod rng;
#[path = "../../cli/tests/docs/transcript.rs"]
#[allow(
    dead_code,
    reason = "the CLI's docs runner; the page listing and the run are what this crate uses"
)]
mod transcript;

mod servers;

mod changes;
mod conformance;
mod consistency;
mod docs;
mod failures;
mod hot_keys;
mod isolation;
mod live;
mod routing;
mod twemproxy;
mod warm_up;
