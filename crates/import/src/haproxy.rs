//! `haproxy`: a `backend` (or `listen`) section of an `haproxy.cfg`
//! balanced by a hash with `hash-type consistent`.
//!
//! Source: haproxy `src/cfgparse.c` (sections, automatic server ids),
//! `src/cfgparse-listen.c` (`balance`, `hash-type`, `hash-balance-factor`),
//! `src/server.c` (`server`, `default-server` and their keywords),
//! `src/backend.c` (`backend_parse_balance`), tag v2.6.0 (Debian 12 ships
//! 2.6.12).
//!
//! How HAProxy reads it: a section runs from its keyword (`global`,
//! `defaults`, `frontend`, `backend`, `listen`, ...) at the start of a line
//! to the next; `#` starts a comment, `"..."` and `'...'` quote, `\`
//! escapes. A backend takes `balance` and `hash-type` from the last
//! `defaults` section before it (or the one named by `from NAME`) unless
//! it sets its own; `default-server` lines set the defaults of the
//! `server` lines after them. `--pool NAME` chooses the backend when the
//! file has several.
//!
//! - `balance`: a hash of `hdr(NAME)`, `uri`, `url_param`, `source`,
//!   `rdp-cookie` or `hash EXPR` is placed by the consistent tree; what is
//!   hashed goes in a note (look that value up: for `hdr(NAME)` the
//!   header's first comma-separated value). `roundrobin`, `static-rr`,
//!   `leastconn`, `first`, `random` are not placement by key: refused.
//! - `hash-type consistent [sdbm|djb2|wt6|crc32] [avalanche]`: the key
//!   hash and `avalanche`. With no function HAProxy uses sdbm **with**
//!   avalanche (cfgparse-listen.c), with one only what is written.
//!   `map-based` (the default when there is no `hash-type`) is `hash %
//!   total weight`: refused.
//! - `hash-balance-factor N`: a note (it bounds requests in flight, a
//!   request-level rule: `ringwise lookup --balance-factor N`).
//! - `server NAME ADDRESS [weight N] [id N] [disabled] [backup] ...`: a
//!   node named NAME. Every member gets its id written, HAProxy's
//!   automatic numbering included (servers left out still take theirs):
//!   `disabled`, `backup` and `weight 0` servers are left out with a note.
//!   Health checks, timeouts, TLS and connection limits are notes or pass
//!   silently as keywords that do not change placement; `cookie` (with the
//!   backend's `cookie`), `track`, `slowstart` are notes; an unknown
//!   keyword is refused.
//! - `server-template PREFIX NUM|LOW-HIGH ADDRESS [params]`: the servers
//!   PREFIX1 to PREFIXNUM (or PREFIXLOW to PREFIXHIGH) in number order,
//!   each a `server` with the line's parameters, numbered by the same
//!   counter (`src/server.c`: `srv_tmpl_parse_range`,
//!   `server_template_init`); an `id` is the first server's. With
//!   `resolvers` or an SRV record the servers kept up follow DNS at run
//!   time: refused.
//! - In the backend: `cookie`, `stick ...`, `use-server`, `hash-key` other
//!   than `id` change where requests go: refused. Everything else listed in
//!   `INERT` is a note.
//!
//! Cost: one pass over the text, O(length).

use std::collections::BTreeSet;

use ringwise::{Member, Param, ParamValue, Settings};

use crate::error::syntax;
use crate::{ImportError, Imported};

/// Section keywords (a line starting with one starts a section).
const SECTIONS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "peers",
    "resolvers",
    "userlist",
    "mailers",
    "program",
    "http-errors",
    "ring",
    "cache",
    "fcgi-app",
];

/// Backend directives that do not change which server a key goes to.
const INERT: &[&str] = &[
    "mode",
    "timeout",
    "option",
    "no",
    "log",
    "retries",
    "retry-on",
    "fullconn",
    "maxconn",
    "http-request",
    "http-response",
    "http-after-response",
    "http-check",
    "tcp-check",
    "tcp-request",
    "tcp-response",
    "acl",
    "errorfile",
    "errorfiles",
    "description",
    "id",
    "enabled",
    "disabled",
    "compression",
    "http-reuse",
    "http-send-name-header",
    "load-server-state-from-file",
    "server-state-file-name",
    "rate-limit",
    "redirect",
    "stats",
    "bind-process",
    "external-check",
    "email-alert",
    "force-persist",
    "ignore-persist",
    "persist",
    "dispatch",
    "unique-id-format",
    "unique-id-header",
    "monitor",
];

/// `server` keywords taking one value that do not change placement.
const SERVER_VALUED: &[&str] = &[
    "addr",
    "agent-addr",
    "agent-inter",
    "agent-port",
    "agent-send",
    "alpn",
    "ca-file",
    "check-alpn",
    "check-proto",
    "check-sni",
    "ciphers",
    "ciphersuites",
    "crl-file",
    "crt",
    "downinter",
    "error-limit",
    "fall",
    "fastinter",
    "init-addr",
    "inter",
    "max-reuse",
    "maxconn",
    "maxqueue",
    "minconn",
    "namespace",
    "npn",
    "observe",
    "on-error",
    "on-marked-down",
    "on-marked-up",
    "pool-low-conn",
    "pool-max-conn",
    "pool-purge-delay",
    "port",
    "proto",
    "proxy-v2-options",
    "redir",
    "resolve-net",
    "resolve-opts",
    "resolve-prefer",
    "resolvers",
    "rise",
    "sni",
    "source",
    "ssl-max-ver",
    "ssl-min-ver",
    "verify",
    "verifyhost",
    "ws",
];

/// `server` flags that do not change placement.
const SERVER_FLAGS: &[&str] = &[
    "agent-check",
    "allow-0rtt",
    "check",
    "check-send-proxy",
    "check-ssl",
    "check-via-socks4",
    "enabled",
    "force-sslv3",
    "force-tlsv10",
    "force-tlsv11",
    "force-tlsv12",
    "force-tlsv13",
    "no-agent-check",
    "no-backup",
    "no-check",
    "no-check-ssl",
    "no-send-proxy",
    "no-send-proxy-v2",
    "no-ssl",
    "no-ssl-reuse",
    "no-tls-tickets",
    "no-tlsv10",
    "no-tlsv11",
    "no-tlsv12",
    "no-tlsv13",
    "no-verifyhost",
    "non-stick",
    "send-proxy",
    "send-proxy-v2",
    "send-proxy-v2-ssl",
    "send-proxy-v2-ssl-cn",
    "ssl",
    "ssl-reuse",
    "stick",
    "tfo",
    "tls-tickets",
];

const FUNCTIONS: &[&str] = &["sdbm", "djb2", "wt6", "crc32"];

/// One line's words, quotes and escapes resolved, comment dropped.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '#') => break,
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.push(c),
            (_, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                started = true;
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// A section: its keyword, its name, the `from` defaults, its line and
/// its directives (line, words).
struct Section {
    kind: String,
    name: String,
    from: Option<String>,
    line: usize,
    lines: Vec<(usize, Vec<String>)>,
}

fn sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let w = words(raw);
        let Some(first) = w.first() else { continue };
        if SECTIONS.contains(&first.as_str()) {
            let name = w
                .get(1)
                .filter(|n| *n != "from")
                .cloned()
                .unwrap_or_default();
            let from = w
                .iter()
                .position(|x| x == "from")
                .and_then(|at| w.get(at + 1))
                .cloned();
            out.push(Section {
                kind: first.clone(),
                name,
                from,
                line: i + 1,
                lines: Vec::new(),
            });
        } else if let Some(section) = out.last_mut() {
            section.lines.push((i + 1, w));
        }
    }
    out
}

/// What a `defaults` section or the backend sets.
#[derive(Default, Clone)]
struct Balance {
    balance: Option<(usize, Vec<String>)>,
    hash_type: Option<(usize, Vec<String>)>,
    factor: Option<(usize, String)>,
    default_server: Vec<(usize, Vec<String>)>,
}

impl Balance {
    fn read(&mut self, line: usize, w: &[String]) -> bool {
        match w[0].as_str() {
            "balance" => self.balance = Some((line, w[1..].to_vec())),
            "hash-type" => self.hash_type = Some((line, w[1..].to_vec())),
            "hash-balance-factor" => {
                self.factor = Some((line, w.get(1).cloned().unwrap_or_default()));
            }
            "default-server" => self.default_server.push((line, w[1..].to_vec())),
            _ => return false,
        }
        true
    }
}

fn unsupported(line: usize, setting: &[String], reason: &str) -> ImportError {
    ImportError::Unsupported {
        line,
        setting: setting.join(" "),
        reason: reason.into(),
    }
}

pub(crate) fn read(text: &str, select: Option<&str>) -> Result<Imported, ImportError> {
    let all = sections(text);
    let backends: Vec<&Section> = all
        .iter()
        .filter(|s| (s.kind == "backend" || s.kind == "listen") && !s.name.is_empty())
        .collect();
    let available: Vec<String> = backends.iter().map(|s| s.name.clone()).collect();
    let chosen: Vec<&&Section> = match select {
        Some(name) => backends.iter().filter(|s| s.name == name).collect(),
        None if backends.len() == 1 => backends.iter().collect(),
        None => Vec::new(),
    };
    let backend = match chosen.as_slice() {
        [one] => **one,
        [] => {
            return Err(ImportError::Select {
                what: "backend",
                wanted: select.map(str::to_owned),
                available,
            });
        }
        [_, second, ..] => {
            return Err(syntax(second.line, "a second backend of this name"));
        }
    };
    // The defaults it inherits: named by `from`, else the last before it.
    let before = all.iter().take_while(|s| !std::ptr::eq(*s, backend));
    let defaults = match &backend.from {
        Some(name) => before
            .filter(|s| s.kind == "defaults" && &s.name == name)
            .last()
            .ok_or_else(|| syntax(backend.line, format!("no defaults section named {name:?}")))?,
        None => match before.filter(|s| s.kind == "defaults").last() {
            Some(d) => d,
            None => &Section {
                kind: "defaults".into(),
                name: String::new(),
                from: None,
                line: 0,
                lines: Vec::new(),
            },
        },
    };
    let mut inherited = Balance::default();
    for (line, w) in &defaults.lines {
        inherited.read(*line, w);
    }
    read_backend(backend, inherited)
}

fn read_backend(backend: &Section, mut balance: Balance) -> Result<Imported, ImportError> {
    let mut notes = Vec::new();
    let inherited_servers = std::mem::take(&mut balance.default_server);
    let mut defaults = ServerDefaults::default();
    for (line, w) in &inherited_servers {
        defaults.apply(*line, w, &mut notes)?;
    }
    // (name, weight, explicit id, line, left out)
    let mut servers: Vec<Server> = Vec::new();
    for (line, w) in &backend.lines {
        let line = *line;
        if balance.read(line, w) {
            if w[0] == "default-server" {
                defaults.apply(line, &w[1..], &mut notes)?;
            }
            continue;
        }
        match w[0].as_str() {
            "server" => servers.push(server(line, w, &defaults, &mut notes)?),
            "server-template" => template(line, w, &defaults, &mut servers, &mut notes)?,
            "cookie" | "stick" | "stick-table" | "use-server" => {
                return Err(unsupported(
                    line,
                    w,
                    "persistence or a server chosen by rule goes before the hash: ringwise \
                     reproduces the consistent-hash choice only",
                ));
            }
            "hash-key" if w.get(1).map(String::as_str) != Some("id") => {
                return Err(unsupported(
                    line,
                    w,
                    "HAProxy 3's other point keys (addr, addr-port, guid) are not reproduced; \
                     ringwise places points by server id (`hash-key id`, the default)",
                ));
            }
            "hash-key" => notes.push(format!("line {line}: `hash-key id` is the default")),
            d if INERT.contains(&d) => notes.push(format!(
                "line {line}: `{}` does not change placement",
                w.join(" ")
            )),
            _ => {
                return Err(ImportError::UnknownSetting {
                    line,
                    setting: w.join(" "),
                    known: format!(
                        "server, server-template, default-server, balance, hash-type, \
                         hash-balance-factor, \
                         hash-key, cookie, stick, use-server, {}",
                        INERT.join(", ")
                    ),
                });
            }
        }
    }
    let mut settings = Settings::default();
    settings.algorithm = Some("haproxy".into());
    let at = backend.line;
    match &balance.balance {
        None => {
            return Err(unsupported(
                at,
                &[format!("backend {}", backend.name)],
                "no `balance`: HAProxy balances round robin; ringwise reproduces a hash \
                 with `hash-type consistent`",
            ));
        }
        Some((line, args)) => notes.insert(0, hashed(*line, args)?),
    }
    let (function, avalanche) = hash_type(at, balance.hash_type.as_ref())?;
    settings.hash = Some(function.into());
    settings.params = vec![(Param::Avalanche, ParamValue::Bool(avalanche))];
    if let Some((line, factor)) = &balance.factor {
        notes.push(format!(
            "line {line}: `hash-balance-factor {factor}` bounds the requests in flight per \
             server: give it to `ringwise lookup --balance-factor {factor}` with the counts"
        ));
    }
    let ids = numbered(&servers);
    check_ids(&servers, &ids)?;
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    for (s, id) in servers.iter().zip(ids) {
        if s.left_out {
            continue;
        }
        let mut member = Member::new(s.name.clone());
        member.weight = Some(f64::from(s.weight));
        member.id = Some(u64::from(id));
        imported.push(member, s.line);
    }
    if imported.members.is_empty() {
        return Err(ImportError::Missing {
            message: format!(
                "backend {} (line {at}) has no active server of weight 1 or more",
                backend.name
            ),
        });
    }
    imported.selected = Some(backend.name.clone());
    Ok(imported)
}

/// The note naming what `balance` hashes, or why it is refused.
fn hashed(line: usize, args: &[String]) -> Result<String, ImportError> {
    let first = args.first().map(String::as_str).unwrap_or_default();
    let what = match first {
        "source" => "the client's IP address".to_owned(),
        "uri" => format!("the URI ({})", options(&args[1..], "whole path and query")),
        "url_param" => format!(
            "the value of URL parameter {:?}",
            args.get(1).cloned().unwrap_or_default()
        ),
        "rdp-cookie" => "the RDP cookie".to_owned(),
        "hash" => format!("the sample `{}`", args[1..].join(" ")),
        h if h.starts_with("hdr(") && h.ends_with(')') => {
            let name = &h[4..h.len() - 1];
            let domain = match args.get(1).map(String::as_str) {
                Some("use_domain_only") => ", only its domain name (use_domain_only)",
                _ => "",
            };
            format!("header {name}'s first comma-separated value{domain}")
        }
        "roundrobin" | "static-rr" | "leastconn" | "first" | "random" => {
            return Err(unsupported(
                line,
                &[format!("balance {}", args.join(" "))],
                "not a hash of the request: ringwise reproduces balance by a hash (hdr, uri, \
                 url_param, source, rdp-cookie, hash) with `hash-type consistent`",
            ));
        }
        _ => {
            return Err(ImportError::UnknownSetting {
                line,
                setting: format!("balance {}", args.join(" ")),
                known: "balance hdr(NAME), uri, url_param, source, rdp-cookie, hash EXPR".into(),
            });
        }
    };
    Ok(format!(
        "line {line}: `balance {}` hashes {what}: look up that value",
        args.join(" ")
    ))
}

fn options(args: &[String], default: &str) -> String {
    match args.is_empty() {
        true => default.to_owned(),
        false => args.join(" "),
    }
}

/// The key hash and avalanche of `hash-type`.
fn hash_type(
    at: usize,
    hash_type: Option<&(usize, Vec<String>)>,
) -> Result<(&'static str, bool), ImportError> {
    let Some((line, args)) = hash_type else {
        return Err(unsupported(
            at,
            &["hash-type map-based (the default)".to_owned()],
            "map-based picks the server by hash % total weight, not by a tree of points; \
             write `hash-type consistent`",
        ));
    };
    let line = *line;
    let written = || [format!("hash-type {}", args.join(" "))];
    match args.first().map(String::as_str) {
        Some("consistent") => {}
        Some("map-based") => {
            return Err(unsupported(
                line,
                &written(),
                "map-based picks the server by hash % total weight, not by a tree of \
                 points; ringwise reproduces `hash-type consistent`",
            ));
        }
        _ => {
            return Err(syntax(
                line,
                "HAProxy takes `hash-type consistent|map-based [FUNCTION] [avalanche]`",
            ));
        }
    }
    let function = match args.get(1).map(String::as_str) {
        // HAProxy's default for consistent: sdbm with avalanche.
        None => return Ok(("sdbm", true)),
        Some(f) => FUNCTIONS
            .iter()
            .copied()
            .find(|known| *known == f)
            .ok_or_else(|| {
                unsupported(
                    line,
                    &written(),
                    "ringwise reproduces the functions sdbm, djb2, wt6 and crc32",
                )
            })?,
    };
    match args.get(2).map(String::as_str) {
        None => Ok((function, false)),
        Some("avalanche") if args.len() == 3 => Ok((function, true)),
        Some(_) => Err(syntax(
            line,
            "the only modifier after the function is `avalanche`",
        )),
    }
}

/// What `default-server` lines set for the servers after them.
#[derive(Default, Clone)]
struct ServerDefaults {
    weight: Option<u32>,
    disabled: bool,
    backup: bool,
    /// `resolvers NAME`: servers' addresses (and a template's servers'
    /// states) follow DNS at run time.
    resolvers: bool,
}

impl ServerDefaults {
    fn apply(
        &mut self,
        line: usize,
        args: &[String],
        notes: &mut Vec<String>,
    ) -> Result<(), ImportError> {
        let parsed = keywords(line, args, notes)?;
        if let Some(w) = parsed.weight {
            self.weight = Some(w);
        }
        if parsed.id.is_some() {
            return Err(syntax(line, "`id` is not allowed on `default-server`"));
        }
        self.disabled |= parsed.disabled;
        self.backup |= parsed.backup;
        self.resolvers |= args.iter().any(|a| a == "resolvers");
        self.disabled &= !parsed.enabled;
        self.backup &= !parsed.no_backup;
        Ok(())
    }
}

struct Server {
    name: String,
    weight: u32,
    id: Option<u32>,
    line: usize,
    left_out: bool,
}

#[derive(Default)]
struct Keywords {
    weight: Option<u32>,
    id: Option<u32>,
    disabled: bool,
    enabled: bool,
    backup: bool,
    no_backup: bool,
}

fn keywords(
    line: usize,
    args: &[String],
    notes: &mut Vec<String>,
) -> Result<Keywords, ImportError> {
    let mut k = Keywords::default();
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_str();
        let value = args.get(i + 1);
        let number = |max: u32, what: &str| {
            value
                .and_then(|v| v.parse::<u32>().ok())
                .filter(|n| *n <= max)
                .ok_or_else(|| syntax(line, format!("`{word}` takes {what}")))
        };
        match word {
            "weight" => {
                k.weight = Some(number(256, "a weight from 0 to 256")?);
                i += 1;
            }
            "id" => {
                let id = number(i32::MAX as u32, "an id from 1 to 2147483647")?;
                if id == 0 {
                    return Err(syntax(line, "`id` takes an id from 1 to 2147483647"));
                }
                k.id = Some(id);
                i += 1;
            }
            "disabled" => k.disabled = true,
            "enabled" => k.enabled = true,
            "backup" => k.backup = true,
            "no-backup" => k.no_backup = true,
            "cookie" | "track" | "slowstart" => {
                let what = match word {
                    "cookie" => "requests carrying the backend's cookie go to this server first",
                    "track" => "the server's state follows another's (a down server is left out)",
                    _ => "after coming up its weight ramps up, its points with it",
                };
                notes.push(format!(
                    "line {line}: `{word} {}`: {what}",
                    value.cloned().unwrap_or_default()
                ));
                i += 1;
            }
            w if SERVER_VALUED.contains(&w) => i += 1,
            w if SERVER_FLAGS.contains(&w) => {}
            _ => {
                return Err(ImportError::UnknownSetting {
                    line,
                    setting: word.to_owned(),
                    known: "weight, id, disabled, backup, cookie, track, slowstart, and the \
                            keywords of health checks, TLS and connections"
                        .into(),
                });
            }
        }
        i += 1;
    }
    Ok(k)
}

fn server(
    line: usize,
    w: &[String],
    defaults: &ServerDefaults,
    notes: &mut Vec<String>,
) -> Result<Server, ImportError> {
    let (Some(name), Some(_address)) = (w.get(1), w.get(2)) else {
        return Err(syntax(line, "`server` needs a name and an address"));
    };
    let k = keywords(line, &w[3..], notes)?;
    let (weight, why) = placed(&k, defaults);
    if let Some(why) = why {
        notes.push(format!("line {line}: server {name} left out: {why}"));
    }
    Ok(Server {
        name: name.clone(),
        weight,
        id: k.id,
        line,
        left_out: why.is_some(),
    })
}

/// A server's weight, and why it holds no points if it holds none: the
/// `default-server` settings under its own.
fn placed(k: &Keywords, defaults: &ServerDefaults) -> (u32, Option<&'static str>) {
    let weight = k.weight.or(defaults.weight).unwrap_or(1);
    let disabled = (defaults.disabled || k.disabled) && !k.enabled;
    let backup = (defaults.backup || k.backup) && !k.no_backup;
    let why = match (disabled, backup, weight) {
        (true, ..) => Some("disabled: it holds no points until enabled (it keeps its id)"),
        (_, true, _) => Some("a backup: it serves only when no active server is up"),
        (.., 0) => Some("weight 0: it holds no points"),
        _ => None,
    };
    (weight, why)
}

/// `server-template PREFIX NUM|LOW-HIGH FQDN[:PORT] [params]`: the
/// servers PREFIX<LOW> to PREFIX<HIGH> (NUM: 1 to NUM), in that order,
/// each a `server` with the line's parameters over `default-server`'s
/// (`server.c`: `srv_tmpl_parse_range`, `server_template_init`, the
/// copies linked in number order), numbered by HAProxy as other servers
/// are, an `id` going to the first. Refused where the servers HAProxy
/// keeps up depend on DNS at run time (`resolvers`, an SRV record).
fn template(
    line: usize,
    w: &[String],
    defaults: &ServerDefaults,
    servers: &mut Vec<Server>,
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    let (Some(prefix), Some(range), Some(fqdn)) = (w.get(1), w.get(2), w.get(3)) else {
        return Err(syntax(
            line,
            "`server-template` needs a prefix, a number or range and an address: \
             server-template PREFIX NUM|LOW-HIGH FQDN[:PORT] [params]",
        ));
    };
    let (low, high) = template_range(range).ok_or_else(|| {
        syntax(
            line,
            format!(
                "`server-template {prefix} {range}`: the servers are a count (3: numbers 1 to \
                 3) or a range LOW-HIGH of whole numbers, LOW at most HIGH"
            ),
        )
    })?;
    let params = &w[4..];
    let runtime = |why: &str| ImportError::Unsupported {
        line,
        setting: w.join(" "),
        reason: format!(
            "{why}: which of the template's servers HAProxy keeps up follows the DNS answers \
             at run time (a server with no record stays in maintenance, holding no points); \
             ringwise reads a template whose servers are all up: no `resolvers`, an address \
             or name resolved once at start"
        ),
    };
    if fqdn.starts_with('_') {
        return Err(runtime("an SRV record names the servers"));
    }
    if let Some(at) = params.iter().position(|p| p == "resolvers") {
        let name = params.get(at + 1).cloned().unwrap_or_default();
        return Err(runtime(&format!("`resolvers {name}`")));
    }
    if defaults.resolvers {
        return Err(runtime("`resolvers` from `default-server`"));
    }
    crate::address::host_optional_port(fqdn, line, "the server-template address")?;
    let k = keywords(line, params, notes)?;
    let count = u64::from(high - low) + 1;
    if count + servers.len() as u64 > ringwise::MAX_NODES as u64 {
        return Err(syntax(
            line,
            format!(
                "`server-template {prefix} {range}` makes {count} servers: more than the {} \
                 servers ringwise holds",
                ringwise::MAX_NODES
            ),
        ));
    }
    let (weight, why) = placed(&k, defaults);
    notes.push(format!(
        "line {line}: `server-template {prefix} {range}` is the servers {prefix}{low} to \
         {prefix}{high}, weight {weight}{}",
        match why {
            Some(why) => format!(", all left out: {why}"),
            None => String::new(),
        }
    ));
    // An `id` is the template server's own, the first (PREFIX<LOW>); its
    // copies are numbered (seen in `show servers state` of haproxy 2.6).
    servers.extend((low..=high).map(|n| Server {
        name: format!("{prefix}{n}"),
        weight,
        id: k.id.filter(|_| n == low),
        line,
        left_out: why.is_some(),
    }));
    Ok(())
}

/// `NUM` (1 to NUM) or `LOW-HIGH`, as `srv_tmpl_parse_range` reads them
/// (LOW may be 0; a count of 0 or HIGH below LOW is refused), digits only.
fn template_range(range: &str) -> Option<(u32, u32)> {
    let number = |t: &str| {
        (!t.is_empty() && t.len() <= 9 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u32>().ok())
            .flatten()
    };
    let (low, high) = match range.split_once('-') {
        Some((low, high)) => (number(low)?, number(high)?),
        None => (1, number(range)?),
    };
    (low <= high).then_some((low, high))
}

/// HAProxy refuses an explicit id used twice ("custom id N already
/// used"); ids equal modulo 2^20 give the same points (id·4096 wraps),
/// which ringwise refuses.
fn check_ids(servers: &[Server], ids: &[u32]) -> Result<(), ImportError> {
    let mut seen: std::collections::HashMap<u32, (usize, u32)> = Default::default();
    for (s, &id) in servers.iter().zip(ids) {
        if let Some(&(line, other)) = seen.get(&(id % (1 << 20))) {
            let message = match other == id {
                true => format!(
                    "server {}: custom id {id} already used at line {line} (HAProxy refuses it)",
                    s.name
                ),
                false => format!(
                    "server {}: id {id} equals id {other} (line {line}) modulo 2^20, which \
                     gives HAProxy the same points (id·4096 wraps at 2^32): choose another id",
                    s.name
                ),
            };
            return Err(syntax(s.line, message));
        }
        seen.insert(id % (1 << 20), (s.line, id));
    }
    Ok(())
}

/// Every server's id: its own, or HAProxy's automatic one (cfgparse.c: a
/// counter from 1 that every server advances, an automatic id the first
/// free one from the counter on).
fn numbered(servers: &[Server]) -> Vec<u32> {
    let used: BTreeSet<u32> = servers.iter().filter_map(|s| s.id).collect();
    let mut next = 1u32;
    servers
        .iter()
        .map(|s| {
            let id = s.id.unwrap_or_else(|| {
                while used.contains(&next) {
                    next += 1;
                }
                next
            });
            next = next.saturating_add(1);
            id
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_haproxys_quoting() {
        assert_eq!(
            words("  server a 1.2.3.4:80 # x"),
            ["server", "a", "1.2.3.4:80"]
        );
        assert_eq!(
            words(r#"acl x "a b" 'c#d' e\ f"#),
            ["acl", "x", "a b", "c#d", "e f"]
        );
    }
}
