//! `twemproxy`: a pool of a `nutcracker.yml`, twemproxy's configuration.
//!
//! Source: twemproxy `src/nc_conf.c` (`conf_commands`, the keys of a pool;
//! `conf_add_server`, a `servers:` item; `conf_validate_pool`, the
//! defaults) and `src/hashkit/nc_ketama.c`, read at twitter/twemproxy
//! 60aaf85 (2022; Debian's nutcracker 0.5.0 has the same keys).
//!
//! How twemproxy reads it: a YAML mapping of pools, each a mapping of
//! directives; a directive it does not know, or gives twice, stops it
//! (`directive "x" is unknown`), and so it stops this reader. A server item
//! is `host:port:weight [name]`, split *from the end*: the name after the
//! last space (optional), the weight after the last `:` before it, the port
//! after the `:` before that; the rest is the host (so `::1:11212:1` is host
//! `::1`). Weights are whole and at least 1, ports 1 to 65535. `ketama`
//! hashes each server by its name: the name when given, else `host` when
//! the port is 11211 (libmemcached's habit), else `host:port` as written.
//! ringwise's `ketama` flavor `twemproxy` does the same from the node
//! name, so an unnamed server becomes the node `host:port`, a named one
//! the node named so.
//!
//! Translated: `distribution: ketama` (the default); `hash: md5`
//! (`md5-le32`), `fnv1a_64` (the default; `fnv1a64-twemproxy`, really a
//! 32-bit FNV-1a) and `crc32a` (the full CRC-32, ringwise's `crc32`);
//! `hash_tag` (two characters). Refused: `modula` and `random` (not rings),
//! the other key hashes, unix-socket servers, and an explicit name that
//! ringwise would hash otherwise (one ending in `:11211`, or in a port with
//! leading zeros). Kept as notes, as they do not move keys: `listen`,
//! `timeout`, connection counts, `redis`... and `auto_eject_hosts: true`,
//! which does move keys while a server is ejected (the placement shown is
//! that of every server up).
//!
//! Worked example: the pool `alpha` of
//!
//! ```yaml
//! alpha:
//!   listen: 127.0.0.1:22121
//!   hash: md5
//!   servers:
//!     - 10.0.0.1:11211:2
//!     - 10.0.0.2:11212:1 cache-b
//! ```
//!
//! is `ketama`, flavor `twemproxy`, hash `md5-le32` over the nodes
//! `10.0.0.1:11211` (weight 2, hashed as `10.0.0.1`) and `cache-b`
//! (weight 1), with a note for `listen`.
//!
//! Ties: twemproxy sorts its servers by name and its points with `qsort`,
//! so a point two servers share has no defined owner (ringwise gives it to
//! the earlier listed); it is rare with 160 points a server.
//!
//! Cost: one pass over the YAML, O(length).

use ringwise::{Flavor, Member, Param, ParamValue, Settings};

use crate::error::syntax;
use crate::yaml::{self, Node, Value};
use crate::{ImportError, Imported};

/// twemproxy's pool directives (`conf_commands`), in its order.
const KNOWN: &[&str] = &[
    "listen",
    "hash",
    "hash_tag",
    "distribution",
    "timeout",
    "backlog",
    "client_connections",
    "redis",
    "tcpkeepalive",
    "reuseport",
    "redis_auth",
    "redis_db",
    "preconnect",
    "auto_eject_hosts",
    "server_connections",
    "server_retry_timeout",
    "server_failure_limit",
    "servers",
];

/// twemproxy's key hashes (`HASH_CODEC`) and ringwise's name of each it
/// reproduces.
const HASHES: &[(&str, Option<&str>)] = &[
    ("one_at_a_time", None),
    ("md5", Some("md5-le32")),
    ("crc16", None),
    ("crc32", None),
    ("crc32a", Some("crc32")),
    ("fnv1_64", None),
    ("fnv1a_64", Some("fnv1a64-twemproxy")),
    ("fnv1_32", None),
    ("fnv1a_32", None),
    ("hsieh", None),
    ("murmur", None),
    ("jenkins", None),
];

pub(crate) fn read(text: &str, select: Option<&str>) -> Result<Imported, ImportError> {
    let root = yaml::parse(text)?.ok_or_else(|| ImportError::Missing {
        message: "the file is empty: a nutcracker.yml is a mapping of pools".into(),
    })?;
    let pools = root.entries().ok_or_else(|| {
        syntax(
            root.line,
            "a nutcracker.yml is a mapping of pool names to pools",
        )
    })?;
    let names = || pools.iter().map(|(name, _)| name.clone()).collect();
    let (name, pool) = match select {
        Some(wanted) => pools.iter().find(|(name, _)| name == wanted),
        None if pools.len() == 1 => pools.first(),
        None => None,
    }
    .ok_or_else(|| ImportError::Select {
        what: "pool",
        wanted: select.map(str::to_owned),
        available: names(),
    })?;
    let mut imported = read_pool(pool)?;
    imported.selected = Some(name.clone());
    Ok(imported)
}

fn read_pool(pool: &Node) -> Result<Imported, ImportError> {
    let entries = pool.entries().ok_or_else(|| {
        syntax(
            pool.line,
            "a pool is a mapping of directives (hash: ..., servers: ...)",
        )
    })?;
    let mut settings = Settings::default();
    settings.algorithm = Some("ketama".into());
    settings.hash = Some("fnv1a64-twemproxy".into());
    settings.params = vec![(Param::Flavor, ParamValue::Flavor(Flavor::Twemproxy))];
    let mut notes = Vec::new();
    let mut directives = Vec::new();
    let mut servers = None;
    for (key, node) in entries {
        let line = node.line;
        if key == "servers" {
            servers = Some(node);
            continue;
        }
        if !KNOWN.contains(&key.as_str()) {
            return Err(ImportError::UnknownSetting {
                line,
                setting: key.clone(),
                known: KNOWN.join(", "),
            });
        }
        let value = node.text().ok_or_else(|| {
            syntax(
                line,
                format!("`{key}` takes one value, not {}", node.kind()),
            )
        })?;
        directives.push((key.clone(), value.to_owned(), line));
        let setting = format!("{key}: {value}");
        match key.as_str() {
            "hash" => {
                let reproduced = HASHES.iter().filter_map(|(h, r)| r.map(|_| *h));
                let known: Vec<&str> = reproduced.collect();
                match HASHES.iter().find(|(h, _)| *h == value) {
                    Some((_, Some(ours))) => settings.hash = Some((*ours).into()),
                    Some((_, None)) => {
                        return Err(ImportError::Unsupported {
                            line,
                            setting,
                            reason: format!(
                                "ringwise reproduces twemproxy's key hashes {}",
                                known.join(", ")
                            ),
                        });
                    }
                    None => {
                        return Err(syntax(
                            line,
                            format!(
                                "`{setting}`: twemproxy has no such hash (it has {})",
                                HASHES
                                    .iter()
                                    .map(|(h, _)| *h)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                }
            }
            "hash_tag" if value.len() == 2 => settings.hash_tag = Some(value.to_owned()),
            "hash_tag" => {
                return Err(syntax(
                    line,
                    format!(
                        "`{setting}`: twemproxy takes a hash tag of two characters, e.g. \"{{}}\""
                    ),
                ));
            }
            "distribution" => match value {
                "ketama" => {}
                "modula" | "random" => {
                    return Err(ImportError::Unsupported {
                        line,
                        setting,
                        reason: match value {
                            "modula" => {
                                "it is hash % N, not a ring: nearly every key moves when \
                                         a server is added; ringwise reproduces ketama"
                            }
                            _ => "it picks a server at random per request: no key has a place",
                        }
                        .into(),
                    });
                }
                _ => {
                    return Err(syntax(
                        line,
                        format!(
                            "`{setting}`: twemproxy's distributions are ketama, modula and random"
                        ),
                    ));
                }
            },
            "auto_eject_hosts" if value == "true" => notes.push(format!(
                "line {line}: {setting}: twemproxy takes a server that fails \
                 server_failure_limit times off the ring until server_retry_timeout \
                 passes, and its keys move meanwhile; the placement shown is that of \
                 every server up"
            )),
            _ => notes.push(format!("line {line}: {setting} does not change placement")),
        }
    }
    let servers = servers.ok_or_else(|| ImportError::Missing {
        message: format!("the pool (line {}) has no `servers:` list", pool.line),
    })?;
    let Value::Seq(items) = &servers.value else {
        return Err(syntax(
            servers.line,
            "`servers` is a list of \"- host:port:weight [name]\"",
        ));
    };
    if items.is_empty() {
        return Err(syntax(
            servers.line,
            "`servers` is empty: twemproxy refuses a pool without servers",
        ));
    }
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    imported.directives = directives;
    for item in items {
        let text = item.text().ok_or_else(|| {
            syntax(
                item.line,
                format!(
                    "a server is \"host:port:weight [name]\", not {}",
                    item.kind()
                ),
            )
        })?;
        let (member, address) = server(text, item.line)?;
        imported.push_at(member, item.line, Some(address));
    }
    Ok(imported)
}

/// One `servers:` item, split as `conf_add_server` splits it: the member
/// and the `host:port` it is reached at.
fn server(text: &str, line: usize) -> Result<(Member, String), ImportError> {
    let bad = |what: &str| {
        syntax(
            line,
            format!(
                "server {text:?}: {what}; twemproxy reads \"host:port:weight [name]\", \
             e.g. 10.0.0.1:11211:1 cache-a"
            ),
        )
    };
    if text.starts_with('/') {
        return Err(ImportError::Unsupported {
            line,
            setting: text.to_owned(),
            reason: "unix-socket servers are not reproduced: ringwise names servers host:port"
                .into(),
        });
    }
    let (rest, name) = match text.rsplit_once(' ') {
        Some((rest, name)) => (rest, Some(name)),
        None => (text, None),
    };
    let (rest, weight) = rest.rsplit_once(':').ok_or_else(|| match name {
        // A space inside the address splits it: say so, not "no weight".
        Some(_) => bad(&format!(
            "the first space ends host:port:weight, and {rest:?} before it has no :weight \
             (a host holds no space; the word after the space is the server's name)"
        )),
        None => bad("no weight"),
    })?;
    let (host, port_text) = rest.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let number = |t: &str| {
        (!t.is_empty() && t.len() <= 9 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u32>().ok())
            .flatten()
    };
    let weight = match number(weight) {
        Some(0) => return Err(bad("the weight is 0")),
        Some(w) => w,
        None => return Err(bad("the weight is not a whole number")),
    };
    let port = number(port_text)
        .filter(|p| (1..=65535).contains(p))
        .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
    crate::address::host_port(&format!("{host}:{port_text}"), line, "server")?;
    // What twemproxy hashes, and the node names that make ringwise hash
    // the same: the address first (what the operator recognizes).
    let (hashed, candidates) = match name {
        Some("") => return Err(bad("the name after the space is empty")),
        Some(name) => (name.to_owned(), vec![name.to_owned()]),
        None if port == 11211 => (
            host.to_owned(),
            vec![format!("{host}:{port_text}"), host.to_owned()],
        ),
        None => {
            let address = format!("{host}:{port_text}");
            (address.clone(), vec![address])
        }
    };
    let Some(node) = candidates
        .into_iter()
        .find(|c| hashed_as(c).as_deref() == Some(&hashed))
    else {
        return Err(ImportError::Unsupported {
            line,
            setting: text.to_owned(),
            reason: format!(
                "twemproxy hashes this server as {hashed:?}, and ringwise's flavor \
                 twemproxy drops a port 11211 and leading zeros from a node name ending \
                 in :PORT; rename it (e.g. without the port-like suffix)"
            ),
        });
    };
    let mut member = Member::new(node);
    member.weight = Some(f64::from(weight));
    Ok((member, format!("{host}:{port_text}")))
}

/// The text ringwise's `ketama` flavor `twemproxy` hashes for the node
/// `name` (`Flavor::server_text` in the core): a trailing `:digits` is a
/// port, dropped when it is 11211 and rewritten without leading zeros;
/// `None` where the core refuses the name (a port above 65535).
fn hashed_as(name: &str) -> Option<String> {
    let Some((host, port)) = name.rsplit_once(':') else {
        return Some(name.to_owned());
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Some(name.to_owned());
    }
    match port.parse::<u16>().ok()? {
        11211 => Some(host.to_owned()),
        port => Some(format!("{host}:{port}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_ok(text: &str, pool: Option<&str>) -> Imported {
        read(text, pool).expect("read")
    }

    #[test]
    fn a_pool_is_read_with_names_weights_and_hash() {
        let text = "alpha:\n  listen: 127.0.0.1:22121\n  hash: md5\n  hash_tag: \"{}\"\n  \
                    servers:\n    - 10.0.0.1:11211:2\n    - 10.0.0.2:11212:1 cache-b\n    \
                    - ::1:11213:3\n";
        let imported = read_ok(text, None);
        let names: Vec<_> = imported.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["10.0.0.1:11211", "cache-b", "::1:11213"]);
        assert_eq!(imported.members[0].weight, Some(2.0));
        assert_eq!(imported.member_lines, [6, 7, 8]);
        assert_eq!(imported.settings.hash.as_deref(), Some("md5-le32"));
        assert_eq!(imported.settings.hash_tag.as_deref(), Some("{}"));
        assert_eq!(imported.selected.as_deref(), Some("alpha"));
        assert_eq!(imported.notes.len(), 1, "{:?}", imported.notes);
        assert!(
            imported.notes[0].starts_with("line 2: listen"),
            "{:?}",
            imported.notes
        );
    }

    #[test]
    fn several_pools_need_a_choice() {
        let text = "a:\n  servers: [h1:1:1]\nb:\n  hash: crc32a\n  servers: [h2:2:1]\n";
        let e = read(text, None).expect_err("no pool chosen");
        assert!(e.to_string().contains("2 pools (a, b)"), "{e}");
        let e = read(text, Some("c")).expect_err("no such pool");
        assert!(e.is_usage(), "{e}");
        let b = read_ok(text, Some("b"));
        assert_eq!(b.settings.hash.as_deref(), Some("crc32"));
        assert_eq!(b.members[0].name, "h2:2");
    }

    #[test]
    fn what_twemproxy_does_not_place_as_ringwise_is_refused_with_its_line() {
        for (text, line, words) in [
            (
                "p:\n  distribution: modula\n  servers: [a:1:1]",
                2,
                "hash % N",
            ),
            (
                "p:\n  distribution: random\n  servers: [a:1:1]",
                2,
                "at random",
            ),
            (
                "p:\n  hash: murmur\n  servers: [a:1:1]",
                2,
                "md5, crc32a, fnv1a_64",
            ),
            ("p:\n  hash: sha1\n  servers: [a:1:1]", 2, "no such hash"),
            (
                "p:\n  hash_tag: \"{\"\n  servers: [a:1:1]",
                2,
                "two characters",
            ),
            (
                "p:\n  listen: x\n  lisen: y\n  servers: [a:1:1]",
                3,
                "unknown setting `lisen`",
            ),
            (
                "p:\n  hash: md5\n  hash: md5\n  servers: [a:1:1]",
                3,
                "given twice",
            ),
            ("p:\n  servers:\n    - a:1:0", 3, "weight is 0"),
            ("p:\n  servers:\n    - a:99999:1", 3, "port"),
            ("p:\n  servers:\n    - a:1", 3, "no port"),
            ("p:\n  servers:\n    - /tmp/m.sock:1", 3, "unix-socket"),
            (
                "p:\n  servers:\n    - \"a b:1:1\"",
                3,
                "the first space ends host:port:weight",
            ),
            ("p:\n  servers:\n    - \"a$(id):1:1\"", 3, "HOST:PORT"),
            (
                "p:\n  servers:\n    - a:1:1 web:11211",
                3,
                "hashes this server as \"web:11211\"",
            ),
            (
                "p:\n  servers:\n    - a:1:1 x\n    - b:1:1 x",
                4,
                "duplicate node",
            ),
            ("p:\n  listen: x\n", 0, "no `servers:`"),
            ("p:\n  servers: []\n", 2, "empty"),
            ("p: [1]\n", 1, "mapping of directives"),
            ("p:\n  servers: [a:1:1\n", 3, "not valid YAML"),
        ] {
            let e = crate::import(crate::Kind::Twemproxy, text, None).expect_err(text);
            assert_eq!(e.line().unwrap_or(0), line, "{text}: {e}");
            assert!(e.to_string().contains(words), "{text}: {e}");
        }
    }

    #[test]
    fn neutral_keys_are_notes_and_auto_eject_says_keys_move() {
        let text = "p:\n  auto_eject_hosts: true\n  timeout: 400\n  redis: true\n  \
                    servers: [a:1:1]\n";
        let notes = read_ok(text, None).notes;
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("its keys move meanwhile"), "{notes:?}");
        assert!(
            notes[2].starts_with("line 4: redis: true does not change"),
            "{notes:?}"
        );
    }

    #[test]
    fn port_11211_is_hashed_as_the_host_alone() {
        assert_eq!(hashed_as("10.0.0.1:11211").as_deref(), Some("10.0.0.1"));
        assert_eq!(hashed_as("cache-b").as_deref(), Some("cache-b"));
        assert_eq!(hashed_as("h:011212").as_deref(), Some("h:11212"));
        let e = read("p:\n  servers: [h:011212:1]", None).expect_err("leading zero");
        assert!(e.to_string().contains("leading zeros"), "{e}");
        // 011211 is 11211 to twemproxy: it hashes the host alone, as the
        // flavor does for the node `h:011211`.
        let imported = read_ok("p:\n  servers: [h:011211:1]", None);
        assert_eq!(imported.members[0].name, "h:011211");
    }
}
