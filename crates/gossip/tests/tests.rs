//! The integration tests of `ringwise-gossip`, as modules of one binary,
//! all on loopback, each in a chitchat cluster of its own (a cluster id
//! per test): `members` joins, leaves and kills at 10 members (in-process
//! nodes and real member processes, SIGTERM and SIGKILL) and at 50, with
//! several watchers that must all converge to the same fingerprint;
//! `names` a duplicate name refused and malformed entries skipped;
//! `settings` the settings end to end; `errors` what bad input says;
//! `budget` a member whose points the ring cannot hold, left out.
//! Assertions poll with generous deadlines: the speed is the bench's.

mod budget;
mod errors;
mod members;
mod names;
mod settings;
mod support;
