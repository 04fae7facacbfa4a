//! Client requests of the memcached text protocol, read as memcached 1.6
//! reads them, so that what the proxy forwards and what it answers itself
//! are byte for byte what one memcached would have answered.
//!
//! Source: memcached 1.6.18 (Debian's), `proto_text.c`:
//! `try_read_command_ascii` (where a line ends), `tokenize_command`,
//! `process_command_ascii` (the token counts each command wants) and the
//! `process_*_command` functions (the checks, in their order).
//!
//! How memcached reads a line: up to the first `\n`, one `\r` before it
//! dropped when the line is longer than that `\r`; the line ends at its
//! first NUL byte; tokens are split on spaces only (runs of spaces are one
//! separator, a tab belongs to its token), at most 23, the rest of the line
//! left as one more. A storage command's data block (`<bytes>` plus
//! `\r\n`) follows its line and is read only when the line passed every
//! check; a refused line's data is read as the next command line (so
//! `set k x 0 1\r\na\r\n` answers `CLIENT_ERROR bad command line format`,
//! then `ERROR` for the line `a`). `noreply` as the last token silences
//! every answer of that command, errors included, but not the `ERROR` of a
//! wrong token count, which comes before it is looked at.
//!
//! What the proxy does with a request: a request for one key is forwarded
//! to the key's owner in its canonical form ([`Request::Keyed`], see
//! `request/canonical.rs`: the owner reads what the client's line says, and nothing
//! a client writes can make it close the connection that other clients
//! share); a retrieval of several keys is split by owner
//! ([`Request::Get`], its keys left in the line); what memcached would
//! refuse is
//! answered here with memcached's words ([`Request::Reply`]); `version` is
//! asked of a backend; the meta commands and the administrative ones
//! (`stats`, `flush_all`, ...) are refused with a `CLIENT_ERROR` that says
//! so (a proxy cannot answer them for the whole pool as one server would).
//!
//! Not reproduced: when a `get` names a key over 250 bytes, memcached
//! answers `CLIENT_ERROR bad command line format` and also drops the
//! answers to earlier requests it has not written yet (which depends on
//! its buffering); the proxy answers the same error and keeps the earlier
//! answers.
//!
//! A line longer than memcached's read buffer (16 KB) that is not a
//! `get`/`gets` closes the connection, complete or not: memcached never
//! finds its end.
//!
//! Cost: O(line length) to find and split a line, plus the data block for
//! storage; no allocation, but a copy of a request whose line is not
//! canonical.

use std::borrow::Cow;

use crate::numbers::{safe_strtol, safe_strtoul, safe_strtoull};

mod canonical;
mod keys;

use canonical::{Line, forward};
pub use keys::{Keys, Retrieval, words};

/// The longest line the proxy forwards for a request about one key (its
/// canonical form), far below memcached's 2048-byte limit.
pub const MAX_FORWARDED_LINE: usize = canonical::MAX_LINE;

/// memcached's `KEY_MAX_LENGTH`.
pub const KEY_MAX_LENGTH: usize = 250;

/// memcached's `MAX_TOKENS`: 23 tokens and the rest of the line.
const MAX_TOKENS: usize = 24;

/// A line without `\n` longer than this is only allowed for a `get` or
/// `gets` (memcached closes the connection otherwise).
const SHORT_LINE: usize = 2048;

/// memcached's `READ_BUFFER_SIZE`: a line that is not a `get`/`gets` must
/// end within it, or memcached closes the connection.
const READ_BUFFER: usize = 16384;

const ERROR: &[u8] = b"ERROR\r\n";
const BAD_FORMAT: &[u8] = b"CLIENT_ERROR bad command line format\r\n";
const BAD_EXPTIME: &[u8] = b"CLIENT_ERROR invalid exptime argument\r\n";
const BAD_DELTA: &[u8] = b"CLIENT_ERROR invalid numeric delta argument\r\n";
const DELETE_USAGE: &[u8] =
    b"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n";
const META: &[u8] = b"CLIENT_ERROR ringwise-proxy does not support the meta commands yet\r\n";
const ADMIN: &[u8] =
    b"CLIENT_ERROR ringwise-proxy does not forward administrative commands; ask each server\r\n";
/// What memcached answers a value larger than its item size.
pub const TOO_LARGE: &[u8] = b"SERVER_ERROR object too large for cache\r\n";

/// The limits of one connection's reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest `get`/`gets` line (memcached's is unbounded; the proxy
    /// closes a connection whose line grows past this).
    pub max_line: usize,
    /// The largest data block the proxy buffers; a larger one is read and
    /// dropped and answered as memcached answers a value over its item
    /// size ([`TOO_LARGE`]).
    pub max_value: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: 1 << 20,
            max_value: 2 << 20,
        }
    }
}

/// One request, borrowing the connection's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    /// Answered by the proxy: `None` when `noreply` silences it.
    Reply(Option<&'static [u8]>),
    /// A request about one key, forwarded in its canonical form (`bytes`:
    /// the canonical line, at most [`MAX_FORWARDED_LINE`] bytes, and the
    /// data block of a storage command; the client's own bytes when its
    /// line is canonical already). The owner answers once unless
    /// `noreply`.
    Keyed {
        /// The key.
        key: &'a [u8],
        /// The request's bytes.
        bytes: Cow<'a, [u8]>,
        /// Whether the server stays silent.
        noreply: bool,
    },
    /// A retrieval of any number of keys (`exptime` for `gat`/`gats`, as
    /// memcached parsed it). Every key is at most [`KEY_MAX_LENGTH`] bytes.
    Get {
        /// Which command.
        command: Retrieval,
        /// `gat`'s expiry.
        exptime: Option<i32>,
        /// The keys in request order, repeats kept.
        keys: Keys<'a>,
    },
    /// A storage command whose data block is over [`Limits::max_value`]:
    /// `swallow` more bytes are to be dropped (the block was not read);
    /// answered [`TOO_LARGE`]. memcached then deletes the key of a `set`
    /// (no stale value survives a failed set); so does the proxy.
    TooLarge {
        /// The key.
        key: &'a [u8],
        /// Whether the command was `set`.
        set: bool,
        /// Whether the answer is silenced.
        noreply: bool,
        /// Bytes still to drop after the line.
        swallow: usize,
    },
    /// Refused with `reply`, and `swallow` bytes after the line are
    /// dropped as they arrive (an `ms` data block).
    Refuse {
        /// The answer.
        reply: &'static [u8],
        /// Bytes to drop after the line.
        swallow: usize,
    },
    /// `version`: asked of a backend.
    Version,
    /// `quit`: answer what came before, then close.
    Quit,
    /// memcached would close the connection (a long line without `\n`
    /// that is not a retrieval, or an HTTP request).
    Close,
}

/// The tokens of one line, as `tokenize_command` makes them.
struct Tokens<'a> {
    words: [&'a [u8]; MAX_TOKENS],
    /// The number of tokens, the terminal one counted (memcached's
    /// `ntokens`).
    count: usize,
}

impl<'a> Tokens<'a> {
    fn split(line: &'a [u8]) -> Self {
        let mut words: [&[u8]; MAX_TOKENS] = [b""; MAX_TOKENS];
        let mut count = 0;
        let mut rest = line;
        while count < MAX_TOKENS - 1 {
            let start = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
            rest = &rest[start..];
            if rest.is_empty() {
                break;
            }
            let end = memchr::memchr(b' ', rest).unwrap_or(rest.len());
            words[count] = &rest[..end];
            count += 1;
            rest = &rest[end..];
        }
        Tokens {
            words,
            count: count + 1,
        }
    }

    /// Token `i` (empty past the end).
    fn get(&self, i: usize) -> &'a [u8] {
        self.words[i]
    }

    /// memcached's `set_noreply_maybe`: the last token is `noreply`.
    fn noreply(&self) -> bool {
        self.count >= 2 && self.words[self.count - 2] == b"noreply"
    }
}

/// Reads the next request from `buf`: `None` when it is not all there
/// yet, otherwise the request and how many bytes of `buf` it took.
pub fn parse<'a>(buf: &'a [u8], limits: &Limits) -> Option<(Request<'a>, usize)> {
    let Some(newline) = memchr::memchr(b'\n', buf) else {
        return incomplete_line(buf, limits);
    };
    let next = newline + 1;
    if newline >= READ_BUFFER && !get_start(buf) {
        return Some((Request::Close, next));
    }
    let mut line = &buf[..newline];
    if line.len() > 1 && line.ends_with(b"\r") {
        line = &line[..line.len() - 1];
    }
    if let Some(nul) = memchr::memchr(0, line) {
        line = &line[..nul];
    }
    let tokens = Tokens::split(line);
    let reply = |r: &'static [u8]| Some((Request::Reply(Some(r)), next));
    let command = tokens.get(0);
    if tokens.count < 2 || command.len() < 2 {
        return reply(ERROR);
    }
    if command[0] == b'm' && command.len() == 2 {
        return meta(command[1], &tokens, next);
    }
    let between = |min: usize, max: usize| (min..=max).contains(&tokens.count);
    match command {
        b"get" | b"bget" | b"gets" | b"gat" | b"gats" => {
            if tokens.count < 3 {
                return reply(ERROR);
            }
            retrieval(command, line, next)
        }
        b"set" | b"add" | b"replace" | b"append" | b"prepend" if between(6, 7) => {
            storage(&tokens, buf, next, false, limits)
        }
        b"cas" if between(7, 8) => storage(&tokens, buf, next, true, limits),
        b"incr" | b"decr" | b"touch" if between(4, 5) => {
            let noreply = tokens.noreply();
            let key = tokens.get(1);
            let silenced = |r: &'static [u8]| Some((Request::Reply((!noreply).then_some(r)), next));
            if key.len() > KEY_MAX_LENGTH {
                return silenced(BAD_FORMAT);
            }
            let mut canon = Line::new(command);
            canon.word(key);
            if command == b"touch" {
                let Some(exptime) = safe_strtol(tokens.get(2)) else {
                    return silenced(BAD_EXPTIME);
                };
                canon.signed(exptime.into());
            } else {
                let Some(delta) = safe_strtoull(tokens.get(2)) else {
                    return silenced(BAD_DELTA);
                };
                canon.unsigned(delta);
            }
            keyed(
                key,
                forward(buf, next, next, canon.end(noreply)),
                noreply,
                next,
            )
        }
        b"delete" if between(3, 5) => {
            let mut noreply = false;
            if tokens.count > 3 {
                let hold_is_zero = tokens.get(2) == b"0";
                noreply = tokens.noreply();
                let valid = (tokens.count == 4 && (hold_is_zero || noreply))
                    || (tokens.count == 5 && hold_is_zero && noreply);
                if !valid {
                    return Some((Request::Reply((!noreply).then_some(DELETE_USAGE)), next));
                }
            }
            let key = tokens.get(1);
            if key.len() > KEY_MAX_LENGTH {
                return Some((Request::Reply((!noreply).then_some(BAD_FORMAT)), next));
            }
            let mut canon = Line::new(command);
            canon.word(key);
            keyed(
                key,
                forward(buf, next, next, canon.end(noreply)),
                noreply,
                next,
            )
        }
        b"version" => Some((Request::Version, next)),
        b"quit" => Some((Request::Quit, next)),
        b"stats" | b"shutdown" | b"slabs" | b"cache_memlimit" | b"flush_all" | b"lru_crawler"
        | b"watch" | b"verbosity" | b"lru" => reply(ADMIN),
        // A known command with the wrong number of tokens.
        b"set" | b"add" | b"replace" | b"append" | b"prepend" | b"cas" | b"incr" | b"decr"
        | b"touch" | b"delete" => reply(ERROR),
        // memcached's last resort, reached only by words that do not start
        // like one of its commands (`GET / HTTP/1.1` does).
        _ if !b"gsacidt".contains(&command[0])
            && tokens.get(tokens.count - 2).starts_with(b"HTTP/") =>
        {
            Some((Request::Close, next))
        }
        _ => reply(ERROR),
    }
}

/// The meta commands: `mn` answered, the others refused. `ms` carries a
/// data block, which memcached reads and drops when the line's length
/// reads (`process_mset_command`: at least a key and a length, the key
/// at most 250 bytes, at most 20 tokens, a length from 0 to 2^31 - 3);
/// otherwise it reads the block as the next command line. So does the
/// proxy: the block is dropped as it arrives, never held.
fn meta<'a>(which: u8, tokens: &Tokens<'a>, next: usize) -> Option<(Request<'a>, usize)> {
    let reply = |r: &'static [u8]| Some((Request::Reply(Some(r)), next));
    match which {
        b'n' => return reply(b"MN\r\n"),
        b'g' | b'd' | b'a' | b'e' | b's' if tokens.count < 3 => return reply(ERROR),
        b'g' | b'd' | b'a' | b'e' => return reply(META),
        b's' => {}
        _ => return reply(ERROR),
    }
    if tokens.get(1).len() > KEY_MAX_LENGTH || tokens.count == 3 || tokens.count > 20 {
        return reply(META);
    }
    match safe_strtol(tokens.get(2)) {
        Some(len) if (0..=i32::MAX - 2).contains(&len) => {
            let swallow = len as usize + 2;
            Some((
                Request::Refuse {
                    reply: META,
                    swallow,
                },
                next,
            ))
        }
        _ => reply(META),
    }
}

/// No `\n` yet: wait, unless memcached would give up on the line.
fn incomplete_line<'a>(buf: &'a [u8], limits: &Limits) -> Option<(Request<'a>, usize)> {
    if buf.len() <= SHORT_LINE {
        return None;
    }
    if !get_start(buf) || buf.len() > limits.max_line {
        return Some((Request::Close, buf.len()));
    }
    None
}

/// Whether `buf` starts as a line memcached lets grow past 2048 bytes: at
/// most 100 spaces, then `get ` or `gets `.
fn get_start(buf: &[u8]) -> bool {
    let spaces = buf.iter().take_while(|&&b| b == b' ').count();
    let rest = &buf[spaces..];
    spaces <= 100 && (rest.starts_with(b"get ") || rest.starts_with(b"gets "))
}

/// `get`, `gets`, `gat`, `gats` over the whole line (memcached reads
/// more than 23 keys in rounds of tokens; the keys are the same).
fn retrieval<'a>(command: &[u8], line: &'a [u8], next: usize) -> Option<(Request<'a>, usize)> {
    let which = match command {
        b"get" | b"bget" => Retrieval::Get,
        b"gets" => Retrieval::Gets,
        b"gat" => Retrieval::Gat,
        _ => Retrieval::Gats,
    };
    let (_, mut rest) = first_word(line);
    let exptime = match which {
        Retrieval::Gat | Retrieval::Gats => {
            let (token, after) = first_word(rest);
            rest = after;
            match safe_strtol(token) {
                Some(exptime) => Some(exptime),
                None => return Some((Request::Reply(Some(BAD_EXPTIME)), next)),
            }
        }
        _ => None,
    };
    let mut count = 0;
    for key in words(rest) {
        // One key too long and memcached answers only this, whatever it
        // found.
        if key.len() > KEY_MAX_LENGTH {
            return Some((Request::Reply(Some(BAD_FORMAT)), next));
        }
        count += 1;
    }
    let keys = Keys::new(rest, count);
    let request = Request::Get {
        command: which,
        exptime,
        keys,
    };
    Some((request, next))
}

/// The first word of `text` and what follows it.
fn first_word(text: &[u8]) -> (&[u8], &[u8]) {
    let start = text.iter().position(|&b| b != b' ').unwrap_or(text.len());
    let text = &text[start..];
    let end = memchr::memchr(b' ', text).unwrap_or(text.len());
    text.split_at(end)
}

/// `set`, `add`, `replace`, `append`, `prepend` and `cas`, checked in
/// `process_update_command`'s order.
fn storage<'a>(
    tokens: &Tokens<'a>,
    buf: &'a [u8],
    next: usize,
    cas: bool,
    limits: &Limits,
) -> Option<(Request<'a>, usize)> {
    let noreply = tokens.noreply();
    let refuse = Some((Request::Reply((!noreply).then_some(BAD_FORMAT)), next));
    let key = tokens.get(1);
    if key.len() > KEY_MAX_LENGTH {
        return refuse;
    }
    let flags = safe_strtoul(tokens.get(2));
    let exptime = safe_strtol(tokens.get(3));
    let length = safe_strtol(tokens.get(4));
    let cas_value = match cas {
        true => safe_strtoull(tokens.get(5)),
        false => Some(0),
    };
    let (Some(flags), Some(exptime), Some(len), Some(cas_value)) =
        (flags, exptime, length, cas_value)
    else {
        return refuse;
    };
    if !(0..=i32::MAX - 2).contains(&len) {
        return refuse;
    }
    let block = len as usize + 2;
    if block > limits.max_value {
        let set = tokens.get(0) == b"set";
        let swallow = block;
        return Some((
            Request::TooLarge {
                key,
                set,
                noreply,
                swallow,
            },
            next,
        ));
    }
    if buf.len() < next + block {
        return None;
    }
    let mut canon = Line::new(tokens.get(0));
    canon
        .word(key)
        .unsigned(flags.into())
        .signed(exptime.into());
    canon.unsigned(len as u64);
    if cas {
        canon.unsigned(cas_value);
    }
    let bytes = forward(buf, next, next + block, canon.end(noreply));
    keyed(key, bytes, noreply, next + block)
}

/// A request about one key that took `used` bytes of the buffer.
fn keyed<'a>(
    key: &'a [u8],
    bytes: Cow<'a, [u8]>,
    noreply: bool,
    used: usize,
) -> Option<(Request<'a>, usize)> {
    Some((
        Request::Keyed {
            key,
            bytes,
            noreply,
        },
        used,
    ))
}
