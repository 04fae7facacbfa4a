//! A member process for the tests and benchmarks (not installed for
//! users: `ringwise join --membership zk://...` is the command for that).
//!
//! ```text
//! ringwise-zookeeper-member --hosts H:P[,H:P] --prefix /p --name NAME --ttl SECONDS [--digest U:P]
//! ringwise-zookeeper-member --hosts H:P[,H:P] --prefix /p --watch [--digest U:P]
//! ```
//!
//! The first registers NAME and prints `registered KEY (session 0x...)`,
//! then waits for SIGTERM (or SIGINT), deletes its znode and closes its
//! session, prints `left` and exits 0; SIGKILL leaves the znode to the
//! session timeout. The second follows the prefix and prints `ring ZXID
//! FINGERPRINT NAME,NAME,... relists=N` whenever that line would change
//! (checked every 20 ms), so a test can SIGSTOP it and read what it holds
//! after SIGCONT. Errors go to stderr with exit status 2.

use std::time::Duration;

use ringwise_zookeeper::{Member, Options, ZooKeeper};

/// The command line, read by hand (four options do not need a parser).
#[derive(Debug, Default)]
struct Args {
    hosts: Vec<String>,
    prefix: String,
    name: Option<String>,
    ttl: u64,
    digest: Option<(String, String)>,
    watch: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        ttl: 10,
        prefix: "/ringwise".into(),
        ..Args::default()
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let mut value = || given.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--hosts" => args.hosts = value()?.split(',').map(str::to_owned).collect(),
            "--prefix" => args.prefix = value()?,
            "--name" => args.name = Some(value()?),
            "--ttl" => args.ttl = value()?.parse().map_err(|e| format!("--ttl: {e}"))?,
            "--digest" => {
                let digest = value()?;
                let (user, password) = digest.split_once(':').ok_or("--digest USER:PASSWORD")?;
                args.digest = Some((user.into(), password.into()));
            }
            "--watch" => args.watch = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.hosts.is_empty() || (args.name.is_none() && !args.watch) {
        return Err("give --hosts and --name NAME (or --watch)".into());
    }
    Ok(args)
}

async fn run(args: Args) -> Result<(), String> {
    let mut zk =
        ZooKeeper::new(args.hosts, &args.prefix).with_session_timeout(Duration::from_secs(2));
    if let Some((user, password)) = &args.digest {
        zk = zk.with_digest(user, password);
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    if args.watch {
        let mut options = Options::default();
        options.progress_every = Duration::from_millis(500);
        let watcher = zk.watch(options).await.map_err(|e| e.to_string())?;
        let mut shown = None;
        loop {
            let ring = watcher.load();
            let names: Vec<&str> = ring
                .placement
                .members
                .iter()
                .map(|m| m.name.as_str())
                .collect();
            let line = format!(
                "ring {} {:016x} {} relists={}",
                ring.revision,
                ring.placement.fingerprint,
                names.join(","),
                watcher.status().relists
            );
            if shown.as_ref() != Some(&line) {
                println!("{line}");
                shown = Some(line);
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                _ = term.recv() => return Ok(()),
            }
        }
    }
    let name = args.name.unwrap_or_default();
    let registrar = zk
        .register(&name, Member::default(), Duration::from_secs(args.ttl))
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "registered {} (session {:#x}, timeout {} ms)",
        registrar.key(),
        registrar.session(),
        registrar.session_timeout().as_millis()
    );
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    registrar.shutdown().await.map_err(|e| e.to_string())?;
    println!("left");
    Ok(())
}

fn main() {
    let outcome = parse().and_then(|args| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(run(args))
    });
    if let Err(e) = outcome {
        eprintln!("ringwise-zookeeper-member: {e}");
        std::process::exit(2);
    }
}
