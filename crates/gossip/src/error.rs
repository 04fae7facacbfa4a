//! The crate's one error type. Each variant says what failed, where, and
//! what to do; [`From`] maps it onto `ringwise_membership::Error` the way
//! every source does (a name held stays `NameTaken`, a bad setting is
//! `InvalidOption`, the rest is `Unavailable { source: "gossip" }` with
//! this error whole inside, so a caller can downcast it).

/// What went wrong joining, following or changing a gossip cluster.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting is out of range (the URL, the seeds, the ttl, a name).
    InvalidOption {
        /// The setting (`membership`, `seeds`, `ttl`, `name`, ...).
        option: &'static str,
        /// What it needs to be.
        message: String,
    },
    /// The own gossip address could not be resolved or bound.
    Bind {
        /// The address given (`HOST:PORT`).
        address: String,
        /// Why.
        error: std::io::Error,
    },
    /// The gossip engine (chitchat) refused to start.
    Engine {
        /// What was being done.
        what: &'static str,
        /// chitchat's own words.
        message: String,
    },
    /// No seed answered within the wait: nobody to read the cluster from.
    NoPeer {
        /// The seeds tried.
        seeds: Vec<String>,
        /// How long it waited.
        waited: std::time::Duration,
    },
    /// The settings could not be handed to a member: with no store, only
    /// the members keep them (every member re-announces the highest seen).
    NotSpread {
        /// Why (no member in the view, or no member echoed them in time).
        message: String,
    },
    /// Another live member announces the name.
    NameTaken {
        /// The name.
        name: String,
        /// The gossip address of the member holding it.
        holder: String,
    },
    /// What the cluster holds is not valid (a bad config), or ringwise
    /// refused the description.
    Membership(ringwise_membership::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidOption { option, message } => write!(f, "{option}: {message}"),
            Error::Bind { address, error } => write!(
                f,
                "gossip: cannot listen on {address}/UDP: {error}; give an address of this \
                 host that peers can reach (port 0 picks a free one)"
            ),
            Error::Engine { what, message } => write!(f, "gossip: cannot {what}: {message}"),
            Error::NoPeer { seeds, waited } => write!(
                f,
                "gossip: no seed answered in {:.1} s (seeds {}); start a member there first, \
                 or check the addresses and the cluster id",
                waited.as_secs_f64(),
                seeds.join(",")
            ),
            Error::NotSpread { message } => write!(f, "gossip: settings not kept: {message}"),
            Error::NameTaken { name, holder } => write!(
                f,
                "node name \"{name}\" is taken by the member at {holder}; choose another --name"
            ),
            Error::Membership(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bind { error, .. } => Some(error),
            Error::Membership(e) => e.source(),
            _ => None,
        }
    }
}

impl From<ringwise_membership::Error> for Error {
    fn from(e: ringwise_membership::Error) -> Self {
        match e {
            ringwise_membership::Error::InvalidOption { option, message } => {
                Error::InvalidOption { option, message }
            }
            e => Error::Membership(e),
        }
    }
}

impl From<ringwise::Error> for Error {
    fn from(e: ringwise::Error) -> Self {
        Error::Membership(e.into())
    }
}

impl From<Error> for ringwise_membership::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidOption { option, message } => {
                ringwise_membership::Error::InvalidOption { option, message }
            }
            Error::NameTaken { name, holder } => ringwise_membership::Error::NameTaken {
                key: format!("gossip node {name}"),
                name,
                holder: format!("the member at {holder}"),
            },
            Error::Membership(e) => e,
            e => ringwise_membership::Error::Unavailable {
                source: "gossip",
                error: Box::new(e),
            },
        }
    }
}
