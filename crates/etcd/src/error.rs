//! The crate's one error type.

use std::time::Duration;

/// What went wrong talking to etcd or reading what it holds.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An etcd call failed (connection refused, no leader, permission...).
    Etcd {
        /// The call, e.g. `"grant a lease"`.
        operation: &'static str,
        /// The client's error.
        source: etcd_client::Error,
    },
    /// An etcd call did not answer in time.
    Timeout {
        /// The call.
        operation: &'static str,
        /// How long it was given.
        after: Duration,
    },
    /// Another live lease holds the name: two processes cannot share an
    /// identity.
    NameTaken {
        /// The name.
        name: String,
        /// Its key.
        key: String,
        /// The lease holding it (0: a key without a lease, put by hand).
        lease: i64,
    },
    /// A value under the prefix is not what the layout expects.
    InvalidValue {
        /// The key (relative to the prefix for `config`).
        key: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A setting given to this crate is out of range.
    InvalidOption {
        /// The setting.
        option: &'static str,
        /// What it needs to be.
        message: String,
    },
    /// The cluster description was refused by ringwise.
    Cluster(ringwise::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Etcd { operation, source } => write!(f, "etcd: cannot {operation}: {source}"),
            Error::Timeout { operation, after } => write!(
                f,
                "etcd: cannot {operation}: no answer within {:.1} s (is etcd running and \
                 reachable at the endpoints given?)",
                after.as_secs_f64()
            ),
            Error::NameTaken { name, key, lease } => {
                let holder = if *lease == 0 {
                    "a key without a lease (written by hand: delete it to free the name)".into()
                } else {
                    format!("lease {lease:x}, which is alive")
                };
                write!(
                    f,
                    "node name {name:?} is taken: {key} is held by {holder}; two processes \
                     cannot share an identity, choose another --name"
                )
            }
            Error::InvalidValue { key, message } => write!(f, "{key}: {message}"),
            Error::InvalidOption { option, message } => write!(f, "{option}: {message}"),
            Error::Cluster(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Display already says the client's error (and tonic's errors
            // repeat their own source): chaining it again would print it
            // twice.
            Error::Etcd { .. } => None,
            Error::Cluster(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ringwise::Error> for Error {
    fn from(e: ringwise::Error) -> Self {
        Error::Cluster(e)
    }
}
