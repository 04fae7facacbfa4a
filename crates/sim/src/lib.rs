//! `ringwise-sim`: the seed article's measurement program, exact and fast.
//!
//! The article measures, on the keys `user:0..` and nodes `node-0..`:
//! how many keys `hash % N` moves ([`modulo`]), what one ring does when a node
//! joins ([`single`]), the same over 30 node-name sets ([`seeds`]), what a
//! failure redistributes ([`failure`]), how weights split the keys
//! ([`weights`]), the rendezvous one-liner ([`rendezvous`]) and what moved
//! keys cost a cache and a store ([`cost`]); beyond the article, every
//! algorithm side by side ([`compare`]) and bounded loads under skew
//! ([`bounded`]). [`run`] performs the selected experiments with the
//! configured algorithm and returns one [`Report`], which [`render`] shows as
//! text or CSV (one row model, [`table`]) and serde as JSON.
//!
//! Every figure equals what the article's Python program prints for the same
//! parameters; `crates/cli/tests/simulate_peer.rs` checks that against an
//! independent Python re-implementation.
//!
//! Speed: each key is hashed once and its hash reused by every experiment;
//! placements are built once per (name set, vnodes) and the joined one is
//! derived by adding one node; the key loops run in parallel with rayon.
//!
//! Imports go one way: the experiments use `config`, `error`, `keys`,
//! `progress` and `tally` (and each other's row types), never the crate
//! root; `report` uses the experiments' row types; `run` uses all of them;
//! `sections` uses `report` and `table`; `render` uses `sections`. `files`
//! (the atomic writer) and `input` (the capped cluster-file reader) import
//! nothing of the rest: they live here so that every binary shares them.

pub mod bounded;
pub mod compare;
mod config;
pub mod cost;
mod error;
pub mod failure;
pub mod files;
pub mod input;
mod keys;
pub mod modulo;
pub mod plot;
mod progress;
pub mod render;
pub mod rendezvous;
mod report;
mod run;
mod sections;
pub mod seeds;
pub mod single;
mod skipped;
pub mod table;
mod tally;
pub mod weights;

pub use config::{Config, ConfigError, Experiment};
pub use error::SimError;
pub use keys::{KeyText, Keys};
pub use progress::{Progress, Quiet};
pub use report::Report;
pub use run::{run, run_with};
pub use sections::sections;
pub use skipped::Skipped;
