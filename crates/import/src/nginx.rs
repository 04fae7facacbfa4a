//! `nginx`: an `upstream NAME { ... }` block of an `nginx.conf` (or of a
//! file it includes), balanced by `hash KEY consistent;`.
//!
//! Source: nginx `src/http/ngx_http_upstream.c` (`ngx_http_upstream_server`,
//! the `server` parameters), `src/http/modules/ngx_http_upstream_hash_module.c`
//! (`ngx_http_upstream_hash`, `_update_chash`, `_get_chash_peer`) and
//! `ngx_http_upstream_round_robin.c`, read at nginx/nginx 3f6f782 (2026);
//! the stream module's hash is the same code. Syntax: [`crate::nginx_conf`].
//!
//! How nginx reads it: the upstream blocks may be anywhere (`http {}`,
//! `stream {}`, an included file); `--upstream NAME` chooses one when the
//! file has several. In the block the last balancing directive wins (nginx
//! warns "load balancing method redefined"), and only `hash KEY
//! consistent` is a ring: `hash KEY` alone is `hash % total weight`,
//! `ip_hash`, `least_conn`, `random` are not consistent, none is round
//! robin. Each `server ADDRESS` gets `160 × weight` CRC-32 points of the
//! address as written, which is the ringwise node name (`nginx` algorithm).
//!
//! - `down`: the server keeps its points, and a key on one goes to the
//!   next point whose server is up (`_get_chash_peer` walks on): the ring
//!   without it, as long as no 21 points in a row are down (then nginx
//!   falls back to round robin, and this reader refuses the file). Left out,
//!   with a note.
//! - `backup`: nginx refuses it after `hash` ("balancing method does not
//!   support parameter"); before it nginx accepts it, gives it no points
//!   and uses it only in the round-robin fallback: left out, with a note.
//! - `max_fails`, `fail_timeout`, `max_conns`, `resolve`, `route=`, and the
//!   block's `keepalive`, `zone`, `resolver`...: notes (a failed or full
//!   server's keys go to the next point meanwhile). `service=` (servers
//!   from DNS SRV records), `slow_start=` (NGINX Plus refuses it with hash),
//!   `state` and `sticky` are refused; an unknown parameter too.
//!
//! Worked example: `upstream cache { hash $request_uri consistent; server
//! 10.0.0.1:8080 weight=2; server 10.0.0.2:8080 down; server
//! 10.0.0.3:8080; }` is the nodes `10.0.0.1:8080` (weight 2) and
//! `10.0.0.3:8080`, with a note for the down server and one naming the key.
//!
//! Cost: one pass over the text, O(length); with a `down` server, one
//! build of the whole ring (160 points a unit of weight) to find the
//! longest run of down points.

use ringwise::{ClusterSpec, Member, Settings};

use crate::error::syntax;
use crate::nginx_conf::{self, Directive};
use crate::{ImportError, Imported};

/// The block's directives that do not change placement.
const INERT: &[&str] = &[
    "keepalive",
    "keepalive_requests",
    "keepalive_time",
    "keepalive_timeout",
    "zone",
    "resolver",
    "resolver_timeout",
    "queue",
    "ntlm",
];
const BALANCERS: &[&str] = &["hash", "ip_hash", "least_conn", "random", "least_time"];
const PARAMETERS: &str = "weight=, max_fails=, fail_timeout=, max_conns=, down, backup, resolve, \
                          service=, route=, slow_start=, drain";

pub(crate) fn read(text: &str, select: Option<&str>) -> Result<Imported, ImportError> {
    let top = nginx_conf::parse(text)?;
    let mut found = Vec::new();
    let mut includes = Vec::new();
    upstreams(&top, "main", &mut found, &mut includes);
    let available: Vec<String> = found.iter().map(|(_, u)| u.args.join(" ")).collect();
    let chosen: Vec<_> = match select {
        Some(name) => found.iter().filter(|(_, u)| u.args == [name]).collect(),
        None if found.len() == 1 => found.iter().collect(),
        None => Vec::new(),
    };
    let (context, upstream) = match chosen.as_slice() {
        [one] => *one,
        [] if found.is_empty() && !includes.is_empty() => {
            return Err(ImportError::Missing {
                message: format!(
                    "the file has no upstream block; it includes {}: import the file that has it",
                    includes.join(", ")
                ),
            });
        }
        [] => {
            return Err(ImportError::Select {
                what: "upstream",
                wanted: select.map(str::to_owned),
                available,
            });
        }
        [_, second, ..] => {
            return Err(syntax(
                second.1.line,
                "a second upstream block of this name",
            ));
        }
    };
    let mut imported = read_upstream(upstream, context)?;
    imported.selected = Some(upstream.args.join(" "));
    Ok(imported)
}

/// Every `upstream` block under `directives`, with the block it is in.
fn upstreams<'a>(
    directives: &'a [Directive],
    context: &'a str,
    found: &mut Vec<(&'a str, &'a Directive)>,
    includes: &mut Vec<String>,
) {
    for d in directives {
        match (&d.block, d.name.as_str()) {
            (Some(_), "upstream") => found.push((context, d)),
            (Some(inner), name) => upstreams(inner, name, found, includes),
            (None, "include") => includes.push(d.args.join(" ")),
            _ => {}
        }
    }
}

fn read_upstream(upstream: &Directive, context: &str) -> Result<Imported, ImportError> {
    let [name] = upstream.args.as_slice() else {
        return Err(syntax(upstream.line, "`upstream` takes one name"));
    };
    let mut notes = Vec::new();
    let mut balancer: Option<&Directive> = None;
    // (server, weight, line, down)
    let mut servers: Vec<(String, u32, usize, bool)> = Vec::new();
    for d in upstream.block.as_deref().unwrap_or_default() {
        let line = d.line;
        let written = format!("{} {}", d.name, d.args.join(" "));
        let written = written.trim_end();
        if d.block.is_some() {
            return Err(syntax(
                line,
                format!("`{}` takes no block inside an upstream", d.name),
            ));
        }
        match d.name.as_str() {
            "server" => {
                if let Some(server) = server(d, balancer, &mut notes)? {
                    servers.push(server);
                }
            }
            b if BALANCERS.contains(&b) => {
                if let Some(before) = balancer {
                    notes.push(format!(
                        "line {}: `{}` is redefined on line {line}: nginx uses the last",
                        before.line, before.name
                    ));
                }
                balancer = Some(d);
            }
            "state" | "sticky" => {
                return Err(ImportError::Unsupported {
                    line,
                    setting: written.to_owned(),
                    reason: match d.name.as_str() {
                        "state" => "the servers are in another file (NGINX Plus): list them here",
                        _ => "requests with the sticky cookie or route go to its server, not by the hash",
                    }
                    .into(),
                });
            }
            i if INERT.contains(&i) => notes.push(format!(
                "line {line}: `{written}` does not change placement"
            )),
            _ => {
                return Err(ImportError::UnknownSetting {
                    line,
                    setting: written.to_owned(),
                    known: format!(
                        "server, {}, {}, state, sticky",
                        BALANCERS.join(", "),
                        INERT.join(", ")
                    ),
                });
            }
        }
    }
    let line = upstream.line;
    match balancer.map(|b| (b.name.as_str(), b.args.as_slice(), b.line)) {
        Some(("hash", [key, consistent], line)) if consistent == "consistent" => notes.insert(
            0,
            format!(
                "line {line}: the key is `{key}` ({}upstream {name}): look up its values",
                match context {
                    "main" => String::new(),
                    c => format!("{c} "),
                }
            ),
        ),
        Some(("hash", [_], line)) => {
            return Err(ImportError::Unsupported {
                line,
                setting: written(balancer),
                reason: "without `consistent` nginx picks the server by hash % total weight, not \
                         by a ring (nearly every key moves when a server is added); ringwise \
                         reproduces `hash KEY consistent;`"
                    .into(),
            });
        }
        Some(("hash", _, line)) => {
            return Err(syntax(line, "nginx reads `hash KEY [consistent];`"));
        }
        Some((_, _, line)) => {
            return Err(ImportError::Unsupported {
                line,
                setting: written(balancer),
                reason: "not a consistent hash: ringwise reproduces `hash KEY consistent;`".into(),
            });
        }
        None => {
            return Err(ImportError::Unsupported {
                line,
                setting: format!("upstream {name}"),
                reason: "no balancing directive: nginx balances it round robin; ringwise \
                         reproduces `hash KEY consistent;`"
                    .into(),
            });
        }
    }
    if servers.iter().all(|s| s.3) {
        return Err(ImportError::Missing {
            message: format!(
                "upstream {name} (line {line}) has no server that is up and not a backup"
            ),
        });
    }
    let mut settings = Settings::default();
    settings.algorithm = Some("nginx".into());
    let member = |(server, weight, ..): &(String, u32, usize, bool)| {
        let mut member = Member::new(server.clone());
        member.weight = Some(f64::from(*weight));
        member
    };
    if servers.iter().any(|s| s.3) {
        check_down_runs(&settings, &servers, name, line)?;
    }
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    for s in servers.iter().filter(|s| !s.3) {
        imported.push(member(s), s.2);
    }
    Ok(imported)
}

fn written(d: Option<&Directive>) -> String {
    d.map(|d| {
        format!("{} {}", d.name, d.args.join(" "))
            .trim_end()
            .to_owned()
    })
    .unwrap_or_default()
}

/// One `server` line: its address, weight, line and whether it is down;
/// `None` for a backup (it has no points).
fn server(
    d: &Directive,
    balancer: Option<&Directive>,
    notes: &mut Vec<String>,
) -> Result<Option<(String, u32, usize, bool)>, ImportError> {
    let line = d.line;
    let Some((address, parameters)) = d.args.split_first() else {
        return Err(syntax(line, "`server` needs an address"));
    };
    let mut weight = 1;
    let mut down = false;
    for p in parameters {
        let setting = format!("server {address} {p}");
        let (key, value) = match p.split_once('=') {
            Some((k, v)) => (format!("{k}="), Some(v)),
            None => (p.clone(), None),
        };
        let note = |what: &str| format!("line {line}: `{setting}`: {what}");
        match (key.as_str(), value) {
            ("weight=", Some(v)) => {
                weight = v
                    .parse::<u32>()
                    .ok()
                    .filter(|w| *w >= 1 && v.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        syntax(line, format!("`{p}`: nginx takes a whole weight from 1"))
                    })?;
            }
            ("max_fails=" | "fail_timeout=", Some(_)) => notes.push(note(
                "a server failing max_fails times is skipped for fail_timeout, its keys \
                 going to the next point's server meanwhile",
            )),
            ("max_conns=", Some(_)) => notes.push(note(
                "a server at max_conns connections is skipped, its keys going to the next \
                 point's server meanwhile",
            )),
            ("resolve" | "route=", _) => notes.push(note("does not change placement")),
            ("down" | "drain", None) => {
                down = true;
                notes.push(note(
                    "left out: nginx keeps its points but passes their keys to the next \
                     point's server, which is the ring without it",
                ));
            }
            ("backup", None) => {
                if balancer.is_some_and(|b| b.name != "least_conn") {
                    return Err(ImportError::Unsupported {
                        line,
                        setting,
                        reason: "nginx refuses it: the balancing method above does not support \
                                 parameter \"backup\""
                            .into(),
                    });
                }
                notes.push(note(
                    "left out: a backup takes no points; nginx uses it only when it falls \
                     back to round robin",
                ));
                return Ok(None);
            }
            ("service=" | "slow_start=", Some(_)) => {
                return Err(ImportError::Unsupported {
                    line,
                    setting,
                    reason: match key.as_str() {
                        "service=" => "the servers come from DNS SRV records, not from the file",
                        _ => "NGINX Plus refuses slow_start with hash; open-source nginx has none",
                    }
                    .into(),
                });
            }
            _ => {
                return Err(ImportError::UnknownSetting {
                    line,
                    setting,
                    known: PARAMETERS.into(),
                });
            }
        }
    }
    match address.strip_prefix("unix:") {
        Some(path) => crate::address::socket_path(path, line, "server")?,
        None => crate::address::host_optional_port(address, line, "server")?,
    }
    if !address.starts_with("unix:") && address.parse::<std::net::SocketAddr>().is_err() {
        notes.push(format!(
            "line {line}: `{address}` is a name: nginx resolves it at start, and if it has \
             several addresses they share its points, taking its keys round robin"
        ));
    }
    Ok(Some((address.clone(), weight, line, down)))
}

/// nginx walks at most 21 points from a key's (`hp->tries > 20`) before
/// round robin: refuses a ring where that many points in a row are down.
fn check_down_runs(
    settings: &Settings,
    servers: &[(String, u32, usize, bool)],
    name: &str,
    line: usize,
) -> Result<(), ImportError> {
    let members: Vec<Member> = servers
        .iter()
        .map(|(s, w, ..)| {
            let mut m = Member::new(s.clone());
            m.weight = Some(f64::from(*w));
            m
        })
        .collect();
    let rejected = |error| ImportError::Rejected {
        line: Some(line),
        error,
    };
    let keyed = ClusterSpec::from_parts(settings, &members)
        .map_err(|r| rejected(r.error))?
        .build()
        .map_err(rejected)?;
    let Some(ring) = keyed.placement().as_ring() else {
        return Ok(());
    };
    let down: std::collections::HashMap<&str, bool> =
        servers.iter().map(|s| (s.0.as_str(), s.3)).collect();
    let nodes = ring.nodes();
    let is_down = |id| {
        let node = nodes.name(id).unwrap_or_default();
        down.get(node).copied().unwrap_or(false)
    };
    // Runs of distinct point values any of whose owners is down (nginx
    // keeps one of equal points, which one unspecified), around the circle.
    let mut values: Vec<(u64, bool)> = Vec::new();
    for (point, id) in ring.points() {
        match values.last_mut() {
            Some((v, d)) if *v == point => *d |= is_down(id),
            _ => values.push((point, is_down(id))),
        }
    }
    let (mut longest, mut run) = (0, 0);
    for (_, d) in values.iter().chain(values.iter()) {
        run = if *d { run + 1 } else { 0 };
        longest = longest.max(run.min(values.len()));
    }
    if longest > 20 {
        return Err(ImportError::Unsupported {
            line,
            setting: format!("upstream {name}'s down servers"),
            reason: format!(
                "{longest} points in a row are of down servers: nginx tries 21 from a key's \
                 point, then balances round robin; ringwise reproduces the ring only"
            ),
        });
    }
    Ok(())
}
