//! Live membership on any source (`ringwise-membership`'s `Source`: etcd,
//! ZooKeeper, gossip): `join` registers a node until SIGINT/SIGTERM,
//! `watch` prints every new ring, `config` changes the cluster's settings;
//! `lookup`/`inspect --membership` (or `--etcd`) read the ring once.
//!
//! The source is `--membership URL`, or `--etcd URLS` with `--prefix` as
//! before ([`EtcdArgs::source`] is the one place that opens one). Each
//! command runs one tokio runtime on the current thread; every etcd call
//! has the `--etcd-timeout` deadline. Logs (registration, lost leases,
//! relists) go to stderr through `tracing`; a closed stderr loses them,
//! never the exit code.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use ringwise_etcd::{Connection, Tls, Why};
use ringwise_membership::{Cluster, Error, Member, Options, Scheme, Source, Url};
use serde::Serialize;

use crate::Failure;
use crate::format::{Format, JSON_VERSION};

/// Where the membership source is (shared by every command that talks to
/// one).
#[derive(Debug, Clone, clap::Args)]
pub struct EtcdArgs {
    /// The membership source: etcd://HOST:PORT[,HOST:PORT...]/PREFIX,
    /// zk://HOST:PORT[,HOST:PORT...]/PREFIX, or
    /// gossip://HOST:PORT?seeds=HOST:PORT,... (this process's own gossip
    /// address, port 0 for any; see docs/membership.md).
    #[arg(long, value_name = "URL", conflicts_with = "endpoints")]
    pub membership: Option<String>,
    /// How long a member that died without a word stays, in seconds: the
    /// lease TTL on etcd and the session timeout on ZooKeeper (of `join`),
    /// the failure detector's bound on gossip (of every participant).
    #[arg(long, value_name = "S", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(2..=86_400))]
    pub ttl: u64,
    /// etcd endpoints, comma-separated (`http://127.0.0.1:2379`; members
    /// of one cluster: calls fail over between them).
    #[arg(long = "etcd", value_name = "URLS")]
    pub endpoints: Option<String>,
    /// The cluster's key prefix in etcd: members under PREFIX/nodes/,
    /// settings at PREFIX/config.
    #[arg(long, value_name = "PREFIX", default_value = "/ringwise")]
    pub prefix: String,
    /// etcd user and password, when etcd's authentication is on.
    #[arg(long, value_name = "USER:PASSWORD")]
    pub etcd_user: Option<String>,
    /// CA certificate (PEM) for https:// endpoints.
    #[arg(long, value_name = "FILE")]
    pub etcd_ca: Option<PathBuf>,
    /// Client certificate (PEM), with --etcd-key, for etcd's client-cert
    /// authentication.
    #[arg(long, value_name = "FILE", requires = "etcd_key")]
    pub etcd_cert: Option<PathBuf>,
    /// Client key (PEM) of --etcd-cert.
    #[arg(long, value_name = "FILE", requires = "etcd_cert")]
    pub etcd_key: Option<PathBuf>,
    /// Deadline of every etcd call, in seconds.
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    pub etcd_timeout: f64,
    /// ZooKeeper digest authentication, USER:PASSWORD (zk:// only): the
    /// znodes this process creates are readable and writable by that
    /// identity alone (CREATOR_ALL), so every client of such a cluster
    /// gives it.
    #[arg(long, value_name = "USER:PASSWORD")]
    pub zk_auth: Option<String>,
}

impl EtcdArgs {
    /// The source these options name: `--membership URL`, or `--etcd`
    /// with `--prefix` (`None` with neither).
    pub fn source(&self) -> Result<Option<Box<dyn Source>>, Failure> {
        let url = self.membership.as_deref().map(str::parse::<Url>);
        let url = url.transpose().map_err(failure)?;
        let zk = url.as_ref().is_some_and(|u| u.scheme == Scheme::ZooKeeper);
        if self.zk_auth.is_some() && !zk {
            return Err(Failure::usage(anyhow!(
                "--zk-auth is ZooKeeper's digest authentication: give it with --membership zk://..."
            )));
        }
        let Some(url) = url else {
            return Ok(self
                .connection(self.endpoints.as_deref())?
                .map(|c| Box::new(ringwise_etcd::Etcd::new(c, &self.prefix)) as Box<dyn Source>));
        };
        let source: Box<dyn Source> = match url.scheme {
            Scheme::Etcd => {
                // The etcd options (timeout, user, TLS) on the URL's hosts.
                let base = self.connection(Some("http://127.0.0.1:2379"))?;
                let base = base.ok_or_else(|| Failure::usage(anyhow!("--membership: no host")))?;
                Box::new(ringwise_etcd::Etcd::from_url(&url, base).map_err(failure)?)
            }
            Scheme::ZooKeeper => {
                let mut zk = ringwise_zookeeper::ZooKeeper::from_url(&url)
                    .map_err(failure)?
                    .with_session_timeout(Duration::from_secs(self.ttl));
                if let Some(auth) = &self.zk_auth {
                    let (user, password) = auth
                        .split_once(':')
                        .ok_or_else(|| Failure::usage(anyhow!("--zk-auth: give USER:PASSWORD")))?;
                    zk = zk.with_digest(user, password);
                }
                Box::new(zk)
            }
            Scheme::Gossip => Box::new(
                ringwise_gossip::Gossip::from_url(&url, Duration::from_secs(self.ttl))
                    .map_err(failure)?,
            ),
            _ => {
                return Err(Failure::usage(anyhow!(
                    "--membership {url}: give etcd://, zk:// or gossip://"
                )));
            }
        };
        Ok(Some(source))
    }

    /// The etcd connection these options describe, to `endpoints`
    /// (`None` without).
    pub fn connection(&self, endpoints: Option<&str>) -> Result<Option<Connection>, Failure> {
        let Some(endpoints) = endpoints else {
            return Ok(None);
        };
        let mut connection = Connection::parse(endpoints).map_err(etcd_failure)?;
        if !(self.etcd_timeout.is_finite()
            && self.etcd_timeout > 0.0
            && self.etcd_timeout <= 3600.0)
        {
            return Err(Failure::usage(anyhow!(
                "--etcd-timeout {}: give seconds above 0 (at most 3600)",
                self.etcd_timeout
            )));
        }
        connection.timeout = Duration::from_secs_f64(self.etcd_timeout);
        if let Some(user) = &self.etcd_user {
            let (name, password) = user
                .split_once(':')
                .ok_or_else(|| Failure::usage(anyhow!("--etcd-user: give USER:PASSWORD")))?;
            connection.user = Some((name.to_owned(), password.to_owned()));
        }
        if self.etcd_ca.is_some() || self.etcd_cert.is_some() {
            let mut tls = Tls::default();
            tls.ca = self.etcd_ca.clone();
            tls.cert = self.etcd_cert.clone().zip(self.etcd_key.clone());
            connection.tls = Some(tls);
        }
        Ok(Some(connection))
    }

    fn required(&self) -> Result<Box<dyn Source>, Failure> {
        self.source()?.ok_or_else(|| {
            Failure::usage(anyhow!(
                "give --membership URL (e.g. etcd://127.0.0.1:2379/caches) or --etcd URLS"
            ))
        })
    }
}

/// The exit code of a membership error: 2 for what an option caused (a
/// taken name, a bad setting), 65 for bad data in the source, 69 when the
/// source cannot be reached or refuses (unreachable, a TLS handshake, a
/// user or password). The sources' messages are one line each; a setting
/// they name is named here by the option that gave it.
pub fn failure(e: Error) -> Failure {
    match e {
        Error::InvalidOption { option, message } => {
            let option = match option {
                "endpoints" => "--etcd",
                "tls" => "--etcd-ca/--etcd-cert",
                "connection" => "--etcd options",
                "name" => "--name",
                "config" => "--set",
                "membership" | "hosts" | "prefix" | "seeds" => "--membership",
                "session timeout" => "--ttl",
                "ttl" => "--ttl",
                "auth" => "--zk-auth",
                "weight" => "--weight",
                "zone" => "--zone",
                "points" | "tokens" => "--allocate",
                other => other,
            };
            Failure::usage(anyhow!("{option}: {message}"))
        }
        Error::NameTaken { .. } => Failure::usage(e),
        Error::InvalidValue { .. } | Error::Cluster(_) => Failure::data(e),
        Error::Unavailable { error, .. } => match error.downcast::<ringwise_etcd::Error>() {
            Ok(etcd) => etcd_failure(*etcd),
            Err(other) => Failure::unavailable(anyhow!("{other}")),
        },
        e => Failure::unavailable(e),
    }
}

/// [`failure`] of an etcd error, with the option its advice is about.
fn etcd_failure(e: ringwise_etcd::Error) -> Failure {
    use ringwise_etcd::Error as E;
    match e {
        E::InvalidOption { .. } | E::NameTaken { .. } | E::InvalidValue { .. } | E::Cluster(_) => {
            failure(e.into())
        }
        _ => match flag(&e) {
            Some(flag) => Failure::unavailable(anyhow!("{e} ({flag})")),
            None => Failure::unavailable(e),
        },
    }
}

/// The option that the advice of an etcd error is about: the etcd crate
/// says "give the CA certificate", the command line calls it --etcd-ca.
fn flag(e: &ringwise_etcd::Error) -> Option<&'static str> {
    use ringwise_etcd::Error as E;
    match e {
        E::Tls { .. } => Some("--etcd-ca"),
        E::Auth { .. } => Some("--etcd-user"),
        E::Unreachable { endpoints, .. } => {
            let why = |w: fn(&Why) -> bool| endpoints.iter().any(|u| w(&u.why));
            if why(|w| matches!(w, Why::NoAnswer { .. })) {
                Some("--etcd, --etcd-timeout")
            } else if why(|w| matches!(w, Why::Closed { .. })) {
                Some("--etcd, --etcd-ca")
            } else {
                Some("--etcd")
            }
        }
        _ => None,
    }
}

/// Runs `future` on a current-thread runtime.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Failure::io)?;
    Ok(runtime.block_on(future))
}

/// Logs of ringwise's own crates (the sources, the shared watcher) to
/// stderr, info and above; the client libraries' own logs (a ZooKeeper
/// client's every session line) stay out.
fn logs() {
    use tracing_subscriber::layer::SubscriberExt;
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .finish()
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("ringwise", tracing::Level::INFO),
        );
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() -> Result<(), Failure> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(Failure::io)?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub struct JoinArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    /// This node's name (unique in the cluster).
    #[arg(long)]
    name: String,
    /// Relative capacity.
    #[arg(long, value_name = "W")]
    weight: Option<f64>,
    /// Failure domain, for zone-aware replicas.
    #[arg(long, value_name = "ZONE")]
    zone: Option<String>,
    /// Where clients reach the node (host:port).
    #[arg(long, value_name = "ADDR")]
    address: Option<String>,
    /// Free-form JSON object stored with the node.
    #[arg(long, value_name = "JSON")]
    metadata: Option<String>,
    /// Choose this node's points against the ring etcd holds now, instead
    /// of hashing them: T per unit of weight, as `plan --allocate` (ring and
    /// cassandra clusters; stored with the member as `points` or
    /// `tokens`). Nodes allocated at the same time balance less well: join
    /// one at a time.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u32).range(1..=4096))]
    allocate: Option<u32>,
    /// Replicas per key that --allocate balances.
    #[arg(long, value_name = "R", default_value_t = 1, requires = "allocate",
          value_parser = clap::value_parser!(u32).range(1..=32))]
    replicas: u32,
    /// --allocate balances zone-aware replicas.
    #[arg(long, requires = "allocate")]
    zones: bool,
}

/// `join --allocate T`: the member's points chosen against the ring etcd
/// holds now (an empty ring when it holds no member). O(T · P · R) after
/// one read of the prefix.
fn allocate(
    args: &JoinArgs,
    source: &dyn Source,
    points: u32,
    member: &mut Member,
) -> Result<(), Failure> {
    use ringwise::{Algorithm, Allocator, Explicit, Node, Ring, RingView};
    let allocator = Allocator::new(points)
        .and_then(|a| a.replicas(args.replicas))
        .map_err(|e| Failure::usage(anyhow!("--allocate: {e}")))?
        .zones(args.zones);
    let mut node = Node::new(&args.name).weight(args.weight.unwrap_or(1.0));
    if let Some(zone) = &args.zone {
        node = node.zone(zone);
    }
    let place = source.describe();
    let (cluster, revision) = block_on(source.read())?.map_err(failure)?;
    let empty: Ring<Explicit>;
    let (ring, algorithm): (&dyn RingView, Algorithm) = match cluster.placement() {
        Some(keyed) => {
            let placement = keyed.placement();
            match placement.as_ring() {
                Some(ring) if placement.keeps_points() => (ring, placement.algorithm()),
                _ => {
                    return Err(Failure::usage(anyhow!(
                        "--allocate: the cluster in {place} is {}, which makes every \
                         point from the node names; allocated points need algorithm \
                         \"ring\" or \"cassandra\"",
                        placement.algorithm()
                    )));
                }
            }
        }
        None => {
            empty = Ring::builder()
                .scheme(Explicit)
                .build()
                .map_err(Failure::data)?;
            let settings = block_on(source.settings())?.map_err(failure)?;
            let algorithm = settings
                .get("algorithm")
                .and_then(|a| a.as_str())
                .and_then(|a| a.parse().ok())
                .unwrap_or_default();
            (&empty, algorithm)
        }
    };
    if !matches!(algorithm, Algorithm::Ring | Algorithm::Cassandra) {
        return Err(Failure::usage(anyhow!(
            "--allocate: the cluster in {place} is set to {algorithm}; allocated points \
             need algorithm \"ring\" or \"cassandra\""
        )));
    }
    if ring.nodes().contains(&args.name) {
        return Err(Failure::usage(anyhow!(
            "--allocate: \"{}\" is already a member in {place}",
            args.name
        )));
    }
    let chosen = allocator
        .allocate(ring, &node)
        .map_err(|e| Failure::usage(anyhow!("--allocate: {e}")))?;
    say!(
        "ringwise: allocated {} points against {} ({} members)",
        chosen.len(),
        version(source.kind(), revision),
        ring.nodes().len()
    );
    match algorithm {
        Algorithm::Cassandra => {
            member.tokens = Some(chosen.into_iter().map(ringwise::point_token).collect());
        }
        _ => member.points = Some(chosen),
    }
    Ok(())
}

/// `ringwise join`: register, stay until SIGINT/SIGTERM, leave.
pub fn join(args: JoinArgs) -> Result<(), Failure> {
    logs();
    let source = args.etcd.required()?;
    let metadata = match &args.metadata {
        None => serde_json::Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => {
                return Err(Failure::usage(anyhow!(
                    "--metadata: give a JSON object, e.g. '{{\"rack\": \"r1\"}}'"
                )));
            }
        },
    };
    if let Some(weight) = args.weight {
        ringwise::Node::new(&args.name)
            .weight(weight)
            .validate()
            .map_err(|e| Failure::usage(anyhow!("--weight: {e}")))?;
    }
    let mut member = Member {
        weight: args.weight,
        zone: args.zone.clone(),
        address: args.address.clone(),
        metadata,
        ..Member::default()
    };
    // A member the cluster's settings cannot build (a weight whose points
    // alone pass the ring's budget) would only be left out by every
    // client: refused before anything is registered. Gossip's registrar
    // checks it against its own view (a settings read here would be a
    // gossip round of its own, and fail before the first member joins).
    if source.kind() != "gossip" {
        let settings = block_on(source.settings())?.map_err(failure)?;
        ringwise_membership::check_member(&settings, &args.name, &member).map_err(failure)?;
    }
    if let Some(points) = args.allocate {
        allocate(&args, source.as_ref(), points, &mut member)?;
    }
    let ttl = Duration::from_secs(args.etcd.ttl);
    block_on(async {
        let registration = source
            .register(&args.name, member, ttl)
            .await
            .map_err(failure)?;
        say!(
            "ringwise: joined as \"{}\" at {}, ttl {} s; stop with Ctrl-C or SIGTERM",
            args.name,
            registration.describe(),
            args.etcd.ttl
        );
        stop_signal().await?;
        registration.shutdown().await.map_err(failure)?;
        say!("ringwise: left");
        Ok(())
    })?
}

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    /// Output: a block per ring, or one JSON object per line (flushed per
    /// ring).
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
    /// Seconds between progress checks (staleness resolution).
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    progress_every: f64,
}

/// One ring as `watch` prints it.
#[derive(Debug, Serialize)]
struct Shown {
    version: u32,
    revision: u64,
    fingerprint: String,
    algorithm: Option<String>,
    members: Vec<ShownMember>,
    /// Fraction of keys whose owner changed since the previous ring
    /// printed: exact for ring-shaped placements, else sampled (65,536).
    moved: f64,
    moved_exact: bool,
    skipped: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Serialize)]
struct ShownMember {
    name: String,
    weight: f64,
    zone: Option<String>,
    address: Option<String>,
    share: f64,
}

/// Keys sampled for the shares of a placement without exact arcs
/// (rendezvous, jump...): ±0.4 % at 95 % confidence, quick enough per
/// revision.
const SAMPLE: u64 = 65_536;

fn shown(cluster: &Cluster, revision: u64, before: Option<&Cluster>) -> Shown {
    let shares: std::collections::HashMap<String, f64> = match cluster.placement() {
        Some(keyed) => {
            let stats = match keyed.placement().as_ring() {
                Some(ring) => ring.stats(),
                None => keyed.sampled_stats(SAMPLE),
            };
            stats.nodes.into_iter().map(|n| (n.name, n.share)).collect()
        }
        None => Default::default(),
    };
    let (moved, moved_exact) = before.map_or((0.0, true), |b| cluster.moved_since(b));
    let members = cluster
        .members
        .iter()
        .map(|m| ShownMember {
            name: m.name.clone(),
            weight: m.member.weight.unwrap_or(1.0),
            zone: m.member.zone.clone(),
            address: m.member.address.clone(),
            share: shares.get(&m.name).copied().unwrap_or(0.0),
        })
        .collect();
    Shown {
        version: JSON_VERSION,
        revision,
        fingerprint: format!("{:016x}", cluster.fingerprint),
        algorithm: cluster.spec.as_ref().map(|s| s.algorithm.to_string()),
        members,
        moved,
        moved_exact,
        skipped: cluster.skipped.clone(),
    }
}

/// What a source calls its version, as `watch` prints it: etcd's
/// revision, ZooKeeper's zxid (in hex, as ZooKeeper's own tools print
/// it), or the count of gossip views this client applied.
fn version(kind: &str, version: u64) -> String {
    match kind {
        "zookeeper" => format!("zxid 0x{version:x}"),
        "gossip" => format!("view {version}"),
        _ => format!("revision {version}"),
    }
}

/// A name, zone, address or key as one word of `watch`'s text: as is
/// when it is one (no white space, quote, backslash or control
/// character), else quoted as a JSON string (`"cache a"`, `\"` and `\\`
/// escaped), so every member line splits into the same fields whatever
/// the names hold.
fn word(text: &str) -> std::borrow::Cow<'_, str> {
    let plain = !text.is_empty()
        && !text
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\');
    match plain {
        true => std::borrow::Cow::Borrowed(text),
        false => std::borrow::Cow::Owned(
            serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}")),
        ),
    }
}

fn print(out: &mut impl Write, kind: &str, format: Format, ring: &Shown) -> std::io::Result<()> {
    if format == Format::Json {
        serde_json::to_writer(&mut *out, ring).map_err(std::io::Error::other)?;
        writeln!(out)?;
        return out.flush();
    }
    writeln!(
        out,
        "{}  fingerprint {}  {}  {} members  moved {}{:.2}%",
        version(kind, ring.revision),
        ring.fingerprint,
        ring.algorithm.as_deref().unwrap_or("(no members)"),
        ring.members.len(),
        if ring.moved_exact { "" } else { "~" },
        ring.moved * 100.0
    )?;
    for m in &ring.members {
        let zone = m
            .zone
            .as_deref()
            .map(|z| format!("  zone {}", word(z)))
            .unwrap_or_default();
        let address = m
            .address
            .as_deref()
            .map(|a| format!("  {}", word(a)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:<24} {:>7.3}%  weight {}{zone}{address}",
            word(&m.name),
            m.share * 100.0,
            m.weight
        )?;
    }
    for (key, why) in &ring.skipped {
        writeln!(out, "  skipped {}: {why}", word(key))?;
    }
    out.flush()
}

/// `ringwise watch`: print the ring, then every new one, until
/// SIGINT/SIGTERM.
pub fn watch(args: WatchArgs) -> Result<(), Failure> {
    logs();
    let source = args.etcd.required()?;
    if !(args.progress_every.is_finite()
        && args.progress_every >= 0.01
        && args.progress_every <= 3600.0)
    {
        return Err(Failure::usage(anyhow!(
            "--progress-every {}: give seconds from 0.01 to 3600",
            args.progress_every
        )));
    }
    let mut options = Options::default();
    options.progress_every = Duration::from_secs_f64(args.progress_every);
    block_on(async {
        let watcher = source.watch(options).await.map_err(failure)?;
        let mut changes = watcher.changes();
        let mut out = std::io::stdout().lock();
        let first = watcher.load();
        let kind = source.kind();
        print(
            &mut out,
            kind,
            args.format,
            &shown(&first.placement, first.revision, None),
        )?;
        let mut before = std::sync::Arc::clone(&first.placement);
        let mut warn = tokio::time::interval(Duration::from_secs(5));
        let stop = stop_signal();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                stopped = &mut stop => { stopped?; break; }
                changed = changes.changed() => {
                    if changed.is_err() { break; }
                    let now = watcher.load();
                    print(&mut out, kind, args.format, &shown(&now.placement, now.revision, Some(&before)))?;
                    before = std::sync::Arc::clone(&now.placement);
                }
                _ = warn.tick() => {
                    let status = watcher.status();
                    if status.staleness > Duration::from_secs(3) {
                        say!(
                            "ringwise: warning: ring of {} not confirmed for {:.0} s: {}",
                            version(kind, status.revision),
                            status.staleness.as_secs_f64(),
                            status.last_error.as_deref().unwrap_or("waiting for the source")
                        );
                    }
                }
            }
        }
        watcher.shutdown().await;
        Ok(())
    })?
}

#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    /// A cluster-file setting, SETTING=VALUE (VALUE as JSON, or text):
    /// algorithm=maglev, vnodes=100, hash=md5, ... Repeatable.
    #[arg(long, value_name = "SETTING=VALUE")]
    set: Vec<String>,
    /// Remove a setting (back to its default). Repeatable.
    #[arg(long, value_name = "SETTING")]
    unset: Vec<String>,
    /// Print the siphash `secret` as stored; without it the secret is
    /// masked (its length only), so a terminal, a log or a pasted output
    /// never shows it.
    #[arg(long)]
    show_secret: bool,
}

/// What `config` prints in place of the secret without `--show-secret`.
pub const HIDDEN_SECRET: &str = "<hidden: 32 hex digits; --show-secret shows it>";

/// The settings as `config` prints them: the secret masked unless asked
/// for. A stored value that is not 32 hex digits is masked too, with what
/// it is (a bad secret is still a secret).
fn masked(
    mut config: serde_json::Map<String, serde_json::Value>,
    show_secret: bool,
) -> serde_json::Map<String, serde_json::Value> {
    if show_secret {
        return config;
    }
    if let Some(secret) = config.get_mut("secret") {
        let hidden = match secret.as_str() {
            Some(text) if text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit()) => {
                HIDDEN_SECRET.to_owned()
            }
            Some(text) => format!(
                "<hidden: {} characters, not the 32 hex digits siphash needs; \
                 --show-secret shows it>",
                text.chars().count()
            ),
            None => "<hidden: not text, not the 32 hex digits siphash needs; \
                     --show-secret shows it>"
                .to_owned(),
        };
        *secret = serde_json::Value::String(hidden);
    }
    config
}

/// `ringwise config`: change the settings (checked against the members
/// before writing), or print them with neither --set nor --unset.
pub fn config(args: ConfigArgs) -> Result<(), Failure> {
    logs();
    let source = args.etcd.required()?;
    let mut changes = Vec::new();
    for item in &args.set {
        let (setting, value) = item
            .split_once('=')
            .ok_or_else(|| Failure::usage(anyhow!("--set \"{item}\": give SETTING=VALUE")))?;
        let setting = setting.trim();
        // A secret is text, even one of 32 decimal digits that would read
        // as a JSON number (and be refused, and echoed, as a number).
        let value = match setting {
            "secret" => serde_json::Value::String(
                serde_json::from_str::<String>(value).unwrap_or_else(|_| value.to_owned()),
            ),
            _ => {
                let parsed = serde_json::from_str(value);
                parsed.unwrap_or_else(|_| serde_json::Value::String(value.to_owned()))
            }
        };
        changes.push((setting.to_owned(), Some(value)));
    }
    changes.extend(args.unset.iter().map(|s| (s.clone(), None)));
    let config = block_on(async {
        if changes.is_empty() {
            source.settings().await
        } else {
            source.configure(&changes).await
        }
    })?
    // A setting the members cannot be built with came from --set: a
    // usage error, and nothing was written.
    .map_err(|e| match e {
        Error::InvalidValue { .. } | Error::Cluster(_) if !changes.is_empty() => {
            Failure::usage(anyhow!("--set/--unset: {e}; nothing written"))
        }
        e => failure(e),
    })?;
    let config = masked(config, args.show_secret);
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &config).map_err(|e| Failure::io(e.into()))?;
    writeln!(out)
        .and_then(|()| out.flush())
        .map_err(Failure::io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_text_quotes_names_with_spaces_so_each_line_splits_alike() {
        let member = |name: &str, zone: Option<&str>, address: Option<&str>| ShownMember {
            name: name.to_owned(),
            weight: 1.0,
            zone: zone.map(str::to_owned),
            address: address.map(str::to_owned),
            share: 0.5,
        };
        let ring = Shown {
            version: JSON_VERSION,
            revision: 7,
            fingerprint: "0".repeat(16),
            algorithm: Some("ring".into()),
            members: vec![
                member("cache-a", None, Some("10.0.0.1:11211")),
                member("cache b  50.000%", Some("eu 1"), Some("a\"b")),
            ],
            moved: 0.0,
            moved_exact: true,
            skipped: [("/caches/nodes/x y".to_owned(), "not JSON".to_owned())].into(),
        };
        let mut out = Vec::new();
        print(&mut out, "etcd", Format::Text, &ring).expect("print");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "  cache-a                   50.000%  weight 1  10.0.0.1:11211"
        );
        assert_eq!(
            lines[2],
            "  \"cache b  50.000%\"        50.000%  weight 1  zone \"eu 1\"  \"a\\\"b\""
        );
        assert_eq!(lines[3], "  skipped \"/caches/nodes/x y\": not JSON");
    }
}
