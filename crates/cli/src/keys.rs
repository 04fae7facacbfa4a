//! Keys in, one line per key out: the reading, escaping and flushing that
//! `lookup` and `token` share, so both stream the same way.
//!
//! Keys come from the arguments or, with none, from stdin one per line.
//! Keys are bytes: a trailing `\n` or `\r\n` is not part of the key,
//! anything else is. They are handed out in blocks of at most [`BLOCK`],
//! with the line buffers reused from block to block.
//!
//! Streaming: whenever the keys read so far are all the input has ready
//! (the reader's buffer is empty, so the next read may wait), the pending
//! keys are answered and the output flushed before that read. A program
//! that writes a key and waits for its answer gets it at once, while input
//! that streams in fast still goes in blocks of [`BLOCK`] keys, flushed
//! once per 64 KiB read. `--line-buffered` flushes after every key.
//!
//! `--key-format hex` ([`KeyFormat::Hex`], `lookup` and `token`): each
//! key is given as the hex of its bytes (an optional `0x`), so that a key
//! holding a newline or a tab can come on stdin; it is decoded before the
//! command sees it, and a line that is not hex is refused with its number
//! (exit 65).

use std::io::{self, BufRead, BufWriter, IsTerminal, Read, Write};

/// Keys read and answered together.
pub const BLOCK: usize = 1024;

/// A block also ends once its keys hold this many bytes (1 MiB).
pub const BLOCK_BYTES: usize = 1 << 20;

/// A line buffer that grew past this (4 KiB) is replaced by a small one
/// after its block.
const SHRINK_ABOVE: usize = 4 << 10;

/// The longest key read from stdin: 1 MiB (Memcached allows 250 bytes,
/// Redis 512 MB but nobody routes those by key). A longer line is refused
/// with its line number (exit 65) after reading at most this much of it,
/// so a stream without newlines cannot grow one buffer without bound.
pub const MAX_KEY_BYTES: usize = 1 << 20;

/// The buffered stdout every key-per-line command writes to.
pub type Out = BufWriter<io::StdoutLock<'static>>;

/// Stdout behind a 64 KiB buffer.
pub fn stdout() -> Out {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// Flushes `out` when `flush` is set (the input has no more keys ready).
pub fn flush_if(out: &mut Out, flush: bool) -> io::Result<()> {
    match flush {
        true => out.flush(),
        false => Ok(()),
    }
}

/// How each key is written on input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyFormat {
    /// The key's bytes as they are.
    Text,
    /// The hex of the key's bytes, with or without `0x` (`0a` is the
    /// one-byte key holding a newline; an empty line is the empty key).
    Hex,
}

/// Where keys come from.
#[derive(Debug, Clone, Copy)]
pub struct Keys<'a> {
    /// The keys on the command line; empty means stdin.
    pub args: &'a [String],
    /// Flush after every key read from stdin.
    pub line_buffered: bool,
}

impl Keys<'_> {
    /// Tells a person at a terminal that keys are read from stdin.
    pub fn prompt(&self) {
        if self.args.is_empty() && io::stdin().is_terminal() {
            say!("ringwise: reading keys from stdin, one per line; Ctrl-D to end");
        }
    }

    /// Calls `visit` with the keys in blocks of at most [`BLOCK`]: the
    /// arguments, or stdin's lines without their line ends. Its second
    /// argument says "flush after this block": the input has no more keys
    /// ready (or `--line-buffered`), so answers must not wait in a buffer.
    /// A read error comes after the keys before it were visited.
    pub fn for_each_block<E: From<io::Error>>(
        &self,
        mut visit: impl FnMut(&[Vec<u8>], bool) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.args.is_empty() {
            let keys: Vec<Vec<u8>> = self.args.iter().map(|k| k.as_bytes().to_vec()).collect();
            return keys.chunks(BLOCK).try_for_each(|block| visit(block, false));
        }
        let stdin = io::stdin();
        let mut input = io::BufReader::with_capacity(1 << 16, stdin.lock());
        let mut block: Vec<Vec<u8>> = Vec::with_capacity(BLOCK);
        let mut len = 0;
        // Bytes of the keys in the block: a block also ends at BLOCK_BYTES,
        // so 1,024 keys of 1 MiB never sit in memory at once.
        let mut held = 0;
        let mut number = 0u64;
        loop {
            if len == block.len() {
                block.push(Vec::with_capacity(64));
            }
            let line = &mut block[len];
            match read_line(&mut input, line, MAX_KEY_BYTES) {
                Ok(Line::End) => break,
                Ok(Line::Read) => number += 1,
                Ok(Line::TooLong) => {
                    visit(&block[..len], true)?;
                    return Err(too_long("stdin", number + 1, "a key").into());
                }
                Err(e) => {
                    visit(&block[..len], true)?;
                    return Err(e.into());
                }
            }
            held += block[len].len();
            len += 1;
            // Nothing left in the buffer: the next read goes to the OS and
            // may wait for the writer, which may be waiting for these answers.
            let idle = self.line_buffered || input.buffer().is_empty();
            if len == BLOCK || held >= BLOCK_BYTES || idle {
                visit(&block[..len], idle)?;
                // A buffer a long key grew is given back, so the block holds
                // at most BLOCK × SHRINK_ABOVE bytes between long keys.
                for line in &mut block[..len] {
                    if line.capacity() > SHRINK_ABOVE {
                        *line = Vec::with_capacity(64);
                    }
                }
                len = 0;
                held = 0;
            }
        }
        visit(&block[..len], true)
    }
}

impl Keys<'_> {
    /// [`Keys::for_each_block`] with each key decoded as `format` says;
    /// the first key that is not hex is an `InvalidData` error naming its
    /// number (from 1), after the keys before it were visited.
    pub fn for_each_decoded_block<E: From<io::Error>>(
        &self,
        format: KeyFormat,
        mut visit: impl FnMut(&[Vec<u8>], bool) -> Result<(), E>,
    ) -> Result<(), E> {
        if format == KeyFormat::Text {
            return self.for_each_block(visit);
        }
        let mut decoded: Vec<Vec<u8>> = Vec::new();
        let mut number = 0u64;
        self.for_each_block(|block, flush| {
            decoded.resize_with(decoded.len().max(block.len()), Vec::new);
            for (i, key) in block.iter().enumerate() {
                number += 1;
                let out = &mut decoded[i];
                out.clear();
                if let Err(why) = ringwise::decode_hex_into(key, out) {
                    visit(&decoded[..i], true)?;
                    let shown = String::from_utf8_lossy(&key[..key.len().min(40)]);
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "key {number} ({shown:?}): --key-format hex takes the key's bytes \
                             as hex digits, like 6b65790a or 0x6b65790a: {why}"
                        ),
                    )
                    .into());
                }
            }
            visit(&decoded[..block.len()], flush)
        })
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
/// newlines (`/dev/zero`) cannot grow the buffer past `max`. `lookup`,
/// `token` (stdin) and `plan --keys FILE` read keys through it.
pub fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    line.clear();
    let limit = max as u64 + 3;
    if input.by_ref().take(limit).read_until(b'\n', line)? == 0 {
        return Ok(Line::End);
    }
    strip_newline(line);
    Ok(match line.len() > max {
        true => Line::TooLong,
        false => Line::Read,
    })
}

/// The error of a key line over [`MAX_KEY_BYTES`] (`what` names what the
/// line holds): `InvalidData`, which the CLI reports as bad input (exit
/// 65), not as an I/O failure.
pub fn too_long(source: &str, line: u64, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{source} line {line}: {what} is at most {MAX_KEY_BYTES} bytes (1 MiB); \
             is this a key per line?"
        ),
    )
}

/// Drops a trailing `\n`, then a trailing `\r`.
fn strip_newline(line: &mut Vec<u8>) {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
}

/// Writes `bytes` with `\\`, tab, newline and CR escaped, so that tabs
/// and newlines in the output only ever separate fields and lines. Runs of
/// plain bytes go out in one write.
pub fn write_escaped(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let mut rest = bytes;
    while let Some(at) = rest
        .iter()
        .position(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        out.write_all(&rest[..at])?;
        out.write_all(match rest[at] {
            b'\\' => b"\\\\",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            _ => b"\\r",
        })?;
        rest = &rest[at + 1..];
    }
    out.write_all(rest)
}

/// Lowercase hex of `bytes` (JSON's `key_hex` for keys that are not UTF-8).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
