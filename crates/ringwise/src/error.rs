//! The one error type of the crate.
//!
//! Every variant carries the offending value and says how to fix it, so a
//! caller can print it as is. Builders return these before anything changes:
//! a failed build or membership change leaves the previous snapshot intact.

use std::fmt;

use crate::budget::{MAX_POINTS_CEILING, MAX_VNODES, PEAK_BYTES_PER_POINT};
use crate::node::limits::{MAX_WEIGHT, MIN_WEIGHT};

/// Everything that can go wrong when describing a cluster.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A node name was empty, too long or held a control character.
    InvalidName { name: String, reason: &'static str },
    /// Two nodes share a name.
    DuplicateNode { name: String },
    /// A weight was not finite, below [`crate::MIN_WEIGHT`] or above
    /// [`crate::MAX_WEIGHT`].
    InvalidWeight { node: String, weight: f64 },
    /// A zone name was empty, longer than [`crate::MAX_NAME_LEN`] bytes or
    /// held a control character (the rule of node names).
    InvalidZone {
        node: String,
        zone: String,
        reason: &'static str,
    },
    /// A datacenter name broke the rule of zone names.
    InvalidDatacenter {
        node: String,
        datacenter: String,
        reason: &'static str,
    },
    /// A node's numeric id (`id = N`) is out of range, or the placement
    /// cannot tell it from another node's.
    InvalidNodeId {
        node: String,
        id: u64,
        reason: &'static str,
    },
    /// `vnodes` was 0 or above [`crate::MAX_VNODES`].
    InvalidVnodes { vnodes: u64 },
    /// The ring would hold more points than its budget `limit`
    /// ([`crate::MAX_POINTS`] unless raised).
    TooManyPoints { points: u64, limit: u64 },
    /// A cluster of more than [`crate::MAX_NODES`] nodes.
    TooManyNodes { nodes: u64, limit: u64 },
    /// The memory a build peaks at (its documented peak, e.g.
    /// [`PEAK_BYTES_PER_POINT`] per ring point) could not be
    /// reserved: the process's memory limit is lower.
    OutOfMemory { what: &'static str, bytes: u64 },
    /// A membership change named a node that is not in the cluster.
    UnknownNode { name: String },
    /// A hash name that ringwise does not know.
    UnknownHash {
        name: String,
        /// The names that would have been accepted.
        known: &'static [&'static str],
    },
    /// An algorithm name that ringwise does not know.
    UnknownAlgorithm {
        name: String,
        /// The names that would have been accepted.
        known: &'static [&'static str],
    },
    /// `siphash` was chosen without a secret, or a secret was malformed.
    InvalidSecret { reason: String },
    /// An algorithm parameter is out of range (a table size that is not
    /// prime, zero probes, a slot number past the last slot...).
    InvalidParameter {
        algorithm: &'static str,
        parameter: &'static str,
        value: String,
        expected: &'static str,
    },
    /// The algorithm cannot do this by construction (jump hash cannot
    /// remove a node from the middle, nor weigh nodes).
    Unsupported {
        algorithm: &'static str,
        operation: String,
        reason: &'static str,
        /// The node whose weight or points the algorithm cannot take, when
        /// one is at fault (a cluster file names its line).
        node: Option<String>,
    },
    /// A node could not join an `anchor` or `dx` cluster: every one of its
    /// `capacity` buckets is in use.
    CapacityFull {
        algorithm: &'static str,
        capacity: u32,
        node: String,
    },
    /// Points, tokens or slots given by hand do not fit: a slot owned twice
    /// or by no one, a token given to two nodes, a field the algorithm does
    /// not read.
    InvalidLayout {
        node: Option<String>,
        message: String,
    },
    /// A cluster file could not be parsed or failed validation.
    ClusterFile {
        line: Option<usize>,
        field: Option<String>,
        message: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidName { name, reason } => {
                write!(f, "invalid node name {name:?}: {reason}")
            }
            Error::DuplicateNode { name } => write!(
                f,
                "duplicate node {name:?}: every node needs a unique name; remove or rename one"
            ),
            Error::InvalidWeight { node, weight } => write!(
                f,
                "node {node:?} has weight {}: a weight must be a number from {:e} \
                 to {}",
                short(*weight),
                MIN_WEIGHT,
                MAX_WEIGHT
            ),
            Error::InvalidZone { node, zone, reason } => {
                // A zone too long to be one is shown by its length and start.
                let shown: String = zone.chars().take(64).collect();
                let more = match shown.len() < zone.len() {
                    true => format!("... ({} bytes)", zone.len()),
                    false => String::new(),
                };
                write!(
                    f,
                    "node {node:?} has zone {shown:?}{more}: {reason}; a zone is 1 to 1024 \
                     bytes of text without control characters, like a node name (leave it \
                     out if the node has none)"
                )
            }
            Error::InvalidDatacenter {
                node,
                datacenter,
                reason,
            } => {
                let shown: String = datacenter.chars().take(64).collect();
                let more = match shown.len() < datacenter.len() {
                    true => format!("... ({} bytes)", datacenter.len()),
                    false => String::new(),
                };
                write!(
                    f,
                    "node {node:?} has datacenter {shown:?}{more}: {reason}; a datacenter is \
                     1 to 1024 bytes of text without control characters, like a node name"
                )
            }
            Error::InvalidNodeId { node, id, reason } => {
                write!(f, "node {node:?} has id {id}: {reason}")
            }
            Error::InvalidVnodes { vnodes } => write!(
                f,
                "vnodes = {vnodes}: use between 1 and {} virtual nodes per unit of weight",
                MAX_VNODES
            ),
            Error::TooManyPoints { points, limit } => write!(
                f,
                "the ring would hold {points} points, more than its budget of {limit}: \
                 lower vnodes or the weights, or raise the budget up to {} \
                 (`max_points` in a cluster file, --max-points on the command line, \
                 Params::max_points in the library); building {points} points needs \
                 about {} of memory ({} bytes per point at its peak)",
                MAX_POINTS_CEILING,
                mebibytes(points.saturating_mul(PEAK_BYTES_PER_POINT)),
                PEAK_BYTES_PER_POINT
            ),
            Error::TooManyNodes { nodes, limit } => write!(
                f,
                "{nodes} nodes are more than the {limit} one cluster may have: \
                 split the cluster, or check the input for a runaway list"
            ),
            Error::OutOfMemory { what, bytes } => write!(
                f,
                "{what} needs about {} at its peak, which this process cannot \
                 allocate: raise the memory limit, or lower vnodes, the weights or \
                 the table size",
                mebibytes(*bytes)
            ),
            Error::UnknownNode { name } => write!(f, "no node named {name:?} in the cluster"),
            Error::CapacityFull {
                algorithm,
                capacity,
                node,
            } => write!(
                f,
                "node {node:?} cannot join: this {algorithm} cluster has all of its \
                 {capacity} buckets in use (capacity = {capacity}); remove a node first, or \
                 rebuild with a larger `capacity` (a new capacity moves keys)"
            ),
            Error::UnknownHash { name, known } => write!(
                f,
                "unknown hash {name:?}: expected one of {}",
                known.join(", ")
            ),
            Error::UnknownAlgorithm { name, known } => write!(
                f,
                "unknown algorithm {name:?}: expected one of {}",
                known.join(", ")
            ),
            Error::InvalidSecret { reason } => write!(f, "invalid secret: {reason}"),
            Error::InvalidParameter {
                algorithm,
                parameter,
                value,
                expected,
            } => write!(
                f,
                "{algorithm}: {parameter} = {value} is not allowed: expected {expected}"
            ),
            Error::Unsupported {
                algorithm,
                operation,
                reason,
                ..
            } => write!(f, "{algorithm} cannot {operation}: {reason}"),
            Error::InvalidLayout { node, message } => match node {
                Some(node) => write!(f, "node {node:?}: {message}"),
                None => f.write_str(message),
            },
            Error::ClusterFile {
                line,
                field,
                message,
            } => {
                f.write_str("cluster file")?;
                if let Some(line) = line {
                    write!(f, ", line {line}")?;
                }
                if let Some(field) = field {
                    write!(f, ", field `{field}`")?;
                }
                write!(f, ": {message}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Bytes in MiB, e.g. `6400 MiB`.
fn mebibytes(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

/// A number as written when that is short (`0.5`, `2000000`), in
/// scientific notation otherwise (`1e-308`, not 308 digits).
fn short(x: f64) -> String {
    let plain = x.to_string();
    match plain.len() <= 12 {
        true => plain,
        false => format!("{x:e}"),
    }
}
