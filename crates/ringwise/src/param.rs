//! The parameters of the algorithms, declared once.
//!
//! [`for_each_param!`](crate::for_each_param) below is the only list of
//! them, as `registry!` in `algo.rs` is of the algorithms. Everything a
//! parameter needs follows from its entry:
//!
//! - here: the [`Params`] field, its default ([`Params::DEFAULT`]), the
//!   [`Param`] enum with its name, meaning, range and flag,
//!   [`Params::get`] / [`Params::set`] / [`Param::parse`] by name, and
//!   [`Params::differing`];
//! - the cluster file's field, its line in errors and its written form
//!   (`cluster/file.rs` invokes the list to declare its raw fields);
//! - the CLI's flags with their help and value ranges (`crates/cli`), the
//!   Python keyword arguments of `Placement(...)` and `simulate(...)`
//!   (`crates/py`), the JSON of `simulate` (`crates/sim`), the stub file and
//!   the reference table in `docs/cluster-file.md` (both checked by
//!   `tests/param_list.rs`).
//!
//! Adding a parameter is one entry here, the line of `READS` of each
//! algorithm that reads it, and the code that uses it; then
//! `RINGWISE_BLESS=1 cargo test -p ringwise param_list` regenerates the
//! stub's keywords and the docs table. Through `READS` the parameter also
//! joins the fingerprint, `inspect`'s header and the warning for a setting
//! the algorithm ignores; through `ClusterSpec::from_parts` it is a key of
//! a live source's `config` too. Counted by adding HAProxy's
//! `hash_balance_factor` on a throwaway branch: 20 hand edits in 9 files
//! before this list (26 in 12 when `simulate` takes it too), 2 in 2 files
//! with it.
//!
//! Each entry: the doc (the meaning, as the docs table shows it), then
//! `Variant(field: Type) { default, range (what the CLI accepts, inclusive;
//! the build checks what depends on the algorithm), flag (the long option,
//! its value name and help), simulate (whether `simulate` takes it: `No`,
//! `Always` in its JSON, or `WhenSet`, written only when not the default),
//! python (the keyword argument's Rust type and default as Python shows it)
//! }`. Ranges and defaults are numbers here, not the constants they equal,
//! so that this file depends on no algorithm; `tests/param_list.rs` checks
//! them against the constants.
//!
//! The key `hash` is not in the list: every algorithm reads it, and it is
//! parsed with its `secret` ([`crate::StableHash::from_name`]).

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::Error;
use crate::hash::StableHash;

mod flavor;
mod slot_layout;

pub use flavor::Flavor;
pub use slot_layout::SlotLayout;

/// The parameter list, handed to a macro: `for_each_param!(callback)`
/// expands to `callback! { [] entries }`, and `for_each_param!(callback,
/// extra tokens)` to `callback! { [extra tokens] entries }`. See the
/// module doc of `param.rs` for the entries' shape. Public so that the
/// CLI and the Python package derive their flags and keyword arguments
/// from it; not a stable API.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_param {
    ($callback:ident $(, $($extra:tt)*)?) => {
        $callback! {
            [$($($extra)*)?]
            /// Virtual nodes per unit of weight: a node of weight `w` gets
            /// `round(vnodes × w)` points.
            Vnodes(vnodes: u32) {
                default: DEFAULT_VNODES,
                range: Some(1..=1_000_000),
                flag: "vnodes", "V", "Virtual nodes per unit of weight (ring; default 160)",
                simulate: No,
                python: u64 = 160,
            }
            /// The lookup table size, a prime.
            TableSize(table_size: u64) {
                default: DEFAULT_TABLE_SIZE,
                range: None,
                flag: "table-size", "M", "Lookup table size, a prime (maglev; default 65537)",
                simulate: No,
                python: u64 = 65537,
            }
            /// Probes per key.
            Probes(probes: u32) {
                default: DEFAULT_PROBES,
                range: Some(1..=256),
                flag: "probes", "K", "Probes per key (multiprobe; default 21)",
                simulate: No,
                python: u64 = 21,
            }
            /// The point budget of a ring-shaped placement, up to 2^28
            /// (268435456).
            MaxPoints(max_points: u64) {
                default: DEFAULT_MAX_POINTS,
                range: Some(1..=268_435_456),
                flag: "max-points", "N", "Most points the ring may hold (ring, ketama, nginx, \
                    envoy-ring, grpc-ring, cassandra, varnish-shard; default 16777216 = 2^24, at most 268435456 = 2^28)",
                simulate: No,
                python: Option<u64> = None,
            }
            /// Which client's ketama: libmemcached, spymemcached,
            /// libketama, twemproxy or uhashring.
            Flavor(flavor: Flavor) {
                default: Flavor::Libmemcached,
                range: None,
                flag: "flavor", "NAME", "Which client's ketama (ketama; default libmemcached). \
                    twemproxy's default key hash is fnv1a64-twemproxy, the others' md5-le32",
                simulate: Always,
                python: Option<&str> = None,
            }
            /// Envoy's smallest ring (gRPC's `minRingSize`).
            MinRingSize(min_ring_size: u64) {
                default: DEFAULT_MIN_RING_SIZE,
                range: Some(1..=8_388_608),
                flag: "min-ring-size", "N",
                    "Envoy's min_ring_size, gRPC's minRingSize (envoy-ring, grpc-ring; default \
                    1024, 1 to 8388608)",
                simulate: Always,
                python: u64 = 1024,
            }
            /// Envoy's largest ring, at most 8388608 (gRPC's `maxRingSize`,
            /// whose own default is 4096).
            MaxRingSize(max_ring_size: u64) {
                default: DEFAULT_MAX_RING_SIZE,
                range: Some(1..=8_388_608),
                flag: "max-ring-size", "N",
                    "Envoy's max_ring_size, gRPC's maxRingSize (envoy-ring, grpc-ring; default \
                    and at most 8388608; gRPC's default 4096)",
                simulate: Always,
                python: u64 = 8388608,
            }
            /// gRPC's channel argument `grpc.lb.ring_hash.ring_size_cap`:
            /// both ring sizes are capped to it.
            RingSizeCap(ring_size_cap: u64) {
                default: DEFAULT_RING_SIZE_CAP,
                range: Some(1..=2_147_483_647),
                flag: "ring-size-cap", "N",
                    "gRPC's grpc.lb.ring_hash.ring_size_cap: caps min and max ring size \
                    (grpc-ring; default 4096)",
                simulate: WhenSet,
                python: u64 = 4096,
            }
            /// Tokens per unit of weight of a node whose tokens are not given.
            NumTokens(num_tokens: u32) {
                default: DEFAULT_NUM_TOKENS,
                range: Some(1..=1_000_000),
                flag: "num-tokens", "N", "Tokens per unit of weight of a node whose tokens the \
                    cluster file does not list (cassandra; default 16)",
                simulate: Always,
                python: u64 = 16,
            }
            /// How slots are dealt to nodes that list none: `redis-cli`
            /// (what `redis-cli --cluster create` assigns the masters, in
            /// name order) or `even` (node i of N gets slots i·16384/N up
            /// to (i+1)·16384/N).
            SlotLayout(slot_layout: SlotLayout) {
                default: SlotLayout::RedisCli,
                range: None,
                flag: "slot-layout", "NAME", "How slots are dealt to nodes that list none \
                    (slots; default redis-cli: as `redis-cli --cluster create`; even: \
                    i·16384/N)",
                simulate: No,
                python: Option<&str> = None,
            }
            /// Points per unit of weight of a Varnish shard director, its
            /// `reconfigure(replicas)`: a backend of weight `w` gets
            /// `trunc(replicas × w)` points.
            ShardReplicas(shard_replicas: u32) {
                default: DEFAULT_SHARD_REPLICAS,
                range: Some(1..=268_435_456),
                flag: "shard-replicas", "N", "Points per unit of weight, Varnish's \
                    reconfigure(replicas) (varnish-shard; default 67)",
                simulate: WhenSet,
                python: u64 = 67,
            }
            /// HAProxy's `avalanche`: the key hash goes through `full_hash`
            /// (Jenkins' 32-bit integer hash) before the lookup.
            Avalanche(avalanche: bool) {
                default: false,
                range: None,
                flag: "avalanche", "BOOL", "Mix the key hash with full_hash first, as \
                    `hash-type consistent <fn> avalanche` (haproxy; true or false, default \
                    false)",
                simulate: No,
                python: Option<bool> = None,
            }
            /// Points per node of groupcache's `consistenthash.New(replicas,
            /// fn)`: node `n` gets `crc32(itoa(i) + n)` for `i < replicas`.
            GroupcacheReplicas(groupcache_replicas: u32) {
                default: DEFAULT_GROUPCACHE_REPLICAS,
                range: Some(1..=1_000_000),
                flag: "groupcache-replicas", "N", "Points per node, groupcache's \
                    consistenthash.New(replicas, fn) (groupcache; default 50, as its HTTPPool)",
                simulate: WhenSet,
                python: u64 = 50,
            }
            /// The fixed number of buckets, working or not, up to 4194304;
            /// 0: twice the nodes built with, at least 256.
            Capacity(capacity: u32) {
                default: 0,
                range: Some(1..=4_194_304),
                flag: "capacity", "N", "Fixed number of buckets, working or not (anchor, dx; \
                    default twice the nodes, at least 256; at most 4194304). A new capacity \
                    moves keys",
                simulate: WhenSet,
                python: Option<u64> = None,
            }
        }
    };
}

/// Default virtual nodes per unit of weight of the ring (ketama's 160).
pub const DEFAULT_VNODES: u32 = 160;

/// Default Maglev table size: Envoy's and the paper's, a prime.
pub const DEFAULT_TABLE_SIZE: u64 = 65_537;

/// Default multi-probe probes per key: the paper's recommendation, peak
/// to mean load about 1.05.
pub const DEFAULT_PROBES: u32 = 21;

/// The default point budget: [`crate::MAX_POINTS`].
const DEFAULT_MAX_POINTS: u64 = 1 << 24;

/// Envoy ring_hash's default smallest ring.
pub(crate) const DEFAULT_MIN_RING_SIZE: u64 = 1024;

/// Envoy ring_hash's default (and largest allowed) ring.
pub const DEFAULT_MAX_RING_SIZE: u64 = 8_388_608;

/// gRPC ring_hash's default ring-size cap (its channel argument
/// `grpc.lb.ring_hash.ring_size_cap`).
pub const DEFAULT_RING_SIZE_CAP: u64 = 4096;

/// Cassandra's default `num_tokens` since 4.0.
pub(crate) const DEFAULT_NUM_TOKENS: u32 = 16;

/// Varnish's shard director: `reconfigure()`'s default replicas.
pub(crate) const DEFAULT_SHARD_REPLICAS: u32 = 67;

/// groupcache's `HTTPPool`: `defaultReplicas`.
pub(crate) const DEFAULT_GROUPCACHE_REPLICAS: u32 = 50;

/// Anchor and Dx: the capacity when none is set (`capacity = 0`): twice the
/// nodes built with, and at least this many buckets.
pub const MIN_DEFAULT_CAPACITY: u32 = 256;

/// Anchor and Dx: the largest capacity. AnchorHash keeps 20 bytes per
/// bucket (its four arrays of the paper, the last three of them touched only by
/// membership changes, plus the bucket → node map), so 2^22 buckets are 80
/// MiB: about the 64 MiB line at which the other builds reserve their peak
/// first, and 4 × [`crate::MAX_NODES`], room for any cluster ringwise
/// accepts to grow fourfold.
pub const MAX_CAPACITY: u32 = 1 << 22;

/// Whether `simulate` (CLI and Python) takes a parameter, and how its JSON
/// document shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InSimulate {
    /// Not a `simulate` option (the experiments choose it, or no
    /// experiment needs it).
    No,
    /// An option, always written in the JSON's `algorithm_params`.
    Always,
    /// An option, written only when it is not the default (so documents of
    /// runs from before it existed stay as they were).
    WhenSet,
}

/// The value of one parameter, whatever its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamValue {
    /// A whole number (counts, sizes).
    Count(u64),
    /// A ketama flavour.
    Flavor(Flavor),
    /// A slot layout.
    SlotLayout(SlotLayout),
    /// On or off.
    Bool(bool),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Count(n) => write!(f, "{n}"),
            ParamValue::Flavor(flavor) => f.write_str(flavor.name()),
            ParamValue::SlotLayout(layout) => f.write_str(layout.name()),
            ParamValue::Bool(on) => write!(f, "{on}"),
        }
    }
}

/// The types a parameter can have, and how each converts.
pub trait ParamType: Copy + PartialEq + fmt::Display + Sized {
    /// What the docs and errors call the values (`a whole number from 0 to
    /// 4294967295`).
    const EXPECTED: &'static str;
    /// The value, untyped.
    fn to_value(self) -> ParamValue;
    /// The typed value, `None` for one of another type or out of the
    /// type's range.
    fn from_value(value: ParamValue) -> Option<Self>;
    /// Parses the value of `param` from text (a command line, a JSON
    /// string), or says what is wrong with it.
    fn parse(param: Param, text: &str) -> Result<Self, Error>;
}

impl ParamType for u32 {
    const EXPECTED: &'static str = "a whole number from 0 to 4294967295";
    fn to_value(self) -> ParamValue {
        ParamValue::Count(self.into())
    }
    fn from_value(value: ParamValue) -> Option<Self> {
        match value {
            ParamValue::Count(n) => u32::try_from(n).ok(),
            _ => None,
        }
    }
    fn parse(param: Param, text: &str) -> Result<Self, Error> {
        text.trim()
            .parse()
            .map_err(|_| param.refuse(&format!("{text:?}")))
    }
}

impl ParamType for u64 {
    const EXPECTED: &'static str = "a whole number (0 or more)";
    fn to_value(self) -> ParamValue {
        ParamValue::Count(self)
    }
    fn from_value(value: ParamValue) -> Option<Self> {
        match value {
            ParamValue::Count(n) => Some(n),
            _ => None,
        }
    }
    fn parse(param: Param, text: &str) -> Result<Self, Error> {
        text.trim()
            .parse()
            .map_err(|_| param.refuse(&format!("{text:?}")))
    }
}

impl ParamType for bool {
    const EXPECTED: &'static str = "true or false";
    fn to_value(self) -> ParamValue {
        ParamValue::Bool(self)
    }
    fn from_value(value: ParamValue) -> Option<Self> {
        match value {
            ParamValue::Bool(on) => Some(on),
            _ => None,
        }
    }
    fn parse(param: Param, text: &str) -> Result<Self, Error> {
        match text.trim() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(param.refuse(&format!("{text:?}"))),
        }
    }
}

impl ParamType for Flavor {
    const EXPECTED: &'static str =
        "one of libmemcached, spymemcached, libketama, twemproxy, uhashring";
    fn to_value(self) -> ParamValue {
        ParamValue::Flavor(self)
    }
    fn from_value(value: ParamValue) -> Option<Self> {
        match value {
            ParamValue::Flavor(flavor) => Some(flavor),
            _ => None,
        }
    }
    /// Flavor's own error, naming the flavours.
    fn parse(_: Param, text: &str) -> Result<Self, Error> {
        text.parse()
    }
}

impl ParamType for SlotLayout {
    const EXPECTED: &'static str = "one of redis-cli, even";
    fn to_value(self) -> ParamValue {
        ParamValue::SlotLayout(self)
    }
    fn from_value(value: ParamValue) -> Option<Self> {
        match value {
            ParamValue::SlotLayout(layout) => Some(layout),
            _ => None,
        }
    }
    /// SlotLayout's own error, naming the layouts.
    fn parse(_: Param, text: &str) -> Result<Self, Error> {
        text.parse()
    }
}

/// Declares [`Params`], [`Param`] and their conversions from the list.
macro_rules! declare {
    ([] $(
        $(#[doc = $doc:literal])*
        $variant:ident($field:ident: $ty:ty) {
            default: $default:expr,
            range: $range:expr,
            flag: $flag:literal, $value_name:literal, $help:literal,
            simulate: $simulate:ident,
            python: $pyty:ty = $pydefault:tt,
        }
    )+) => {
        /// The parameters that only some algorithms read; each ignores the
        /// rest ([`crate::Algorithm::reads`]). Declared by the parameter
        /// list ([`Param`]); `hash` is the key hash every algorithm reads.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct Params {
            /// The hash of keys, and of the ring's points.
            pub hash: StableHash,
            $($(#[doc = $doc])* pub $field: $ty,)+
        }

        /// One parameter of [`Params`] (not the hash), by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Param {
            $($(#[doc = $doc])* $variant,)+
        }

        impl Params {
            /// Every algorithm's default.
            pub const DEFAULT: Params = Params {
                hash: StableHash::Xxh3,
                $($field: $default,)+
            };

            /// The names of the parameters as a cluster file spells them
            /// (of [`Param::ALL`]), except `hash`, which every algorithm
            /// reads (it hashes the keys).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field),)+];

            /// The value of `param`.
            pub fn get(&self, param: Param) -> ParamValue {
                match param {
                    $(Param::$variant => self.$field.to_value(),)+
                }
            }

            /// Sets `param` to `value`; refuses a value of another type or
            /// outside the type (nothing changes then). Ranges that depend
            /// on the algorithm (a prime table size...) are the build's.
            pub fn set(&mut self, param: Param, value: ParamValue) -> Result<(), Error> {
                match param {
                    $(Param::$variant => {
                        self.$field = <$ty as ParamType>::from_value(value)
                            .ok_or_else(|| param.refuse(&value.to_string()))?;
                    })+
                }
                Ok(())
            }
        }

        impl Param {
            /// Every parameter, in the list's order.
            pub const ALL: &'static [Param] = &[$(Param::$variant,)+];

            /// The name, as a cluster file, JSON and Python spell it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Param::$variant => stringify!($field),)+
                }
            }

            /// What it means (the docs table's words).
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Param::$variant => concat!($($doc, "\n",)+),)+
                }
            }

            /// The command-line option, without `--`.
            pub fn flag(self) -> &'static str {
                match self {
                    $(Param::$variant => $flag,)+
                }
            }

            /// The option's value name (`--vnodes <V>`).
            pub fn value_name(self) -> &'static str {
                match self {
                    $(Param::$variant => $value_name,)+
                }
            }

            /// The option's help.
            pub fn help(self) -> &'static str {
                match self {
                    $(Param::$variant => $help,)+
                }
            }

            /// The whole numbers the command line accepts (inclusive), for
            /// a count; `None` when any value of the type may be tried.
            pub fn range(self) -> Option<RangeInclusive<u64>> {
                match self {
                    $(Param::$variant => $range,)+
                }
            }

            /// Whether `simulate` takes it.
            pub fn in_simulate(self) -> InSimulate {
                match self {
                    $(Param::$variant => InSimulate::$simulate,)+
                }
            }

            /// What its values are, in words.
            pub fn expected(self) -> &'static str {
                match self {
                    $(Param::$variant => <$ty as ParamType>::EXPECTED,)+
                }
            }

            /// Its value parsed from `text` (its type's syntax only).
            pub fn parse(self, text: &str) -> Result<ParamValue, Error> {
                match self {
                    $(Param::$variant => <$ty as ParamType>::parse(self, text).map(ParamType::to_value),)+
                }
            }
        }
    };
}

for_each_param!(declare);

impl Param {
    /// The error for a value not of the parameter's type: vnodes keeps its
    /// own variant, the others are [`Error::InvalidParameter`].
    fn refuse(self, value: &str) -> Error {
        if self == Param::Vnodes
            && let Ok(vnodes) = value.parse()
        {
            return Error::InvalidVnodes { vnodes };
        }
        Error::InvalidParameter {
            algorithm: "placement",
            parameter: self.name(),
            value: value.to_owned(),
            expected: self.expected(),
        }
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parameter equals its name: `Algorithm::Ring.reads() == ["vnodes",
/// "max_points"]`.
impl PartialEq<&str> for Param {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

impl FromStr for Param {
    type Err = Error;

    /// A name of [`Params::NAMES`].
    fn from_str(name: &str) -> Result<Self, Error> {
        Param::ALL
            .iter()
            .copied()
            .find(|p| p.name() == name)
            .ok_or_else(|| Error::ClusterFile {
                line: None,
                field: Some(name.to_owned()),
                message: format!(
                    "unknown parameter `{name}`: expected one of hash, {}",
                    Params::NAMES.join(", ")
                ),
            })
    }
}

impl Param {
    /// Refuses a value that parses as the parameter's type but that a
    /// description may not give: `capacity = 0`, which [`Params`] keeps as
    /// "not set" (twice the nodes, at least 256), so a written 0 would
    /// silently mean the default. Called by `ClusterSpec::from_parts`, the
    /// one entrance of every description (a cluster file, an etcd config,
    /// Python's keywords); [`Params::set`] still takes 0 as "unset".
    pub fn check_given(self, value: ParamValue) -> Result<(), Error> {
        if self == Param::Capacity && value == ParamValue::Count(0) {
            return Err(Error::InvalidParameter {
                algorithm: "anchor, dx",
                parameter: "capacity",
                value: "0".into(),
                expected: "a bucket count from 1 to 4194304 (2^22), and at least the \
                           number of nodes; leave `capacity` out for the default, twice \
                           the nodes (at least 256)",
            });
        }
        Ok(())
    }
}

impl Params {
    /// The parameters whose value differs between `self` and `other`, in
    /// the list's order.
    pub fn differing(&self, other: &Params) -> Vec<Param> {
        Param::ALL
            .iter()
            .copied()
            .filter(|&p| self.get(p) != other.get(p))
            .collect()
    }

    /// The value of the parameter `name` (one of [`Params::NAMES`]) as
    /// text, as a cluster file writes it; empty for an unknown name.
    pub fn value(&self, name: &str) -> String {
        name.parse::<Param>()
            .map(|p| self.get(p).to_string())
            .unwrap_or_default()
    }

    /// The capacity `algorithm` (anchor, dx) builds `nodes` nodes with: `capacity`, or
    /// when 0 twice the nodes (at least [`MIN_DEFAULT_CAPACITY`]). Refuses
    /// one below the node count or above [`MAX_CAPACITY`].
    pub fn capacity_for(&self, algorithm: &'static str, nodes: usize) -> Result<u32, Error> {
        let nodes = u32::try_from(nodes).unwrap_or(u32::MAX);
        if self.capacity == 0 {
            return Ok(nodes
                .saturating_mul(2)
                .clamp(MIN_DEFAULT_CAPACITY, MAX_CAPACITY));
        }
        if self.capacity < nodes || self.capacity > MAX_CAPACITY {
            return Err(Error::InvalidParameter {
                algorithm,
                parameter: "capacity",
                value: format!("{} (for {nodes} nodes)", self.capacity),
                expected: "a bucket count from the number of nodes up to 4194304 (2^22): \
                           every node needs a bucket, and each bucket costs up to 20 bytes; \
                           leave it out for twice the nodes (at least 256)",
            });
        }
        Ok(self.capacity)
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_round_trips_by_name() {
        assert_eq!(Param::ALL.len(), Params::NAMES.len());
        for &p in Param::ALL {
            assert_eq!(p.name().parse::<Param>(), Ok(p));
            let mut params = Params::DEFAULT;
            let value = params.get(p);
            params.set(p, value).expect("its own value");
            assert_eq!(params, Params::DEFAULT);
            assert_eq!(p.parse(&value.to_string()), Ok(value));
            assert!(p.help().len() > 10 && !p.help().ends_with('.'));
        }
        assert!("vnode".parse::<Param>().is_err());
    }

    #[test]
    fn a_value_of_the_wrong_type_changes_nothing() {
        let mut params = Params::DEFAULT;
        let e = params.set(Param::Vnodes, ParamValue::Count(1 << 40));
        assert_eq!(e, Err(Error::InvalidVnodes { vnodes: 1 << 40 }));
        let e = params.set(Param::Probes, ParamValue::Flavor(Flavor::Twemproxy));
        assert!(matches!(
            e,
            Err(Error::InvalidParameter {
                parameter: "probes",
                ..
            })
        ));
        assert!(Param::Flavor.parse("ketama").is_err());
        assert_eq!(params, Params::DEFAULT);
        params
            .set(Param::TableSize, ParamValue::Count(251))
            .expect("a u64");
        assert_eq!(params.differing(&Params::DEFAULT), ["table_size"]);
        assert_eq!(params.value("table_size"), "251");
    }
}
