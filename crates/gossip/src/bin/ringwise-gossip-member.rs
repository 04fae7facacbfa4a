//! `ringwise-gossip-member URL NAME TTL [MEMBER_JSON]`: one gossip member
//! in a process of its own, for the tests and the bench (a SIGKILL there
//! is a real one: the socket closes with the process, nothing says
//! goodbye).
//!
//! Registers NAME (the member's JSON value, default `{}`) in the cluster
//! the `gossip://` URL names, prints `ready ADDR` (its gossip address) on
//! stdout, and on SIGTERM or SIGINT leaves at once (`left`, 3 rounds) and
//! exits 0. Errors go to stderr with exit code 2 (bad arguments) or 1.

use std::time::Duration;

use ringwise_gossip::{Gossip, Member};
use ringwise_membership::Url;

fn usage() -> ! {
    eprintln!(
        "usage: ringwise-gossip-member gossip://HOST:PORT?seeds=... NAME TTL_SECONDS [MEMBER_JSON]"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 || args.len() > 4 {
        usage();
    }
    let url: Url = args[0].parse().unwrap_or_else(|e| {
        eprintln!("{e}");
        usage()
    });
    let ttl = args[2]
        .parse::<u64>()
        .map(Duration::from_secs)
        .unwrap_or_else(|_| usage());
    let member = match args.get(3) {
        Some(json) => Member::from_json("MEMBER_JSON", json.as_bytes()).unwrap_or_else(|e| {
            eprintln!("{e}");
            usage()
        }),
        None => Member::default(),
    };
    let gossip = Gossip::from_url(&url, ttl).unwrap_or_else(|e| {
        eprintln!("{e}");
        usage()
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let runtime = runtime.unwrap_or_else(|e| {
        eprintln!("cannot start the runtime: {e}");
        std::process::exit(1)
    });
    let code = runtime.block_on(async {
        let registrar = match gossip.join(&args[1], member).await {
            Ok(registrar) => registrar,
            Err(e) => {
                eprintln!("{e}");
                return 1;
            }
        };
        println!("ready {}", registrar.address());
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(e) => {
                    eprintln!("cannot catch SIGTERM: {e}");
                    return 1;
                }
            };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        registrar.shutdown().await;
        0
    });
    std::process::exit(code)
}
