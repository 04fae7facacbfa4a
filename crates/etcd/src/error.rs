//! The crate's one error type, and how the etcd client's errors become it.
//!
//! etcd-client reports a failed call as a gRPC status from tonic, whose
//! `Display` is a dump (`code: 'The service is currently unavailable',
//! message: "tcp connect error", source: tonic::transport::Error(...)`).
//! [`classify`] reads what happened out of it instead: the status code,
//! etcd's own message (etcd's clients match those strings too: they are
//! its API, `rpctypes` in etcd's Go client), and the chain of causes under
//! it (an `io::Error` refused, a rustls error for a TLS handshake). Every
//! message of this type is one line saying what failed, where, and what to
//! try; no error here has a `source` that repeats its message.

use std::time::Duration;

/// What went wrong talking to etcd or reading what it holds.
///
/// The variants about etcd name the call (`operation`, e.g. `"list the
/// members"`) and the endpoint (`http://127.0.0.1:2379`).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No endpoint could be reached before the connection's deadline:
    /// nothing listens there, a host that does not answer in time, a
    /// connection that broke, a member without a leader.
    Unreachable {
        /// The call.
        operation: &'static str,
        /// Each endpoint tried, in the order first tried, with its last
        /// failure.
        endpoints: Vec<Unreached>,
    },
    /// The TLS handshake with an endpoint failed.
    Tls {
        /// The call.
        operation: &'static str,
        /// The endpoint.
        endpoint: String,
        /// What was wrong.
        problem: TlsProblem,
        /// The TLS library's words.
        detail: String,
    },
    /// etcd refused the user, the password or their permissions.
    Auth {
        /// The call.
        operation: &'static str,
        /// The endpoint.
        endpoint: String,
        /// The user given, if any.
        user: Option<String>,
        /// What etcd refused.
        problem: AuthProblem,
    },
    /// etcd refused the call for what it asked (a request too large, a
    /// compacted revision...): another endpoint would refuse it too.
    Refused {
        /// The call.
        operation: &'static str,
        /// The endpoint.
        endpoint: String,
        /// etcd's (or the client's) words.
        message: String,
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

/// An endpoint that could not be reached, and why.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Unreached {
    /// The endpoint, `http://host:port`.
    pub endpoint: String,
    /// Why the call did not reach etcd there.
    pub why: Why,
}

/// Why a call did not reach etcd through an endpoint.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Why {
    /// The connection was refused: nothing listens there.
    Refused,
    /// No answer within the time given: a host that is down, a firewall
    /// that drops the packets, a server that accepts and says nothing.
    NoAnswer {
        /// How long the call waited.
        after: Duration,
    },
    /// The connection was closed or broke.
    Closed {
        /// The transport's words.
        detail: String,
    },
    /// The member has no leader: it is cut off from the majority of its
    /// cluster.
    NoLeader,
    /// Something else kept the call from etcd (a host name that does not
    /// resolve, a leader changing, an overloaded member...).
    Other {
        /// The transport's or etcd's words.
        detail: String,
    },
}

/// What was wrong in a TLS handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsProblem {
    /// The server's certificate is not signed by a CA this client trusts
    /// (the CA given, [`crate::Tls::ca`]).
    UntrustedCertificate,
    /// The server's certificate is not issued for the host connected to.
    WrongName,
    /// The server does not speak TLS (a plain-HTTP etcd behind an
    /// `https://` endpoint).
    NotTls,
    /// Anything else (an expired certificate, a client certificate the
    /// server wants or refuses...).
    Other,
}

/// What etcd refused about the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthProblem {
    /// No such user, or the wrong password.
    WrongPassword,
    /// Authentication is on and no user was given.
    UserRequired,
    /// The user may not make this call (no role granting it on the keys).
    PermissionDenied,
    /// A user was given but authentication is off.
    NotEnabled,
    /// etcd no longer accepts the token of the login (it expired or etcd
    /// restarted).
    TokenRejected,
}

/// `d` in seconds, as short as exact: `2 s`, `0.5 s`, `0.25 s`.
fn seconds(d: Duration) -> String {
    let text = format!("{:.2}", d.as_secs_f64());
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Refused => f.write_str("connection refused"),
            Why::NoAnswer { after } => write!(f, "no answer within {}", seconds(*after)),
            Why::Closed { detail } => write!(f, "connection closed: {detail}"),
            Why::NoLeader => f.write_str("the member has no leader"),
            Why::Other { detail } => f.write_str(detail),
        }
    }
}

/// The one endpoint of `endpoints` and why it failed, when there is one.
fn single(endpoints: &[Unreached]) -> Option<&Unreached> {
    match endpoints {
        [one] => Some(one),
        _ => None,
    }
}

fn unreachable(
    f: &mut std::fmt::Formatter<'_>,
    operation: &str,
    endpoints: &[Unreached],
) -> std::fmt::Result {
    write!(f, "etcd: cannot {operation}: ")?;
    if let Some(Unreached { endpoint, why }) = single(endpoints) {
        return match why {
            Why::Refused => write!(
                f,
                "nothing listens at {endpoint} (connection refused); check that etcd runs \
                 there and that the address is right"
            ),
            Why::NoAnswer { after } => write!(
                f,
                "{endpoint} did not answer within {}; check that etcd runs there and that \
                 this machine can reach it, or allow more time",
                seconds(*after)
            ),
            Why::Closed { detail } if endpoint.starts_with("http://") => write!(
                f,
                "{endpoint} closed the connection ({detail}); if etcd serves TLS there, \
                 write https:// and give its CA certificate"
            ),
            Why::Closed { detail } => write!(
                f,
                "{endpoint} closed the connection ({detail}); check that etcd runs there"
            ),
            Why::NoLeader => write!(
                f,
                "the member at {endpoint} has no leader (it is cut off from the majority \
                 of its cluster); give the endpoints of the other members too"
            ),
            Why::Other { detail } => write!(
                f,
                "cannot reach etcd at {endpoint} ({detail}); check the address"
            ),
        };
    }
    f.write_str("no endpoint answered: ")?;
    for (i, Unreached { endpoint, why }) in endpoints.iter().enumerate() {
        let comma = if i == 0 { "" } else { ", " };
        write!(f, "{comma}{endpoint} ({why})")?;
    }
    f.write_str("; check that etcd runs there and that the addresses are right")
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unreachable {
                operation,
                endpoints,
            } => unreachable(f, operation, endpoints),
            Error::Tls {
                operation,
                endpoint,
                problem,
                detail,
            } => {
                write!(f, "etcd: cannot {operation}: ")?;
                match problem {
                    // rustls' words ("invalid peer certificate:
                    // UnknownIssuer") say no more than this.
                    TlsProblem::UntrustedCertificate => write!(
                        f,
                        "the TLS certificate of {endpoint} is not signed by a CA this client \
                         trusts; give the CA certificate that signed it"
                    ),
                    TlsProblem::WrongName => write!(
                        f,
                        "the TLS certificate of {endpoint} is not issued for that host \
                         ({detail}); connect by a name or address the certificate carries"
                    ),
                    TlsProblem::NotTls => write!(
                        f,
                        "{endpoint} does not speak TLS ({detail}); if etcd serves plain HTTP \
                         there, write http:// and give no CA certificate"
                    ),
                    TlsProblem::Other => write!(
                        f,
                        "the TLS handshake with {endpoint} failed ({detail}); check the CA \
                         certificate, and the client certificate and key if etcd asks for one"
                    ),
                }
            }
            Error::Auth {
                operation,
                endpoint,
                user,
                problem,
            } => {
                write!(f, "etcd: cannot {operation}: ")?;
                let user = user.as_deref().unwrap_or("");
                match problem {
                    AuthProblem::WrongPassword => write!(
                        f,
                        "{endpoint} refused user \"{user}\": no such user or a wrong \
                         password; check the user and password given"
                    ),
                    AuthProblem::UserRequired => write!(
                        f,
                        "{endpoint} has authentication on and no user was given; give a \
                         user and password"
                    ),
                    AuthProblem::PermissionDenied if user.is_empty() => write!(
                        f,
                        "{endpoint} denied it (permission denied); give a user whose role \
                         may read and write the prefix"
                    ),
                    AuthProblem::PermissionDenied => write!(
                        f,
                        "{endpoint} denied it to user \"{user}\" (permission denied); grant \
                         the user a role that may read and write the prefix"
                    ),
                    AuthProblem::NotEnabled => write!(
                        f,
                        "{endpoint} has authentication off, yet a user was given; give no \
                         user, or turn authentication on"
                    ),
                    AuthProblem::TokenRejected => write!(
                        f,
                        "{endpoint} no longer accepts the login of user \"{user}\" (invalid \
                         auth token); try again"
                    ),
                }
            }
            Error::Refused {
                operation,
                endpoint,
                message,
            } => write!(
                f,
                "etcd: cannot {operation}: {endpoint} refused it: {message}"
            ),
            Error::NameTaken { name, key, lease } => {
                let holder = if *lease == 0 {
                    "a key without a lease (written by hand: delete it to free the name)".into()
                } else {
                    format!("lease {lease:x}, which is alive")
                };
                write!(
                    f,
                    "node name \"{name}\" is taken: {key} is held by {holder}; two processes \
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
            // Display already says ringwise's error: chaining it again
            // would print it twice (`{:#}` in anyhow).
            Error::Cluster(e) => e.source(),
            _ => None,
        }
    }
}

impl From<ringwise::Error> for Error {
    fn from(e: ringwise::Error) -> Self {
        Error::Cluster(e)
    }
}

/// What the shared layer refuses (a value under the prefix, an option, the
/// description) is this crate's error of the same name.
impl From<ringwise_membership::Error> for Error {
    fn from(e: ringwise_membership::Error) -> Self {
        use ringwise_membership::Error as M;
        match e {
            M::InvalidValue { key, message } => Error::InvalidValue { key, message },
            M::InvalidOption { option, message } => Error::InvalidOption { option, message },
            M::Cluster(e) => Error::Cluster(e),
            // The shared layer takes no names and reaches no etcd: only an
            // error carried through it comes back here, whole or in words.
            M::Unavailable { error, .. } => match error.downcast::<Error>() {
                Ok(mine) => *mine,
                Err(other) => Error::InvalidValue {
                    key: String::new(),
                    message: other.to_string(),
                },
            },
            other => Error::InvalidValue {
                key: String::new(),
                message: other.to_string(),
            },
        }
    }
}

/// This crate's error as a membership source's: the shared variants by
/// their name, a taken name with its lease, anything about reaching etcd
/// whole under `Unavailable` (downcast it to read its fields).
impl From<Error> for ringwise_membership::Error {
    fn from(e: Error) -> Self {
        use ringwise_membership::Error as M;
        match e {
            Error::InvalidValue { key, message } => M::InvalidValue { key, message },
            Error::InvalidOption { option, message } => M::InvalidOption { option, message },
            Error::Cluster(e) => M::Cluster(e),
            Error::NameTaken { name, key, lease } => M::NameTaken {
                name,
                key,
                holder: if lease == 0 {
                    "a key without a lease (written by hand: delete it to free the name)".into()
                } else {
                    format!("lease {lease:x}, which is alive")
                },
            },
            other => M::Unavailable {
                source: "etcd",
                error: Box::new(other),
            },
        }
    }
}

impl Error {
    /// Whether the call did not reach etcd through the endpoint used
    /// (another endpoint, or a moment later, may do better), rather than
    /// being refused for what it asked or who asked.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Error::Unreachable { .. })
    }

    /// Fills in the endpoint (and the user) of an error made where they
    /// were not known (see [`classify`]).
    pub(crate) fn at(mut self, here: &str, who: Option<&str>) -> Self {
        let fill = |endpoint: &mut String| {
            if endpoint.is_empty() {
                here.clone_into(endpoint);
            }
        };
        match &mut self {
            Error::Unreachable { endpoints, .. } => {
                endpoints.iter_mut().for_each(|u| fill(&mut u.endpoint));
            }
            Error::Tls { endpoint, .. } | Error::Refused { endpoint, .. } => fill(endpoint),
            Error::Auth { endpoint, user, .. } => {
                fill(endpoint);
                if user.is_none() {
                    *user = who.map(str::to_owned);
                }
            }
            _ => {}
        }
        self
    }

    /// The endpoint failure of an [`Error::Unreachable`] made by
    /// [`classify`] (one endpoint).
    pub(crate) fn unreached(operation: &'static str, why: Why) -> Self {
        Error::Unreachable {
            operation,
            endpoints: vec![Unreached {
                endpoint: String::new(),
                why,
            }],
        }
    }
}

// gRPC status codes (tonic's `Code`, which etcd-client does not re-export).
const CANCELLED: i32 = 1;
const UNKNOWN: i32 = 2;
const DEADLINE_EXCEEDED: i32 = 4;
const PERMISSION_DENIED: i32 = 7;
const UNAVAILABLE: i32 = 14;
const UNAUTHENTICATED: i32 = 16;

/// The error of a call `operation` that etcd-client failed with `e`
/// (`after`: the time the call was given), with the endpoint left empty:
/// [`Error::at`] fills it in where it is known.
pub(crate) fn classify(operation: &'static str, after: Duration, e: etcd_client::Error) -> Error {
    use etcd_client::Error as E;
    let refused = |message: String| Error::Refused {
        operation,
        endpoint: String::new(),
        message: one_line(&message),
    };
    match e {
        E::GRpcStatus(status) => {
            let causes = std::error::Error::source(&status)
                .map(chain)
                .unwrap_or_default();
            from_status(
                operation,
                after,
                status.code() as i32,
                status.message(),
                &causes,
            )
        }
        E::TransportError(t) => {
            let causes = chain(&t);
            from_status(operation, after, UNAVAILABLE, &t.to_string(), &causes)
        }
        E::IoError(io) => {
            let causes = chain(&io);
            from_status(operation, after, UNAVAILABLE, &io.to_string(), &causes)
        }
        E::WatchError(detail) => Error::unreached(
            operation,
            Why::Closed {
                detail: one_line(&detail),
            },
        ),
        E::LeaseKeepAliveError(detail) => Error::unreached(
            operation,
            Why::Other {
                detail: one_line(&format!("lease keep-alive: {detail}")),
            },
        ),
        E::InvalidUri(uri) => Error::InvalidOption {
            option: "endpoints",
            message: format!("not a URL ({uri}); write http://HOST:PORT"),
        },
        E::InvalidArgs(message) => Error::InvalidOption {
            option: "connection",
            message: one_line(&message),
        },
        other => refused(other.to_string()),
    }
}

/// The error of a gRPC status: `code`, `message` (etcd's words, or the
/// transport's), and the chain of errors that caused it (outermost first).
fn from_status(
    operation: &'static str,
    after: Duration,
    code: i32,
    message: &str,
    causes: &[Cause],
) -> Error {
    let unreached = |why| Error::unreached(operation, why);
    let auth = |problem| Error::Auth {
        operation,
        endpoint: String::new(),
        user: None,
        problem,
    };
    if let Some((problem, detail)) = tls_problem(causes) {
        return Error::Tls {
            operation,
            endpoint: String::new(),
            problem,
            detail,
        };
    }
    let kinds = || causes.iter().filter_map(|c| c.io);
    if kinds().any(|k| k == std::io::ErrorKind::ConnectionRefused) {
        return unreached(Why::Refused);
    }
    let timed_out = kinds().any(|k| k == std::io::ErrorKind::TimedOut)
        || code == DEADLINE_EXCEEDED
        // tonic's own deadline (the connection's timeout).
        || (code == CANCELLED && message == "Timeout expired");
    if timed_out {
        return unreached(Why::NoAnswer { after });
    }
    // The transport's innermost words, else etcd's (or tonic's).
    let detail = one_line(causes.last().map_or(message, |c| c.text.as_str()));
    // etcd's messages (rpctypes in etcd's Go client).
    match message {
        m if m.contains("no leader") => return unreached(Why::NoLeader),
        m if m.contains("authentication failed") => return auth(AuthProblem::WrongPassword),
        m if m.contains("user name is empty") => return auth(AuthProblem::UserRequired),
        m if m.contains("authentication is not enabled") => return auth(AuthProblem::NotEnabled),
        m if m.contains("invalid auth token") => return auth(AuthProblem::TokenRejected),
        _ => {}
    }
    match code {
        PERMISSION_DENIED => auth(AuthProblem::PermissionDenied),
        UNAUTHENTICATED => auth(AuthProblem::TokenRejected),
        // A connection that broke (tonic says "transport error", h2 a
        // reset or a broken pipe), or a call canceled with it.
        UNKNOWN | CANCELLED => unreached(Why::Closed { detail }),
        UNAVAILABLE => unreached(Why::Other { detail }),
        _ => Error::Refused {
            operation,
            endpoint: String::new(),
            message: one_line(message),
        },
    }
}

/// One error of a chain: its words, and its kind when it is an
/// `io::Error`.
#[derive(Debug)]
struct Cause {
    text: String,
    io: Option<std::io::ErrorKind>,
    tls: Option<(TlsProblem, String)>,
}

/// `e` and the errors under it, outermost first. An `io::Error` wrapping
/// another error hides it from `source()` (it returns the inner error's
/// source): it is opened with `get_ref`.
fn chain(e: &(dyn std::error::Error + 'static)) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut next = Some(e);
    while let Some(e) = next {
        let io = e.downcast_ref::<std::io::Error>();
        causes.push(Cause {
            text: e.to_string(),
            io: io.map(std::io::Error::kind),
            tls: e.downcast_ref::<rustls::Error>().map(tls_kind),
        });
        next = match io.and_then(std::io::Error::get_ref) {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => e.source(),
        };
    }
    causes
}

/// The TLS problem in a chain of causes, with the TLS library's words.
fn tls_problem(causes: &[Cause]) -> Option<(TlsProblem, String)> {
    if let Some(found) = causes.iter().find_map(|c| c.tls.clone()) {
        return Some(found);
    }
    // tokio-rustls' words when the server closes the connection during
    // the handshake: a plain-HTTP server hangs up on a ClientHello.
    causes
        .iter()
        .find(|c| c.text == "tls handshake eof")
        .map(|c| (TlsProblem::NotTls, c.text.clone()))
}

/// The problem of a rustls error, and words for it: rustls' own, except
/// for a certificate's names, which it writes as `IpAddress(127.0.0.1)`.
fn tls_kind(e: &rustls::Error) -> (TlsProblem, String) {
    use rustls::CertificateError as C;
    let words = one_line(&e.to_string());
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => {
            (TlsProblem::UntrustedCertificate, words)
        }
        rustls::Error::InvalidCertificate(C::NotValidForNameContext {
            expected,
            presented,
        }) => {
            let names: Vec<&str> = presented.iter().map(|n| unwrapped(n)).collect();
            let words = match names.as_slice() {
                [] => format!("it names no host, not {}", expected.to_str()),
                names => format!("it names {}, not {}", names.join(", "), expected.to_str()),
            };
            (TlsProblem::WrongName, words)
        }
        rustls::Error::InvalidCertificate(C::NotValidForName) => (TlsProblem::WrongName, words),
        // Bytes that are not TLS records: a plain-HTTP server's answer.
        rustls::Error::InvalidMessage(_) => (TlsProblem::NotTls, words),
        _ => (TlsProblem::Other, words),
    }
}

/// `127.0.0.1` of rustls' `IpAddress(127.0.0.1)` (and `DnsName(..)`).
fn unwrapped(name: &str) -> &str {
    match name.split_once('(') {
        Some((kind, rest)) if kind.chars().all(char::is_alphanumeric) => {
            rest.strip_suffix(')').unwrap_or(rest)
        }
        _ => name,
    }
}

/// `text` on one line (a message may quote a multi-line answer).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_as_short_as_exact() {
        assert_eq!(seconds(Duration::from_secs(2)), "2 s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5 s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25 s");
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
    }

    #[test]
    fn several_endpoints_are_named_with_their_failures_on_one_line() {
        let e = Error::Unreachable {
            operation: "list the members",
            endpoints: vec![
                Unreached {
                    endpoint: "http://a:1".into(),
                    why: Why::Refused,
                },
                Unreached {
                    endpoint: "http://b:2".into(),
                    why: Why::NoAnswer {
                        after: Duration::from_secs(2),
                    },
                },
            ],
        };
        assert_eq!(
            e.to_string(),
            "etcd: cannot list the members: no endpoint answered: http://a:1 (connection \
             refused), http://b:2 (no answer within 2 s); check that etcd runs there and that \
             the addresses are right"
        );
    }

    #[test]
    fn a_cluster_error_is_said_once() {
        let inner = ringwise::Node::new("").validate().expect_err("empty name");
        let e = Error::from(inner);
        assert!(std::error::Error::source(&e).is_none(), "{e}");
    }

    #[test]
    fn etcd_messages_name_the_auth_problem() {
        let cases = [
            (
                3,
                "etcdserver: authentication failed, invalid user ID or password",
                AuthProblem::WrongPassword,
            ),
            (
                3,
                "etcdserver: user name is empty",
                AuthProblem::UserRequired,
            ),
            (
                7,
                "etcdserver: permission denied",
                AuthProblem::PermissionDenied,
            ),
            (
                9,
                "etcdserver: authentication is not enabled",
                AuthProblem::NotEnabled,
            ),
        ];
        for (code, message, want) in cases {
            match from_status("x", Duration::from_secs(1), code, message, &[]) {
                Error::Auth { problem, .. } => assert_eq!(problem, want, "{message}"),
                other => panic!("{message}: {other}"),
            }
        }
    }
}
