//! Stdin's lines, split in place: the key reading of `lookup`, `token` and
//! `slot` ([`for_each_line_block`]), and the one-line reader of
//! `plan --keys FILE` ([`read_line`]).
//!
//! How it works: input is read into one buffer, [`READ_BYTES`] at a time,
//! and its newlines are found in place eight bytes at a time in registers
//! ([`Newlines`]: every newline of a word from one mask, independent of
//! where the line before ended), never by a call per line or a copy. Each line is
//! handed out as a slice of that buffer, in blocks of at most [`BLOCK`]
//! keys; the block's `Vec<&[u8]>` is emptied and reused, so nothing is
//! allocated per key or per block. A line that the buffer ends inside is
//! moved to the front and completed by the next read.
//!
//! Keys are bytes: the line end is `\n`, and one `\r` before it (or at the
//! very end of the input) is dropped too, as before: `a\r\r\n` is the key
//! `a\r`, and a last line without a newline is a key.
//!
//! Streaming: before every read, which may wait for the writer, the keys
//! found so far are visited with "flush" set, so a program that writes a
//! key and waits for its answer gets it at once; input that streams in
//! fast is still answered in blocks, flushed once per read.
//!
//! Cost: O(input bytes) for the search plus O(1) per line; memory: the
//! buffer, [`READ_BYTES`], grown (doubling) only for a line longer than
//! it, to at most twice the longest key allowed, and given back once empty.
//!
//! Quirk: a line over `max` bytes is refused (with its line number) once
//! that is certain and the buffer is full with it: `max` + 2 bytes with no
//! newline yet are too long whatever follows (`max` + 1 may still end in
//! the `\r` of a `\r\n`). So a stream without newlines cannot grow the
//! buffer without bound.

use std::io::{self, BufRead, ErrorKind, Read};

/// Keys read and answered together.
pub const BLOCK: usize = 1024;

/// Bytes asked of the input per read (128 KiB: a pipe gives at most 64 KiB
/// at once, a file the whole request).
pub const READ_BYTES: usize = 1 << 17;

/// A block of keys, and whether none of them holds a byte that text
/// output escapes (`\`, tab, CR; a newline cannot be in a line), so the
/// printer can copy them unchecked. It is a slice of keys for everything
/// else (`Deref`, `for key in block`).
#[derive(Clone, Copy)]
pub struct Block<'a> {
    /// The keys, in input order.
    pub keys: &'a [&'a [u8]],
    /// No key needs escaping (`false` says "check each").
    pub plain: bool,
}

impl<'a> Block<'a> {
    /// `keys` with "check each". O(1).
    pub fn unchecked(keys: &'a [&'a [u8]]) -> Self {
        Block { keys, plain: false }
    }
}

impl<'a> std::ops::Deref for Block<'a> {
    type Target = [&'a [u8]];

    fn deref(&self) -> &Self::Target {
        self.keys
    }
}

impl<'a> IntoIterator for Block<'a> {
    type Item = &'a &'a [u8];
    type IntoIter = std::slice::Iter<'a, &'a [u8]>;

    fn into_iter(self) -> Self::IntoIter {
        self.keys.iter()
    }
}

/// The block of `keys`, whose bytes (with the newlines between them) are
/// `bytes`: plain when one SIMD pass finds no `\`, tab or CR in them
/// (1 % of `lookup`'s time, measured; CRLF input is never plain and is checked key by
/// key).
fn block<'a>(keys: &'a [&'a [u8]], bytes: &[u8]) -> Block<'a> {
    let plain = memchr::memchr3(b'\\', b'\t', b'\r', bytes).is_none();
    Block { keys, plain }
}

/// Calls `visit` with the lines of `input` without their line ends, in
/// blocks of at most [`BLOCK`]; the second argument says "flush after this
/// block": the next step is a read that may wait (or `line_buffered`). A
/// line over `max` bytes is an `InvalidData` error naming its number,
/// counted from one; a read error comes as it is. Either comes after the
/// lines before it were visited. Cost: see the module doc.
pub fn for_each_line_block<E: From<io::Error>>(
    mut input: impl Read,
    max: usize,
    line_buffered: bool,
    mut visit: impl FnMut(Block<'_>, bool) -> Result<(), E>,
) -> Result<(), E> {
    let mut buf = vec![0u8; READ_BYTES];
    // `buf[start..end]` is read and not yet handed out: at most one partial
    // line between reads.
    let mut start = 0;
    let mut end = 0;
    let mut eof = false;
    // Lines handed out so far, for the number in the "too long" error.
    let mut number = 0u64;
    // The block's slices; its allocation outlives each borrow of `buf`.
    let mut spare: Vec<&[u8]> = Vec::with_capacity(BLOCK);
    loop {
        let mut block = recycle(spare);
        // Visited with flush unset since the last flush.
        let mut unflushed = false;
        let data = &buf[..end];
        let mut at = start;
        // Where the block's first line starts.
        let mut from = start;
        for newline in Newlines::new(data, start) {
            let line = strip_cr(&data[at..newline]);
            at = newline + 1;
            number += 1;
            if line.len() > max {
                visit(Block::unchecked(&block), true)?;
                return Err(too_long("stdin", number, "a key").into());
            }
            block.push(line);
            if block.len() == BLOCK || line_buffered {
                visit(self::block(&block, &data[from..at]), line_buffered)?;
                unflushed = !line_buffered;
                block.clear();
                from = at;
            }
        }
        if eof {
            if at < end {
                let line = strip_cr(&data[at..end]);
                if line.len() > max {
                    visit(Block::unchecked(&block), true)?;
                    return Err(too_long("stdin", number + 1, "a key").into());
                }
                block.push(line);
            }
            return visit(self::block(&block, &data[from..end]), true);
        }
        // The next read may wait for the writer: answer what is here.
        if !block.is_empty() || unflushed {
            visit(self::block(&block, &data[from..at]), true)?;
        }
        spare = recycle(block);
        // The partial line to the front, so the read appends to it.
        buf.copy_within(at..end, 0);
        end -= at;
        start = 0;
        if end == 0 && buf.len() > READ_BYTES {
            buf.truncate(READ_BYTES);
            buf.shrink_to_fit();
        }
        if end == buf.len() {
            // Worked example, max = 4: "abcde" without a newline yet is
            // too long whatever follows ("abcde\r\n" is still 5 bytes);
            // "abcd\r" might be the key "abcd".
            if end > max + 1 {
                visit(Block::unchecked(&[]), true)?;
                return Err(too_long("stdin", number + 1, "a key").into());
            }
            buf.resize(buf.len() * 2, 0);
        }
        loop {
            match input.read(&mut buf[end..]) {
                Ok(0) => eof = true,
                Ok(read) => end += read,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    visit(Block::unchecked(&[]), true)?;
                    return Err(e.into());
                }
            }
            break;
        }
    }
}

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_ne_bytes([1; 8]);

/// The positions of the `\n`s of `data` from `from` on, found a word (8
/// bytes) at a time: each word gives a mask with the top bit of every
/// byte that is a newline, and the positions come out of the mask by
/// `trailing_zeros`. No position depends on the one before, so lines are
/// not one long chain of dependent loads (searching from each line's end
/// for the next newline was: ~20 cycles a line, 25 % of `lookup`).
struct Newlines<'a> {
    data: &'a [u8],
    /// Where the word of `mask` starts.
    base: usize,
    /// Newlines of that word not yet given, one top bit per byte.
    mask: u64,
}

impl<'a> Newlines<'a> {
    fn new(data: &'a [u8], from: usize) -> Self {
        Newlines {
            mask: newline_mask(data, from),
            data,
            base: from,
        }
    }
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.base += 8;
            if self.base >= self.data.len() {
                return None;
            }
            self.mask = newline_mask(self.data, self.base);
        }
        let at = self.base + (self.mask.trailing_zeros() / 8) as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// The top bit of each byte of `data[at..at + 8]` that is `\n` (bytes past
/// the end count as not). Exact for every byte, unlike `haszero`'s
/// subtraction, whose borrow can flag a 0x0B above a newline: with
/// `x` = word XOR `\n`s, `(x & 0x7F..) + 0x7F..` sets a byte's top bit
/// iff its low 7 bits are not all zero, with no carry between bytes; OR
/// `x` adds its own top bit, and the complement leaves the zero bytes.
/// Worked example: byte 0x0A: x = 0, 0 + 0x7F = 0x7F, | 0 | 0x7F = 0x7F,
/// complement 0x80 (found); byte 0x0B: x = 1, 0x80 | ... = 0xFF, 0x00.
#[inline(always)]
fn newline_mask(data: &[u8], at: usize) -> u64 {
    let word = match data.get(at..at + 8) {
        Some(chunk) => u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])),
        None => {
            // The last bytes of the buffer: padded with zeros (not `\n`).
            let mut tail = [0u8; 8];
            let rest = data.get(at..).unwrap_or_default();
            tail[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(tail)
        }
    };
    let x = word ^ (ONES * u64::from(b'\n'));
    let low = ONES * 0x7F;
    !((x & low).wrapping_add(low) | x | low)
}

/// An empty `Vec` on `spare`'s allocation, for slices of another lifetime:
/// the in-place `collect` of an emptied `Vec` of a type of the same layout
/// keeps its buffer, so the block's `Vec` is allocated once per command.
// `filter_map` to `None` is the point: it changes the item's lifetime,
// which `filter` cannot, and keeps the allocation.
#[expect(
    clippy::unnecessary_filter_map,
    reason = "changes the lifetime in place"
)]
fn recycle<'b>(spare: Vec<&[u8]>) -> Vec<&'b [u8]> {
    spare.into_iter().filter_map(|_| None).collect()
}

/// `line` without one trailing `\r`.
fn strip_cr(line: &[u8]) -> &[u8] {
    match line {
        [head @ .., b'\r'] => head,
        _ => line,
    }
}

/// What [`read_line`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// The input has ended: no line.
    End,
    /// A line, without its `\n` or `\r\n`.
    Read,
    /// A line longer than the limit: its first bytes were read, no more.
    TooLong,
}

/// Reads the next line of `input` into `line` (cleared first), without its
/// line end, reading at most `max` + 3 bytes of it (the line, `\r`, `\n`
/// and one byte more to tell a line over the cap): a stream without
/// newlines (`/dev/zero`) cannot grow the buffer past `max`. `plan --keys
/// FILE` reads keys through it. Cost: O(line length).
pub fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    line.clear();
    let limit = max as u64 + 3;
    if input.by_ref().take(limit).read_until(b'\n', line)? == 0 {
        return Ok(Line::End);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(match line.len() > max {
        true => Line::TooLong,
        false => Line::Read,
    })
}

/// The longest key read from stdin: 1 MiB (Memcached allows 250 bytes,
/// Redis 512 MB but nobody routes those by key). A longer line is refused
/// with its line number (exit 65) once the read buffer is full with it (at
/// most twice this much), so a stream without newlines cannot grow the
/// buffer without bound.
pub const MAX_KEY_BYTES: usize = 1 << 20;

/// The error of a key line over `MAX_KEY_BYTES` (1 MiB; `what` names what
/// the line holds): `InvalidData`, which the CLI reports as bad input
/// (exit 65), not as an I/O failure. Cost: one message.
pub fn too_long(source: &str, line: u64, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{source} line {line}: {what} is at most {} bytes (1 MiB); \
             is this a key per line?",
            MAX_KEY_BYTES
        ),
    )
}

#[cfg(test)]
mod tests;
