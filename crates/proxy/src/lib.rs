//! `ringwise-proxy`: a memcached proxy routed by any ringwise placement.
//!
//! One routing point for a pool of memcached servers, so that every
//! application reaches a key's server the same way (the seed article's
//! other mistake is clients that disagree): the memcached text protocol
//! read as memcached 1.6 reads it ([`request`]), each request about one
//! key forwarded in its canonical form to the key's owner, a retrieval of
//! several keys asked by owner in bounded parts and put back in order
//! ([`client`], [`retrieve`]), one pipelined
//! connection per server and client slot ([`backend`]), the pool from a
//! cluster file or a `nutcracker.yml` ([`pool`]).
//!
//! See `docs/proxy.md` for what it does and does not do yet. Without the
//! default feature `server` the crate is the protocol alone ([`request`],
//! [`response`]), with no dependency but `memchr` (the fuzz target's build).

#[cfg(feature = "server")]
pub mod answer;
#[cfg(feature = "server")]
pub mod backend;
#[cfg(feature = "server")]
pub mod client;
#[cfg(feature = "server")]
pub mod exchange;
#[cfg(feature = "server")]
pub mod hot;
#[cfg(feature = "server")]
pub mod live;
#[cfg(feature = "server")]
pub mod locks;
#[cfg(feature = "server")]
pub mod log;
mod numbers;
#[cfg(feature = "server")]
pub mod pool;
#[cfg(feature = "server")]
pub mod reload;
pub mod request;
pub mod response;
#[cfg(feature = "server")]
pub mod retrieve;
#[cfg(feature = "server")]
pub mod routing;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
pub mod share;
#[cfg(feature = "server")]
pub mod stats;
#[cfg(feature = "server")]
pub mod sweep;
#[cfg(feature = "server")]
pub mod warm;
#[cfg(feature = "server")]
pub mod write;
