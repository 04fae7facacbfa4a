//! `--format`: the one output-format enum of every command, and the one
//! JSON writer.
//!
//! Each command accepts the formats it can write ([`Format::parser`]):
//! `lookup` and `inspect` text and JSON, `simulate` also CSV. Any other
//! value is a usage error (exit 2) that lists the accepted ones.

use std::fmt;
use std::io::{self, Write};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use serde::Serialize;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Lines or tables for a terminal.
    Text,
    /// JSON.
    Json,
    /// CSV sections.
    Csv,
}

impl Format {
    /// Every format, in help order.
    pub const ALL: [Format; 3] = [Format::Text, Format::Json, Format::Csv];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
        }
    }

    /// A `--format` value parser that accepts only `accepted`; help lists
    /// them as the possible values.
    pub fn parser(accepted: &'static [Format]) -> impl TypedValueParser<Value = Format> {
        PossibleValuesParser::new(accepted.iter().map(|f| f.name())).try_map(|name| {
            Format::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| format!("unknown format {name:?}"))
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The schema version every JSON output carries as `"version"`; raised
/// when a field changes meaning or goes away (new fields do not raise it).
/// Version 2 writes every 64-bit token, point and ring position as a
/// decimal string ([`exact`]); version 1 wrote them as numbers, which jq
/// and JavaScript round to 53 bits.
pub const JSON_VERSION: u32 = 2;

/// A 64-bit token, point or ring position as JSON writes it: a decimal
/// string, exact through every JSON tool (a number above 2^53 is not:
/// `jq .token` prints -8839064797231614000 for -8839064797231613815).
pub fn exact(value: impl fmt::Display) -> serde_json::Value {
    serde_json::Value::String(value.to_string())
}

/// The schema version of `simulate`'s report, which holds no 64-bit
/// value and so stayed at 1 when [`JSON_VERSION`] became 2 (the Python
/// package's `simulate` writes the same).
pub const REPORT_JSON_VERSION: u32 = 1;

/// A report with `"version"` ([`REPORT_JSON_VERSION`]) first, then the
/// fields of `value` (a struct or map).
#[derive(Serialize)]
pub struct Versioned<'a, T> {
    version: u32,
    #[serde(flatten)]
    value: &'a T,
}

impl<'a, T> Versioned<'a, T> {
    /// `value`, versioned with [`REPORT_JSON_VERSION`].
    pub fn new(value: &'a T) -> Self {
        Versioned {
            version: REPORT_JSON_VERSION,
            value,
        }
    }
}

/// `x` rounded to `decimals` when that shows it (0.001 to 10^7), in
/// scientific notation otherwise: never hundreds of digits, never `inf`
/// written as a number.
pub fn readable(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    // -0.0 (an empty f64 sum) reads as 0, not "-0.00".
    let x = if x == 0.0 { 0.0 } else { x };
    if x == 0.0 || (1e-3..1e7).contains(&x.abs()) {
        return format!("{x:.decimals$}");
    }
    format!("{x:.2e}")
}

/// How [`write_json`] lays a value out.
#[derive(Debug, Clone, Copy)]
pub enum Json {
    /// One compact line (a `lookup` line, the `inspect` document).
    Line,
    /// Indented over many lines (the `simulate` report).
    Pretty,
}

/// Writes `value` as JSON, then a newline: the binary's only JSON writer.
pub fn write_json<W: Write>(out: &mut W, value: &impl Serialize, layout: Json) -> io::Result<()> {
    match layout {
        Json::Line => serde_json::to_writer(&mut *out, value)?,
        Json::Pretty => serde_json::to_writer_pretty(&mut *out, value)?,
    }
    out.write_all(b"\n")
}
