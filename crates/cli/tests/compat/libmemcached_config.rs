//! `--cluster-format libmemcached` against libmemcached itself: random
//! configuration strings (servers with and without ports and weights,
//! `--HASH=MD5` or `FNV1A_64`, `--SORT-HOSTS`, options that do not change
//! placement, comment lines, line breaks before a space) given to
//! `memcached(3)` by the C peer's `config` mode and to `ringwise lookup
//! --cluster-format libmemcached`; every key must go to the same server.
//! The strings libmemcached builds another continuum for, or refuses,
//! are refused by ringwise too.

use std::process::Command;

use super::ketama::libmemcached_peer;
use super::{Rng, assert_agree, random_keys, ringwise_lookup_with, run_peer};
use crate::support::{TempDir, ringwise, stderr};

const SEED: u64 = 0x6C69_626D_656D;
const KEYS: usize = 5_000;
const CONFIGS: usize = 12;

/// Options of libmemcached's parser that do not change placement.
const INERT: &[&str] = &[
    "--CONNECT-TIMEOUT=200",
    "--BINARY-PROTOCOL",
    "--TCP-NODELAY",
    "--POLL-TIMEOUT=50",
    "--NAMESPACE=app:",
    "--NUMBER-OF-REPLICAS=1",
];

/// A random configuration string that libmemcached makes a weighted
/// ketama of: the distribution first, then servers (at least one of
/// weight above 1), the hash and inert options in random places.
fn random_config(rng: &mut Rng) -> String {
    let mut after = Vec::new();
    let n = rng.between(2, 10);
    let heavy = rng.below(n);
    let mut seen = std::collections::HashSet::new();
    while after.len() < n {
        let host = match rng.below(2) {
            0 => format!("10.1.{}.{}", rng.below(8), rng.between(1, 254)),
            _ => format!("cache-{}.example", rng.below(40)),
        };
        let port = match rng.below(3) {
            0 => None,
            1 => Some(11211),
            _ => Some(rng.between(1024, 65535)),
        };
        if !seen.insert((host.clone(), port.unwrap_or(11211))) {
            continue;
        }
        let weight = match after.len() == heavy {
            true => rng.between(2, 500),
            false => rng.between(1, 500),
        };
        let mut server = format!("--SERVER={host}");
        if let Some(port) = port {
            server.push_str(&format!(":{port}"));
        }
        if weight > 1 || rng.below(2) == 0 {
            server.push_str(&format!("/?{weight}"));
        }
        after.push(server);
    }
    after.push(
        rng.pick(&["--HASH=MD5", "--HASH=md5", "--HASH=FNV1A_64"])
            .to_string(),
    );
    if rng.below(3) == 0 {
        after.push("--SORT-HOSTS".into());
    }
    for _ in 0..rng.below(3) {
        after.push(rng.pick(INERT).to_string());
    }
    // Shuffle what follows the distribution, keeping the servers' order.
    let mut options: Vec<String> = vec![
        rng.pick(&["--DISTRIBUTION=consistent", "--distribution=CONSISTENT"])
            .to_string(),
    ];
    let (servers, others): (Vec<String>, Vec<String>) =
        after.into_iter().partition(|o| o.starts_with("--SERVER"));
    let (mut servers, mut others) = (servers.into_iter(), others.into_iter().peekable());
    for server in servers.by_ref() {
        options.push(server);
        if rng.below(3) == 0 {
            if let Some(other) = others.next() {
                options.push(other);
            }
        }
    }
    options.extend(others);
    // One space between options; a line break (and comment) may come before it.
    let mut text = String::from("# the sessions pool\n ");
    for (i, option) in options.iter().enumerate() {
        if i > 0 {
            text.push_str(match rng.below(4) {
                0 => "\n ",
                1 => " \n",
                _ => " ",
            });
        }
        text.push_str(option);
    }
    text
}

#[test]
fn libmemcached_configuration_strings_import_as_libmemcached_reads_them() {
    let dir = TempDir::create("libmemcached-config");
    let mut rng = Rng(SEED);
    for i in 0..CONFIGS {
        let config = random_config(&mut rng);
        let path = dir.write(&format!("config-{i}.conf"), &config);
        let keys = random_keys(&mut rng, KEYS);
        let mut peer = Command::new(libmemcached_peer());
        peer.args(["config", &path]);
        let peer = run_peer(&mut peer, dir.path(), &keys);
        let ours =
            ringwise_lookup_with(path.as_ref(), &["--cluster-format", "libmemcached"], &keys);
        // The peer prints host:port; ringwise the node name, host:port.
        assert_agree(&format!("config {i}: {config:?}"), &keys, &peer, &ours);
    }
    dir.remove();
}

#[test]
fn what_libmemcached_builds_otherwise_or_refuses_is_refused() {
    let dir = TempDir::create("libmemcached-refused");
    for (config, peer_accepts, words) in [
        // The distribution set after the weights turns weighting off.
        (
            "--SERVER=aaa/?2 --SERVER=bbb --DISTRIBUTION=consistent --HASH=MD5",
            true,
            "non-weighted",
        ),
        (
            "--DISTRIBUTION=consistent --SERVER=aaa --SERVER=bbb --HASH=MD5",
            true,
            "non-weighted",
        ),
        (
            "--DISTRIBUTION=consistent --SERVER=aaa/?2 --SERVER=bbb",
            true,
            "one-at-a-time",
        ),
        ("--SERVER=aaa/?2 --SERVER=bbb --HASH=MD5", true, "modula"),
        ("--DISTRIBUTION=modula --SERVER=aaa/?2", true, "not a ring"),
        (
            "--DISTRIBUTION=consistent\n--SERVER=aaa/?2 --HASH=MD5",
            false,
            "line break",
        ),
        (
            "--DISTRIBUTION=consistent  --SERVER=aaa/?2 --HASH=MD5",
            false,
            "exactly one",
        ),
        ("--SERVER=aa/?2", false, "not a host name"),
    ] {
        let path = dir.write("refused.conf", config);
        let mut peer = Command::new(libmemcached_peer());
        peer.args(["config", &path])
            .stdin(std::process::Stdio::null());
        let status = peer.output().expect("run the libmemcached peer").status;
        assert_eq!(
            status.success(),
            peer_accepts,
            "libmemcached on {config:?}: {status}"
        );
        let out = ringwise(
            &[
                "lookup",
                "--cluster",
                &path,
                "--cluster-format",
                "libmemcached",
                "k",
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(65), "{config:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(words), "{config:?}: {}", stderr(&out));
    }
    dir.remove();
}
