//! The structure budget of a cluster file, checked on its text before the
//! TOML parser runs.
//!
//! The parser holds each value it reads (about 100 bytes per array element,
//! about 1.6 KB per node table) before ringwise sees any of it, so what
//! ringwise checks after parsing (the node cap, the point budget) came too
//! late: a 64 MiB file of `[[ nodes ]]` tables, of an inline array of node
//! tables, or of `points = [1,1,1,...]` reached 4 to 5 GB and aborted under a
//! 4 GB limit. This scan counts, however the file spells them, the tables
//! (`[t]`, `[[t]]` with any spacing or quoting, `{...}`, and each dotted key
//! part, which opens one) and the values (each `=`, each array element, each
//! array) outside strings and comments, and tracks how deep arrays and
//! inline tables nest. It refuses a file of more than [`crate::MAX_NODES`]
//! tables of an array (`[[t]]`, `{...}`: [`Error::TooManyNodes`], as
//! before), or over [`MAX_TABLES`], [`MAX_VALUES`] or [`MAX_DEPTH`]
//! ([`Error::ClusterFile`] with the line) before anything is built. One pass over the bytes, no
//! allocation: the cost of reading a plain file of the same size.
//!
//! The budget is what the caps allow: [`crate::MAX_NODES`] node tables plus
//! a few others; values for every node's name, weight and zone plus the
//! largest list a 64 MiB file can really hold (given points of 19 to 20
//! digits: about 3.4 million; `removed` up to 2^22 buckets). Peak parser
//! memory at the budget: about 1.6 GB of tables plus about 1 GB of values.

use crate::Error;

/// The most tables a cluster file may open: a node table per node, and
/// room for the few others a file has.
pub(crate) const MAX_TABLES: u64 = crate::MAX_NODES as u64 + 1024;

/// The most values (keys set and array elements, arrays included).
pub(crate) const MAX_VALUES: u64 = 1 << 23;

/// The deepest nesting of arrays and inline tables. A cluster file needs
/// two (`nodes = [{ points = [...] }]`); the parser recurses per level.
pub(crate) const MAX_DEPTH: usize = 32;

/// What the scan counted: for tests and for the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// Tables of an array (`[[t]]` headers, inline `{...}`): the node
    /// tables, at most [`crate::MAX_NODES`].
    pub node_tables: u64,
    /// Every table, those above included, and each dotted key part.
    pub tables: u64,
    pub values: u64,
    pub depth: usize,
}

/// A container open at the current position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Array,
    Inline,
}

/// Counts the file's structure and refuses it past the budget, naming the
/// line where the budget ran out. O(file), no allocation beyond a stack of
/// at most [`MAX_DEPTH`] entries.
pub(crate) fn check(text: &str) -> Result<Counts, Error> {
    let bytes = text.as_bytes();
    let mut counts = Counts::default();
    let mut stack: Vec<Open> = Vec::with_capacity(MAX_DEPTH + 1);
    // A key is being read (before its `=`): at the start of a top-level
    // line, after `{` or after a `,` in an inline table. Dots there open
    // tables.
    let mut in_key = true;
    let mut line = 1usize;
    let mut i = 0;
    let over = |what: String, line: usize| Error::ClusterFile {
        line: Some(line),
        field: None,
        message: format!(
            "{what}: more than a cluster file can need (refused before parsing, which \
             would hold it all in memory); check the file for a runaway list"
        ),
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line += 1;
                if stack.is_empty() {
                    in_key = true;
                }
                i += 1;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' | b'\'' => {
                let (end, lines) = skip_string(bytes, i);
                line += lines;
                i = end;
            }
            b'[' if stack.is_empty() && in_key => {
                // A table header: `[t]` or `[[t]]`, any spacing and quoting.
                counts.tables += 1;
                if bytes.get(i + 1) == Some(&b'[') {
                    counts.node_tables += 1;
                }
                i += 1;
                let mut closing = 0;
                while i < bytes.len() && bytes[i] != b'\n' {
                    match bytes[i] {
                        b'"' | b'\'' => {
                            i = skip_string(bytes, i).0;
                            continue;
                        }
                        b'.' => counts.tables += 1,
                        b']' => closing += 1,
                        b'#' if closing > 0 => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'=' => {
                counts.values += 1;
                in_key = false;
                i += 1;
            }
            b'.' if in_key => {
                counts.tables += 1;
                i += 1;
            }
            b'[' | b'{' => {
                counts.values += 1;
                let open = if b == b'[' { Open::Array } else { Open::Inline };
                if open == Open::Inline {
                    counts.tables += 1;
                    counts.node_tables += 1;
                }
                stack.push(open);
                counts.depth = counts.depth.max(stack.len());
                if stack.len() > MAX_DEPTH {
                    return Err(over(
                        format!("arrays and tables nested more than {MAX_DEPTH} deep"),
                        line,
                    ));
                }
                in_key = open == Open::Inline;
                i += 1;
            }
            b']' | b'}' => {
                stack.pop();
                in_key = false;
                i += 1;
            }
            b',' => {
                match stack.last() {
                    Some(Open::Array) => counts.values += 1,
                    Some(Open::Inline) => in_key = true,
                    None => {}
                }
                i += 1;
            }
            _ => i += 1,
        }
        if counts.node_tables > crate::MAX_NODES as u64 {
            return Err(Error::TooManyNodes {
                nodes: counts.node_tables,
                limit: crate::MAX_NODES as u64,
            });
        }
        if counts.tables > MAX_TABLES {
            return Err(over(format!("more than {MAX_TABLES} tables"), line));
        }
        if counts.values > MAX_VALUES {
            return Err(over(format!("more than {MAX_VALUES} values"), line));
        }
    }
    Ok(counts)
}

/// The end of the string starting at `start` (a `"` or `'`, single or
/// tripled) and the newlines inside it. An unterminated string ends the
/// text (the parser reports it).
fn skip_string(bytes: &[u8], start: usize) -> (usize, usize) {
    let quote = bytes[start];
    let triple = bytes.get(start..start + 3) == Some(&[quote, quote, quote][..]);
    let mut i = start + if triple { 3 } else { 1 };
    let mut lines = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' && quote == b'"' {
            i += 2;
            continue;
        }
        if b == b'\n' {
            lines += 1;
            if !triple {
                // A single-line string cannot span lines: let the parser say so.
                return (i, lines - 1);
            }
        }
        if b == quote {
            if !triple {
                return (i + 1, lines);
            }
            if bytes.get(i..i + 3) == Some(&[quote, quote, quote][..]) {
                // Up to two more quotes may close a triple string (`""""`).
                let mut end = i + 3;
                while end < bytes.len() && bytes[end] == quote && end < i + 5 {
                    end += 1;
                }
                return (end, lines);
            }
        }
        i += 1;
    }
    (bytes.len(), lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_table_counts() {
        let text = "[[nodes]]\nname = \"a\"\n[[ nodes ]]\nname = 'b'\n[[\"nodes\"]]\n\
                    [[ 'nodes' ]] # c\n[t . u]\nx.y = 1\nn = [{name = \"z\"}, {}]\n";
        let counts = check(text).expect("small");
        // 4 headers, `t . u` (2), `x.y` (1 more), 2 inline tables.
        assert_eq!(counts.tables, 4 + 2 + 1 + 2);
        assert_eq!(counts.node_tables, 4 + 2);
        assert_eq!(counts.depth, 2);
    }

    #[test]
    fn strings_and_comments_hide_their_brackets() {
        let text = "a = \"[[nodes]] , {\"\n# [[nodes]] = [,,,]\nb = '''\n[[nodes]]\n'''\n\
                    c = \"\\\"[\"\n";
        let counts = check(text).expect("small");
        assert_eq!(
            counts,
            Counts {
                node_tables: 0,
                tables: 0,
                values: 3,
                depth: 0
            }
        );
    }

    #[test]
    fn elements_count_as_values() {
        let counts = check("points = [1, 2, 3]\n").expect("small");
        // `=`, the array, two commas.
        assert_eq!(counts.values, 4);
    }
}
