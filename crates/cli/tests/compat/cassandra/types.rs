//! `ringwise token --type` against cassandra-driver's own serialisers.
//!
//! For every CQL type `token --type` reads, 1,200 seeded random values
//! (with the edges of each range among them) are written as CQL literals in
//! the forms Cassandra reads (integers, decimals with and without exponent,
//! `NaN` and `Infinity`, quoted and unquoted dates, timestamps as
//! milliseconds and as date-times with every zone form, upper- and
//! lowercase hex and UUIDs, IPv4 and IPv6), and so are composite keys of
//! several types. The peer (`peers/cassandra_types.py`) reads each literal
//! with Python's own parsers, serialises it with the driver's serialiser of
//! the type (`cassandra.cqltypes.*.serialize`), packs composite keys with
//! the driver's `Statement.routing_key` and prints
//! `Murmur3Token.from_key(...)`: every token must equal ringwise's.

use std::fmt::Write as _;

use crate::compat::{Rng, assert_agree, peer_file, peer_python, run_peer};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x6371_6c74_7970_6573;
const PER_TYPE: usize = 1_200;

/// One group of keys: the `--type` list, the separator (`None`: the
/// default, `:`), and the literals.
struct Group {
    types: &'static str,
    separator: Option<&'static str>,
    keys: Vec<String>,
}

#[test]
fn every_cql_type_serialises_as_the_driver_does() {
    let dir = TempDir::create("compat-cassandra-types");
    let mut rng = Rng(SEED);
    let mut groups: Vec<Group> = SINGLE
        .iter()
        .map(|&ty| Group {
            types: ty,
            separator: None,
            keys: (0..PER_TYPE).map(|i| literal(&mut rng, ty, i)).collect(),
        })
        .collect();
    for &(types, separator) in COMPOSITES {
        let keys = (0..PER_TYPE)
            .map(|i| {
                let sep = separator.unwrap_or(":");
                let parts: Vec<String> = types
                    .split(',')
                    .map(|ty| {
                        loop {
                            let literal = literal(&mut rng, ty, i);
                            if !literal.contains(sep) {
                                break literal;
                            }
                        }
                    })
                    .collect();
                parts.join(sep)
            })
            .collect();
        groups.push(Group {
            types,
            separator,
            keys,
        });
    }
    // One peer run for every group: TYPES<TAB>SEP<TAB>KEY lines.
    let peer_lines: Vec<String> = groups
        .iter()
        .flat_map(|g| {
            let sep = g.separator.unwrap_or(":");
            g.keys
                .iter()
                .map(move |k| format!("{}\t{sep}\t{k}", g.types))
        })
        .collect();
    let mut command = std::process::Command::new(peer_python());
    command.arg(peer_file("cassandra_types.py"));
    let theirs = run_peer(&mut command, dir.path(), &peer_lines);
    assert_eq!(theirs.len(), peer_lines.len(), "the peer answers every key");
    let mut at = 0;
    for group in &groups {
        let mut args = vec!["token", "--type", group.types];
        if let Some(separator) = group.separator {
            args.extend(["--composite", separator]);
        }
        let input: String = group.keys.iter().map(|k| format!("{k}\n")).collect();
        let out = ringwise(&args, input.as_bytes());
        assert_success(&out);
        let ours = crate::compat::answers("token", &group.keys, &stdout(&out));
        let peer = &theirs[at..at + group.keys.len()];
        at += group.keys.len();
        assert_agree(
            &format!("--type {} vs cassandra-driver's serialisers", group.types),
            &group.keys,
            peer,
            &ours,
        );
    }
}

/// The proof can fail: `int` 42 is not the text "42" (a bug it once caught).
#[test]
fn an_int_key_is_not_its_text() {
    let typed = ringwise(&["token", "--type", "int", "42"], b"");
    let text = ringwise(&["token", "42"], b"");
    assert_eq!(stdout(&typed), "42\t-7160136740246525330\n");
    assert_eq!(stdout(&text), "42\t-5291771196513038484\n");
}

const SINGLE: &[&str] = &[
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "varint",
    "decimal",
    "float",
    "double",
    "boolean",
    "text",
    "varchar",
    "ascii",
    "blob",
    "uuid",
    "timeuuid",
    "date",
    "timestamp",
    "inet",
];

const COMPOSITES: &[(&str, Option<&str>)] = &[
    ("int,text", None),
    ("bigint,blob,boolean", None),
    ("uuid,timestamp", Some("|")),
    ("date,inet,decimal,smallint", Some("|")),
    ("text,text", Some("::")),
];

/// A random literal of `ty`; the first few `i` are the edges.
fn literal(rng: &mut Rng, ty: &str, i: usize) -> String {
    let bits = |rng: &mut Rng, width: u32| -> i64 {
        // Magnitudes of every bit length, not only huge ones.
        let len = rng.between(1, width as usize) as u32;
        let v = (rng.next() >> (64 - len)) as i64;
        let v = v.min((1i64 << (width - 1)).wrapping_sub(1) & i64::MAX);
        if rng.below(2) == 0 {
            -v - i64::from(len == width)
        } else {
            v
        }
    };
    let fixed = |rng: &mut Rng, width: u32| -> String {
        let (min, max) = match width {
            64 => (i64::MIN, i64::MAX),
            w => (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1),
        };
        match i {
            0 => min.to_string(),
            1 => max.to_string(),
            2 => "0".into(),
            3 => "-1".into(),
            _ => bits(rng, width).clamp(min, max).to_string(),
        }
    };
    match ty {
        "tinyint" => fixed(rng, 8),
        "smallint" => fixed(rng, 16),
        "int" => fixed(rng, 32),
        "bigint" => fixed(rng, 64),
        "varint" => {
            let digits = match i % 50 {
                0 => rng.between(200, 1000),
                _ => rng.between(1, 45),
            };
            let sign = if rng.below(2) == 0 { "-" } else { "" };
            let body: String = (0..digits)
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect();
            format!("{sign}{body}")
        }
        "decimal" => {
            let digits = |rng: &mut Rng, n: usize| -> String {
                (0..n)
                    .map(|_| char::from(b'0' + rng.below(10) as u8))
                    .collect()
            };
            let sign = ["", "-", "+"][rng.below(3)];
            let whole = rng.between(0, 25);
            let whole = digits(rng, whole);
            let fraction = match rng.below(3) {
                0 => String::new(),
                _ => {
                    let n = rng.between(0, 25);
                    format!(".{}", digits(rng, n))
                }
            };
            let mantissa = match (whole.is_empty(), fraction.len() <= 1) {
                (true, true) => "7".to_owned(),
                _ => format!("{whole}{fraction}"),
            };
            let exponent = match rng.below(3) {
                0 => format!(
                    "{}{}{}",
                    ["e", "E"][rng.below(2)],
                    ["", "-", "+"][rng.below(3)],
                    rng.below(40)
                ),
                _ => String::new(),
            };
            format!("{sign}{mantissa}{exponent}")
        }
        "float" => {
            let x = f32::from_bits(rng.next() as u32);
            float_text(rng, f64::from(x), x.is_nan(), i)
        }
        "double" => {
            let x = f64::from_bits(rng.next());
            float_text(rng, x, x.is_nan(), i)
        }
        "boolean" => {
            let word = ["true", "false"][rng.below(2)];
            word.chars()
                .map(|c| match rng.below(3) {
                    0 => c.to_ascii_uppercase(),
                    _ => c,
                })
                .collect()
        }
        "text" | "varchar" => {
            let keys = super::super::random_keys(rng, 1);
            keys.into_iter().next().unwrap_or_default()
        }
        "ascii" => {
            (0..rng.between(1, 30))
                .map(|_| char::from(b'!' + rng.below(94) as u8))
                .filter(|&c| c != '\\')
                .collect::<String>()
                + "a"
        }
        "blob" => {
            // Not empty: the driver hashes b"" to 0, Cassandra gives the
            // empty key the minimum token (and refuses it as a partition
            // key); ringwise follows Cassandra (docs/cassandra.md, Quirks).
            let n = rng.between(1, 40);
            let mut hex: String = (0..n).map(|_| format!("{:02x}", rng.below(256))).collect();
            if rng.below(2) == 0 {
                hex = hex.to_uppercase();
            }
            match rng.below(2) {
                0 => format!("0x{hex}"),
                _ => hex,
            }
        }
        "uuid" | "timeuuid" => {
            let mut bytes: Vec<u8> = (0..16).map(|_| rng.below(256) as u8).collect();
            if ty == "timeuuid" {
                bytes[6] = (bytes[6] & 0x0f) | 0x10;
            }
            let mut text = String::new();
            for (j, b) in bytes.iter().enumerate() {
                if [4, 6, 8, 10].contains(&j) {
                    text.push('-');
                }
                let _ = write!(text, "{b:02x}");
            }
            match rng.below(3) {
                0 => text.to_uppercase(),
                1 => format!("'{text}'"),
                _ => text,
            }
        }
        "date" => match rng.below(3) {
            0 => (rng.next() as u32).to_string(),
            _ => {
                let (y, m, d) = civil(rng, 1, 9999);
                let text = format!("{y:04}-{m:02}-{d:02}");
                if rng.below(4) == 0 {
                    format!("'{text}'")
                } else {
                    text
                }
            }
        },
        "timestamp" => match rng.below(4) {
            0 => bits(rng, 64).to_string(),
            _ => {
                let (y, m, d) = civil(rng, 2, 9998);
                let mut text = format!("{y:04}-{m:02}-{d:02}");
                if rng.below(5) > 0 {
                    let _ = write!(
                        text,
                        "{}{:02}:{:02}",
                        [" ", "T"][rng.below(2)],
                        rng.below(24),
                        rng.below(60)
                    );
                    if rng.below(3) > 0 {
                        let _ = write!(text, ":{:02}", rng.below(60));
                        if rng.below(2) == 0 {
                            let _ = write!(text, ".{:03}", rng.below(1000));
                        }
                    }
                }
                let (h, mm) = (rng.below(15), [0, 30, 45][rng.below(3)]);
                let sign = ["+", "-"][rng.below(2)];
                let zone = match rng.below(4) {
                    0 => "Z".to_owned(),
                    1 => format!("{sign}{h:02}"),
                    2 => format!("{sign}{h:02}{mm:02}"),
                    _ => format!("{sign}{h:02}:{mm:02}"),
                };
                let space = if rng.below(4) == 0 { " " } else { "" };
                format!("{text}{space}{zone}")
            }
        },
        "inet" => match rng.below(2) {
            0 => std::net::Ipv4Addr::from(rng.next() as u32).to_string(),
            _ => {
                // Some runs of zero groups, so that `::` appears.
                let mut groups: [u16; 8] = std::array::from_fn(|_| rng.next() as u16);
                let zeros = rng.below(5);
                let start = rng.below(8 - zeros.min(7));
                for g in groups.iter_mut().skip(start).take(zeros) {
                    *g = 0;
                }
                if groups[..6] == [0, 0, 0, 0, 0, 0xffff] {
                    groups[0] = 1; // IPv4-mapped: see the module doc of cql.rs
                }
                std::net::Ipv6Addr::from(groups).to_string()
            }
        },
        other => panic!("no generator for {other}"),
    }
}

/// A number as a CQL float literal: plain or with an exponent; NaN and the
/// infinities as CQL spells them.
fn float_text(rng: &mut Rng, x: f64, nan: bool, i: usize) -> String {
    match i {
        0 => return "NaN".into(),
        1 => return "Infinity".into(),
        2 => return "-Infinity".into(),
        3 => return "-0.0".into(),
        4 => return "1".into(),
        _ => {}
    }
    if nan {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "infinity" } else { "-INFINITY" }.into();
    }
    match rng.below(2) {
        0 => format!("{x:e}"),
        _ => format!("{x}"),
    }
}

/// A random valid date from year `lo` to `hi`.
fn civil(rng: &mut Rng, lo: usize, hi: usize) -> (usize, usize, usize) {
    let year = rng.between(lo, hi);
    let month = rng.between(1, 12);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (year, month, rng.between(1, days))
}
