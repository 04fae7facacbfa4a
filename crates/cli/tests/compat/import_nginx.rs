//! `--cluster-format nginx --upstream NAME`: ringwise reading the very
//! `nginx.conf` a real nginx runs, against that nginx.
//!
//! One seeded random file: two `upstream` blocks inside `http {}`, each
//! `hash $http_x_key consistent;` over 2 to 8 servers `127.0.0.N:PORT`
//! (weights 1 to 50, `max_fails=`/`fail_timeout=` here and there, one
//! `down` server of weight 1 to 3 in each, `keepalive`, comments, quoted
//! strings), each server a backend of the same nginx answering its own
//! address, and a front `server` per upstream (`proxy_next_upstream off`).
//! 2,000 keys an upstream go in `X-Key` headers (the helpers of
//! `nginx.rs`); ringwise, reading the same file, must name the server
//! nginx chose for every key: a down server's keys go where nginx's walk
//! past its points sends them. Server lists with a ring point two servers
//! share (down ones included) are drawn again: nginx keeps one of equal
//! points, which one unspecified.

use std::collections::HashSet;
use std::fs;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::nginx::{INSTALL_HINT, READY_WITHIN, error_log, nginx_binary, route};
use super::process::{self, Guard, free_port};
use super::{
    Rng, assert_agree, cluster_file, random_keys, ringwise_lookup, ringwise_lookup_with,
    shared_points,
};
use crate::support::TempDir;

const SEED: u64 = 0x0069_6D6E_6778;
const KEYS: usize = 2_000;

/// A server line: address, weight, down, extra parameters.
type Server = (String, u32, bool, &'static str);

fn upstream_servers(rng: &mut Rng, taken: &mut HashSet<String>) -> Vec<Server> {
    loop {
        let n = rng.between(2, 8);
        let down = rng.below(n);
        let mut servers = Vec::new();
        while servers.len() < n {
            let ip = Ipv4Addr::new(127, 0, rng.below(4) as u8, rng.between(1, 254) as u8);
            let Ok(listener) = TcpListener::bind((ip, 0)) else {
                continue;
            };
            let address = format!("{ip}:{}", listener.local_addr().expect("address").port());
            if !taken.insert(address.clone()) {
                continue;
            }
            let is_down = servers.len() == down;
            let weight = match is_down {
                true => rng.between(1, 3),
                false => rng.between(5, 50),
            } as u32;
            let extra = [
                "",
                " max_fails=3",
                " fail_timeout=5s",
                " max_fails=2 fail_timeout=30",
            ][rng.below(4)];
            servers.push((address, weight, is_down, extra));
        }
        let nodes: Vec<_> = servers
            .iter()
            .map(|s| (s.0.clone(), format!("weight = {}", s.1)))
            .collect();
        if shared_points(&cluster_file("algorithm = \"nginx\"", &nodes)).is_empty() {
            return servers;
        }
    }
}

fn nginx_conf(dir: &Path, upstreams: &[(String, Vec<Server>, u16)]) -> String {
    let d = dir.display();
    let mut http = String::new();
    for (name, servers, front) in upstreams {
        http.push_str(&format!(
            "  # the upstream {name}\n  upstream {name} {{\n    keepalive 8;\n    \
             hash $http_x_key consistent;\n"
        ));
        for (address, weight, down, extra) in servers {
            let down = if *down { " down" } else { "" };
            http.push_str(&format!(
                "    server {address} weight={weight}{extra}{down};\n"
            ));
        }
        http.push_str(&format!(
            "  }}\n  server {{\n    listen 127.0.0.1:{front};\n    location / {{\n      \
             proxy_pass http://{name};\n      proxy_next_upstream off;\n    }}\n  }}\n"
        ));
        for (address, ..) in servers {
            http.push_str(&format!(
                "  server {{ listen {address}; return 200 \"$server_addr:$server_port\"; }}\n"
            ));
        }
    }
    format!(
        "# seeded by {SEED:#x}\ndaemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\nevents {{\n  worker_connections 1024;\n}}\n\
         http {{\n  access_log off;\n  keepalive_requests 1000000;\n  \
         client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
         fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  \
         scgi_temp_path '{d}/scgi';\n{http}}}\n"
    )
}

fn start(conf: &Path, dir: std::path::PathBuf, fronts: &[u16]) -> Result<Guard, String> {
    let mut command = process::server(nginx_binary());
    command
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(conf)
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut nginx = Guard::spawn(&mut command, dir, INSTALL_HINT);
    let deadline = Instant::now() + READY_WITHIN;
    for front in fronts {
        while TcpStream::connect(("127.0.0.1", *front)).is_err() {
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

#[test]
fn ringwise_reads_the_nginx_conf_nginx_runs() {
    let mut rng = Rng(SEED);
    let mut failure = String::new();
    let (conf, nginx, upstreams) = loop {
        let mut taken = HashSet::new();
        let upstreams: Vec<(String, Vec<Server>, u16)> = ["cache", "api"]
            .iter()
            .map(|name| {
                (
                    name.to_string(),
                    upstream_servers(&mut rng, &mut taken),
                    free_port(),
                )
            })
            .collect();
        let dir = process::scratch_dir("ringwise-nginx-import");
        let conf = dir.join("nginx.conf");
        fs::write(&conf, nginx_conf(&dir, &upstreams)).expect("write nginx.conf");
        let fronts: Vec<u16> = upstreams.iter().map(|u| u.2).collect();
        match start(&conf, dir, &fronts) {
            Ok(nginx) => break (conf, nginx, upstreams),
            // Ports are chosen free, but may be taken before nginx binds them.
            Err(why) if failure.is_empty() => failure = why,
            Err(why) => panic!("nginx did not start twice: {failure}\n{why}"),
        }
    };
    let scratch = TempDir::create("compat-import-nginx");
    for (name, servers, front) in &upstreams {
        let keys = random_keys(&mut rng, KEYS);
        let theirs = route(*front, &keys)
            .unwrap_or_else(|e| panic!("routing through nginx: {e}: {}", error_log(&nginx)));
        let down: Vec<&String> = servers.iter().filter(|s| s.2).map(|s| &s.0).collect();
        assert!(
            !theirs.iter().any(|t| down.contains(&t)),
            "nginx sent a key to a down server"
        );
        let args = ["--cluster-format", "nginx", "--upstream", name];
        let ours = ringwise_lookup_with(&conf, &args, &keys);
        assert_agree(
            &format!("upstream {name} of {}: {servers:?}", conf.display()),
            &keys,
            &theirs,
            &ours,
        );
        // The down server mattered: on the ring with it, some keys are its.
        let nodes: Vec<_> = servers
            .iter()
            .map(|s| (s.0.clone(), format!("weight = {}", s.1)))
            .collect();
        let all = scratch.write("all.toml", &cluster_file("algorithm = \"nginx\"", &nodes));
        let with_down = ringwise_lookup(Path::new(&all), &keys);
        assert!(
            with_down.iter().any(|o| down.contains(&o)),
            "no key was the down server's"
        );
    }
    drop(nginx);
}
