//! `ringwise token`: the Cassandra token of each partition key.
//!
//! The token is what Cassandra's `Murmur3Partitioner` gives the key's
//! *serialised* bytes (MurmurHash3 x64_128 with Cassandra's sign-extension
//! quirk, [`ringwise::cassandra_token`]), a signed 64-bit number as
//! `nodetool ring` and `SELECT token(...)` print it.
//!
//! What the bytes are: `--type T[,T...]` reads each key as CQL literals of
//! those types and serialises them as Cassandra does
//! ([`ringwise::CqlType`], [`ringwise::partition_key_into`]): `--type int
//! 42` is `token(42)` of an `int` column. Several types make a composite
//! partition key, its columns split at `:` or at `--composite SEP`.
//! Without `--type` a key is text, its bytes as given (`token 42` is the
//! token of the text '42', not of the int 42), and `--composite SEP`
//! splits it into text columns. `--key-format hex` gives the key's raw
//! bytes in hex instead.
//!
//! Keys come and answers go exactly as in `lookup` (the shared
//! [`crate::keys`] code): arguments or stdin lines, `KEY<TAB>TOKEN` text
//! lines with the same escaping, or JSON lines `{"version":2,"key":..,
//! "token":"-88.."}` (the token a decimal string; `key_hex` for keys that
//! are not UTF-8), flushed whenever
//! the input has no more keys ready. A key that is not of its type is one
//! error line naming the key (by number and text), the type and what a
//! literal of it looks like, exit 65; the tokens of the keys before it
//! are written first.
//!
//! Cost: one Murmur3 pass per key, O(key length); with `--type` or
//! `--composite` the serialised key is built in one buffer reused from key
//! to key (a `varint` or `decimal` literal costs O(digits²/72)).

use std::io::{self, Write};

use anyhow::anyhow;
use clap::builder::NonEmptyStringValueParser;
use ringwise::{CqlType, cassandra_token, composite_partition_key, partition_key_into};
use serde::Serialize;

use crate::Failure;
use crate::format::{Format, JSON_VERSION, Json, write_json};
use crate::keys::{self, KeyFormat, Keys, hex, write_escaped};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read each key as a CQL literal of this type and serialise it as
    /// Cassandra does: tinyint, smallint, int, bigint, varint, decimal,
    /// float, double, boolean, text, varchar, ascii, blob (hex), uuid,
    /// timeuuid, date, timestamp, inet. Several types (`--type int,text`)
    /// make a composite partition key, its columns split at `:` (or at
    /// --composite SEP). Without --type a key is text: `token 42` is the
    /// token of the text '42', not of the int 42.
    #[arg(long = "type", value_name = "TYPE[,TYPE...]", value_delimiter = ',',
          value_parser = parse_type)]
    types: Vec<CqlType>,
    /// How keys are written: as they are (text), or as the hex of their
    /// bytes (hex: `0a` is the key holding one newline byte; not with
    /// --type or --composite).
    #[arg(long, value_name = "FORMAT", default_value = "text",
          conflicts_with_all = ["types", "composite"])]
    key_format: KeyFormat,
    /// Split each key at SEP into the columns of a composite partition key,
    /// e.g. `--composite :` makes `user:42` the key ("user", "42"); each
    /// column holds at most 65535 bytes. Without --type the columns are
    /// text and a key without SEP is one column; with --type there is one
    /// column per type (the default SEP for several types is `:`).
    #[arg(long, value_name = "SEP", value_parser = NonEmptyStringValueParser::new())]
    composite: Option<String>,
    /// Flush the output after every key (by default it is flushed whenever
    /// the input has no more keys ready).
    #[arg(long)]
    line_buffered: bool,
    /// Output: `KEY<TAB>TOKEN` lines (tab, newline, CR and backslash in
    /// keys escaped as \t \n \r \\), or one JSON object per line.
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
    /// Partition keys; with none, read keys from stdin, one per line.
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
    /// A decimal string: a JSON number this large is rounded by most
    /// tools (jq, JavaScript: -8839064797231613815 reads back as
    /// -8839064797231614000).
    token: String,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let source = Keys {
        args: &args.keys,
        line_buffered: args.line_buffered,
    };
    source.prompt();
    let separator = match (&args.composite, args.types.len()) {
        (Some(separator), _) => Some(separator.as_bytes()),
        (None, 0 | 1) => None,
        (None, _) => Some(&b":"[..]),
    };
    let mut out = keys::stdout();
    // The serialised key, one buffer for every key.
    let mut serialized = Vec::new();
    // Keys counted from 1, for the error that names one.
    let mut number = 0u64;
    let result = source.for_each_decoded_block(args.key_format, |block, flush| {
        for key in block {
            number += 1;
            let token = match (args.types.as_slice(), separator) {
                ([], None) => cassandra_token(key),
                ([], Some(separator)) => composite_token(key, separator, number)?,
                (types, separator) => {
                    let columns = match separator {
                        Some(separator) => split(key, separator),
                        None => vec![&key[..]],
                    };
                    partition_key_into(types, &columns, &mut serialized).map_err(|e| {
                        let hint = match (types.len() > 1, args.composite.is_none()) {
                            (true, true) => {
                                " (columns are split at `:`; --composite SEP chooses another \
                                 separator)"
                            }
                            _ => "",
                        };
                        match types.len() {
                            1 => Failure::data(anyhow!("key {number}: {e}")),
                            _ => {
                                Failure::data(anyhow!("key {number} ({}): {e}{hint}", preview(key)))
                            }
                        }
                    })?;
                    cassandra_token(&serialized)
                }
            };
            print(&mut out, args.format, key, token).map_err(Failure::io)?;
        }
        keys::flush_if(&mut out, flush).map_err(Failure::io)
    });
    // The tokens before a bad key are written before its error.
    let flushed = out.flush().map_err(Failure::io);
    result.and(flushed)
}

/// The token of `key` split at `separator` into a composite partition key.
fn composite_token(key: &[u8], separator: &[u8], number: u64) -> Result<i64, Failure> {
    let columns = split(key, separator);
    let serialized = composite_partition_key(&columns).ok_or_else(|| {
        let (column, long) = columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.len() > usize::from(u16::MAX))
            .map_or((0, 0), |(i, c)| (i + 1, c.len()));
        Failure::data(anyhow!(
            "key {number} ({}): column {column} of the composite key is {long} bytes; \
             Cassandra serializes a column's length in 16 bits, so each holds at most \
             65535 bytes",
            preview(key)
        ))
    })?;
    Ok(cassandra_token(&serialized))
}

/// A `--type` name, for clap.
fn parse_type(name: &str) -> Result<CqlType, String> {
    CqlType::from_name(name).map_err(|e| e.to_string())
}

/// `key` split at every `separator` (not empty).
fn split<'k>(key: &'k [u8], separator: &[u8]) -> Vec<&'k [u8]> {
    let mut columns = Vec::new();
    let mut rest = key;
    while let Some(at) = rest
        .windows(separator.len())
        .position(|window| window == separator)
    {
        columns.push(&rest[..at]);
        rest = &rest[at + separator.len()..];
    }
    columns.push(rest);
    columns
}

/// The start of a key for an error message, escaped like the output.
fn preview(key: &[u8]) -> String {
    const SHOWN: usize = 40;
    let mut text = Vec::new();
    let _ = write_escaped(&mut text, &key[..key.len().min(SHOWN)]);
    let text = String::from_utf8_lossy(&text);
    match key.len() > SHOWN {
        true => format!("{text:?}... of {} bytes", key.len()),
        false => format!("{text:?}"),
    }
}

/// One `KEY<TAB>TOKEN` line, or one JSON line.
fn print(out: &mut keys::Out, format: Format, key: &[u8], token: i64) -> io::Result<()> {
    if format == Format::Json {
        let text = std::str::from_utf8(key).ok();
        let line = JsonLine {
            version: JSON_VERSION,
            key: text,
            key_hex: text.is_none().then(|| hex(key)),
            token: token.to_string(),
        };
        return write_json(out, &line, Json::Line);
    }
    out.push_escaped(key);
    write!(out, "\t{token}")?;
    out.end_line()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_at_every_separator() {
        assert_eq!(split(b"user:42", b":"), [&b"user"[..], b"42"]);
        assert_eq!(split(b"a::b::", b"::"), [&b"a"[..], b"b", b""]);
        assert_eq!(split(b"plain", b":"), [&b"plain"[..]]);
    }
}
