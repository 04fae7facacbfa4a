//! `hash $key consistent` against a real nginx.
//!
//! One nginx process (`daemon off; master_process off;`, so its pid is the
//! one to kill; pid, logs and temp files in a scratch directory) serves
//! three random upstreams. Each has 2 to 12 servers `127.0.N.M:PORT` with
//! weights 1 to 1000, on ports that were free, 11211 where it was; each
//! server is a backend `server` block of the same nginx answering
//! `$server_addr:$server_port`, and a front `server` proxies to the
//! upstream with `hash $http_x_key consistent;` (`proxy_next_upstream off`,
//! so a failed backend shows as an error, not as another server). Keys go
//! in the `X-Key` header of pipelined HTTP/1.1 requests on one keep-alive
//! connection; the body names the server nginx chose. A second pass over
//! some keys must route them the same way.
//!
//! nginx sorts its points with an unstable sort and keeps one of equal
//! points, so a point two servers share has no defined owner: with up to
//! 1.9 million points some do. `peers/nginx_ties.py` marks the keys whose
//! successor is such a point (a few in ten thousand), and those are left
//! out; every other key must agree.

use std::collections::HashSet;
use std::fs;
use std::io::{BufReader, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::process::{Guard, free_port};
use super::{
    Rng, assert_agree, cluster_file, http_body, random_keys, ringwise_lookup, run_python_peer,
};
use crate::support::TempDir;

const SEED: u64 = 0x006E_6769_6E78;
const LISTS: usize = 3;
const KEYS: usize = 3_000;
/// Keys routed twice, to see that nginx's answers are stable.
const AGAIN: usize = 300;
/// Requests in flight on the connection.
const PIPELINE: usize = 100;
pub(super) const READY_WITHIN: Duration = Duration::from_secs(10);
pub(super) const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian package \
                            `nginx`); this test is never skipped";

/// An upstream: its servers (`address:port` as the config writes it) and
/// weights, and the front port that proxies to it.
#[derive(Debug)]
struct Upstream {
    servers: Vec<(String, u32)>,
    front: u16,
}

/// A port on `ip` that was free a moment ago: 11211 if it was.
fn free_port_on(ip: Ipv4Addr, taken: &HashSet<String>) -> u16 {
    for port in [11211, 0] {
        if let Ok(listener) = TcpListener::bind((ip, port)) {
            let port = listener.local_addr().expect("local address").port();
            if !taken.contains(&format!("{ip}:{port}")) {
                return port;
            }
        }
    }
    panic!("no free port on {ip}")
}

/// `LISTS` random upstreams with distinct server addresses.
fn upstreams(rng: &mut Rng) -> Vec<Upstream> {
    let mut taken = HashSet::new();
    (0..LISTS)
        .map(|_| {
            let n = rng.between(2, 12);
            let servers = (0..n)
                .map(|_| {
                    let ip = Ipv4Addr::new(127, 0, rng.below(4) as u8, rng.between(1, 254) as u8);
                    let address = format!("{ip}:{}", free_port_on(ip, &taken));
                    taken.insert(address.clone());
                    (address, rng.between(1, 1000) as u32)
                })
                .collect();
            Upstream {
                servers,
                front: free_port(),
            }
        })
        .collect()
}

fn nginx_conf(dir: &Path, upstreams: &[Upstream]) -> String {
    let d = dir.display();
    let mut http = String::new();
    for (i, upstream) in upstreams.iter().enumerate() {
        http.push_str(&format!(
            "  upstream u{i} {{\n    hash $http_x_key consistent;\n"
        ));
        for (server, weight) in &upstream.servers {
            http.push_str(&format!("    server {server} weight={weight};\n"));
        }
        http.push_str(&format!(
            "  }}\n  server {{\n    listen 127.0.0.1:{};\n    location / {{\n      \
             proxy_pass http://u{i};\n      proxy_next_upstream off;\n    }}\n  }}\n",
            upstream.front
        ));
        for (server, _) in &upstream.servers {
            http.push_str(&format!(
                "  server {{\n    listen {server};\n    \
                 return 200 \"$server_addr:$server_port\";\n  }}\n"
            ));
        }
    }
    format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\nevents {{\n  worker_connections 1024;\n}}\n\
         http {{\n  access_log off;\n  keepalive_requests 1000000;\n  \
         client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
         fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  \
         scgi_temp_path {d}/scgi;\n{http}}}\n"
    )
}

/// The nginx binary: Debian puts it in /usr/sbin, which may not be on a
/// user's PATH.
pub(super) fn nginx_binary() -> &'static str {
    match Path::new("/usr/sbin/nginx").exists() {
        true => "/usr/sbin/nginx",
        false => "nginx",
    }
}

/// Starts nginx on `upstreams` and waits until every front port answers.
fn start(upstreams: &[Upstream]) -> Result<Guard, String> {
    let dir = super::process::scratch_dir("ringwise-nginx");
    let conf = dir.join("nginx.conf");
    fs::write(&conf, nginx_conf(&dir, upstreams)).expect("write nginx.conf");
    let mut command = super::process::server(nginx_binary());
    command
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&conf)
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut nginx = Guard::spawn(&mut command, dir, INSTALL_HINT);
    let deadline = Instant::now() + READY_WITHIN;
    for upstream in upstreams {
        while TcpStream::connect(("127.0.0.1", upstream.front)).is_err() {
            if let Some(status) = nginx.exited() {
                return Err(format!("nginx exited ({status}): {}", error_log(&nginx)));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "no answer within {READY_WITHIN:?}: {}",
                    error_log(&nginx)
                ));
            }
            sleep(Duration::from_millis(20));
        }
    }
    Ok(nginx)
}

pub(super) fn error_log(nginx: &Guard) -> String {
    fs::read_to_string(nginx.dir().join("error.log")).unwrap_or_default()
}

/// The server nginx routes each key to, through `front`.
pub(super) fn route(front: u16, keys: &[String]) -> std::io::Result<Vec<String>> {
    let stream = TcpStream::connect(("127.0.0.1", front))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut answers = Vec::with_capacity(keys.len());
    for batch in keys.chunks(PIPELINE) {
        let requests: String = batch
            .iter()
            .map(|key| format!("GET / HTTP/1.1\r\nHost: compat\r\nX-Key: {key}\r\n\r\n"))
            .collect();
        writer.write_all(requests.as_bytes())?;
        for key in batch {
            answers.push(http_body(&mut reader, key)?);
        }
    }
    Ok(answers)
}

/// The keys `peers/nginx_ties.py` marks as placed by a tie between servers.
fn ties(upstream: &Upstream, dir: &TempDir, keys: &[String]) -> Vec<bool> {
    let list: String = upstream
        .servers
        .iter()
        .map(|(s, w)| format!("{s} {w}\n"))
        .collect();
    let file = dir.write("servers.txt", &list);
    let marks = run_python_peer("nginx_ties.py", &[Path::new(&file)], dir.path(), keys);
    marks[1..].iter().map(|mark| mark == "tie").collect()
}

#[test]
fn nginx_consistent_hash_agrees() {
    let dir = TempDir::create("compat-nginx");
    let mut rng = Rng(SEED);
    let mut failure = String::new();
    let (nginx, upstreams) = loop {
        // Ports are chosen free, but may be taken before nginx binds them.
        let upstreams = upstreams(&mut rng);
        match start(&upstreams) {
            Ok(nginx) => break (nginx, upstreams),
            Err(why) if failure.is_empty() => failure = why,
            Err(why) => panic!("nginx did not start twice: {failure}\n{why}"),
        }
    };
    for (i, upstream) in upstreams.iter().enumerate() {
        let keys = random_keys(&mut rng, KEYS);
        let routed = route(upstream.front, &keys)
            .unwrap_or_else(|err| panic!("routing through nginx: {err}: {}", error_log(&nginx)));
        let again = route(upstream.front, &keys[..AGAIN]).expect("routing again");
        assert_eq!(
            again,
            routed[..AGAIN],
            "nginx routes a key the same way twice"
        );

        let nodes: Vec<_> = upstream
            .servers
            .iter()
            .map(|(s, w)| (s.clone(), format!("weight = {w}")))
            .collect();
        let cluster = dir.write(
            "cluster.toml",
            &cluster_file("algorithm = \"nginx\"", &nodes),
        );
        let ours = ringwise_lookup(Path::new(&cluster), &keys);

        let tied = ties(upstream, &dir, &keys);
        let pick = |answers: &[String]| -> Vec<String> {
            answers
                .iter()
                .zip(&tied)
                .filter(|(_, tie)| !**tie)
                .map(|(a, _)| a.clone())
                .collect()
        };
        let left_out = tied.iter().filter(|t| **t).count();
        assert!(
            left_out * 100 < KEYS,
            "{left_out} of {KEYS} keys placed by ties"
        );
        assert_agree(
            &format!("nginx, upstream {i} ({left_out} tied keys left out): {upstream:?}"),
            &pick(&keys),
            &pick(&routed),
            &pick(&ours),
        );
    }
    drop(nginx);
}
