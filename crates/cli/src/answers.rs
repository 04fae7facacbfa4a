//! The answers' way out: one buffer in front of stdout ([`Out`]) and the
//! escaping of keys in text output ([`Out::push_escaped`], [`write_escaped`]).
//!
//! How it works: a line is appended to one `Vec<u8>` (a `memcpy` per
//! field, no `Write` call per field), which goes to stdout in one write
//! once it holds [`SPILL`] bytes, or when flushed. Escaping (`\` tab
//! newline CR as `\\` `\t` `\n` `\r`, so that tabs and newlines in the
//! output only separate fields and lines) first asks, eight bytes at a
//! time, whether the key holds any byte below 0x0E or a `\`; almost no
//! key does, and such a key is copied as it is. Only a key that may need
//! it is escaped byte by byte.
//!
//! Cost: O(line bytes) per line, about one instruction per byte for the
//! check; one `write` system call per [`SPILL`] bytes or flush.
//!
//! Quirk: the check is exact about "nothing to escape" but not about
//! "something to escape" (bytes 0x00–0x08, 0x0B, 0x0C are below 0x0E and
//! need nothing), so such keys take the byte-by-byte path for nothing.

use std::io::{self, Write};

/// The buffer goes to stdout once it holds this much (64 KiB).
pub const SPILL: usize = 1 << 16;

/// Buffered output: lines are built in one `Vec` and written in blocks.
/// Dropped, it writes what it holds (errors then are ignored, as
/// `BufWriter`'s drop does).
pub struct Out<W: Write = io::StdoutLock<'static>> {
    buf: Vec<u8>,
    sink: W,
}

impl<W: Write> Out<W> {
    /// An empty buffer in front of `sink`. Cost: one allocation.
    pub fn new(sink: W) -> Self {
        Out {
            buf: Vec::with_capacity(SPILL + (SPILL >> 2)),
            sink,
        }
    }

    /// Appends `bytes`. O(len).
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends one byte. O(1).
    #[inline]
    pub fn push_byte(&mut self, byte: u8) {
        self.buf.push(byte);
    }

    /// Appends `bytes` escaped (see the module doc). O(len).
    #[inline]
    pub fn push_escaped(&mut self, bytes: &[u8]) {
        match may_need_escaping(bytes) {
            false => self.buf.extend_from_slice(bytes),
            true => escape_into(&mut self.buf, bytes),
        }
    }

    /// Ends the line, and writes the buffer once it holds [`SPILL`] bytes.
    /// O(1), or one write of the buffer.
    #[inline]
    pub fn end_line(&mut self) -> io::Result<()> {
        self.buf.push(b'\n');
        match self.buf.len() >= SPILL {
            true => self.spill(),
            false => Ok(()),
        }
    }

    /// Writes the buffer to the sink, without flushing the sink.
    fn spill(&mut self) -> io::Result<()> {
        let written = self.sink.write_all(&self.buf);
        self.buf.clear();
        written
    }
}

impl<W: Write> Write for Out<W> {
    /// Appends `bytes` (all of them), spilling at [`SPILL`].
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= SPILL {
            self.spill()?;
        }
        Ok(bytes.len())
    }

    /// Writes the buffer and flushes the sink.
    fn flush(&mut self) -> io::Result<()> {
        self.spill()?;
        self.sink.flush()
    }
}

impl<W: Write> Drop for Out<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_ne_bytes([1; 8]);
/// `0x80` in every byte of a word.
const HIGHS: u64 = ONES * 0x80;

/// Whether some byte of `word` is below 0x0E (tab 09, newline 0A and CR 0D
/// are) or is `\` (0x5C). Exact as an "any" test (Mycroft's `hasless` and
/// `haszero`): subtracting 0x0E from every byte borrows out of the top bit
/// of a byte only where that byte is below 0x0E, unless a lower byte's
/// borrow did it, and then a lower byte was already below. Worked example:
/// byte 0x0D − 0x0E = 0xFF (top bit set, and 0x0D's own top bit was clear:
/// found); byte 0x41 − 0x0E = 0x33 (not found).
#[inline]
fn word_may_need_escaping(word: u64) -> bool {
    let below = word.wrapping_sub(ONES * 0x0E) & !word & HIGHS;
    let slash = word ^ (ONES * u64::from(b'\\'));
    let slash = slash.wrapping_sub(ONES) & !slash & HIGHS;
    below | slash != 0
}

/// Whether `bytes` may hold a byte to escape: `false` means none does.
#[inline]
pub fn may_need_escaping(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().unwrap_or([b'a'; 8]));
        if word_may_need_escaping(word) {
            return true;
        }
    }
    let rest = words.remainder();
    if rest.is_empty() {
        return false;
    }
    // The tail padded with a byte that needs nothing.
    let mut tail = [b'a'; 8];
    tail[..rest.len()].copy_from_slice(rest);
    word_may_need_escaping(u64::from_le_bytes(tail))
}

/// Appends `bytes` to `buf`, escaping byte by byte; runs of plain bytes
/// are copied in one piece. O(len).
fn escape_into(buf: &mut Vec<u8>, bytes: &[u8]) {
    let mut rest = bytes;
    while let Some(at) = rest
        .iter()
        .position(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        buf.extend_from_slice(&rest[..at]);
        buf.extend_from_slice(match rest[at] {
            b'\\' => b"\\\\",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            _ => b"\\r",
        });
        rest = &rest[at + 1..];
    }
    buf.extend_from_slice(rest);
}

/// Writes `bytes` escaped to any writer (error messages, node names).
/// O(len), one allocation.
pub fn write_escaped(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let mut escaped = Vec::with_capacity(bytes.len() + 8);
    escape_into(&mut escaped, bytes);
    out.write_all(&escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaping as it has always been written: the model to match.
    fn model(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in bytes {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                _ => out.push(b),
            }
        }
        out
    }

    /// A small xorshift: the same "random" keys on every run.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn every_byte_at_every_place_of_keys_up_to_three_words() {
        for len in 1..=24 {
            for at in 0..len {
                for special in 0..=255u8 {
                    let mut key = vec![b'k'; len];
                    key[at] = special;
                    let needs = matches!(special, b'\\' | b'\t' | b'\n' | b'\r');
                    // Never "nothing to escape" for a key that needs it.
                    assert!(!needs || may_need_escaping(&key), "{key:?}");
                    let mut out = Out::new(Vec::new());
                    out.push_escaped(&key);
                    assert_eq!(out.buf, model(&key), "{key:?}");
                }
            }
        }
    }

    #[test]
    fn plain_keys_take_the_copy() {
        assert!(!may_need_escaping(b""));
        assert!(!may_need_escaping(b"user:12345678901"));
        assert!(!may_need_escaping("ключ-é\u{7f}".as_bytes()));
        assert!(may_need_escaping(b"a\\b"));
    }

    #[test]
    fn random_keys_match_the_model_through_the_buffer() {
        let mut state = 0x9E37_79B9_7F4A_7C15;
        let mut out = Out::new(Vec::new());
        let mut expected = Vec::new();
        for _ in 0..20_000 {
            let len = (next(&mut state) % 40) as usize;
            // Mostly printable, sometimes any byte.
            let key: Vec<u8> = (0..len)
                .map(|_| match next(&mut state) % 16 {
                    0 => next(&mut state) as u8,
                    _ => b' ' + (next(&mut state) % 95) as u8,
                })
                .collect();
            out.push_escaped(&key);
            out.push_byte(b'\t');
            out.push(b"node");
            out.end_line().unwrap();
            expected.extend(model(&key));
            expected.extend_from_slice(b"\tnode\n");
            let mut written = Vec::new();
            write_escaped(&mut written, &key).unwrap();
            assert_eq!(written, model(&key));
        }
        out.flush().unwrap();
        assert_eq!(out.sink, expected);
    }
}
