//! CQL literals serialised as Cassandra serialises a partition key, so that
//! `cassandra_token(bytes)` is the `token(...)` Cassandra computes.
//!
//! Cassandra hashes the bytes of the key's *serialised* value, not its
//! text: the `int` 42 is the four bytes `00 00 00 2a`
//! (token -7160136740246525330), the `text` '42' the two bytes `34 32`
//! (token -5291771196513038484). [`CqlType::serialize_into`] turns one
//! literal into those bytes; [`partition_key_into`] joins the columns of a
//! composite partition key.
//!
//! # The serialisations (Cassandra's `*Serializer` classes, the CQL
//! native protocol §6; the DataStax driver's `cassandra/cqltypes.py`)
//!
//! | type | literal | bytes |
//! |---|---|---|
//! | `tinyint`, `smallint`, `int`, `bigint` | `-?[0-9]+` in range | 1, 2, 4, 8 bytes, big-endian two's complement |
//! | `varint` | `-?[0-9]+` | the shortest big-endian two's complement (Java's `BigInteger.toByteArray`; 0 is `00`) |
//! | `decimal` | `-?[0-9]*(.[0-9]*)?([eE][+-]?[0-9]+)?`, a digit somewhere before the exponent | scale as 4-byte big-endian `int`, then the unscaled value as a `varint` (Java's `BigDecimal(String)`: `1.50` is 150 scale 2, `1.5e3` 15 scale -2) |
//! | `float`, `double` | a CQL number, `NaN`, `Infinity`, `-Infinity` | IEEE 754 binary32 / binary64, big-endian, correctly rounded; every NaN as Java's canonical one |
//! | `boolean` | `true` or `false`, any case | `01` or `00` |
//! | `text`, `varchar` | any UTF-8 | the UTF-8 bytes |
//! | `ascii` | bytes 0 to 127 | the bytes |
//! | `blob` | hex digits, with or without `0x`, an even number | the bytes |
//! | `uuid`, `timeuuid` | `8-4-4-4-12` hex digits (`timeuuid`: version 1) | the 16 bytes |
//! | `date` | `YYYY-MM-DD` (proleptic Gregorian, years `-?[0-9]{4,}`), or the raw unsigned day number 0 to 2^32-1 | days since 1970-01-01 plus 2^31, 4-byte big-endian unsigned |
//! | `timestamp` | milliseconds since the epoch `-?[0-9]+`, or `YYYY-MM-DD[( \|T)hh:mm[:ss[.fff]]]ZONE` with ZONE `Z`, `±hh`, `±hhmm` or `±hh:mm` | milliseconds, 8-byte big-endian |
//! | `inet` | dotted-quad IPv4 or RFC 4291 IPv6 | 4 or 16 bytes (an IPv4-mapped IPv6 address is 4, as Java's `InetAddress` makes it) |
//!
//! Every type but `text` and `blob` may be written inside single quotes, as
//! CQL writes dates, timestamps and addresses (`'2024-05-01'`).
//!
//! A composite partition key (`PRIMARY KEY ((a, b), ...)`) is Cassandra's
//! `CompositeType`: for each column a 2-byte big-endian length, the
//! column's bytes, and a 0 byte; a key of one column is its bytes alone.
//!
//! # What is refused, and why
//!
//! - A timestamp or date *text* without a zone: Cassandra reads it in the
//!   server's time zone, which this crate cannot know; `Z` or `+0000` says
//!   UTC. A date has no zone (`SimpleDateSerializer` reads it as UTC).
//! - Fractions of a second other than exactly three digits: Java's
//!   `SimpleDateFormat` reads `.5` as 5 ms, not 500; three digits are read
//!   the same by everyone.
//! - `now` and `currentTimestamp()`: not a fixed key.
//! - A `varint` or `decimal` of more than [`MAX_NUMBER_DIGITS`] digits: its
//!   bytes would pass Cassandra's 65535-byte key limit (and the parse is
//!   quadratic in the digits).
//!
//! Cost: O(literal length) for every type but `varint` and `decimal`,
//! O(digits²/72) for those (base-10⁹ chunks into 32-bit limbs). No I/O.

use std::fmt;

/// The most digits a `varint` or `decimal` literal may have: 157826 digits
/// are 65535 bytes, Cassandra's limit for a partition key.
pub const MAX_NUMBER_DIGITS: usize = 157_826;

/// A CQL type that can be a partition key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CqlType {
    Tinyint,
    Smallint,
    Int,
    Bigint,
    Varint,
    Decimal,
    Float,
    Double,
    Boolean,
    Text,
    Varchar,
    Ascii,
    Blob,
    Uuid,
    Timeuuid,
    Date,
    Timestamp,
    Inet,
}

/// A literal that is not of its type (or a type name that is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqlError {
    /// What was wrong, with what a valid literal looks like.
    pub message: String,
}

impl fmt::Display for CqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CqlError {}

impl CqlType {
    /// Every type, in the order of the module doc's table.
    pub const ALL: &'static [CqlType] = &[
        CqlType::Tinyint,
        CqlType::Smallint,
        CqlType::Int,
        CqlType::Bigint,
        CqlType::Varint,
        CqlType::Decimal,
        CqlType::Float,
        CqlType::Double,
        CqlType::Boolean,
        CqlType::Text,
        CqlType::Varchar,
        CqlType::Ascii,
        CqlType::Blob,
        CqlType::Uuid,
        CqlType::Timeuuid,
        CqlType::Date,
        CqlType::Timestamp,
        CqlType::Inet,
    ];

    /// The type's CQL name, lowercase.
    pub fn name(self) -> &'static str {
        match self {
            CqlType::Tinyint => "tinyint",
            CqlType::Smallint => "smallint",
            CqlType::Int => "int",
            CqlType::Bigint => "bigint",
            CqlType::Varint => "varint",
            CqlType::Decimal => "decimal",
            CqlType::Float => "float",
            CqlType::Double => "double",
            CqlType::Boolean => "boolean",
            CqlType::Text => "text",
            CqlType::Varchar => "varchar",
            CqlType::Ascii => "ascii",
            CqlType::Blob => "blob",
            CqlType::Uuid => "uuid",
            CqlType::Timeuuid => "timeuuid",
            CqlType::Date => "date",
            CqlType::Timestamp => "timestamp",
            CqlType::Inet => "inet",
        }
    }

    /// The type called `name` (any case, as CQL reads type names).
    pub fn from_name(name: &str) -> Result<CqlType, CqlError> {
        let lower = name.trim().to_ascii_lowercase();
        CqlType::ALL
            .iter()
            .copied()
            .find(|t| t.name() == lower)
            .ok_or_else(|| CqlError {
                message: format!(
                    "{name:?} is not a CQL type ringwise serialises; the types are {}",
                    CqlType::ALL
                        .iter()
                        .map(|t| t.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }

    /// What a valid literal of the type looks like, for error messages.
    pub fn expected(self) -> &'static str {
        match self {
            CqlType::Tinyint => "an integer from -128 to 127, like 42",
            CqlType::Smallint => "an integer from -32768 to 32767, like 42",
            CqlType::Int => "an integer from -2147483648 to 2147483647, like 42",
            CqlType::Bigint => {
                "an integer from -9223372036854775808 to 9223372036854775807, like 42"
            }
            CqlType::Varint => "an integer of any size, like -12345678901234567890",
            CqlType::Decimal => "a decimal number, like 3.14, -0.5 or 1.5e3",
            CqlType::Float | CqlType::Double => {
                "a number, like 3.14, -2, 1e-3, NaN, Infinity or -Infinity"
            }
            CqlType::Boolean => "true or false",
            CqlType::Text | CqlType::Varchar => "UTF-8 text",
            CqlType::Ascii => "text of ASCII characters only (bytes 0 to 127)",
            CqlType::Blob => "hex digits, an even number of them, like 0xcafe or cafe",
            CqlType::Uuid => "a UUID, like 123e4567-e89b-12d3-a456-426614174000",
            CqlType::Timeuuid => {
                "a version-1 UUID (the third group starts with 1), like \
                 123e4567-e89b-11d3-a456-426614174000"
            }
            CqlType::Date => {
                "a date YYYY-MM-DD, like 2024-05-01, or the raw day number 0 to 4294967295 \
                 (2147483648 is 1970-01-01)"
            }
            CqlType::Timestamp => {
                "milliseconds since 1970, like 1714521600000, or a date-time with its zone, \
                 like 2024-05-01T12:30:00.000Z or '2024-05-01 12:30+0200'"
            }
            CqlType::Inet => "an IPv4 or IPv6 address, like 10.0.0.1 or 2001:db8::1",
        }
    }

    /// Appends the serialised value of `literal` to `out`; on error `out`
    /// is as it was.
    pub fn serialize_into(self, literal: &[u8], out: &mut Vec<u8>) -> Result<(), CqlError> {
        let start = out.len();
        let result = self.serialize_unchecked(literal, out);
        if result.is_err() {
            out.truncate(start);
        }
        result.map_err(|why| {
            let shown = String::from_utf8_lossy(&literal[..literal.len().min(64)]);
            let more = match literal.len() > 64 {
                true => format!("... ({} bytes)", literal.len()),
                false => String::new(),
            };
            let why = match why.is_empty() {
                true => String::new(),
                false => format!(" ({why})"),
            };
            CqlError {
                message: format!(
                    "{shown:?}{more} is not a CQL {}{why}: give {}",
                    self.name(),
                    self.expected()
                ),
            }
        })
    }

    /// The serialisation; the error is the reason beyond "not of the type"
    /// (empty when the expected form says it all).
    fn serialize_unchecked(self, literal: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            CqlType::Text | CqlType::Varchar => {
                std::str::from_utf8(literal).map_err(|_| "not UTF-8".to_owned())?;
                out.extend_from_slice(literal);
                return Ok(());
            }
            CqlType::Blob => return blob(literal, out),
            _ => {}
        }
        let text = std::str::from_utf8(unquote(literal)).map_err(|_| String::new())?;
        match self {
            CqlType::Tinyint => integer(text, out, 1),
            CqlType::Smallint => integer(text, out, 2),
            CqlType::Int => integer(text, out, 4),
            CqlType::Bigint => integer(text, out, 8),
            CqlType::Varint => varint(text, out),
            CqlType::Decimal => decimal(text, out),
            CqlType::Float => {
                let value = float_literal(text)?
                    .parse::<f32>()
                    .map_err(|_| String::new())?;
                let bits = match value.is_nan() {
                    true => 0x7fc0_0000,
                    false => value.to_bits(),
                };
                out.extend_from_slice(&bits.to_be_bytes());
                Ok(())
            }
            CqlType::Double => {
                let value = float_literal(text)?
                    .parse::<f64>()
                    .map_err(|_| String::new())?;
                let bits = match value.is_nan() {
                    true => 0x7ff8_0000_0000_0000,
                    false => value.to_bits(),
                };
                out.extend_from_slice(&bits.to_be_bytes());
                Ok(())
            }
            CqlType::Boolean => {
                let value = match text.to_ascii_lowercase().as_str() {
                    "true" => 1,
                    "false" => 0,
                    _ => return Err(String::new()),
                };
                out.push(value);
                Ok(())
            }
            CqlType::Ascii => match text.is_ascii() {
                true => {
                    out.extend_from_slice(text.as_bytes());
                    Ok(())
                }
                false => Err("a byte above 127".to_owned()),
            },
            CqlType::Uuid => uuid(text, out, false),
            CqlType::Timeuuid => uuid(text, out, true),
            CqlType::Date => date(text, out),
            CqlType::Timestamp => timestamp(text, out),
            CqlType::Inet => inet(text, out),
            CqlType::Text | CqlType::Varchar | CqlType::Blob => unreachable!("handled above"),
        }
    }
}

impl std::str::FromStr for CqlType {
    type Err = CqlError;

    fn from_str(name: &str) -> Result<Self, CqlError> {
        CqlType::from_name(name)
    }
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The partition key of `columns`, one literal per type, appended to `out`
/// (cleared first): the column's bytes for one column, Cassandra's
/// `CompositeType` for several. Errors name the column (from 1) when there
/// are several.
pub fn partition_key_into(
    types: &[CqlType],
    columns: &[&[u8]],
    out: &mut Vec<u8>,
) -> Result<(), CqlError> {
    out.clear();
    if types.len() != columns.len() {
        return Err(CqlError {
            message: format!(
                "the key has {} column{} but {} type{} given ({}): give one literal per \
                 column, separated by the composite separator",
                columns.len(),
                if columns.len() == 1 { "" } else { "s" },
                types.len(),
                if types.len() == 1 { " is" } else { "s are" },
                types.iter().map(|t| t.name()).collect::<Vec<_>>().join(",")
            ),
        });
    }
    if let ([ty], [column]) = (types, columns) {
        return ty.serialize_into(column, out);
    }
    for (i, (ty, column)) in types.iter().zip(columns).enumerate() {
        let at = out.len();
        out.extend_from_slice(&[0, 0]);
        ty.serialize_into(column, out).map_err(|e| CqlError {
            message: format!("column {}: {}", i + 1, e.message),
        })?;
        let len = out.len() - at - 2;
        let len = u16::try_from(len).map_err(|_| CqlError {
            message: format!(
                "column {} is {len} bytes serialised; Cassandra stores a column's length in \
                 16 bits, so each holds at most 65535 bytes",
                i + 1
            ),
        })?;
        out[at..at + 2].copy_from_slice(&len.to_be_bytes());
        out.push(0);
    }
    Ok(())
}

/// `literal` without one pair of enclosing single quotes.
fn unquote(literal: &[u8]) -> &[u8] {
    match literal {
        [b'\'', inner @ .., b'\''] => inner,
        _ => literal,
    }
}

/// An optional `-`, then ASCII digits (at least one): the sign and digits.
fn signed_digits(text: &str) -> Option<(bool, &str)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    all_digits.then_some((negative, digits))
}

/// A fixed-width integer of `width` bytes.
fn integer(text: &str, out: &mut Vec<u8>, width: usize) -> Result<(), String> {
    let (negative, digits) = signed_digits(text).ok_or_else(String::new)?;
    let digits = digits.trim_start_matches('0');
    let bits = 8 * width as u32 - 1;
    let out_of_range = || "out of range".to_owned();
    // 20 digits hold every i64 magnitude: more is out of range for any width.
    if digits.len() > 20 {
        return Err(out_of_range());
    }
    let magnitude: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| String::new())?
    };
    let value = if negative { -magnitude } else { magnitude };
    if value < -(1i128 << bits) || value >= (1i128 << bits) {
        return Err(out_of_range());
    }
    out.extend_from_slice(&value.to_be_bytes()[16 - width..]);
    Ok(())
}

/// An unsigned integer of decimal `digits` as 32-bit limbs, least
/// significant first (no limbs for 0).
fn magnitude(digits: &str) -> Result<Vec<u32>, String> {
    let digits = digits.trim_start_matches('0');
    if digits.len() > MAX_NUMBER_DIGITS {
        return Err(format!(
            "{} digits; at most {MAX_NUMBER_DIGITS} make a key within Cassandra's 65535 bytes",
            digits.len()
        ));
    }
    let mut limbs: Vec<u32> = Vec::with_capacity(digits.len() / 9 + 1);
    // Nine digits at a time: 10^9 < 2^32, so one multiply-add per limb.
    let first = digits.len() % 9;
    let mut chunks = Vec::with_capacity(digits.len() / 9 + 1);
    if first > 0 {
        chunks.push(&digits[..first]);
    }
    chunks.extend(
        digits.as_bytes()[first..]
            .chunks(9)
            .map(|c| std::str::from_utf8(c).unwrap_or("0")),
    );
    for chunk in chunks {
        let scale = 10u64.pow(chunk.len() as u32);
        let mut carry: u64 = chunk.parse().unwrap_or(0);
        for limb in &mut limbs {
            let wide = u64::from(*limb) * scale + carry;
            *limb = wide as u32;
            carry = wide >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    Ok(limbs)
}

/// Appends the shortest big-endian two's complement of ±`limbs`.
fn twos_complement(negative: bool, limbs: &[u32], out: &mut Vec<u8>) {
    let mut bytes: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    let lead = bytes.iter().take_while(|&&b| b == 0).count();
    bytes.drain(..lead);
    if bytes.is_empty() {
        out.push(0);
        return;
    }
    // One more byte for the sign, then negation: invert and add one.
    bytes.insert(0, 0);
    if negative {
        let mut carry = true;
        for b in bytes.iter_mut().rev() {
            let (sum, overflow) = (!*b).overflowing_add(u8::from(carry));
            *b = sum;
            carry = carry && overflow;
        }
    }
    // Drop leading bytes that only repeat the sign of the next one.
    let redundant = bytes
        .windows(2)
        .take_while(|w| (w[0] == 0 && w[1] < 0x80) || (w[0] == 0xff && w[1] >= 0x80))
        .count();
    out.extend_from_slice(&bytes[redundant..]);
}

fn varint(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let (negative, digits) = signed_digits(text).ok_or_else(String::new)?;
    twos_complement(negative, &magnitude(digits)?, out);
    Ok(())
}

/// Java's `BigDecimal(String)`: sign, digits with an optional point, an
/// optional exponent; scale = digits after the point - exponent.
fn decimal(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let (negative, rest) = match text.strip_prefix(['-', '+']) {
        Some(rest) => (text.starts_with('-'), rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (mantissa, ""),
    };
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits_only(whole) || !digits_only(fraction) {
        return Err(String::new());
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let unsigned = e.strip_prefix(['-', '+']).unwrap_or(e);
            if unsigned.is_empty() || !digits_only(unsigned) || unsigned.len() > 12 {
                return Err("a bad exponent".to_owned());
            }
            e.parse().map_err(|_| "a bad exponent".to_owned())?
        }
    };
    let scale = fraction.len() as i64 - exponent;
    let scale = i32::try_from(scale).map_err(|_| "its scale is beyond 32 bits".to_owned())?;
    let digits = format!("{whole}{fraction}");
    out.extend_from_slice(&scale.to_be_bytes());
    twos_complement(negative, &magnitude(&digits)?, out);
    Ok(())
}

/// The text of a CQL float literal, in the form Rust's parser reads the
/// same way as Java's `Float.parseFloat`/`Double.parseDouble`.
fn float_literal(text: &str) -> Result<&str, String> {
    match text.to_ascii_lowercase().as_str() {
        "nan" => return Ok("NaN"),
        "infinity" => return Ok("inf"),
        "-infinity" => return Ok("-inf"),
        _ => {}
    }
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok =
        whole.len() + fraction.len() > 0 && digits_only(whole) && digits_only(fraction);
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits_only(e)
    });
    match mantissa_ok && exponent_ok {
        true => Ok(text),
        false => Err(String::new()),
    }
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Hex digits (after an optional `0x`) as bytes, appended to `out`; the
/// error says what is wrong. Also the CLI's `--key-format hex`.
pub fn decode_hex_into(text: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let digits = text
        .strip_prefix(b"0x")
        .or_else(|| text.strip_prefix(b"0X"))
        .unwrap_or(text);
    if digits.len() % 2 == 1 {
        return Err(format!("an odd number of hex digits ({})", digits.len()));
    }
    let start = out.len();
    for (i, pair) in digits.chunks(2).enumerate() {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(high), Some(low)) => out.push(high << 4 | low),
            _ => {
                out.truncate(start);
                let at = 2 * i + usize::from(hex_digit(pair[0]).is_some());
                return Err(format!(
                    "{:?} at digit {} is not a hex digit",
                    char::from(digits[at]),
                    at + 1
                ));
            }
        }
    }
    Ok(())
}

fn blob(literal: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    decode_hex_into(literal, out)
}

fn uuid(text: &str, out: &mut Vec<u8>, time: bool) -> Result<(), String> {
    let bytes = text.as_bytes();
    let dashes_ok = bytes.len() == 36
        && [8, 13, 18, 23].iter().all(|&i| bytes[i] == b'-')
        && bytes
            .iter()
            .enumerate()
            .all(|(i, &b)| [8, 13, 18, 23].contains(&i) || hex_digit(b).is_some());
    if !dashes_ok {
        return Err(String::new());
    }
    if time && bytes[14] != b'1' {
        return Err(format!("version {}, not 1", char::from(bytes[14])));
    }
    let hex: Vec<u8> = bytes.iter().copied().filter(|&b| b != b'-').collect();
    decode_hex_into(&hex, out)
}

/// Days from 1970-01-01 to the proleptic Gregorian `year-month-day`
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` at the start of `text`: the days since the epoch and the
/// rest of the text. Years are `-?[0-9]{4,}` (at most 10 digits).
fn civil_date(text: &str) -> Option<(i64, &str)> {
    let (negative, rest) = match text.strip_prefix(['-', '+']) {
        Some(rest) => (text.starts_with('-'), rest),
        None => (false, text),
    };
    let year_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(4..=10).contains(&year_len) {
        return None;
    }
    let year: i64 = rest[..year_len].parse().ok()?;
    let year = if negative { -year } else { year };
    let rest = rest[year_len..].strip_prefix('-')?;
    let two = |s: &str| -> Option<i64> {
        let b = s.as_bytes();
        (b.len() >= 2 && b[0].is_ascii_digit() && b[1].is_ascii_digit())
            .then(|| i64::from(b[0] - b'0') * 10 + i64::from(b[1] - b'0'))
    };
    let month = two(rest)?;
    let rest = rest[2..].strip_prefix('-')?;
    let day = two(rest)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some((days_from_civil(year, month, day), &rest[2..]))
}

fn date(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    // The raw form: the serialised unsigned number itself.
    if let Some((negative, digits)) = signed_digits(text) {
        let raw: u64 = match (negative, digits.len() <= 10) {
            (false, true) => digits.parse().map_err(|_| String::new())?,
            _ => return Err("a raw day number is from 0 to 4294967295".to_owned()),
        };
        let raw = u32::try_from(raw).map_err(|_| "a raw day number is at most 4294967295")?;
        out.extend_from_slice(&raw.to_be_bytes());
        return Ok(());
    }
    let (days, rest) = civil_date(text).ok_or_else(String::new)?;
    if !rest.is_empty() {
        return Err(format!("{rest:?} after the date"));
    }
    if days < i64::from(i32::MIN) || days > i64::from(i32::MAX) {
        return Err("beyond 2^31 days from 1970".to_owned());
    }
    let raw = (days + (1i64 << 31)) as u32;
    out.extend_from_slice(&raw.to_be_bytes());
    Ok(())
}

/// Two digits at the start of `s`, at most `max`.
fn two_digits(s: &str, max: i64) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    if b.len() < 2 || !b[0].is_ascii_digit() || !b[1].is_ascii_digit() {
        return None;
    }
    let value = i64::from(b[0] - b'0') * 10 + i64::from(b[1] - b'0');
    (value <= max).then(|| (value, &s[2..]))
}

/// A zone offset (`Z`, `±hh`, `±hhmm`, `±hh:mm`) in minutes east of UTC.
fn zone_offset(text: &str) -> Option<i64> {
    if text == "Z" || text == "z" {
        return Some(0);
    }
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, rest) = two_digits(&text[1..], 23)?;
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let (minutes, rest) = match rest.is_empty() {
        true => (0, rest),
        false => two_digits(rest, 59)?,
    };
    rest.is_empty().then_some(sign * (hours * 60 + minutes))
}

fn timestamp(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    if signed_digits(text).is_some() {
        let millis: i64 = text
            .parse()
            .map_err(|_| "milliseconds beyond 64 bits".to_owned())?;
        out.extend_from_slice(&millis.to_be_bytes());
        return Ok(());
    }
    if text.eq_ignore_ascii_case("now") {
        return Err("`now` is not a fixed key".to_owned());
    }
    let (days, rest) = civil_date(text).ok_or_else(String::new)?;
    let mut millis_of_day = 0i64;
    let mut rest = rest;
    // A time follows ` ` or `T` when a digit does (` +0200` is a zone).
    let time = rest
        .strip_prefix([' ', 'T'])
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()));
    if let Some(time) = time {
        let (hour, time) = two_digits(time, 23).ok_or_else(String::new)?;
        let time = time.strip_prefix(':').ok_or_else(String::new)?;
        let (minute, mut time) = two_digits(time, 59).ok_or_else(String::new)?;
        let mut second = 0;
        let mut milli = 0;
        if let Some(after) = time.strip_prefix(':') {
            let (s, after) = two_digits(after, 59).ok_or_else(String::new)?;
            second = s;
            time = after;
            if let Some(after) = time.strip_prefix('.') {
                let len = after.bytes().take_while(u8::is_ascii_digit).count();
                if len != 3 {
                    return Err("give milliseconds as exactly three digits, like .500: \
                                Cassandra reads .5 as 5 ms"
                        .to_owned());
                }
                milli = after[..3].parse().unwrap_or(0);
                time = &after[3..];
            }
        }
        millis_of_day = ((hour * 60 + minute) * 60 + second) * 1000 + milli;
        rest = time;
    }
    // Java's `z` patterns put a space before the zone.
    let zone = rest.strip_prefix(' ').unwrap_or(rest);
    if zone.is_empty() {
        return Err(
            "no zone: Cassandra reads it in the server's time zone; add Z or +0000 \
                    for UTC"
                .to_owned(),
        );
    }
    let offset =
        zone_offset(zone).ok_or_else(|| format!("{zone:?} is not a zone like Z or +0200"))?;
    let millis =
        i128::from(days) * 86_400_000 + i128::from(millis_of_day) - i128::from(offset) * 60_000;
    let millis = i64::try_from(millis).map_err(|_| "beyond 64-bit milliseconds".to_owned())?;
    out.extend_from_slice(&millis.to_be_bytes());
    Ok(())
}

fn inet(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let address: std::net::IpAddr = text.parse().map_err(|_| String::new())?;
    match address {
        std::net::IpAddr::V4(v4) => out.extend_from_slice(&v4.octets()),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => out.extend_from_slice(&v4.octets()),
            None => out.extend_from_slice(&v6.octets()),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::cassandra_token;

    fn bytes(ty: CqlType, literal: &str) -> Vec<u8> {
        let mut out = Vec::new();
        ty.serialize_into(literal.as_bytes(), &mut out)
            .unwrap_or_else(|e| panic!("{e}"));
        out
    }

    fn refused(ty: CqlType, literal: &str) -> String {
        let mut out = vec![7];
        let e = ty
            .serialize_into(literal.as_bytes(), &mut out)
            .expect_err("refused");
        assert_eq!(out, [7], "a refused literal leaves the buffer as it was");
        e.message
    }

    #[test]
    fn int_42_is_cassandras_token() {
        // cassandra-driver: Murmur3Token.from_key(Int32Type.serialize(42, 4)).
        assert_eq!(
            cassandra_token(&bytes(CqlType::Int, "42")),
            -7160136740246525330
        );
        assert_eq!(cassandra_token(b"42"), -5291771196513038484);
    }

    #[test]
    fn integers_are_fixed_width_twos_complement() {
        assert_eq!(bytes(CqlType::Tinyint, "-1"), [0xff]);
        assert_eq!(bytes(CqlType::Smallint, "-32768"), [0x80, 0]);
        assert_eq!(bytes(CqlType::Int, "-0"), [0; 4]);
        assert_eq!(bytes(CqlType::Bigint, "9223372036854775807")[0], 0x7f);
        assert!(refused(CqlType::Tinyint, "128").contains("out of range"));
        assert!(refused(CqlType::Int, "4x").contains("an integer from"));
        assert!(refused(CqlType::Int, "+4").contains("not a CQL int"));
        assert!(refused(CqlType::Bigint, "99999999999999999999999").contains("out of range"));
    }

    #[test]
    fn varints_are_javas_shortest_form() {
        let cases: &[(&str, &[u8])] = &[
            ("0", &[0]),
            ("127", &[0x7f]),
            ("128", &[0, 0x80]),
            ("-128", &[0x80]),
            ("-129", &[0xff, 0x7f]),
            ("255", &[0, 0xff]),
            ("-256", &[0xff, 0]),
            ("4294967296", &[1, 0, 0, 0, 0]),
            ("-4294967296", &[0xff, 0, 0, 0, 0]),
        ];
        for (literal, want) in cases {
            assert_eq!(bytes(CqlType::Varint, literal), *want, "{literal}");
        }
    }

    #[test]
    fn decimals_keep_javas_scale() {
        assert_eq!(bytes(CqlType::Decimal, "1.50"), [0, 0, 0, 2, 0, 150]);
        assert_eq!(
            bytes(CqlType::Decimal, "1.5e3"),
            [0xff, 0xff, 0xff, 0xfe, 15]
        );
        assert_eq!(bytes(CqlType::Decimal, "-0.5"), [0, 0, 0, 1, 0xfb]);
        assert_eq!(bytes(CqlType::Decimal, ".5"), [0, 0, 0, 1, 5]);
        refused(CqlType::Decimal, "NaN");
        refused(CqlType::Decimal, "1e");
    }

    #[test]
    fn floats_and_doubles_are_ieee_big_endian() {
        assert_eq!(bytes(CqlType::Float, "1"), 1f32.to_bits().to_be_bytes());
        assert_eq!(
            bytes(CqlType::Double, "-0.0"),
            (-0f64).to_bits().to_be_bytes()
        );
        assert_eq!(
            bytes(CqlType::Double, "NaN"),
            [0x7f, 0xf8, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            bytes(CqlType::Float, "-Infinity"),
            f32::NEG_INFINITY.to_bits().to_be_bytes()
        );
        refused(CqlType::Double, "inf");
        refused(CqlType::Double, "1.2.3");
    }

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(bytes(CqlType::Date, "1970-01-01"), [0x80, 0, 0, 0]);
        assert_eq!(
            bytes(CqlType::Date, "'1969-12-31'"),
            [0x7f, 0xff, 0xff, 0xff]
        );
        assert_eq!(bytes(CqlType::Date, "2147483648"), [0x80, 0, 0, 0]);
        refused(CqlType::Date, "2023-02-29");
        let noon = 1_714_564_800_000i64; // 2024-05-01T12:00Z
        for literal in [
            "1714564800000",
            "2024-05-01T12:00Z",
            "2024-05-01 14:00+0200",
            "2024-05-01 14:00:00.000+02:00",
            "2024-05-01T07:00:00-05",
        ] {
            assert_eq!(
                bytes(CqlType::Timestamp, literal),
                noon.to_be_bytes(),
                "{literal}"
            );
        }
        assert!(refused(CqlType::Timestamp, "2024-05-01 12:00").contains("server's time zone"));
        let midnight = 1_714_521_600_000i64; // 2024-05-01T00:00Z
        for literal in ["2024-05-01Z", "2024-05-01 +0000", "'2024-05-01+02:00'"] {
            let want = match literal.contains("02:00") {
                true => midnight - 7_200_000,
                false => midnight,
            };
            assert_eq!(
                bytes(CqlType::Timestamp, literal),
                want.to_be_bytes(),
                "{literal}"
            );
        }
        assert!(refused(CqlType::Timestamp, "2024-05-01 12:00:00.5Z").contains("three digits"));
    }

    #[test]
    fn uuids_blobs_inets_booleans() {
        let id = "123e4567-e89b-12d3-a456-426614174000";
        assert_eq!(bytes(CqlType::Uuid, id)[..2], [0x12, 0x3e]);
        assert!(
            refused(CqlType::Timeuuid, "123e4567-e89b-42d3-a456-426614174000")
                .contains("version 4")
        );
        assert_eq!(bytes(CqlType::Blob, "0xCAfe"), [0xca, 0xfe]);
        assert_eq!(bytes(CqlType::Blob, "cafe"), [0xca, 0xfe]);
        assert!(refused(CqlType::Blob, "caf").contains("odd"));
        assert_eq!(bytes(CqlType::Inet, "10.0.0.1"), [10, 0, 0, 1]);
        assert_eq!(bytes(CqlType::Inet, "::ffff:10.0.0.1"), [10, 0, 0, 1]);
        assert_eq!(bytes(CqlType::Inet, "::1").len(), 16);
        assert_eq!(bytes(CqlType::Boolean, "TRUE"), [1]);
        assert!(refused(CqlType::Ascii, "é").contains("above 127"));
    }

    #[test]
    fn composite_keys_are_length_prefixed() {
        let mut out = Vec::new();
        partition_key_into(&[CqlType::Int, CqlType::Text], &[b"1", b"ab"], &mut out)
            .expect("serialises");
        assert_eq!(out, [0, 4, 0, 0, 0, 1, 0, 0, 2, b'a', b'b', 0]);
        let e = partition_key_into(&[CqlType::Int], &[b"1", b"2"], &mut out).expect_err("refused");
        assert!(e.message.contains("2 columns but 1 type is given"), "{e}");
        let e = partition_key_into(&[CqlType::Int, CqlType::Int], &[b"1", b"x"], &mut out);
        assert!(
            e.expect_err("refused")
                .message
                .starts_with("column 2: \"x\" is not a CQL int")
        );
    }
}
