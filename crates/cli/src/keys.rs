//! Keys in, one line per key out: where `lookup`, `token` and `slot` get
//! their keys, so all three stream the same way.
//!
//! Keys come from the arguments or, with none, from stdin one per line.
//! Keys are bytes: a trailing `\n` or `\r\n` is not part of the key,
//! anything else is. They are handed out in blocks of at most [`BLOCK`],
//! as slices of one read buffer ([`crate::lines`]): nothing is allocated
//! per key.
//!
//! Streaming: whenever the keys read so far are all the input has ready
//! (the next read may wait), the pending keys are answered and the output
//! flushed before that read. A program that writes a key and waits for its
//! answer gets it at once, while input that streams in fast still goes in
//! blocks of [`BLOCK`] keys, flushed once per read (128 KiB).
//! `--line-buffered` flushes after every key.
//!
//! `--key-format hex` ([`KeyFormat::Hex`], `lookup` and `token`): each
//! key is given as the hex of its bytes (an optional `0x`), so that a key
//! holding a newline or a tab can come on stdin; it is decoded before the
//! command sees it, and a line that is not hex is refused with its number
//! (exit 65).
//!
//! Cost: O(bytes) per key for reading, plus O(bytes) for hex decoding into
//! buffers reused from block to block.

use std::io::{self, IsTerminal, Write};

use crate::answers;
pub use crate::answers::write_escaped;
use crate::lines::for_each_line_block;
pub use crate::lines::{BLOCK, Block};

pub use crate::lines::MAX_KEY_BYTES;

/// The buffered stdout every key-per-line command writes to.
pub type Out = answers::Out;

/// Stdout behind one 64 KiB buffer. Cost: one allocation.
pub fn stdout() -> Out {
    answers::Out::new(io::stdout().lock())
}

/// Flushes `out` when `flush` is set (the input has no more keys ready).
/// Cost: one write when set.
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
    /// Tells a person at a terminal that keys are read from stdin. O(1).
    pub fn prompt(&self) {
        if self.args.is_empty() && io::stdin().is_terminal() {
            say!("ringwise: reading keys from stdin, one per line; Ctrl-D to end");
        }
    }

    /// Calls `visit` with the keys in blocks of at most [`BLOCK`]: the
    /// arguments, or stdin's lines without their line ends. Its second
    /// argument says "flush after this block": the input has no more keys
    /// ready (or `--line-buffered`), so answers must not wait in a buffer.
    /// A read error comes after the keys before it were visited. Cost:
    /// O(bytes read), nothing allocated per key.
    pub fn for_each_block<E: From<io::Error>>(
        &self,
        mut visit: impl FnMut(Block<'_>, bool) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.args.is_empty() {
            let keys: Vec<&[u8]> = self.args.iter().map(|k| k.as_bytes()).collect();
            return keys
                .chunks(BLOCK)
                .try_for_each(|block| visit(Block::unchecked(block), false));
        }
        let stdin = io::stdin();
        for_each_line_block(stdin.lock(), MAX_KEY_BYTES, self.line_buffered, visit)
    }
}

impl Keys<'_> {
    /// [`Keys::for_each_block`] with each key decoded as `format` says;
    /// the first key that is not hex is an `InvalidData` error naming its
    /// number (from 1), after the keys before it were visited. Cost: O(bytes)
    /// for decoding into buffers reused from block to block.
    pub fn for_each_decoded_block<E: From<io::Error>>(
        &self,
        format: KeyFormat,
        mut visit: impl FnMut(Block<'_>, bool) -> Result<(), E>,
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
                    visit(Block::unchecked(&view(&decoded[..i])), true)?;
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
            visit(Block::unchecked(&view(&decoded[..block.len()])), flush)
        })
    }
}

/// The decoded keys as the slices `visit` takes: one `Vec` a block.
fn view(decoded: &[Vec<u8>]) -> Vec<&[u8]> {
    decoded.iter().map(Vec::as_slice).collect()
}

/// Lowercase hex of `bytes` (JSON's `key_hex` for keys that are not UTF-8).
/// O(len).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
