//! The integration tests of `ringwise`, as modules of one test binary.
//!
//! One binary links once instead of once per file (the links were a large
//! part of the build). The slow and external tests are modules here too:
//! libtest runs them in parallel with the rest, and each says in its module
//! docs what it starts (`seed_peer` runs python3, `redis_slots` a real
//! `redis-server`, `cassandra_peer` cassandra-driver in the venv of
//! `scripts/install-test-deps`, `article` hashes 1,000,000 keys). Filter by module path,
//! e.g. `cargo test -p ringwise --test tests jump_properties::`.
//!
//! `heap_bytes` is checked in its own binary, `memory.rs`, because it needs
//! a counting global allocator and nothing else running.
//!
//! Proptest keeps regressions next to each module's source file
//! (`<module>.proptest-regressions`), so the module files keep their names.
//! It does so because no `lib.rs` or `main.rs` lies on the way up from
//! them; with one, it would look in a parallel `proptest-regressions/`
//! directory instead. So no file here may be called either.

mod support;

mod allocate;
mod article;
mod binomial_vectors;
mod bounded;
mod cassandra_peer;
mod cluster_file;
mod cluster_write;
mod compat_vectors;
mod conformance;
mod core_limits;
mod envoy_rendezvous_vectors;
mod fliphash_vectors;
mod go_redis_vectors;
mod hash_vectors;
mod jump_properties;
mod jump_vectors;
mod jumpback_vectors;
mod limits;
mod live;
mod maglev_properties;
mod md5_lanes;
mod memento_properties;
mod movement;
mod multiprobe_properties;
mod param_list;
mod properties;
mod redis_slots;
mod reliability;
mod removal_vectors;
mod removals_properties;
mod rendezvous_properties;
mod seed_peer;
mod slots_properties;
mod varnish_shard;
mod written_removals;
