//! The canonical form of a request about one key: what the proxy sends a
//! server in place of the client's line.
//!
//! Why: a server connection is shared by many clients, and memcached
//! closes a connection on some lines that it otherwise reads as valid
//! (`try_read_command_ascii`: a line that is not a `get`/`gets` and is
//! still without `\n` after 2048 bytes, which depends on where its reads
//! cut the stream; any such line longer than its 16 KB read buffer). A
//! client that pads its line with spaces, or writes a number with 3000
//! leading zeros, or adds a long token memcached ignores, would otherwise
//! make memcached drop every other client's requests on that connection,
//! and the proxy count a healthy server as failed.
//!
//! The canonical line is the tokens memcached uses, joined by one space:
//! the command and the key as written, each number printed as memcached
//! parsed it (flags `4294967297` are 1, an exptime `007` is 7), the
//! tokens memcached ignores dropped (`delete <key> 0`'s hold, a storage
//! command's sixth token when it is not `noreply`), `noreply` kept where
//! memcached honours it, and `\r\n`. memcached reads it exactly as it
//! reads the client's line, and it is at most [`MAX_LINE`] bytes. A line
//! already canonical (any well-behaved client's) is forwarded from the
//! client's buffer without a copy.
//!
//! Cost: one pass over the line's tokens into a stack buffer and one
//! comparison with the client's line; a copy of the request only when it
//! differs.

use std::borrow::Cow;

/// The longest canonical line: `prepend`, a 250-byte key, flags, exptime,
/// length, a CAS value, `noreply` and `\r\n` are at most 324 bytes.
pub const MAX_LINE: usize = 352;

/// A canonical line being built, on the stack.
pub struct Line {
    bytes: [u8; MAX_LINE],
    len: usize,
}

impl Line {
    /// A line starting with `command`.
    pub fn new(command: &[u8]) -> Line {
        let mut line = Line {
            bytes: [0; MAX_LINE],
            len: 0,
        };
        line.push(command);
        line
    }

    /// Appends `bytes`; the caller's tokens are bounded (a key of at most
    /// 250 bytes, numbers of at most 20 digits), so nothing is ever cut,
    /// but a longer input is cut rather than panicking.
    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_LINE - self.len;
        let take = bytes.len().min(room);
        self.bytes[self.len..self.len + take].copy_from_slice(&bytes[..take]);
        self.len += take;
    }

    /// ` <word>`.
    pub fn word(&mut self, word: &[u8]) -> &mut Line {
        self.push(b" ");
        self.push(word);
        self
    }

    /// ` <value>` in decimal.
    pub fn unsigned(&mut self, value: u64) -> &mut Line {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.word(&digits[at..])
    }

    /// ` <value>` in decimal, `-` first when negative.
    pub fn signed(&mut self, value: i64) -> &mut Line {
        if value >= 0 {
            return self.unsigned(value as u64);
        }
        self.push(b" -");
        let len = self.len;
        self.unsigned(value.unsigned_abs());
        // `unsigned` wrote a space after the sign: drop it.
        self.bytes.copy_within(len + 1..self.len, len);
        self.len -= 1;
        self
    }

    /// ` noreply` when it applies, then `\r\n`.
    pub fn end(&mut self, noreply: bool) -> &Line {
        if noreply {
            self.push(b" noreply");
        }
        self.push(b"\r\n");
        self
    }

    /// The line so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// What to forward for a request whose line is `buf[..next]` and whose
/// data block is `buf[next..end]`: the client's bytes when its line is
/// `line` already, otherwise `line` and the block.
pub fn forward<'a>(buf: &'a [u8], next: usize, end: usize, line: &Line) -> Cow<'a, [u8]> {
    let canonical = line.as_bytes();
    if &buf[..next] == canonical {
        return Cow::Borrowed(&buf[..end]);
    }
    let mut owned = Vec::with_capacity(canonical.len() + end - next);
    owned.extend_from_slice(canonical);
    owned.extend_from_slice(&buf[next..end]);
    Cow::Owned(owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_memcached_reads_them() {
        let mut line = Line::new(b"set");
        line.word(b"k")
            .unsigned(0)
            .signed(-1)
            .signed(i64::from(i32::MIN))
            .unsigned(u64::MAX)
            .end(true);
        assert_eq!(
            line.as_bytes(),
            b"set k 0 -1 -2147483648 18446744073709551615 noreply\r\n"
        );
    }

    #[test]
    fn a_canonical_line_is_not_copied() {
        let buf = b"set k 0 0 1\r\nx\r\nget k\r\n";
        let mut line = Line::new(b"set");
        line.word(b"k").unsigned(0).signed(0).unsigned(1).end(false);
        assert!(matches!(forward(buf, 13, 16, &line), Cow::Borrowed(b) if b == &buf[..16]));
        let padded = b"set   k 0 00 1 \r\nx\r\n";
        let forwarded = forward(padded, 17, 20, &line);
        assert_eq!(&forwarded[..], b"set k 0 0 1\r\nx\r\n");
    }
}
