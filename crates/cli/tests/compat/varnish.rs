//! `directors.shard()` against a real varnishd.
//!
//! One `varnishd -F` (foreground, so its pid is the manager's; the cache
//! child exits with it; `-j none`, work directory in a scratch directory)
//! runs a VCL with three random shard directors. Each has 2 to 12
//! backends with random VCL names, some with an `ident`, weights 0.5 to 4
//! (some fractional) and its own `reconfigure(replicas)` from 2 to 300.
//! Every backend is a loopback listener of this test that answers with
//! the backend's name (its ident when it has one). Requests say which
//! director and lookup to use in headers; every one is `return (pass)`,
//! so each reaches a backend. Per director, on pipelined keep-alive
//! requests:
//!
//! - `by=KEY, key=d.key(req.http.X-Key)` with `alt=0` and `alt=1`, against
//!   `ringwise lookup` (`--replicas 2` for alt 1) with `varnish-key`;
//! - `by=HASH` in `vcl_backend_fetch` with a `vcl_hash` of
//!   `hash_data(req.http.X-Key)`, against `varnish-req-hash` of the key;
//! - `by=HASH` in `vcl_backend_fetch` with the built-in `vcl_hash`
//!   (`req.url`, then `req.http.host`), against `varnish-req-hash` of the
//!   key `URL ‖ 0x00 ‖ HOST` (given as hex);
//! - `by=HASH` in `vcl_recv`, which hashes `req.url` (client context),
//!   against `varnish-key` of the URL.
//!
//! 100 % agreement is required. ringwise reads the VCL itself
//! (`--cluster-format varnish --pool dN`, the `varnish` importer, with
//! `--hash` for the lookup at hand); alt 0 is also checked on a cluster
//! file written from the same random configuration (weights below 1,
//! which Varnish ignores, written as 1).

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::thread::{sleep, spawn};
use std::time::{Duration, Instant};

use super::process::{Guard, free_port};
use super::{
    Rng, answers, assert_agree, cluster_file, http_body, random_keys, ringwise_lookup_with,
};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x0076_6172_6E69_7368;
const DIRECTORS: usize = 3;
const KEYS: usize = 3_000;
const PIPELINE: usize = 100;
/// varnishd compiles the VCL with the C compiler before it listens.
const READY_WITHIN: Duration = Duration::from_secs(60);
const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian package \
                            `varnish`); this test is never skipped";

/// One backend: its VCL name, its ident if given, its weight.
#[derive(Debug)]
struct Backend {
    vcl_name: String,
    ident: Option<String>,
    weight: f64,
    port: u16,
}

impl Backend {
    /// The name Varnish hashes and ringwise calls the node.
    fn name(&self) -> &str {
        self.ident.as_deref().unwrap_or(&self.vcl_name)
    }
}

#[derive(Debug)]
struct Director {
    backends: Vec<Backend>,
    replicas: u32,
}

/// Serves `name` as the body of every request on `listener`, keep-alive.
fn answer_with(listener: TcpListener, name: String) {
    spawn(move || {
        for stream in listener.incoming().flatten() {
            let name = name.clone();
            spawn(move || {
                let mut writer = stream.try_clone().expect("clone");
                let mut reader = BufReader::new(stream);
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{name}",
                    name.len()
                );
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line.trim_end().is_empty() => {
                            if writer.write_all(reply.as_bytes()).is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                    }
                }
            });
        }
    });
}

/// A weight as the VCL gives it: sometimes below 1, which Varnish ignores.
fn weight(rng: &mut Rng) -> f64 {
    match rng.below(5) {
        0 => 1.0,
        1 => 0.5,
        2 | 3 => rng.between(1, 4) as f64,
        _ => rng.between(100, 400) as f64 / 100.0,
    }
}

/// `DIRECTORS` random directors, their backends listening.
fn directors(rng: &mut Rng) -> Vec<Director> {
    (0..DIRECTORS)
        .map(|d| {
            let n = rng.between(2, 12);
            let backends = (0..n)
                .map(|i| {
                    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a backend");
                    let port = listener.local_addr().expect("address").port();
                    let vcl_name = format!("d{d}_{i}_{:x}", rng.next() % 0x10_0000);
                    let ident = (rng.below(3) == 0).then(|| {
                        format!("10.{}.{}.{i}:{}", d, rng.below(256), rng.between(1, 65535))
                    });
                    let backend = Backend {
                        vcl_name,
                        ident,
                        weight: weight(rng),
                        port,
                    };
                    answer_with(listener, backend.name().to_owned());
                    backend
                })
                .collect();
            Director {
                backends,
                replicas: rng.between(2, 300) as u32,
            }
        })
        .collect()
}

fn vcl(directors: &[Director]) -> String {
    let mut backends = String::new();
    let mut init = String::new();
    let mut recv = String::new();
    let mut fetch = String::new();
    for (d, director) in directors.iter().enumerate() {
        writeln!(init, "  new d{d} = directors.shard();").ok();
        for b in &director.backends {
            writeln!(
                backends,
                "backend {} {{ .host = \"127.0.0.1\"; .port = \"{}\"; }}",
                b.vcl_name, b.port
            )
            .ok();
            let ident = b
                .ident
                .as_ref()
                .map_or(String::new(), |i| format!(", ident=\"{i}\""));
            writeln!(
                init,
                "  d{d}.add_backend({}{ident}, weight={});",
                b.vcl_name, b.weight
            )
            .ok();
        }
        writeln!(init, "  d{d}.reconfigure(replicas={});", director.replicas).ok();
        writeln!(
            recv,
            "  if (req.http.X-Dir == \"{d}\") {{\n    if (req.http.X-By == \"key\") {{\n      \
             set req.backend_hint = d{d}.backend(by=KEY, key=d{d}.key(req.http.X-Key), \
             alt=std.integer(req.http.X-Alt, 0));\n    }} else if (req.http.X-By == \"url\") {{\n      \
             set req.backend_hint = d{d}.backend(by=HASH);\n    }}\n  }}"
        )
        .ok();
        writeln!(
            fetch,
            "  if (bereq.http.X-Dir == \"{d}\" && bereq.http.X-By == \"hash\") {{\n    \
             set bereq.backend = d{d}.backend(by=HASH);\n  }}"
        )
        .ok();
    }
    format!(
        "vcl 4.1;\nimport directors;\nimport std;\n{backends}\nsub vcl_init {{\n{init}}}\n\
         sub vcl_recv {{\n{recv}  return (pass);\n}}\n\
         sub vcl_hash {{\n  if (req.http.X-Key-Hash) {{\n    hash_data(req.http.X-Key);\n    \
         return (lookup);\n  }}\n}}\n\
         sub vcl_backend_fetch {{\n{fetch}}}\n"
    )
}

/// Starts varnishd on `vcl` and waits until it answers on `port`.
fn start(vcl: &str, port: u16) -> Result<(Guard, u16), String> {
    let dir = super::process::scratch_dir("ringwise-varnish");
    let file = dir.join("shard.vcl");
    fs::write(&file, vcl).expect("write the VCL");
    let binary = match Path::new("/usr/sbin/varnishd").exists() {
        true => "/usr/sbin/varnishd",
        false => "varnishd",
    };
    let mut command = super::process::server(binary);
    command
        .args(["-F", "-j", "none", "-s", "malloc,32m", "-a"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-f")
        .arg(&file)
        .arg("-n")
        .arg(dir.join("work"))
        .stdin(Stdio::null())
        .stdout(fs::File::create(dir.join("varnishd.log")).expect("log file"))
        .stderr(Stdio::null());
    let mut varnish = Guard::spawn(&mut command, dir, INSTALL_HINT);
    let deadline = Instant::now() + READY_WITHIN;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        let log_file = varnish.dir().join("varnishd.log");
        let log = || fs::read_to_string(&log_file).unwrap_or_default();
        if let Some(status) = varnish.exited() {
            return Err(format!("varnishd exited ({status}): {}", log()));
        }
        if Instant::now() > deadline {
            return Err(format!("no answer within {READY_WITHIN:?}: {}", log()));
        }
        sleep(Duration::from_millis(50));
    }
    Ok((varnish, port))
}

/// The bodies of `requests` (each the request's head), pipelined on one
/// connection to `port`.
fn send(port: u16, requests: &[String]) -> std::io::Result<Vec<String>> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut bodies = Vec::with_capacity(requests.len());
    for batch in requests.chunks(PIPELINE) {
        writer.write_all(batch.concat().as_bytes())?;
        for request in batch {
            bodies.push(http_body(&mut reader, request)?);
        }
    }
    Ok(bodies)
}

/// `/` and the key's bytes, every one but letters and digits escaped.
fn url(key: &str) -> String {
    let mut url = String::from("/");
    for b in key.bytes() {
        match b.is_ascii_alphanumeric() {
            true => url.push(char::from(b)),
            false => write!(url, "%{b:02X}").unwrap_or(()),
        }
    }
    url
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn varnish_shard_director_agrees() {
    let dir = TempDir::create("compat-varnish");
    let mut rng = Rng(SEED);
    let directors = directors(&mut rng);
    let text = vcl(&directors);
    let vcl_file = dir.write("shard.vcl", &text);
    // The port was free, but may be taken before varnishd binds it.
    let (varnish, port) = match start(&text, free_port()) {
        Ok(varnish) => varnish,
        Err(first) => start(&text, free_port())
            .unwrap_or_else(|why| panic!("varnishd did not start twice: {first}\n{why}")),
    };
    for (d, director) in directors.iter().enumerate() {
        let keys = random_keys(&mut rng, KEYS);
        let head = |extra: String, path: &str| {
            format!("GET {path} HTTP/1.1\r\nHost: h{d}\r\nX-Dir: {d}\r\n{extra}\r\n")
        };
        let by_key = |alt: u32| -> Vec<String> {
            keys.iter()
                .map(|k| head(format!("X-By: key\r\nX-Alt: {alt}\r\nX-Key: {k}\r\n"), "/"))
                .collect()
        };
        let hashed: Vec<String> = keys
            .iter()
            .map(|k| {
                head(
                    format!("X-By: hash\r\nX-Key-Hash: 1\r\nX-Key: {k}\r\n"),
                    "/",
                )
            })
            .collect();
        let urls: Vec<String> = keys.iter().map(|k| url(k)).collect();
        let builtin: Vec<String> = urls
            .iter()
            .map(|u| head("X-By: hash\r\n".into(), u))
            .collect();
        let client: Vec<String> = urls
            .iter()
            .map(|u| head("X-By: url\r\n".into(), u))
            .collect();
        let route = |requests: &[String]| {
            send(port, requests).unwrap_or_else(|err| panic!("routing through varnishd: {err}"))
        };

        let nodes: Vec<(String, String)> = director
            .backends
            .iter()
            .map(|b| {
                (
                    b.name().to_owned(),
                    format!("weight = {}", b.weight.max(1.0)),
                )
            })
            .collect();
        let cluster = |hash: &str| {
            let header = format!(
                "algorithm = \"varnish-shard\"\nhash = \"{hash}\"\nshard_replicas = {}",
                director.replicas
            );
            dir.write(
                &format!("cluster-{d}-{hash}.toml"),
                &cluster_file(&header, &nodes),
            )
        };
        let key_file = cluster("varnish-key");
        let what = |mode: &str| format!("varnish, director {d} {mode}: {director:?}");
        // The cluster as the importer reads it from the VCL varnishd runs.
        let pool = format!("d{d}");
        let from_vcl = |hash: &'static str, more: &[&'static str]| {
            let mut args = vec![
                "--cluster-format",
                "varnish",
                "--pool",
                &pool,
                "--hash",
                hash,
            ];
            args.extend_from_slice(more);
            args.into_iter().map(str::to_owned).collect::<Vec<String>>()
        };
        let lookup_vcl = |args: Vec<String>, keys: &[String]| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ringwise_lookup_with(Path::new(&vcl_file), &args, keys)
        };

        let peer = route(&by_key(0));
        let ours = ringwise_lookup_with(Path::new(&key_file), &[], &keys);
        assert_agree(&what("by=KEY alt=0 (cluster file)"), &keys, &peer, &ours);
        let ours = lookup_vcl(from_vcl("varnish-key", &[]), &keys);
        assert_agree(&what("by=KEY alt=0 (VCL)"), &keys, &peer, &ours);

        let pairs = lookup_vcl(from_vcl("varnish-key", &["--replicas", "2"]), &keys);
        let second: Vec<String> = pairs
            .iter()
            .map(|p| p.split(',').nth(1).expect("two replicas").to_owned())
            .collect();
        assert_agree(&what("by=KEY alt=1"), &keys, &route(&by_key(1)), &second);

        let ours = lookup_vcl(from_vcl("varnish-req-hash", &[]), &keys);
        assert_agree(
            &what("by=HASH, hash_data(key)"),
            &keys,
            &route(&hashed),
            &ours,
        );

        // The built-in vcl_hash hashes `URL ‖ 0x00 ‖ HOST ‖ 0x00`: the key
        // holds a zero byte, so it goes in as hex (and is echoed decoded).
        let digests: Vec<String> = urls.iter().map(|u| format!("{u}\0h{d}")).collect();
        let hex_lines: String = digests.iter().map(|k| hex(k.as_bytes()) + "\n").collect();
        let mut args = vec![
            "lookup".to_owned(),
            "--cluster".to_owned(),
            vcl_file.clone(),
        ];
        args.extend(from_vcl("varnish-req-hash", &["--key-format", "hex"]));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ringwise(&args, hex_lines.as_bytes());
        assert_success(&out);
        let ours = answers("lookup", &digests, &stdout(&out));
        assert_agree(
            &what("by=HASH, built-in vcl_hash"),
            &digests,
            &route(&builtin),
            &ours,
        );

        let ours = lookup_vcl(from_vcl("varnish-key", &[]), &urls);
        assert_agree(
            &what("by=HASH in vcl_recv (req.url)"),
            &urls,
            &route(&client),
            &ours,
        );
    }
    drop(varnish);
}
