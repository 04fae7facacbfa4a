//! `--algo`, `--hash` and `--secret`: the placement choice every command
//! shares, declared once, with value parsers derived from the core's
//! registries ([`Algorithm::NAMES`], [`StableHash::NAMES`]; `--flavor`'s
//! [`Flavor::NAMES`] too).
//!
//! Help lists the registry's names; an unknown name is a usage error (exit
//! 2) carrying the core's message, which names the accepted values. The
//! secret is checked with the hash later, where each command knows its
//! default hash. The algorithms' parameters are `params.rs`'s.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use ringwise::{Algorithm, Error, Flavor, SlotLayout, StableHash};

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

/// `--slot-layout`: a name of [`SlotLayout::NAMES`] (slots' default layouts).
pub fn slot_layouts() -> Registry<SlotLayout> {
    Registry {
        names: SlotLayout::NAMES,
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
