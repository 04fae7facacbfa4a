//! Where etcd is and how to talk to it: endpoints, credentials, TLS, and
//! the timeout every call gets.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};

use crate::Error;

/// The default time an etcd call may take before it counts as failed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// How to reach an etcd cluster.
///
/// Several endpoints are members of one cluster: the client balances over
/// them and a call that fails on one (its member was killed) is answered by
/// the others once the cluster has a leader.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Connection {
    /// `http://host:port` (or `https://`) of each member.
    pub endpoints: Vec<String>,
    /// User and password, when etcd's authentication is on.
    pub user: Option<(String, String)>,
    /// TLS files, when the endpoints are `https://`.
    pub tls: Option<Tls>,
    /// How long any one call may take (default 2 s).
    pub timeout: Duration,
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
    /// scheme is given.
    pub fn parse(list: &str) -> Result<Self, Error> {
        let endpoints: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|e| {
                if e.contains("://") {
                    e.to_owned()
                } else {
                    format!("http://{e}")
                }
            })
            .collect();
        if endpoints.is_empty() {
            return Err(Error::InvalidOption {
                option: "endpoints",
                message: format!(
                    "{list:?} names no endpoint; give one or more, e.g. \
                     http://127.0.0.1:2379,http://127.0.0.1:22379"
                ),
            });
        }
        Ok(Connection {
            endpoints,
            user: None,
            tls: None,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// A client. Connecting is lazy: an unreachable etcd shows in the
    /// first call, not here (except with a user, whose login is a call).
    pub async fn connect(&self) -> Result<Client, Error> {
        let mut options = ConnectOptions::new()
            .with_timeout(self.timeout)
            .with_connect_timeout(self.timeout)
            .with_keep_alive(Duration::from_secs(2), self.timeout)
            .with_keep_alive_while_idle(true);
        if let Some((user, password)) = &self.user {
            options = options.with_user(user, password);
        }
        if let Some(tls) = &self.tls {
            options = options.with_tls(tls.options()?);
        }
        bounded(
            "connect",
            self.timeout,
            Client::connect(&self.endpoints, Some(options)),
        )
        .await
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
/// through here, so none can hang.
pub(crate) async fn bounded<T>(
    operation: &'static str,
    after: Duration,
    call: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, Error> {
    match tokio::time::timeout(after, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(source)) => Err(Error::Etcd { operation, source }),
        Err(_) => Err(Error::Timeout { operation, after }),
    }
}
