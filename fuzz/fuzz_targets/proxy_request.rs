//! Any bytes as what a client sends the proxy: requests parsed from the
//! front of the stream by `ringwise_proxy::request::parse` (the crate built
//! without `server`: request, response, numbers and memchr), as the
//! proxy's reader does (`TooLarge` data dropped, `quit` and `Close` read
//! past to reach what follows), under three limits: the default, tiny ones
//! (`max_line` 64, `max_value` 16) and ones past memcached's 2048-byte
//! line rule (`max_line` 3000, `max_value` 4000). Against a model of the
//! first line (up to the first `\n`, one `\r` before it dropped, cut at the
//! first NUL, words split on spaces):
//!
//! 1. never panics; `used` is in 1..=the bytes left; a `Keyed` request's
//!    key is the line's second word (1..=250 bytes, no space, newline or
//!    NUL) and its `noreply` is whether the last word, after the key, is
//!    `noreply`; its `bytes` (what is forwarded to the server that other
//!    clients share) are a canonical line (at most `MAX_FORWARDED_LINE`
//!    bytes, the command and the key first, single spaces, `\r\n` once at
//!    the end) followed by the buffer's data block as taken (`used` minus
//!    the line), and parse again as the same request, taking exactly
//!    themselves (the form is a fixed point); a `Get`'s keys are the line's
//!    words after the command (and `gat`'s exptime), each 1..=250 bytes; a
//!    `TooLarge`'s `swallow` is over `max_value`; every request that is not
//!    a storage or `ms` one takes exactly its line; where the length token
//!    is plain digits, a storage request takes the line plus `<bytes>` + 2;
//!    a complete line of 16384 bytes or more that is not a `get `/`gets `
//!    is a `Close` (memcached's read buffer never holds its end);
//! 2. prefix stability: a request is complete exactly at `used`: every
//!    shorter prefix is `None` or a `Close` of memcached's incomplete-line
//!    rule (no `\n` in the prefix), and every longer one gives the same
//!    request and `used`. A `Close` of that rule on a prefix is checked for
//!    what it claims: the prefix is over 2048 bytes and is not a `get `/
//!    `gets ` (after at most 100 spaces) or is over `max_line`; on the whole
//!    buffer the line is still unterminated (then `Close` of all of it) or,
//!    once its `\n` came, is longer than that prefix and not a `get`/`gets`
//!    (or over `max_line` when it was one);
//! 3. `None` means wait: either no `\n` yet, at most 2048 bytes or a
//!    `get `/`gets ` line within `max_line`; or the first line is a storage
//!    (`set`, `add`, `replace`, `append`, `prepend`, `cas`) or `ms` command
//!    whose data block has not all arrived, a block of at most `max_value`
//!    bytes (the proxy's reader buffers it: a longer wait is unbounded
//!    memory).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwise_proxy::request::{
    KEY_MAX_LENGTH, Limits, MAX_FORWARDED_LINE, Request, Retrieval, parse,
};

/// memcached's `try_read_command_ascii`: past this many bytes without `\n`
/// only a `get`/`gets` line may go on.
const SHORT_LINE: usize = 2048;

/// memcached's read buffer: a line that is not a `get`/`gets` must end
/// within it.
const READ_BUFFER: usize = 16384;

const STORAGE: [&[u8]; 6] = [b"set", b"add", b"replace", b"append", b"prepend", b"cas"];
const KEYED: [&[u8]; 10] = [
    b"set", b"add", b"replace", b"append", b"prepend", b"cas", b"incr", b"decr", b"touch",
    b"delete",
];

/// The model of the first line of a buffer.
struct Line<'a> {
    /// Where the first `\n` is.
    newline: usize,
    /// The words of the line (all of them, not memcached's 24 tokens).
    words: Vec<&'a [u8]>,
}

impl<'a> Line<'a> {
    fn of(buf: &'a [u8]) -> Option<Self> {
        let newline = buf.iter().position(|&b| b == b'\n')?;
        let mut line = &buf[..newline];
        if line.len() > 1 && line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        if let Some(nul) = line.iter().position(|&b| b == 0) {
            line = &line[..nul];
        }
        let words = line.split(|&b| b == b' ').filter(|w| !w.is_empty()).collect();
        Some(Line { newline, words })
    }

    fn word(&self, i: usize) -> &'a [u8] {
        self.words.get(i).copied().unwrap_or_default()
    }

    fn command(&self) -> &'a [u8] {
        self.word(0)
    }

    /// The last word is `noreply` and not the key (`delete noreply`
    /// deletes the key `noreply`: memcached looks at the last token only
    /// when there are more than the command and the key).
    fn noreply(&self) -> bool {
        self.words.len() > 2 && self.words.last().is_some_and(|w| *w == b"noreply")
    }

    /// The data block (`<bytes>` + 2) of a storage or `ms` line when its
    /// length token is plain digits within memcached's range.
    fn block(&self) -> Option<usize> {
        let token = match self.command() {
            b"ms" => self.word(2),
            c if STORAGE.contains(&c) => self.word(4),
            _ => return None,
        };
        if token.is_empty() || token.len() > 10 || !token.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let len: u64 = std::str::from_utf8(token).ok()?.parse().ok()?;
        (len <= i32::MAX as u64 - 2).then_some(len as usize + 2)
    }

    /// The bytes a request on this line takes, when the model knows.
    fn end(&self) -> usize {
        self.newline + 1
    }
}

/// A `get `/`gets ` line start after at most 100 spaces, as memcached's
/// incomplete-line rule tests it.
fn get_start(buf: &[u8]) -> bool {
    let spaces = buf.iter().take_while(|&&b| b == b' ').count();
    let rest = &buf[spaces..];
    spaces <= 100 && (rest.starts_with(b"get ") || rest.starts_with(b"gets "))
}

fn has_newline(buf: &[u8]) -> bool {
    buf.contains(&b'\n')
}

fn valid_key(key: &[u8]) -> bool {
    (1..=KEY_MAX_LENGTH).contains(&key.len())
        && !key.iter().any(|&b| b == b' ' || b == b'\n' || b == 0)
}

/// Whether `(request, used)` of a prefix without `\n` is the incomplete-line
/// rule's `Close`.
fn incomplete_close(prefix: &[u8], request: &Request<'_>) -> bool {
    *request == Request::Close && !has_newline(prefix)
}

/// Property 3: what a `None` may mean.
fn check_wait(buf: &[u8], limits: &Limits) {
    let Some(line) = Line::of(buf) else {
        assert!(
            buf.len() <= SHORT_LINE || (get_start(buf) && buf.len() <= limits.max_line),
            "waited on {} bytes without a newline",
            buf.len()
        );
        return;
    };
    let command = line.command();
    assert!(
        STORAGE.contains(&command),
        "waited after a complete {:?} line",
        String::from_utf8_lossy(command)
    );
    if let Some(block) = line.block() {
        assert!(buf.len() < line.end() + block, "waited with the block in");
        assert!(
            block <= limits.max_value,
            "waiting for a {block}-byte block over max_value {}",
            limits.max_value
        );
    }
}

/// Property 1: the request against the model of the line.
fn check_request(buf: &[u8], limits: &Limits, request: &Request<'_>, used: usize) {
    assert!(used > 0 && used <= buf.len(), "used {used} of {}", buf.len());
    let Some(line) = Line::of(buf) else {
        // memcached's incomplete-line rule: close the connection.
        assert_eq!(*request, Request::Close);
        assert_eq!(used, buf.len());
        assert!(buf.len() > SHORT_LINE);
        assert!(!get_start(buf) || buf.len() > limits.max_line);
        return;
    };
    assert!(used >= line.end());
    let command = line.command();
    if line.newline >= READ_BUFFER && !get_start(buf) {
        assert_eq!((request, used), (&Request::Close, line.end()));
        return;
    }
    match request {
        Request::Keyed {
            key,
            bytes,
            noreply,
        } => {
            check_canonical(buf, limits, &line, request, used);
            assert!(valid_key(key), "key {key:?}");
            assert_eq!(*key, line.word(1));
            assert_eq!(*noreply, line.noreply());
            assert!(KEYED.contains(&command), "keyed {command:?}");
            if STORAGE.contains(&command) {
                assert!(used >= line.end() + 2);
                assert!(used - line.end() <= limits.max_value);
                if let Some(block) = line.block() {
                    assert_eq!(used, line.end() + block);
                }
            } else {
                assert_eq!(used, line.end());
            }
        }
        Request::Get {
            command: which,
            exptime,
            keys,
        } => {
            assert_eq!(used, line.end());
            let (want, touch) = match command {
                b"get" | b"bget" => (Retrieval::Get, false),
                b"gets" => (Retrieval::Gets, false),
                b"gat" => (Retrieval::Gat, true),
                b"gats" => (Retrieval::Gats, true),
                _ => panic!("a retrieval from {command:?}"),
            };
            assert_eq!(*which, want);
            let first = if touch { 2 } else { 1 };
            assert_eq!(exptime.is_some(), touch);
            let listed: Vec<&[u8]> = keys.iter().collect();
            assert_eq!(listed[..], line.words[first.min(line.words.len())..]);
            assert_eq!(keys.len(), listed.len());
            assert!(touch || !keys.is_empty());
            assert!(keys.iter().all(|k| valid_key(k)), "keys {keys:?}");
        }
        Request::TooLarge {
            key,
            set,
            noreply,
            swallow,
        } => {
            assert_eq!(used, line.end());
            assert!(*swallow > limits.max_value);
            assert!(STORAGE.contains(&command));
            assert!(valid_key(key));
            assert_eq!(*key, line.word(1));
            assert_eq!(*set, command == b"set");
            assert_eq!(*noreply, line.noreply());
            if let Some(block) = line.block() {
                assert_eq!(*swallow, block);
            }
        }
        Request::Reply(answer) => {
            if let Some(text) = answer {
                assert!(text.ends_with(b"\r\n"));
            } else {
                assert!(line.noreply(), "silenced without noreply");
            }
            assert_eq!(used, line.end());
        }
        Request::Refuse { reply, swallow } => {
            // An ms line whose block is dropped as it arrives.
            assert_eq!(command, b"ms");
            assert!(reply.starts_with(b"CLIENT_ERROR") && reply.ends_with(b"\r\n"));
            assert_eq!(used, line.end());
            if let Some(block) = line.block() {
                assert_eq!(*swallow, block);
            }
            assert!(line.word(1).len() <= 250 && line.words.len() >= 3 && line.words.len() < 20);
        }
        Request::Version => {
            assert_eq!(command, b"version");
            assert_eq!(used, line.end());
        }
        Request::Quit => {
            assert_eq!(command, b"quit");
            assert_eq!(used, line.end());
        }
        Request::Close => {
            // An HTTP request line.
            assert_eq!(used, line.end());
            assert!(!b"gsacidt".contains(&command[0]));
            assert!(buf[..line.newline].windows(5).any(|w| w == b"HTTP/"));
        }
    }
}

/// A `Keyed` request's bytes: a canonical line and the data block taken,
/// which parse again as the same request and take exactly themselves.
fn check_canonical(buf: &[u8], limits: &Limits, line: &Line<'_>, request: &Request<'_>, used: usize) {
    let Request::Keyed {
        key,
        bytes,
        noreply,
    } = request
    else {
        return;
    };
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .expect("a forwarded request has a newline")
        + 1;
    let canonical = &bytes[..end];
    assert!(canonical.len() <= MAX_FORWARDED_LINE, "{} bytes", canonical.len());
    assert!(canonical.ends_with(b"\r\n"));
    let text = &canonical[..end - 2];
    assert!(!text.contains(&b'\r') || key.contains(&b'\r'), "{text:?}");
    assert!(!text.windows(2).any(|w| w == b"  ") && !text.starts_with(b" "));
    assert!(!text.ends_with(b" "), "{text:?}");
    assert!(text.starts_with(line.command()));
    assert_eq!(&bytes[end..], &buf[line.end()..used], "the data block");
    let Some((again, again_used)) = parse(bytes, limits) else {
        panic!("the forwarded bytes wait: {bytes:?}");
    };
    assert_eq!(again_used, bytes.len());
    match again {
        Request::Keyed {
            key: k,
            bytes: b,
            noreply: n,
        } => {
            assert_eq!((k, n), (*key, *noreply));
            assert_eq!(&b[..], &bytes[..], "not a fixed point");
        }
        other => panic!("the forwarded bytes parse as {other:?}"),
    }
}

/// Property 2: complete exactly at `used`, the same on every longer prefix.
fn check_prefixes(buf: &[u8], limits: &Limits, request: &Request<'_>, used: usize) {
    // Shorter: nothing, or the incomplete-line rule's Close.
    let step = if used <= 512 { 1 } else { 61 };
    let mut shorter: Vec<usize> = (0..used).step_by(step).collect();
    shorter.extend([used - 1, SHORT_LINE, SHORT_LINE + 1, limits.max_line, limits.max_line + 1]);
    for k in shorter.into_iter().filter(|&k| k < used) {
        let prefix = &buf[..k];
        match parse(prefix, limits) {
            None => check_wait(prefix, limits),
            Some((early, early_used)) => {
                assert!(
                    incomplete_close(prefix, &early),
                    "prefix {k} of a {used}-byte request gave {early:?}"
                );
                assert_eq!(early_used, k);
                check_request(prefix, limits, &early, early_used);
                check_early_close(buf, limits, k, request, used);
            }
        }
    }
    // Longer: the same request.
    let longer = [used, used + 1, used + 2, (used + buf.len()) / 2, buf.len() - 1];
    for k in longer.into_iter().filter(|&k| k >= used && k < buf.len()) {
        let Some((again, again_used)) = parse(&buf[..k], limits) else {
            panic!("prefix {k} of a complete {used}-byte request waits");
        };
        assert_eq!((&again, again_used), (request, used), "prefix {k}");
    }
}

/// A `Close` of the incomplete-line rule on `buf[..k]`, then `request` on
/// all of `buf`: the line it cut is what the rule said it was.
fn check_early_close(buf: &[u8], limits: &Limits, k: usize, request: &Request<'_>, used: usize) {
    let prefix = &buf[..k];
    assert!(k > SHORT_LINE);
    let Some(line) = Line::of(buf) else {
        assert_eq!((request, used), (&Request::Close, buf.len()));
        return;
    };
    assert!(line.newline >= k);
    let spaces = buf.iter().take_while(|&&b| b == b' ').count();
    if spaces > 100 {
        return;
    }
    if get_start(prefix) {
        assert!(k > limits.max_line);
        assert!(line.newline > limits.max_line);
    } else {
        // (`get\0...` reads as `get` and is refused: no retrieval.)
        let retrieval = matches!(request, Request::Get { .. });
        assert!(!(retrieval && matches!(line.command(), b"get" | b"gets")), "{request:?}");
    }
}

fn stream(data: &[u8], limits: &Limits) {
    let mut at = 0;
    for _ in 0..256 {
        if at >= data.len() {
            return;
        }
        let buf = &data[at..];
        let Some((request, used)) = parse(buf, limits) else {
            check_wait(buf, limits);
            return;
        };
        check_request(buf, limits, &request, used);
        check_prefixes(buf, limits, &request, used);
        at += used;
        if let Request::TooLarge { swallow, .. } | Request::Refuse { swallow, .. } = request {
            at = at.saturating_add(swallow);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let limits = [
        Limits::default(),
        Limits {
            max_line: 64,
            max_value: 16,
        },
        Limits {
            max_line: 3000,
            max_value: 4000,
        },
    ];
    for limits in &limits {
        stream(data, limits);
    }
});
