//! The `ringwise` binary end to end, as one test binary (one link instead
//! of one per file): the modules share the helpers in `support`.

mod support;

mod cli;
mod compat_cli;
mod issue8;
mod simulate;
mod simulate_peer;
