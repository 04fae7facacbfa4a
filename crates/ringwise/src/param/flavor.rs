//! [`Flavor`]: which memcached client's ketama a `ketama` cluster follows.
//!
//! The value of the `flavor` parameter, kept apart from `algo/ketama.rs`
//! (which holds what each flavour computes: its group counts, server texts
//! and tie rule) so that the parameter list depends on this small file and
//! not on the ring, which itself reads the parameters.

use std::fmt;
use std::str::FromStr;

use crate::Error;
use crate::hash::StableHash;

/// Which client's ketama.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Flavor {
    /// libmemcached's weighted ketama (also pylibmc, php-memcached).
    #[default]
    Libmemcached,
    /// libmemcached's `CONSISTENT_KETAMA_SPY`, spymemcached's own.
    Spymemcached,
    /// last.fm's original libketama.
    Libketama,
    /// twemproxy's `distribution: ketama`.
    Twemproxy,
    /// uhashring's `HashRing(hash_fn="ketama")`.
    Uhashring,
}

impl Flavor {
    /// Every flavour, in documentation order.
    pub const ALL: &'static [Flavor] = &[
        Flavor::Libmemcached,
        Flavor::Spymemcached,
        Flavor::Libketama,
        Flavor::Twemproxy,
        Flavor::Uhashring,
    ];

    /// Their names, in the same order.
    pub const NAMES: &'static [&'static str] = &[
        "libmemcached",
        "spymemcached",
        "libketama",
        "twemproxy",
        "uhashring",
    ];

    /// The name as a cluster file writes it.
    pub fn name(self) -> &'static str {
        Flavor::NAMES[Flavor::ALL.iter().position(|&f| f == self).unwrap_or(0)]
    }

    /// The client's default key hash: twemproxy's `fnv1a_64`, MD5 for the
    /// others.
    pub fn default_hash(self) -> StableHash {
        match self {
            Flavor::Twemproxy => StableHash::Fnv1a64Twemproxy,
            _ => StableHash::Md5Le32,
        }
    }
}

impl FromStr for Flavor {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Error> {
        let at = Flavor::NAMES.iter().position(|&n| n == name);
        at.map(|i| Flavor::ALL[i])
            .ok_or_else(|| Error::InvalidParameter {
                algorithm: "ketama",
                parameter: "flavor",
                value: format!("{name:?}"),
                expected: "one of libmemcached, spymemcached, libketama, twemproxy, uhashring",
            })
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (&f, &name) in Flavor::ALL.iter().zip(Flavor::NAMES) {
            assert_eq!(name.parse::<Flavor>(), Ok(f));
            assert_eq!(f.to_string(), name);
        }
        assert!("ketama".parse::<Flavor>().is_err());
    }
}
