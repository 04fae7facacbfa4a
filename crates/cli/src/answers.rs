//! The answers' way out: one buffer in front of stdout ([`Out`]) and the
//! escaping of keys in text output ([`Out::push_escaped`], [`write_escaped`]).
//!
//! How it works: a line is copied into one buffer (fixed-size moves per
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

/// Buffered output: lines are built in one buffer and written in blocks.
/// Dropped, it writes what it holds (errors then are ignored, as
/// `BufWriter`'s drop does).
pub struct Out<W: Write = io::StdoutLock<'static>> {
    /// Written up to `at`; the rest is room (initialised, so that fields
    /// are copied into it by fixed-size moves rather than a `memcpy` call
    /// each: with keys of 10–20 bytes the calls were 6 % of `lookup`).
    buf: Vec<u8>,
    at: usize,
    sink: W,
}

impl<W: Write> Out<W> {
    /// An empty buffer in front of `sink`. Cost: one allocation.
    pub fn new(sink: W) -> Self {
        Out {
            buf: vec![0; SPILL + (SPILL >> 2)],
            at: 0,
            sink,
        }
    }

    /// Room for `more` bytes after `at`: the buffer grows (only for a
    /// field larger than the buffer, such as a long key escaped).
    #[inline]
    fn room(&mut self, more: usize) -> &mut [u8] {
        if self.buf.len() - self.at < more {
            self.buf.resize(self.at + more, 0);
        }
        &mut self.buf[self.at..]
    }

    /// Appends the first `len` bytes of `chunk` (`len` at most 16) by one
    /// 16-byte move: how `lookup` writes `<TAB>NODE<NEWLINE>`, padded once
    /// per node. O(1).
    #[inline(always)]
    pub fn push_padded(&mut self, chunk: &[u8; 16], len: usize) {
        self.room(16)[..16].copy_from_slice(chunk);
        self.at += len.min(16);
    }

    /// Appends `bytes`. O(len).
    #[inline(always)]
    pub fn push(&mut self, bytes: &[u8]) {
        copy_short(self.room(bytes.len()), bytes);
        self.at += bytes.len();
    }

    /// Appends one byte. O(1).
    #[inline]
    pub fn push_byte(&mut self, byte: u8) {
        self.room(1)[0] = byte;
        self.at += 1;
    }

    /// Appends `bytes` escaped (see the module doc). O(len).
    #[inline(always)]
    pub fn push_escaped(&mut self, bytes: &[u8]) {
        match may_need_escaping(bytes) {
            false => self.push(bytes),
            true => self.at += escape_into(self.room(2 * bytes.len()), bytes),
        }
    }

    /// Ends the line, and writes the buffer once it holds [`SPILL`] bytes.
    /// O(1), or one write of the buffer.
    #[inline]
    pub fn end_line(&mut self) -> io::Result<()> {
        self.push_byte(b'\n');
        match self.at >= SPILL {
            true => self.spill(),
            false => Ok(()),
        }
    }

    /// Writes the buffer once it holds [`SPILL`] bytes (after a line
    /// written without [`Out::end_line`]). O(1), or one write.
    #[inline(always)]
    pub fn spill_if_full(&mut self) -> io::Result<()> {
        match self.at >= SPILL {
            true => self.spill(),
            false => Ok(()),
        }
    }

    /// Writes the buffer to the sink, without flushing the sink; a buffer
    /// that grew for a long field is given back.
    fn spill(&mut self) -> io::Result<()> {
        let written = self.sink.write_all(&self.buf[..self.at]);
        self.at = 0;
        if self.buf.len() > 2 * SPILL {
            self.buf = vec![0; SPILL + (SPILL >> 2)];
        }
        written
    }
}

impl<W: Write> Write for Out<W> {
    /// Appends `bytes` (all of them), spilling at [`SPILL`].
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.push(bytes);
        if self.at >= SPILL {
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

/// Copies `src` to the start of `dst` (at least as long). Up to 16 bytes
/// by two overlapping fixed-size moves (worked example, 11 bytes: bytes
/// 0..8, then 3..11), longer ones by `copy_from_slice`. O(len).
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let len = src.len();
    match len {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[len / 2] = src[len / 2];
            dst[len - 1] = src[len - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[len - 4..len].copy_from_slice(&src[len - 4..]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[len - 8..len].copy_from_slice(&src[len - 8..]);
        }
        _ => dst[..len].copy_from_slice(src),
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
/// The last word is read overlapping the one before (a byte seen twice
/// changes nothing), and a key under 8 bytes is gathered in a register
/// from overlapping loads: copying it into a padded array first made the
/// 8-byte load wait on the copy's small stores (store forwarding fails),
/// half the time of the whole print.
#[inline(always)]
pub fn may_need_escaping(bytes: &[u8]) -> bool {
    let len = bytes.len();
    if len >= 8 {
        let mut words = bytes.chunks_exact(8);
        if words.by_ref().any(|w| word_may_need_escaping(word(w))) {
            return true;
        }
        return !words.remainder().is_empty() && word_may_need_escaping(word(&bytes[len - 8..]));
    }
    let gathered = match len {
        0 => return false,
        // Worked example, "abcdef": bytes 0..4 "abcd" and 2..6 "cdef".
        4.. => u64::from(half(&bytes[..4])) | u64::from(half(&bytes[len - 4..])) << 32,
        // The first, middle and last bytes cover 1 to 3; the rest is `a`s.
        _ => {
            u64::from(bytes[0])
                | u64::from(bytes[len / 2]) << 8
                | u64::from(bytes[len - 1]) << 16
                | (ONES * u64::from(b'a')) << 24
        }
    };
    word_may_need_escaping(gathered)
}

/// The 8 bytes of `chunk` (exactly 8) as a little-endian word.
#[inline]
fn word(chunk: &[u8]) -> u64 {
    u64::from_le_bytes(chunk.try_into().unwrap_or([b'a'; 8]))
}

/// The 4 bytes of `chunk` (exactly 4) as a little-endian word.
#[inline]
fn half(chunk: &[u8]) -> u32 {
    u32::from_le_bytes(chunk.try_into().unwrap_or([b'a'; 4]))
}

/// Writes `bytes` escaped to the start of `dst` (at least twice as long)
/// and returns how many bytes that took. O(len).
fn escape_into(dst: &mut [u8], bytes: &[u8]) -> usize {
    let mut at = 0;
    for &b in bytes {
        let escaped = match b {
            b'\\' => b'\\',
            b'\t' => b't',
            b'\n' => b'n',
            b'\r' => b'r',
            _ => {
                dst[at] = b;
                at += 1;
                continue;
            }
        };
        dst[at] = b'\\';
        dst[at + 1] = escaped;
        at += 2;
    }
    at
}

/// Writes `bytes` escaped to any writer (error messages, node names).
/// O(len), one allocation.
pub fn write_escaped(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let mut escaped = vec![0; 2 * bytes.len()];
    let len = escape_into(&mut escaped, bytes);
    out.write_all(&escaped[..len])
}

#[cfg(test)]
mod tests;
