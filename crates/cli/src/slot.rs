//! `ringwise slot`: the Redis Cluster hash slot of each key, as
//! `CLUSTER KEYSLOT` answers it.
//!
//! The slot is CRC16/XMODEM of the key's hash tag, `& 16383`
//! ([`ringwise::key_slot`], Redis's `keyHashSlot`): the bytes between the
//! first `{` and the first `}` after it when there are any, else the whole
//! key (so `foo{}{bar}` hashes whole). No cluster is needed: the slot does
//! not depend on who owns it (`lookup` on a `slots` cluster names the
//! owner).
//!
//! Keys come and answers go exactly as in `lookup` and `token` (the shared
//! [`crate::keys`] code): arguments or stdin lines, `KEY<TAB>SLOT` text
//! lines with the same escaping, or JSON lines `{"version":1,"key":..,
//! "slot":..}` (`key_hex` for keys that are not UTF-8), flushed whenever the
//! input has no more keys ready.
//!
//! Cost: one CRC16 pass over the tag (at most the key), O(key length);
//! nothing is allocated per key beyond the output.

use std::io::{self, Write};

use ringwise::key_slot;
use serde::Serialize;

use crate::Failure;
use crate::format::{Format, JSON_VERSION, Json, write_json};
use crate::keys::{self, Keys, hex};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Flush the output after every key (by default it is flushed whenever
    /// the input has no more keys ready).
    #[arg(long)]
    line_buffered: bool,
    /// Output: `KEY<TAB>SLOT` lines (tab, newline, CR and backslash in
    /// keys escaped as \t \n \r \\), or one JSON object per line.
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
    /// Keys; with none, read keys from stdin, one per line.
    keys: Vec<String>,
}

/// A JSON line, `"version"` first as in every JSON output.
#[derive(Serialize)]
struct JsonLine<'a> {
    version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_hex: Option<String>,
    slot: u16,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let source = Keys {
        args: &args.keys,
        line_buffered: args.line_buffered,
    };
    source.prompt();
    let mut out = keys::stdout();
    let result = source.for_each_block(|block, flush| {
        for key in block {
            print(&mut out, args.format, key, key_slot(key)).map_err(Failure::io)?;
        }
        keys::flush_if(&mut out, flush).map_err(Failure::io)
    });
    // The slots before a read error are written before it.
    let flushed = out.flush().map_err(Failure::io);
    result.and(flushed)
}

/// One `KEY<TAB>SLOT` line, or one JSON line.
fn print(out: &mut keys::Out, format: Format, key: &[u8], slot: u16) -> io::Result<()> {
    if format == Format::Json {
        let text = std::str::from_utf8(key).ok();
        let line = JsonLine {
            version: JSON_VERSION,
            key: text,
            key_hex: text.is_none().then(|| hex(key)),
            slot,
        };
        return write_json(out, &line, Json::Line);
    }
    out.push_escaped(key);
    write!(out, "\t{slot}")?;
    out.end_line()
}
