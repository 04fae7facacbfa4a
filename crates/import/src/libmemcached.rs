//! `libmemcached`: a libmemcached configuration string, as `memcached(3)`
//! (`memcached("--SERVER=a --SERVER=b", ...)`), pylibmc and php-memcached
//! users write it.
//!
//! Source: libmemcached's configuration parser, `src/libmemcached/csl/`
//! (`scanner.l`, `parser.yy`), and what its statements set
//! (`behavior.cc`, `hosts.cc`), read at awesomized/libmemcached 1.1.
//!
//! How libmemcached reads it: options separated by white space, case
//! insensitive, `#` starting a comment line, applied in order:
//!
//! - `--SERVER=host[:port][/?weight]` adds a server (port 11211, weight 1
//!   by default);
//! - `--DISTRIBUTION=consistent` chooses the ring (`modula`, the default,
//!   and `random` are not rings), and turns weighted ketama *off*;
//! - a server of weight above 1 added *while* the distribution is
//!   consistent turns weighted ketama on (`server_add` in `hosts.cc`);
//! - `--HASH=NAME` sets the key hash (default Jenkins' one-at-a-time).
//!
//! So the ring ringwise reproduces, libmemcached's weighted ketama
//! (`ketama`, flavour `libmemcached`: 160 MD5 points per unit of average
//! weight, names `host` or `host:port`), is what libmemcached builds when
//! `--DISTRIBUTION=consistent` comes before a server of weight above 1.
//! Worked example: `--DISTRIBUTION=consistent --SERVER=a/?2 --SERVER=b`
//! is weighted; `--SERVER=a/?2 --SERVER=b --DISTRIBUTION=consistent` is
//! not (the distribution, set last, turned it off), and neither is any
//! list whose weights are all 1: that is libmemcached's other continuum
//! (100 points per server hashed with the key hash), which ringwise does
//! not reproduce, and which is refused with this reason.
//!
//! Key hashes reproduced: `MD5` (`md5-le32`) and `FNV1A_64` (libhashkit's
//! is 32-bit, `fnv1a64-twemproxy`); the default one-at-a-time and the
//! others are refused. `--SORT-HOSTS` orders the servers by host, then
//! port, as libmemcached does. Options that do not change placement
//! (timeouts, the binary protocol, pool sizes, `--NAMESPACE` without
//! `--HASH-WITH-NAMESPACE`...) become notes.
//!
//! Cost: one pass over the text, O(length).

use ringwise::{Member, Settings};

use crate::{ImportError, Imported, line_at};

/// libmemcached's options that do not change which server a key goes to,
/// with a value (`=...`) or without.
const INERT: &[&str] = &[
    "BINARY-PROTOCOL",
    "BUFFER-REQUESTS",
    "CONNECT-TIMEOUT",
    "FETCH-VERSION",
    "IO-BYTES-WATERMARK",
    "IO-KEY-PREFETCH",
    "IO-MSG-WATERMARK",
    "NOREPLY",
    "POLL-TIMEOUT",
    "POOL-MAX",
    "POOL-MIN",
    "RANDOMIZE-REPLICA-READ",
    "RCV-TIMEOUT",
    "RETRY-TIMEOUT",
    "SND-TIMEOUT",
    "SOCKET-RECV-SIZE",
    "SOCKET-SEND-SIZE",
    "SUPPORT-CAS",
    "TCP-KEEPALIVE",
    "TCP-KEEPIDLE",
    "TCP-NODELAY",
    "USE-UDP",
    "USER-DATA",
    "VERIFY-KEY",
];

/// What the options read so far have set.
#[derive(Default)]
struct State {
    consistent: bool,
    weighted: bool,
    hash: Option<&'static str>,
    sort_hosts: bool,
    /// Each server's host, port and weight, and its line.
    servers: Vec<(String, u16, u32, usize)>,
}

pub(crate) fn read(text: &str, _select: Option<&str>) -> Result<Imported, ImportError> {
    let mut state = State::default();
    let mut notes = Vec::new();
    for (offset, word) in words(text)? {
        let line = line_at(text, offset);
        let upper = word.to_ascii_uppercase();
        let (option, value) = match upper.split_once('=') {
            Some((option, _)) => (option, Some(&word[option.len() + 1..])),
            None => (upper.as_str(), None),
        };
        match (option, value) {
            ("--SERVER", Some(server)) => {
                let (host, port, weight) = server_of(server, line)?;
                if weight > 1 && state.consistent {
                    state.weighted = true;
                }
                state.servers.push((host, port, weight, line));
            }
            ("--DISTRIBUTION", Some(value)) => {
                let (distribution, hash) = match value.split_once(',') {
                    Some((d, h)) => (d, Some(h)),
                    None => (value, None),
                };
                if !distribution.eq_ignore_ascii_case("consistent") {
                    return Err(ImportError::Unsupported {
                        line,
                        setting: word.to_owned(),
                        reason: "it is not a ring (every key would move when a server is \
                                 added); ringwise reproduces --DISTRIBUTION=consistent"
                            .into(),
                    });
                }
                state.consistent = true;
                state.weighted = false;
                if let Some(hash) = hash {
                    notes.push(format!(
                        "line {line}: the distribution hash {hash} is not read by \
                         libmemcached's weighted continuum (its points are always MD5)"
                    ));
                }
            }
            ("--HASH", Some(value)) => {
                state.hash = Some(key_hash(value).ok_or_else(|| ImportError::Unsupported {
                    line,
                    setting: word.to_owned(),
                    reason:
                        "ringwise reproduces the key hashes --HASH=MD5 and --HASH=FNV1A_64".into(),
                })?);
            }
            ("--SORT-HOSTS", None) => state.sort_hosts = true,
            ("--NAMESPACE", Some(_)) => notes.push(format!(
                "line {line}: {word} prefixes keys on the wire; without \
                 --HASH-WITH-NAMESPACE they are hashed without it"
            )),
            ("--NUMBER-OF-REPLICAS", Some(n)) => notes.push(format!(
                "line {line}: libmemcached also writes {n} copies to the servers after the \
                 owner; the owner is as shown"
            )),
            ("--REMOVE-FAILED-SERVERS", Some(_)) => notes.push(format!(
                "line {line}: {word} takes a failed server off the ring while it is down; \
                 the placement shown is that of every server up"
            )),
            ("--HASH-WITH-NAMESPACE", None) => {
                return Err(ImportError::Unsupported {
                    line,
                    setting: word.to_owned(),
                    reason: "keys are hashed with the namespace in front; look the prefixed \
                             keys up instead, without this option"
                        .into(),
                });
            }
            ("--SOCKET", Some(_)) | ("--CONFIGURE-FILE", Some(_)) => {
                return Err(ImportError::Unsupported {
                    line,
                    setting: word.to_owned(),
                    reason: match option {
                        "--SOCKET" => "unix-socket servers are not reproduced; give \
                                       --SERVER=host:port"
                            .into(),
                        _ => "the configuration is in another file: import that file".into(),
                    },
                });
            }
            (option, _) if option.starts_with("--") && INERT.contains(&&option[2..]) => {
                notes.push(format!("line {line}: {word} does not change placement"));
            }
            ("END", None) => break,
            ("INCLUDE" | "RESET" | "DEBUG" | "ERROR" | "CSL_ERROR", None) => {
                return Err(ImportError::Unsupported {
                    line,
                    setting: word.to_owned(),
                    reason: "only options (--SERVER=..., --DISTRIBUTION=..., --HASH=...) and \
                             END are read"
                        .into(),
                });
            }
            _ if word.starts_with("--") => {
                return Err(ImportError::UnknownSetting {
                    line,
                    setting: word.to_owned(),
                    known: "--SERVER, --DISTRIBUTION, --HASH, --SORT-HOSTS and the options of \
                            libmemcached's configuration parser (memcached(3))"
                        .into(),
                });
            }
            _ => {
                return Err(ImportError::Syntax {
                    line,
                    message: format!(
                        "{word:?} is not an option: write --SERVER=host:port/?weight, \
                         --DISTRIBUTION=consistent, --HASH=MD5, ..."
                    ),
                });
            }
        }
    }
    finish(state, notes)
}

/// The ring the options describe, or why libmemcached builds another.
fn finish(mut state: State, notes: Vec<String>) -> Result<Imported, ImportError> {
    if state.servers.is_empty() {
        return Err(ImportError::Missing {
            message: "no --SERVER=host:port/?weight in the configuration".into(),
        });
    }
    let line = state.servers[0].3;
    if !state.consistent {
        return Err(ImportError::Unsupported {
            line,
            setting: "the distribution".into(),
            reason: "without --DISTRIBUTION=consistent libmemcached uses modula, not a ring; \
                     ringwise reproduces its weighted ketama"
                .into(),
        });
    }
    if !state.weighted {
        return Err(ImportError::Unsupported {
            line,
            setting: "--DISTRIBUTION=consistent with no server of weight above 1 after it".into(),
            reason: "libmemcached then builds its non-weighted continuum (100 points a \
                     server hashed with the key hash), which ringwise does not reproduce; \
                     its weighted ketama (160 MD5 points a server) is built when a server of \
                     weight above 1 (--SERVER=host/?2) follows --DISTRIBUTION=consistent, or \
                     with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (pylibmc's ketama_weighted)"
                .into(),
        });
    }
    let Some(hash) = state.hash else {
        return Err(ImportError::Unsupported {
            line,
            setting: "the key hash".into(),
            reason: "without --HASH libmemcached hashes keys with Jenkins' one-at-a-time, \
                     which ringwise does not reproduce; add --HASH=MD5 (what \
                     MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED sets) or --HASH=FNV1A_64"
                .into(),
        });
    };
    if state.sort_hosts {
        // libmemcached's `compare_servers`: strcmp on the host, then the
        // port. A stable sort keeps equal servers in the order given.
        state
            .servers
            .sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()).then(a.1.cmp(&b.1)));
    }
    let mut settings = Settings::default();
    settings.algorithm = Some("ketama".into());
    settings.hash = Some(hash.into());
    settings.params = vec![(
        ringwise::Param::Flavor,
        ringwise::ParamValue::Flavor(ringwise::Flavor::Libmemcached),
    )];
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    for (host, port, weight, line) in state.servers {
        let mut member = Member::new(format!("{host}:{port}"));
        member.weight = Some(f64::from(weight));
        imported.push(member, line);
    }
    Ok(imported)
}

/// libmemcached's `--HASH` names ringwise reproduces, as ringwise names
/// them.
fn key_hash(name: &str) -> Option<&'static str> {
    match name.to_ascii_uppercase().as_str() {
        "MD5" => Some("md5-le32"),
        "FNV1A_64" => Some("fnv1a64-twemproxy"),
        _ => None,
    }
}

/// `host[:port][/?weight]`, as the scanner reads it: a host of letters,
/// digits, `.`, `_` and `-` (at least 3, starting and ending with a letter or
/// digit),
/// or a dotted IPv4 address; a port of 1–5 digits; a weight of 1–5 digits.
fn server_of(text: &str, line: usize) -> Result<(String, u16, u32), ImportError> {
    let bad = |what: &str| ImportError::Syntax {
        line,
        message: format!(
            "--SERVER={text}: {what}; libmemcached reads --SERVER=host[:port][/?weight], \
             e.g. --SERVER=10.0.0.1:11211/?2"
        ),
    };
    let (address, weight) = match text.split_once("/?") {
        Some((address, weight)) => (address, Some(weight)),
        None => (text, None),
    };
    let (host, port) = match address.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (address, None),
    };
    let valid_host = host.len() >= 3
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && host.as_bytes()[0].is_ascii_alphanumeric()
        && host.as_bytes()[host.len() - 1].is_ascii_alphanumeric();
    if !valid_host {
        return Err(bad("not a host name or IPv4 address"));
    }
    let digits = |t: &str| !t.is_empty() && t.len() <= 5 && t.bytes().all(|b| b.is_ascii_digit());
    let port = match port {
        None => 11211,
        // libmemcached narrows the number to 16 bits (65536 is port 0) and
        // takes port 0 as 11211: a port above 65535 is refused here, as
        // the address the client would reach is not the one written.
        Some(p) if digits(p) => match p.parse::<u16>() {
            Ok(0) => 11211,
            Ok(port) => port,
            Err(_) => return Err(bad("the port is above 65535")),
        },
        Some(_) => return Err(bad("the port is not a number")),
    };
    let weight = match weight {
        None => 1,
        Some(w) if digits(w) => w.parse().map_err(|_| bad("the weight is not a number"))?,
        Some(_) => return Err(bad("the weight is not a number of up to 5 digits")),
    };
    crate::address::host_port(&format!("{host}:{port}"), line, "--SERVER")?;
    Ok((host.to_owned(), port, weight))
}

/// The statements of `text` with their byte offsets, as libmemcached's
/// grammar separates them: by exactly one space (`begin: statement | begin
/// ' ' statement`), tabs and line ends being skipped by its scanner. So
/// `"--SERVER=a\n--SERVER=b"` is one syntax error (nothing separates the
/// two), `"--SERVER=a\n --SERVER=b"` two statements, and a leading,
/// trailing or doubled space an error. A `#` at the start of a line makes
/// the rest of the line a comment statement, skipped.
fn words(text: &str) -> Result<Vec<(usize, &str)>, ImportError> {
    let bytes = text.as_bytes();
    let mut words = Vec::new();
    let mut spaces = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b' ' => {
                spaces += 1;
                at += 1;
                continue;
            }
            b'\t' | b'\r' | b'\n' => {
                at += 1;
                continue;
            }
            _ => {}
        }
        let comment = bytes[at] == b'#' && (at == 0 || bytes[at - 1] == b'\n');
        let end = match comment {
            true => text[at..].find('\n').map_or(text.len(), |n| at + n),
            false => text[at..]
                .find([' ', '\t', '\r', '\n'])
                .map_or(text.len(), |n| at + n),
        };
        if spaces != usize::from(!words.is_empty()) {
            return Err(separator(text, at, spaces, words.is_empty()));
        }
        words.push((at, &text[at..end]));
        spaces = 0;
        at = end;
    }
    if spaces > 0 {
        return Err(separator(text, text.len(), spaces, false));
    }
    words.retain(|(at, word)| !(word.starts_with('#') && (*at == 0 || bytes[at - 1] == b'\n')));
    Ok(words)
}

/// The syntax error of a wrong separator before byte `at`.
fn separator(text: &str, at: usize, spaces: usize, first: bool) -> ImportError {
    let message = match (first, spaces, at == text.len()) {
        (true, _, _) => "libmemcached refuses a space before the first option".to_owned(),
        (_, _, true) => "libmemcached refuses a space after the last option".to_owned(),
        (_, 0, _) => "nothing separates this option from the one before: libmemcached \
                      needs one space between options (a line break alone is not one)"
            .to_owned(),
        (_, n, _) => {
            format!("{n} spaces before this option: libmemcached needs exactly one between options")
        }
    };
    ImportError::Syntax {
        line: line_at(text, at),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        let imported = read(text, None).expect("read");
        imported.members.iter().map(|m| m.name.clone()).collect()
    }

    #[test]
    fn weighted_ketama_is_read_with_its_servers_in_order() {
        let text = "--DISTRIBUTION=consistent\n --SERVER=b.example:11212/?3 --SERVER=10.0.0.1\n \
                    --HASH=md5 --CONNECT-TIMEOUT=100";
        let imported = read(text, None).expect("read");
        assert_eq!(names(text), ["b.example:11212", "10.0.0.1:11211"]);
        assert_eq!(imported.members[0].weight, Some(3.0));
        assert_eq!(imported.member_lines, [2, 2]);
        assert_eq!(imported.settings.hash.as_deref(), Some("md5-le32"));
        assert_eq!(imported.notes.len(), 1, "{:?}", imported.notes);
        assert!(imported.notes[0].starts_with("line 3: --CONNECT-TIMEOUT=100"));
    }

    #[test]
    fn the_distribution_set_after_the_weights_turns_weighting_off() {
        let e = read(
            "--SERVER=aa1/?2 --SERVER=bb1 --DISTRIBUTION=consistent --HASH=MD5",
            None,
        )
        .expect_err("refused");
        assert!(e.to_string().contains("non-weighted continuum"), "{e}");
        assert!(
            read(
                "--DISTRIBUTION=consistent --SERVER=aa1/?2 --SERVER=bb1 --HASH=MD5",
                None
            )
            .is_ok()
        );
    }

    #[test]
    fn what_is_not_reproduced_is_refused_with_its_line() {
        for (text, line, words) in [
            ("--SERVER=aa1\n --DISTRIBUTION=modula", 2, "not a ring"),
            (
                "--DISTRIBUTION=consistent --SERVER=aa1/?2",
                1,
                "one-at-a-time",
            ),
            (
                "--DISTRIBUTION=consistent\n --HASH=CRC --SERVER=aa1/?2",
                2,
                "--HASH=MD5",
            ),
            ("--SERVER=aa1:99999", 1, "above 65535"),
            ("--SERVER=-a", 1, "not a host name"),
            ("--HASH-WITH-NAMESPACE", 1, "prefixed"),
            ("# only a comment\n", 0, "no --SERVER"),
            ("--SERVER=aaa1 # no comment here", 1, "not an option"),
        ] {
            let e = read(text, None).expect_err("refused");
            assert_eq!(e.line().unwrap_or(0), line, "{text}: {e}");
            assert!(e.to_string().contains(words), "{text}: {e}");
        }
    }

    #[test]
    fn sort_hosts_orders_by_host_then_port() {
        let text = "--DISTRIBUTION=consistent --SORT-HOSTS --HASH=FNV1A_64 \
                    --SERVER=bb1:2/?2 --SERVER=aa1:9 --SERVER=bb1:1";
        assert_eq!(names(text), ["aa1:9", "bb1:1", "bb1:2"]);
    }
}
