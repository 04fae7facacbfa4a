//! nginx's configuration syntax: directives, arguments and blocks, read as
//! `ngx_conf_read_token` (`src/core/ngx_conf_file.c`) reads them.
//!
//! A directive is words up to `;`, or up to `{` and a block closed by `}`.
//! Words are separated by white space; `#` at the start of a word starts a
//! comment to the end of the line (inside a word it is a character); a
//! word may be quoted with `"` or `'` (then a space, `;` or `{` must
//! follow the closing quote); a backslash escapes the next character, and
//! `\"`, `\'`, `\\`, `\t`, `\r`, `\n` are unescaped; `{` right after `$`
//! is part of the word (`${var}`), and so is `}` inside an unquoted word.
//!
//! Blocks nest at most [`MAX_DEPTH`] deep: the reader (and what walks its
//! result) recurses once a block, so a hostile file nested 20,000 deep
//! would overflow the stack; real files nest `http { upstream { } }` or
//! a few `location`s deep.
//!
//! Cost: one pass over the text, O(length).

use crate::ImportError;
use crate::error::syntax;

/// How deep blocks may nest: far past a real nginx.conf, far below the
/// recursion the stack holds.
pub(crate) const MAX_DEPTH: usize = 100;

/// A directive, its arguments and, for a block, what it holds.
#[derive(Debug)]
pub(crate) struct Directive {
    pub(crate) name: String,
    pub(crate) args: Vec<String>,
    pub(crate) line: usize,
    pub(crate) block: Option<Vec<Directive>>,
}

/// What ended a run of words.
enum End {
    Semicolon,
    Open,
    Close,
    File,
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

/// Parses a whole file into its top-level directives.
pub(crate) fn parse(text: &str) -> Result<Vec<Directive>, ImportError> {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        at: 0,
        line: 1,
    };
    let directives = block(&mut scanner, None, 0)?;
    Ok(directives)
}

/// The directives up to the `}` of a block opened on `opened` (or the end
/// of the file at the top), `depth` blocks deep.
fn block(
    s: &mut Scanner<'_>,
    opened: Option<usize>,
    depth: usize,
) -> Result<Vec<Directive>, ImportError> {
    let mut directives = Vec::new();
    loop {
        let (words, line, end) = s.words()?;
        let mut words = words.into_iter();
        let name = words.next();
        match (end, name, opened) {
            (End::Close, None, Some(_)) => return Ok(directives),
            (End::Close, None, None) => return Err(syntax(s.line, "unexpected \"}\"")),
            (End::File, None, None) => return Ok(directives),
            (End::File, None, Some(line)) => {
                return Err(syntax(
                    s.line,
                    format!(
                        "unexpected end of file: the block opened on line {line} is not closed with \"}}\""
                    ),
                ));
            }
            (End::File, Some(_), _) => {
                return Err(syntax(
                    s.line,
                    "unexpected end of file, expecting \";\" or \"}\"",
                ));
            }
            (End::Close, Some(_), _) => return Err(syntax(s.line, "unexpected \"}\"")),
            (End::Semicolon | End::Open, None, _) => {
                return Err(syntax(
                    s.line,
                    "a \";\" or \"{\" with no directive before it",
                ));
            }
            (End::Semicolon, Some(name), _) => directives.push(Directive {
                name,
                args: words.collect(),
                line,
                block: None,
            }),
            (End::Open, Some(name), _) => {
                let args: Vec<String> = words.collect();
                if depth >= MAX_DEPTH {
                    let opened = [name.as_str()]
                        .into_iter()
                        .chain(args.iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join(" ");
                    return Err(syntax(
                        line,
                        format!(
                            "`{opened} {{` opens a block nested more than {MAX_DEPTH} deep: \
                             no nginx.conf read here nests so deep"
                        ),
                    ));
                }
                let inner = block(s, Some(line), depth + 1)?;
                directives.push(Directive {
                    name,
                    args,
                    line,
                    block: Some(inner),
                });
            }
        }
    }
}

impl Scanner<'_> {
    fn next(&mut self) -> Option<u8> {
        let c = *self.bytes.get(self.at)?;
        self.at += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// The words of one directive, the line of its first word, and what
    /// ended them.
    fn words(&mut self) -> Result<(Vec<String>, usize, End), ImportError> {
        let mut words = Vec::new();
        let mut first_line = self.line;
        loop {
            // Between words.
            let c = loop {
                match self.next() {
                    None => return Ok((words, first_line, End::File)),
                    Some(b' ' | b'\t' | b'\r' | b'\n') => continue,
                    Some(b'#') => while !matches!(self.next(), None | Some(b'\n')) {},
                    Some(c) => break c,
                }
            };
            match c {
                b';' => return Ok((words, first_line, End::Semicolon)),
                b'{' => return Ok((words, first_line, End::Open)),
                b'}' if words.is_empty() => return Ok((words, first_line, End::Close)),
                b'}' => {
                    return Err(syntax(self.line, "unexpected \"}\": a \";\" is missing"));
                }
                _ => {}
            }
            if words.is_empty() {
                first_line = self.line;
            }
            let (word, end) = self.word(c)?;
            words.push(word);
            match end {
                Some(b';') => return Ok((words, first_line, End::Semicolon)),
                Some(b'{') => return Ok((words, first_line, End::Open)),
                _ => {}
            }
        }
    }

    /// One word starting with `first`, unescaped, and the `;` or `{` that
    /// ended it, if one did.
    fn word(&mut self, first: u8) -> Result<(String, Option<u8>), ImportError> {
        let line = self.line;
        let quote = matches!(first, b'"' | b'\'').then_some(first);
        let mut raw = Vec::new();
        if quote.is_none() {
            // Read the first character again, as part of the word.
            self.at -= 1;
        }
        let mut variable = false;
        let end = loop {
            let Some(c) = self.next() else {
                return Err(syntax(
                    line,
                    match quote {
                        Some(q) => format!("the quote {} opened here is not closed", q as char),
                        None => "unexpected end of file, expecting \";\" or \"}\"".into(),
                    },
                ));
            };
            if c == b'\\' {
                raw.push(c);
                if let Some(next) = self.next() {
                    raw.push(next);
                }
                variable = false;
                continue;
            }
            if c == b'{' && variable {
                raw.push(c);
                continue;
            }
            variable = c == b'$';
            match quote {
                Some(q) if c == q => {
                    // nginx needs a separator after a closing quote.
                    match self.bytes.get(self.at) {
                        None | Some(b' ' | b'\t' | b'\r' | b'\n') => break None,
                        Some(&c @ (b';' | b'{')) => {
                            self.next();
                            break Some(c);
                        }
                        Some(&c) => {
                            return Err(syntax(
                                self.line,
                                format!("unexpected \"{}\" after a closing quote", c as char),
                            ));
                        }
                    }
                }
                Some(_) => raw.push(c),
                None => match c {
                    b' ' | b'\t' | b'\r' | b'\n' => break None,
                    b';' | b'{' => break Some(c),
                    _ => raw.push(c),
                },
            }
        };
        Ok((unescape(&raw), end))
    }
}

/// nginx's unescaping of a word: `\"`, `\'`, `\\` give the character,
/// `\t`, `\r`, `\n` the control character; other backslashes stay.
fn unescape(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match (raw[i], raw.get(i + 1)) {
            (b'\\', Some(&c @ (b'"' | b'\'' | b'\\'))) => {
                out.push(c);
                i += 2;
            }
            (b'\\', Some(b't')) => (out.push(b'\t'), i += 2).1,
            (b'\\', Some(b'r')) => (out.push(b'\r'), i += 2).1,
            (b'\\', Some(b'n')) => (out.push(b'\n'), i += 2).1,
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_blocks_comments_and_quotes() {
        let text =
            "http { # a comment\n  upstream \"b e\" {\n    hash ${x}a#b consistent;\n  }\n}\n";
        let top = parse(text).expect("parse");
        let http = top[0].block.as_ref().expect("a block");
        assert_eq!(http[0].name, "upstream");
        assert_eq!(http[0].args, ["b e"]);
        assert_eq!(http[0].line, 2);
        let inner = http[0].block.as_ref().expect("a block");
        assert_eq!(inner[0].args, ["${x}a#b", "consistent"]);
        assert_eq!(inner[0].line, 3);
    }

    #[test]
    fn broken_syntax_is_refused_with_its_line() {
        for (text, line, words) in [
            ("http {\n upstream u {\n}\n", 4, "not closed"),
            ("a b\n", 2, "end of file"),
            ("a \"b\"c;\n", 1, "after a closing quote"),
            ("a 'b;\n", 1, "not closed"),
            ("}\n", 1, "unexpected"),
            ("a\n}\n", 2, "missing"),
        ] {
            let e = parse(text).expect_err(text);
            assert_eq!(e.line(), Some(line), "{text}: {e}");
            assert!(e.to_string().contains(words), "{text}: {e}");
        }
    }
}
