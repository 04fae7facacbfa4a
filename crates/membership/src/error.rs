//! The crate's one error type: what is wrong with what a membership
//! source holds or was given, and the source's own failures carried whole.

/// What went wrong reading, writing or following a membership source.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A value the source holds is not what the layout expects.
    InvalidValue {
        /// The key or path (`config` for the settings).
        key: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A setting given to a source is out of range.
    InvalidOption {
        /// The setting (`ttl`, `name`, `url`, ...).
        option: &'static str,
        /// What it needs to be.
        message: String,
    },
    /// Another live member holds the name: two processes cannot share an
    /// identity.
    NameTaken {
        /// The name.
        name: String,
        /// Where it is held (a key, a znode path, a gossip address).
        key: String,
        /// Who holds it, in the source's words (`lease 7587...`, `session
        /// 0x1000...`, `the member at 127.0.0.1:7001`).
        holder: String,
    },
    /// The cluster description was refused by ringwise.
    Cluster(ringwise::Error),
    /// The source could not be reached, or refused who asked: its own
    /// error, whole (a caller that knows the source may downcast it, as
    /// the CLI does to name the option at fault).
    Unavailable {
        /// The source's kind: `etcd`, `zookeeper`, `gossip`.
        source: &'static str,
        /// The source's error.
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidValue { key, message } => write!(f, "{key}: {message}"),
            Error::InvalidOption { option, message } => write!(f, "{option}: {message}"),
            Error::NameTaken { name, key, holder } => write!(
                f,
                "node name \"{name}\" is taken: {key} is held by {holder}; two processes \
                 cannot share an identity, choose another --name"
            ),
            Error::Cluster(e) => e.fmt(f),
            Error::Unavailable { error, .. } => error.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Display already says the inner error: chaining it again
            // would print it twice (`{:#}` in anyhow).
            Error::Cluster(e) => e.source(),
            Error::Unavailable { error, .. } => error.source(),
            _ => None,
        }
    }
}

impl From<ringwise::Error> for Error {
    fn from(e: ringwise::Error) -> Self {
        Error::Cluster(e)
    }
}
