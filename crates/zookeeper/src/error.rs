//! The crate's one error type, and how ZooKeeper's errors become it.
//!
//! ZooKeeper answers with an error code per request (`NoAuth`,
//! `NodeExists`, `SessionExpired`, ...) and the client adds its own (no
//! host answered, a timeout). [`Error::ZooKeeper`] keeps the code whole
//! and says what was being done, at which path, and what to do about it;
//! the codes a caller acts on have variants of their own. Conversion into
//! `ringwise_membership::Error` keeps `NameTaken` and bad options as they
//! are and carries everything else as `Unavailable { source: "zookeeper" }`.

use zookeeper_client as zk;

/// What went wrong talking to ZooKeeper or with what it holds.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting given to this crate is out of range (a host, the ttl, a
    /// prefix).
    InvalidOption {
        /// The setting.
        option: &'static str,
        /// What it needs to be.
        message: String,
    },
    /// Another live session holds the member's name.
    NameTaken {
        /// The name.
        name: String,
        /// Its znode.
        key: String,
        /// `session 0x...`: the ephemeral owner.
        holder: String,
    },
    /// The server refused this client's identity: an ACL that does not
    /// grant it (`NoAuth`) or credentials it does not accept.
    Refused {
        /// What was being done (`list the members`).
        action: &'static str,
        /// The znode.
        path: String,
        /// Whether the session authenticated at all.
        authenticated: bool,
    },
    /// ZooKeeper (or the client) failed a request.
    ZooKeeper {
        /// What was being done.
        action: &'static str,
        /// The znode, or the servers for a connection.
        path: String,
        /// ZooKeeper's error.
        error: zk::Error,
    },
    /// The shared layer refused something (a bad member value, a bad
    /// config, a ring that cannot be built).
    Membership(ringwise_membership::Error),
}

impl Error {
    /// A ZooKeeper error while doing `action` on `path`.
    pub(crate) fn zk(action: &'static str, path: &str, error: zk::Error) -> Self {
        Error::ZooKeeper {
            action,
            path: path.to_owned(),
            error,
        }
    }

    /// Whether a new session (or a new attempt) may succeed: the servers
    /// away, the session lost. `false` for refusals and bad input.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::ZooKeeper { error, .. } => matches!(
                error,
                zk::Error::ConnectionLoss
                    | zk::Error::SessionExpired
                    | zk::Error::Timeout
                    | zk::Error::NoHosts
                    | zk::Error::ClientClosed
                    | zk::Error::SessionMoved
                    | zk::Error::Throttled
            ),
            _ => false,
        }
    }
}

/// Maps a client error to this crate's: refusals get their own variant.
pub(crate) fn classify(
    action: &'static str,
    path: &str,
    authenticated: bool,
    error: zk::Error,
) -> Error {
    match error {
        zk::Error::NoAuth | zk::Error::AuthFailed => Error::Refused {
            action,
            path: path.to_owned(),
            authenticated,
        },
        error => Error::zk(action, path, error),
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidOption { option, message } => write!(f, "{option}: {message}"),
            Error::NameTaken { name, key, holder } => write!(
                f,
                "node name \"{name}\" is taken: {key} is held by {holder}; two processes \
                 cannot share an identity, choose another --name"
            ),
            Error::Refused {
                action,
                path,
                authenticated: false,
            } => write!(
                f,
                "cannot {action}: ZooKeeper refused access to {path} (NoAuth): its ACL \
                 grants a digest identity; give the user and password it was created with \
                 (with_digest, or ?digest=USER:PASSWORD in a zk:// URL)"
            ),
            Error::Refused { action, path, .. } => write!(
                f,
                "cannot {action}: ZooKeeper refused access to {path} (NoAuth or bad \
                 credentials): the digest user and password given are not the ones its ACL \
                 grants"
            ),
            Error::ZooKeeper {
                action,
                path,
                error,
            } => {
                write!(f, "cannot {action} ({path}): {error}")?;
                match error {
                    zk::Error::NoHosts | zk::Error::Timeout | zk::Error::ConnectionLoss => write!(
                        f,
                        "; is ZooKeeper running and reachable there? (check HOST:PORT)"
                    ),
                    zk::Error::SessionExpired => {
                        write!(
                            f,
                            "; the session expired (it was away longer than its timeout)"
                        )
                    }
                    _ => Ok(()),
                }
            }
            Error::Membership(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ZooKeeper { error, .. } => Some(error),
            Error::Membership(e) => e.source(),
            _ => None,
        }
    }
}

impl From<ringwise_membership::Error> for Error {
    fn from(e: ringwise_membership::Error) -> Self {
        match e {
            ringwise_membership::Error::NameTaken { name, key, holder } => {
                Error::NameTaken { name, key, holder }
            }
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
            Error::NameTaken { name, key, holder } => {
                ringwise_membership::Error::NameTaken { name, key, holder }
            }
            Error::InvalidOption { option, message } => {
                ringwise_membership::Error::InvalidOption { option, message }
            }
            Error::Membership(e) => e,
            e => ringwise_membership::Error::Unavailable {
                source: "zookeeper",
                error: Box::new(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_keep_what_a_caller_acts_on() {
        let taken = Error::NameTaken {
            name: "a".into(),
            key: "/p/nodes/a".into(),
            holder: "session 0x1".into(),
        };
        match ringwise_membership::Error::from(taken) {
            ringwise_membership::Error::NameTaken { holder, .. } => {
                assert_eq!(holder, "session 0x1")
            }
            other => panic!("{other:?}"),
        }
        let bad = Error::InvalidOption {
            option: "prefix",
            message: "no".into(),
        };
        assert!(matches!(
            ringwise_membership::Error::from(bad),
            ringwise_membership::Error::InvalidOption {
                option: "prefix",
                ..
            }
        ));
        let lost = Error::zk("list the members", "/p", zk::Error::ConnectionLoss);
        assert!(lost.is_transient());
        let text = lost.to_string();
        assert!(
            text.starts_with("cannot list the members (/p): ") && text.contains("reachable"),
            "{text}"
        );
        match ringwise_membership::Error::from(lost) {
            ringwise_membership::Error::Unavailable { source, error } => {
                assert_eq!(source, "zookeeper");
                assert!(
                    error.downcast_ref::<Error>().is_some(),
                    "downcast to this crate's error"
                );
            }
            other => panic!("{other:?}"),
        }
        let refused = classify("read the config", "/p/config", false, zk::Error::NoAuth);
        assert!(!refused.is_transient());
        assert!(
            refused.to_string().contains("?digest=USER:PASSWORD"),
            "{refused}"
        );
    }
}
