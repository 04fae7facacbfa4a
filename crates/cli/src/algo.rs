//! `--algo`, `--hash` and `--secret`: the placement choice every command
//! shares, declared once, with value parsers derived from the core's
//! registries ([`Algorithm::NAMES`], [`StableHash::NAMES`]; `--flavor`'s
//! [`Flavor::NAMES`] too).
//!
//! Help lists the registry's names; an unknown name is a usage error (exit
//! 2) carrying the core's message, which names the accepted values. The
//! secret is checked with the hash later, where each command knows its
//! default hash.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use ringwise::{Algorithm, Error, Flavor, MAX_CAPACITY, MAX_VNODES, Params, StableHash};

#[derive(Debug, Clone, clap::Args)]
pub struct AlgoArgs {
    /// Placement algorithm (default: the cluster file's, else ring).
    #[arg(long, value_name = "ALGO", value_parser = algorithms())]
    pub algo: Option<Algorithm>,
    /// Hash of keys and points (default: the cluster file's, else the
    /// algorithm's own).
    #[arg(long, value_name = "HASH", value_parser = hashes())]
    pub hash: Option<&'static str>,
    /// 128-bit secret as 32 hex digits, for --hash siphash.
    #[arg(long, value_name = "HEX")]
    pub secret: Option<String>,
}

/// Envoy's largest ring (`max_ring_size`'s default and limit).
const ENVOY_MAX_RING_SIZE: u64 = 8_388_608;

/// The compatibility flavours' parameters: one declaration for `lookup`,
/// `inspect` and `simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct FlavorArgs {
    /// Which client's ketama (ketama; default libmemcached). twemproxy's
    /// default key hash is fnv1a64-twemproxy, the others' md5-le32.
    #[arg(long, value_name = "NAME", value_parser = flavors())]
    pub flavor: Option<Flavor>,
    /// Envoy's min_ring_size (envoy-ring; default 1024, 1 to 8388608).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=ENVOY_MAX_RING_SIZE))]
    pub min_ring_size: Option<u64>,
    /// Envoy's max_ring_size (envoy-ring; default and at most 8388608).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=ENVOY_MAX_RING_SIZE))]
    pub max_ring_size: Option<u64>,
    /// Tokens per unit of weight of a node whose tokens the cluster file
    /// does not list (cassandra; default 16).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_VNODES)))]
    pub num_tokens: Option<u32>,
    /// Fixed number of buckets, working or not (anchor, dx; default twice
    /// the nodes, at least 256; at most 4194304). A new capacity moves keys.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CAPACITY)))]
    pub capacity: Option<u32>,
}

impl FlavorArgs {
    /// Sets the parameters that were given.
    pub fn apply(&self, params: &mut Params) {
        if let Some(flavor) = self.flavor {
            params.flavor = flavor;
        }
        if let Some(size) = self.min_ring_size {
            params.min_ring_size = size;
        }
        if let Some(size) = self.max_ring_size {
            params.max_ring_size = size;
        }
        if let Some(tokens) = self.num_tokens {
            params.num_tokens = tokens;
        }
        if let Some(capacity) = self.capacity {
            params.capacity = capacity;
        }
    }

    /// Which were given, by parameter name.
    pub fn given(&self) -> [(&'static str, bool); 5] {
        [
            ("flavor", self.flavor.is_some()),
            ("min_ring_size", self.min_ring_size.is_some()),
            ("max_ring_size", self.max_ring_size.is_some()),
            ("num_tokens", self.num_tokens.is_some()),
            ("capacity", self.capacity.is_some()),
        ]
    }

    /// Whether either of Envoy's ring sizes was given.
    pub fn ring_size_given(&self) -> bool {
        self.min_ring_size.is_some() || self.max_ring_size.is_some()
    }
}

/// A clap value parser over one of the core's name registries.
#[derive(Debug, Clone, Copy)]
pub struct Registry<T> {
    names: &'static [&'static str],
    parse: fn(String) -> Result<T, Error>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Registry<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // Clap's own "invalid value 'x' for '--algo <ALGO>': " prefix, then
        // the core's error.
        StringValueParser::new()
            .try_map(self.parse)
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.names.iter().map(|&name| PossibleValue::new(name)),
        ))
    }
}

/// `--algo`: a name of [`Algorithm::NAMES`].
pub fn algorithms() -> Registry<Algorithm> {
    Registry {
        names: Algorithm::NAMES,
        parse: |name| name.parse(),
    }
}

/// `--flavor`: a name of [`Flavor::NAMES`] (ketama's clients).
pub fn flavors() -> Registry<Flavor> {
    Registry {
        names: Flavor::NAMES,
        parse: |name| name.parse(),
    }
}

/// `--hash`: a name of [`StableHash::NAMES`], kept as the name because
/// `siphash` needs `--secret` to become a hash.
pub fn hashes() -> Registry<&'static str> {
    Registry {
        names: StableHash::NAMES,
        parse: |name| {
            StableHash::NAMES
                .iter()
                .copied()
                .find(|&known| known == name)
                .ok_or(Error::UnknownHash {
                    name,
                    known: StableHash::NAMES,
                })
        },
    }
}
