//! The one check of every member address a reader takes from a file:
//! `HOST:PORT`, the host a DNS name (letters, digits, `.`, `-`, `_`, not
//! starting with `-` or `.`), an IPv4 address or an IPv6 literal in
//! brackets, the port a number from 1 to 65535.
//!
//! Why one strict check: an address read here goes on into what ringwise
//! writes for the operator to run (`ringwise plan`'s redis-cli script, a
//! proxy's connection), so a file's `127.0.0.1$(touch x):7000` must stop
//! at the reader, with its line, whatever the kind. Every peer's own
//! address forms fit: the forms a kind writes beyond `HOST:PORT` (nginx's
//! `unix:` paths and port-less names, `nodetool ring`'s bare addresses,
//! Redis's unbracketed IPv6 in `CLUSTER NODES`) are checked by the other
//! entries here, with the same character rules.
//!
//! Cost: O(length of the address).

use std::net::Ipv6Addr;

use crate::ImportError;
use crate::error::syntax;

/// What a valid address is, for every message.
const FORM: &str = "an address is HOST:PORT: a DNS name (letters, digits, '.', '-', '_'), an \
                    IPv4 address or an IPv6 address in brackets, and a port from 1 to 65535";

/// Longest host name DNS allows.
const MAX_HOST: usize = 253;

/// The refusal of `address` (written as `what`) on `line`, and why.
fn refused(line: usize, what: &str, address: &str, why: &str) -> ImportError {
    syntax(
        line,
        format!("{what} {address:?} is refused: {why}; {FORM}"),
    )
}

/// Why `host` is not a DNS name, an IPv4 address or a bracketed IPv6
/// literal, or `None` when it is one.
fn host_fault(host: &str) -> Option<&'static str> {
    if let Some(inner) = host.strip_prefix('[') {
        return match inner.strip_suffix(']').map(str::parse::<Ipv6Addr>) {
            Some(Ok(_)) => None,
            _ => Some("the brackets do not hold an IPv6 address"),
        };
    }
    if host.is_empty() {
        return Some("the host is empty");
    }
    if host.len() > MAX_HOST {
        return Some("the host is longer than 253 characters");
    }
    if host.starts_with(['-', '.']) {
        return Some("the host starts with '-' or '.'");
    }
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    {
        return Some(
            "the host holds a character no host name has (a space, a quote, '$', a \
             backquote, ';', ...)",
        );
    }
    None
}

/// Why `port` is not a number from 1 to 65535, or `None`.
fn port_fault(port: &str) -> Option<&'static str> {
    // Leading zeros are a port's too (twemproxy reads `011211`).
    let digits = !port.is_empty() && port.len() <= 9 && port.bytes().all(|b| b.is_ascii_digit());
    match digits.then(|| port.parse::<u32>()) {
        Some(Ok(1..=65535)) => None,
        _ => Some("the port is not a number from 1 to 65535"),
    }
}

/// Checks a host alone (an address column without a port, a hostname a
/// node announces).
pub(crate) fn host(host: &str, line: usize, what: &str) -> Result<(), ImportError> {
    match host_fault(host) {
        None => Ok(()),
        Some(why) => Err(refused(line, what, host, why)),
    }
}

/// Checks a port alone (Envoy's `port_value`, written apart from its host).
pub(crate) fn port(port: &str, line: usize, what: &str) -> Result<(), ImportError> {
    match port_fault(port) {
        None => Ok(()),
        Some(why) => Err(refused(line, what, port, why)),
    }
}

/// Checks `HOST:PORT`. An unbracketed IPv6 address before the last colon
/// (`::1:7000`, as Redis writes it) is read as the host.
pub(crate) fn host_port(address: &str, line: usize, what: &str) -> Result<(), ImportError> {
    let Some((host, port)) = address.rsplit_once(':') else {
        return Err(refused(line, what, address, "there is no :PORT"));
    };
    let unbracketed_v6 = host.contains(':') && host.parse::<Ipv6Addr>().is_ok();
    let fault = match unbracketed_v6 {
        true => None,
        false => host_fault(host),
    };
    match fault.or_else(|| port_fault(port)) {
        None => Ok(()),
        Some(why) => Err(refused(line, what, address, why)),
    }
}

/// Checks `HOST` or `HOST:PORT` (nginx's `server`, whose port defaults).
pub(crate) fn host_optional_port(
    address: &str,
    line: usize,
    what: &str,
) -> Result<(), ImportError> {
    let bare_v6 = address.starts_with('[') && address.ends_with(']');
    match address.contains(':') && !bare_v6 {
        true => host_port(address, line, what),
        false => host(address, line, what),
    }
}

/// Checks a unix-socket path (nginx's `unix:/run/x.sock`): absolute, of
/// the host's characters and `/`, `+`, `@`, `~`.
pub(crate) fn socket_path(path: &str, line: usize, what: &str) -> Result<(), ImportError> {
    let fine = path.starts_with('/')
        && path.len() <= 4096
        && path.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/' | b'+' | b'@' | b'~')
        });
    match fine {
        true => Ok(()),
        false => Err(syntax(
            line,
            format!(
                "{what} {path:?} is refused: a socket path is absolute and holds letters, \
                 digits and . - _ / + @ ~ only (no space, quote, '$', backquote or ';')"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_legitimate_form_passes() {
        for a in [
            "10.0.0.1:11211",
            "cache-a.example.com:6379",
            "my_host:1",
            "[::1]:7000",
            "[2001:db8::1]:65535",
            "::1:7000",
            "2001:db8::7:7000",
        ] {
            host_port(a, 1, "server").unwrap_or_else(|e| panic!("{a}: {e}"));
        }
        for a in ["backend1.example.com", "10.0.0.1", "[::1]", "h:80"] {
            host_optional_port(a, 1, "server").unwrap_or_else(|e| panic!("{a}: {e}"));
        }
        socket_path("/run/c.sock", 1, "server").expect("a path");
    }

    #[test]
    fn shell_words_and_bad_ports_are_refused_with_the_line() {
        for a in [
            "127.0.0.1$(touch x):7000",
            "`id`:1",
            "a;b:1",
            "a b:1",
            "\"a\":1",
            "-oProxyCommand:1",
            ".a:1",
            ":7000",
            "a:0",
            "a:65536",
            "a:+1",
            "a:",
            "a",
            "[1.2.3.4]:80",
            "[::1:80",
            "1.2.3.4:80:90",
        ] {
            let e = host_port(a, 7, "server").expect_err(a);
            assert_eq!(e.line(), Some(7), "{a}: {e}");
            assert!(e.to_string().contains("HOST:PORT"), "{a}: {e}");
        }
        for p in ["/a b", "rel/x", "/a$(x)", "/a;b"] {
            socket_path(p, 3, "server").expect_err(p);
        }
    }
}
