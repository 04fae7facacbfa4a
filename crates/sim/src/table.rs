//! The one row model of the text and CSV reports: a [`Section`] per
//! experiment, its figures as [`Cell`]s.
//!
//! A cell holds the raw figure and how the terminal shows it. CSV writes the
//! raw figure at full precision (`0.0771...`); the text report shows it with
//! the article's precision (`7.71%`). The text lays rows out from their
//! cells only, so every measured figure it shows is also a CSV column: the
//! two cannot drift apart. Titles are text only; they carry the run's
//! parameters (key and node counts, the cost model's inputs).
//!
//! Percentages use the article's format specifiers (`.2%`, `.0%`, `.1%`):
//! Python multiplies by 100 in floating point and rounds the result to the
//! shown digits, which is exactly what `format!("{:.2}", x * 100.0)` does, so
//! the printed digits are the article's.

use std::fmt::{self, Write};

/// One figure of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A count or size: `1000`.
    Int(u64),
    /// A number shown as Rust prints it: `0.25`.
    Num(f64),
    /// A number with this many decimals: `1.10`.
    Fixed(f64, usize),
    /// A fraction shown as a percentage with this many decimals: `7.71%`.
    Pct(f64, usize),
    /// Bytes with a decimal unit and three significant digits: `273 GB`.
    Bytes(f64),
    /// Nanoseconds: `189 ns`, `5.7 µs`.
    Nanos(f64),
    /// Requests per second: `91,364 rps`.
    Rps(f64),
    /// A multiple of a baseline: `18.3x`.
    Factor(f64),
    /// A name or other text.
    Text(String),
    /// A property that may or may not hold: `yes` / `no`.
    YesNo(bool),
    /// A check that should hold: `yes`, or `NO` to stand out.
    Check(bool),
    /// No value (shown and written as nothing).
    Empty,
}

impl Cell {
    /// The figure as CSV writes it: full precision, text quoted when it
    /// holds a comma, a quote or a line break (RFC 4180).
    pub fn csv(&self) -> String {
        match self {
            Cell::Int(n) => n.to_string(),
            Cell::Num(x)
            | Cell::Fixed(x, _)
            | Cell::Pct(x, _)
            | Cell::Bytes(x)
            | Cell::Nanos(x)
            | Cell::Rps(x)
            | Cell::Factor(x) => x.to_string(),
            Cell::Text(text) if text.contains([',', '"', '\n', '\r']) => {
                format!("\"{}\"", text.replace('"', "\"\""))
            }
            Cell::Text(text) => text.clone(),
            Cell::YesNo(flag) | Cell::Check(flag) => flag.to_string(),
            Cell::Empty => String::new(),
        }
    }

    /// The figure as the terminal shows it.
    fn text(&self) -> String {
        match self {
            Cell::Int(n) => n.to_string(),
            Cell::Num(x) => x.to_string(),
            Cell::Fixed(x, digits) => format!("{x:.digits$}"),
            Cell::Pct(x, digits) => pct(*x, *digits),
            Cell::Bytes(x) => bytes(*x),
            Cell::Nanos(x) => nanos(*x),
            Cell::Rps(x) => format!("{} rps", thousands(x.round() as u64)),
            Cell::Factor(x) => format!("{x:.1}x"),
            Cell::Text(text) => text.clone(),
            Cell::YesNo(flag) => (if *flag { "yes" } else { "no" }).into(),
            Cell::Check(flag) => (if *flag { "yes" } else { "NO" }).into(),
            Cell::Empty => String::new(),
        }
    }
}

/// The terminal's text; width and alignment apply (`{:>7}`), precision
/// does not (it is the cell's own).
impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.text())
    }
}

/// How the text report lays out a section's rows.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// One line per row.
    EachRow(fn(&[Cell]) -> String),
    /// Lines made from all rows at once (a row per group of rows, or a
    /// transposed table).
    AllRows(fn(&[Vec<Cell>]) -> Vec<String>),
}

/// One experiment's figures: a CSV section, and a block of the text report.
#[derive(Debug, Clone)]
pub struct Section {
    /// The experiment, the first column of its CSV rows.
    pub name: &'static str,
    /// Text lines above the rows: the title with the run's parameters, and a
    /// column header where the rows form a table. Not in the CSV.
    pub title: Vec<String>,
    /// The CSV header after `experiment`, one name per cell of a row.
    pub columns: &'static [&'static str],
    /// The figures.
    pub rows: Vec<Vec<Cell>>,
    /// How the text report shows the rows.
    pub layout: Layout,
}

impl Section {
    /// The text block: title, then the rows laid out.
    pub fn text(&self, out: &mut String) {
        let rows = match self.layout {
            Layout::EachRow(line) => self.rows.iter().map(|row| line(row)).collect(),
            Layout::AllRows(lines) => lines(&self.rows),
        };
        for line in self.title.iter().chain(&rows) {
            let _ = writeln!(out, "{line}");
        }
    }

    /// The CSV section: a header whose first column is `experiment`, then
    /// one line per row.
    pub fn csv(&self, out: &mut String) {
        let _ = writeln!(out, "experiment,{}", self.columns.join(","));
        for row in &self.rows {
            out.push_str(self.name);
            for cell in row {
                out.push(',');
                out.push_str(&cell.csv());
            }
            out.push('\n');
        }
    }
}

/// `0.0771` with 2 digits → `7.71%`.
pub(crate) fn pct(x: f64, digits: usize) -> String {
    format!("{:.*}%", digits, x * 100.0)
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes with a decimal unit and three significant digits: `273 GB`.
pub(crate) fn bytes(b: f64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = b;
    let mut unit = 0;
    while value >= 999.5 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    let decimals = if value >= 99.95 {
        0
    } else if value >= 9.995 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {}", units[unit])
}

fn nanos(ns: f64) -> String {
    if ns >= 1000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(bytes(3e12), "3.00 TB");
        assert_eq!(bytes(3e12 / 11.0), "273 GB");
        assert_eq!(bytes(3e12 / 110.0), "27.3 GB");
        assert_eq!(pct(0.0771, 2), "7.71%");
    }

    #[test]
    fn cells_show_rounded_and_write_full_precision() {
        let cells = [
            (Cell::Pct(0.0771234, 2), "7.71%", "0.0771234"),
            (Cell::Fixed(1.0987, 2), "1.10", "1.0987"),
            (Cell::Rps(91363.6), "91,364 rps", "91363.6"),
            (Cell::Factor(18.27), "18.3x", "18.27"),
            (Cell::Bytes(23296.0), "23.3 KB", "23296"),
            (Cell::Nanos(5712.0), "5.7 µs", "5712"),
            (Cell::Check(false), "NO", "false"),
            (Cell::YesNo(false), "no", "false"),
            (Cell::Text("a,\"b\"".into()), "a,\"b\"", "\"a,\"\"b\"\"\""),
            (Cell::Empty, "", ""),
        ];
        for (cell, text, csv) in cells {
            assert_eq!(cell.to_string(), text);
            assert_eq!(cell.csv(), csv);
        }
        assert_eq!(format!("[{:>7}]", Cell::Pct(0.5, 1)), "[  50.0%]");
    }

    #[test]
    fn a_section_renders_its_title_rows_and_header() {
        let section = Section {
            name: "demo",
            title: vec!["Demo".into()],
            columns: &["n", "share"],
            rows: vec![vec![Cell::Int(3), Cell::Pct(0.25, 1)]],
            layout: Layout::EachRow(|c| format!("n={} {}", c[0], c[1])),
        };
        let (mut text, mut csv) = (String::new(), String::new());
        section.text(&mut text);
        section.csv(&mut csv);
        assert_eq!(text, "Demo\nn=3 25.0%\n");
        assert_eq!(csv, "experiment,n,share\ndemo,3,0.25\n");
    }
}
