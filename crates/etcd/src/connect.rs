//! Where etcd is and how to talk to it: endpoints, credentials, TLS, the
//! timeout every call gets, and failing over between endpoints.
//!
//! How failover works. etcd-client 0.21 balances a client over all its
//! endpoints with tower's power-of-two-choices: a dead endpoint still
//! counts as ready (tonic reports a failed connect on the call, not
//! before), so with one of two endpoints dead about half of all calls
//! fail, and nothing retries them. This crate therefore connects to one
//! endpoint at a time ([`Link`]) and runs every call through
//! [`Connection::retry`]: a call that fails for want of a working
//! endpoint (refused, reset, timed out, "no leader") moves on to the next
//! endpoint, after a short jittered pause, until it succeeds or
//! [`Connection::deadline`] has passed. A call etcd refused for what it
//! asked (a taken name, a permission) fails at once. The endpoint that
//! answered last is where the next call starts (shared by clones of a
//! connection), so a dead endpoint costs one refused connect, once.
//!
//! Clients carry etcd's "require leader" flag: a member that has lost its
//! leader answers "no leader" at once instead of holding the call until
//! the timeout, and cancels its watches, so a client moves to a member of
//! the majority.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};

use crate::Error;
use crate::error::{Unreached, Why, classify};
use ringwise_membership::backoff::backoff;

/// The default time an etcd call may take before it counts as failed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// Stands for "no deadline" where a deadline would overflow the clock.
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

/// How to reach an etcd cluster.
///
/// Several endpoints are members of one cluster: a call that cannot reach
/// one (its member was killed, or lost its leader) is retried on the others
/// until [`Connection::deadline`] (see the module docs).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Connection {
    /// `http://host:port` (or `https://`) of each member.
    pub endpoints: Vec<String>,
    /// User and password, when etcd's authentication is on.
    pub user: Option<(String, String)>,
    /// TLS files, when the endpoints are `https://`.
    pub tls: Option<Tls>,
    /// How long any one call may take on one endpoint (default 2 s).
    pub timeout: Duration,
    /// The endpoint that answered last: where the next call starts.
    preferred: Arc<AtomicUsize>,
}

/// TLS material, PEM files.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Tls {
    /// The CA that signed the server's certificate.
    pub ca: Option<PathBuf>,
    /// Client certificate and key, for etcd's `--client-cert-auth`.
    pub cert: Option<(PathBuf, PathBuf)>,
    /// The name the server's certificate must carry, when it differs from
    /// the endpoints' host.
    pub domain: Option<String>,
}

impl Connection {
    /// Endpoints from a comma-separated list, `http://` assumed where no
    /// scheme is given. Each endpoint is checked here, before anything
    /// connects: `http://` or `https://`, a host (a name, an IPv4 address
    /// or an IPv6 address in brackets), a port from 1 to 65535, nothing
    /// else (no path, user, query or whitespace). A malformed one is an
    /// [`Error::InvalidOption`] naming it: left to the transport, a URL it
    /// cannot use fails as an unreachable endpoint, which reads as "etcd is
    /// down" instead of "the option is wrong".
    pub fn parse(list: &str) -> Result<Self, Error> {
        let items: Vec<&str> = list.split(',').map(str::trim).collect();
        let endpoints = if items.iter().all(|e| e.is_empty()) {
            Vec::new()
        } else {
            // One empty item among others ("a,,b", "a,"): a typo, not a
            // list of one endpoint fewer.
            items
                .iter()
                .map(|item| endpoint(item))
                .collect::<Result<Vec<String>, Error>>()?
        };
        if endpoints.is_empty() {
            return Err(Error::InvalidOption {
                option: "endpoints",
                message: format!(
                    "\"{list}\" names no endpoint; give one or more, e.g. \
                     http://127.0.0.1:2379,http://127.0.0.1:22379"
                ),
            });
        }
        Ok(Connection {
            endpoints,
            user: None,
            tls: None,
            timeout: DEFAULT_TIMEOUT,
            preferred: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// How long a call keeps retrying on the endpoints before it fails:
    /// `timeout × (endpoints + 1)`, room to give every endpoint a full
    /// timeout and then one more attempt (4 s for one endpoint and the
    /// default timeout, 8 s for three).
    pub fn deadline(&self) -> Duration {
        let endpoints = u32::try_from(self.endpoints.len()).unwrap_or(u32::MAX);
        self.timeout.saturating_mul(endpoints.saturating_add(1))
    }

    /// A client balanced over every endpoint, as etcd-client makes it, for
    /// calls of your own. Connecting is lazy: an unreachable etcd shows in
    /// the first call, not here (except with a user, whose login is a
    /// call). Beware: its balancer may send a call to a dead endpoint
    /// (see the module docs); this crate's own calls do not use it.
    pub async fn connect(&self) -> Result<Client, Error> {
        let user = self.user.as_ref().map(|(user, _)| user.as_str());
        self.client("connect", &self.endpoints)
            .await
            .map_err(|e| e.at(&self.endpoints.join(","), user))
    }

    /// A client of `endpoints` with this connection's options, for the
    /// call `operation` (its login, with a user, is part of that call).
    async fn client(&self, operation: &'static str, endpoints: &[String]) -> Result<Client, Error> {
        let mut options = ConnectOptions::new()
            .with_timeout(self.timeout)
            .with_connect_timeout(self.timeout)
            .with_keep_alive(Duration::from_secs(2), self.timeout)
            .with_keep_alive_while_idle(true)
            .with_require_leader(true);
        if let Some((user, password)) = &self.user {
            options = options.with_user(user, password);
        }
        self.check(endpoints)?;
        if let Some(tls) = &self.tls {
            options = options.with_tls(tls.options()?);
        }
        bounded(
            operation,
            self.timeout,
            Client::connect(endpoints, Some(options)),
        )
        .await
        .map_err(|e| match e {
            // A URL etcd-client cannot parse: say which.
            Error::InvalidOption { option, message } => Error::InvalidOption {
                option,
                message: format!("{}: {message}", endpoints.join(",")),
            },
            e => e,
        })
    }

    /// Refuses, before anything connects, what no connection can come of:
    /// an endpoint that is not a URL of etcd's (the list is a public
    /// field, set perhaps without [`Connection::parse`]), or TLS files
    /// with an `http://` endpoint (etcd-client refuses that in words
    /// about its API: say which endpoint and what to write).
    fn check(&self, endpoints: &[String]) -> Result<(), Error> {
        for written in endpoints {
            endpoint(written)?;
        }
        if self.tls.is_some()
            && let Some(plain) = endpoints.iter().find(|e| e.starts_with("http://"))
        {
            return Err(Error::InvalidOption {
                option: "endpoints",
                message: format!(
                    "{plain} is plain HTTP, yet TLS files are given; write https://{} to \
                     speak TLS, or give no TLS files",
                    &plain["http://".len()..]
                ),
            });
        }
        Ok(())
    }

    /// Runs `call` once, through [`Connection::retry`] on a fresh link: a
    /// one-shot read or write.
    pub(crate) async fn call<T, F>(
        &self,
        operation: &'static str,
        call: impl FnMut(Client) -> F,
    ) -> Result<T, Error>
    where
        F: Future<Output = Result<T, Error>>,
    {
        self.retry(operation, &mut None, call).await
    }

    /// Runs `call` on `link` (connected first to the preferred endpoint
    /// when `None`) until it succeeds; after a failure to reach etcd
    /// ([`Error::is_unreachable`]) it drops the link, moves on to the next
    /// endpoint and tries again, until [`Connection::deadline`]. Any other
    /// error is returned at once. On success `link` holds the endpoint
    /// that answered, for the streams that follow (keep-alive, watch).
    ///
    /// The failures are not logged one by one: a call that fails in the
    /// end says every endpoint and its last failure in its one error
    /// ([`Error::Unreachable`]); a call that succeeds after failures logs
    /// one warning naming the endpoints passed over.
    ///
    /// `call` gets a handle of the link's client (a cheap clone) and may
    /// run several times: it must be safe to repeat (a write is made so by
    /// a transaction that recognises its own earlier success).
    pub(crate) async fn retry<T, F>(
        &self,
        operation: &'static str,
        link: &mut Option<Link>,
        mut call: impl FnMut(Client) -> F,
    ) -> Result<T, Error>
    where
        F: Future<Output = Result<T, Error>>,
    {
        if self.endpoints.is_empty() {
            return Err(Error::InvalidOption {
                option: "endpoints",
                message: "no endpoint to call; give one or more, e.g. http://127.0.0.1:2379".into(),
            });
        }
        // Every endpoint, not only the first one tried: a bad one further
        // down the list would otherwise show only on a failover.
        self.check(&self.endpoints)?;
        let now = tokio::time::Instant::now();
        // A deadline beyond the clock's range (a timeout of years): none.
        let deadline = now.checked_add(self.deadline()).unwrap_or(now + YEAR);
        let mut failed: Vec<Unreached> = Vec::new();
        let mut attempt = 0;
        loop {
            attempt += 1;
            // Named here, not in `attempt`: a connect that fails leaves no
            // link to say which endpoint to move past.
            let endpoint = link
                .as_ref()
                .map_or_else(|| self.preferred(), |l| l.endpoint);
            let started = tokio::time::Instant::now();
            let left = deadline.saturating_duration_since(started);
            let tried = self.attempt(operation, link, endpoint, &mut call);
            let (outcome, cut) = match tokio::time::timeout(left, tried).await {
                Ok(outcome) => (outcome, false),
                // Cut short by the deadline: it says something only of an
                // endpoint that has not failed otherwise.
                Err(_) => {
                    let why = Why::NoAnswer {
                        after: started.elapsed(),
                    };
                    let e = Error::unreached(operation, why).at(&self.endpoints[endpoint], None);
                    (Err(e), true)
                }
            };
            let e = match outcome {
                Ok(value) => {
                    if !failed.is_empty() {
                        let passed: Vec<String> = failed
                            .iter()
                            .map(|u| format!("{} ({})", u.endpoint, u.why))
                            .collect();
                        let here = &self.endpoints[endpoint];
                        tracing::warn!(
                            "etcd: {operation}: passed over {}; answered by {here}",
                            passed.join(", ")
                        );
                    }
                    return Ok(value);
                }
                Err(e) if e.is_unreachable() => e,
                Err(e) => return Err(e),
            };
            note(&mut failed, e, cut);
            *link = None;
            self.move_past(endpoint);
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(Error::Unreachable {
                    operation,
                    endpoints: failed,
                });
            }
            tracing::debug!(
                "etcd: {operation}: attempt {attempt} failed at {}; trying the next endpoint",
                self.endpoints[endpoint]
            );
            let pause = backoff(attempt, Duration::from_millis(500)).min(left);
            tokio::time::sleep(pause).await;
        }
    }

    /// One attempt of [`Connection::retry`].
    /// `endpoint` is the one to connect to when `link` is `None`.
    async fn attempt<T, F>(
        &self,
        operation: &'static str,
        link: &mut Option<Link>,
        endpoint: usize,
        call: &mut impl FnMut(Client) -> F,
    ) -> Result<T, Error>
    where
        F: Future<Output = Result<T, Error>>,
    {
        let here = &self.endpoints[endpoint];
        let user = self.user.as_ref().map(|(user, _)| user.as_str());
        let link = match link {
            Some(link) => link,
            None => {
                let client = self
                    .client(operation, std::slice::from_ref(here))
                    .await
                    .map_err(|e| e.at(here, user))?;
                link.insert(Link { client, endpoint })
            }
        };
        let value = call(link.client.clone())
            .await
            .map_err(|e| e.at(here, user))?;
        self.preferred.store(link.endpoint, Ordering::Relaxed);
        Ok(value)
    }

    /// Fills in the endpoint of `link` (and the user) in an error of a
    /// call made on it outside [`Connection::retry`] (a stream's next
    /// message).
    pub(crate) fn locate(&self, link: &Option<Link>, e: Error) -> Error {
        let user = self.user.as_ref().map(|(user, _)| user.as_str());
        match link {
            Some(link) => e.at(&self.endpoints[link.endpoint], user),
            None => e,
        }
    }

    /// Drops `link` after a failure to reach etcd through it, and makes
    /// the next endpoint the preferred one. Without a link it does
    /// nothing: [`Connection::retry`] drops the link and moves on itself
    /// when it gives up, so a caller abandoning after a failed retry would
    /// otherwise skip an endpoint never tried.
    pub(crate) fn abandon(&self, link: &mut Option<Link>) {
        if let Some(held) = link.take() {
            self.move_past(held.endpoint);
        }
    }

    /// Makes the endpoint after `failed` the preferred one, unless another
    /// call already moved on from `failed`.
    fn move_past(&self, failed: usize) {
        let next = (failed + 1) % self.endpoints.len().max(1);
        let _ = self
            .preferred
            .compare_exchange(failed, next, Ordering::Relaxed, Ordering::Relaxed);
    }

    fn preferred(&self) -> usize {
        self.preferred.load(Ordering::Relaxed) % self.endpoints.len().max(1)
    }
}

/// One endpoint of [`Connection::parse`]'s list, checked and written in
/// full (`http://` added when no scheme is given, the scheme in lower
/// case, a trailing `/` dropped); the error names the endpoint and what
/// is wrong in it.
fn endpoint(item: &str) -> Result<String, Error> {
    let bad = |why: String| Error::InvalidOption {
        option: "endpoints",
        message: format!(
            "{item:?} is not an etcd endpoint: {why}; write http://HOST:PORT or \
             https://HOST:PORT, e.g. http://127.0.0.1:2379"
        ),
    };
    if item.is_empty() {
        return Err(bad(
            "the list has an empty item (two commas, or one at an end)".into(),
        ));
    }
    if let Some(c) = item.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(format!("it holds the character {c:?}")));
    }
    let (scheme, rest) = match item.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_owned(), item),
    };
    if scheme != "http" && scheme != "https" {
        return Err(bad(format!("the scheme {scheme:?} is not http or https")));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if !tail.is_empty() && tail != "/" {
        return Err(bad(format!(
            "{tail:?} after the host and port (etcd takes no path, query or fragment)"
        )));
    }
    if authority.contains('@') {
        return Err(bad(
            "it holds a user (user@host): give the user and password apart, not in the URL".into(),
        ));
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((address, after)) = bracketed.split_once(']') else {
            return Err(bad("the IPv6 address has no closing ']'".into()));
        };
        if address.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(bad(format!("[{address}] is not an IPv6 address")));
        }
        match after.strip_prefix(':') {
            Some(port) => (authority, Some(port)),
            None if after.is_empty() => (authority, None),
            None => return Err(bad(format!("{after:?} after the IPv6 address"))),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, _)) if host.contains(':') => {
                return Err(bad(
                    "an IPv6 address goes in brackets, e.g. http://[::1]:2379".into(),
                ));
            }
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(bad("it names no host".into()));
    }
    if !host.starts_with('[') {
        check_host(host).map_err(bad)?;
    }
    let Some(port) = port else {
        return Err(bad(format!(
            "it names no port (etcd listens on 2379 unless told otherwise): write \
             {scheme}://{host}:2379"
        )));
    };
    let number = port
        .parse::<u16>()
        .ok()
        .filter(|&n| n > 0 && port.bytes().all(|b| b.is_ascii_digit()));
    if number.is_none() {
        return Err(bad(format!(
            "the port {port:?} is not a number from 1 to 65535"
        )));
    }
    Ok(format!("{scheme}://{authority}"))
}

/// A host name or an IPv4 address, as a URL's host: labels of letters,
/// digits, `-` and `_` (not at a label's ends for `-`) between dots; all
/// digits and dots must be an IPv4 address.
fn check_host(host: &str) -> Result<(), String> {
    if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return match host.parse::<std::net::Ipv4Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!("{host:?} is not an IPv4 address")),
        };
    }
    if host.len() > 253 {
        return Err(format!(
            "the host name is {} bytes long (at most 253)",
            host.len()
        ));
    }
    for label in host.split('.') {
        let fine = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        if label.is_empty() || label.len() > 63 {
            return Err(format!(
                "{host:?} is not a host name (each part between dots has 1 to 63 characters)"
            ));
        }
        if let Some(c) = label.chars().find(|&c| !c.is_ascii() || !fine(c as u8)) {
            return Err(format!(
                "the host {host:?} holds {c:?} (a host name has letters, digits, '-', '_' \
                 and dots)"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "{host:?} is not a host name (a part starts or ends with '-')"
            ));
        }
    }
    Ok(())
}

/// Records the failures of an unreachable error `e` in `failed`: the last
/// failure of each endpoint, in the order first failed. An attempt `cut`
/// short by the deadline replaces no earlier failure (a refused connection
/// says more than the half second left).
fn note(failed: &mut Vec<Unreached>, e: Error, cut: bool) {
    let Error::Unreachable { endpoints, .. } = e else {
        return;
    };
    for fresh in endpoints {
        match failed.iter_mut().find(|u| u.endpoint == fresh.endpoint) {
            Some(_) if cut => {}
            Some(held) => *held = fresh,
            None => failed.push(fresh),
        }
    }
}

/// A client connected to one endpoint (index into
/// [`Connection::endpoints`]), kept across calls while it works.
pub(crate) struct Link {
    pub(crate) client: Client,
    endpoint: usize,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Tls {
    fn options(&self) -> Result<TlsOptions, Error> {
        let read = |path: &PathBuf| {
            std::fs::read(path).map_err(|e| Error::InvalidOption {
                option: "tls",
                message: format!("cannot read {}: {e}", path.display()),
            })
        };
        let mut options = TlsOptions::new();
        if let Some(ca) = &self.ca {
            options = options.ca_certificate(Certificate::from_pem(read(ca)?));
        }
        if let Some((cert, key)) = &self.cert {
            options = options.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        if let Some(domain) = &self.domain {
            options = options.domain_name(domain);
        }
        Ok(options)
    }
}

/// Runs one etcd call with a deadline: every call of this crate goes
/// through here, so none can hang. Its errors name no endpoint yet: the
/// caller fills it in ([`Connection::retry`], [`Connection::locate`]).
pub(crate) async fn bounded<T>(
    operation: &'static str,
    after: Duration,
    call: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, Error> {
    match tokio::time::timeout(after, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(classify(operation, after, e)),
        Err(_) => Err(Error::unreached(operation, Why::NoAnswer { after })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_gives_every_endpoint_a_timeout_and_one_more() {
        let one = Connection::parse("127.0.0.1:2379").expect("one");
        assert_eq!(one.deadline(), DEFAULT_TIMEOUT * 2);
        let mut three = Connection::parse("a:1,b:2,c:3").expect("three");
        three.timeout = Duration::from_millis(500);
        assert_eq!(three.deadline(), Duration::from_secs(2));
        three.timeout = Duration::MAX;
        assert_eq!(three.deadline(), Duration::MAX, "saturates");
    }

    /// After a retry gave up (no link left), abandoning again must not
    /// skip the endpoint that retry made the preferred one.
    #[tokio::test]
    async fn abandon_moves_on_only_from_a_held_link() {
        let connection = Connection::parse("127.0.0.1:1,127.0.0.1:2,127.0.0.1:3").expect("three");
        connection.abandon(&mut None);
        assert_eq!(connection.preferred(), 0, "no link: nothing to move past");
        let endpoint = connection.preferred();
        let client = connection
            .client(
                "connect",
                std::slice::from_ref(&connection.endpoints[endpoint]),
            )
            .await
            .expect("connecting is lazy");
        let mut link = Some(Link { client, endpoint });
        connection.abandon(&mut link);
        assert!(link.is_none());
        assert_eq!(
            connection.preferred(),
            1,
            "moved past the held link's endpoint"
        );
    }
}
