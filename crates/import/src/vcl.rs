//! The part of VCL's syntax the `varnish` reader needs: tokens with their
//! lines, the top-level declarations (`backend NAME { ... }`, `sub NAME {
//! ... }`) and the statements of a subroutine, blocks (`if`) kept whole.
//!
//! Source: varnish-cache 7.1.1 `lib/libvcc/vcc_token.c` (`vcc_Lexer`:
//! comments `#`, `//` and `/* */`, strings `"..."` without escapes and
//! long strings `{"..."}`, identifiers of letters, digits, `_` and `-`)
//! and `vcc_parse.c` (the top-level declarations). Expressions are not
//! parsed: a statement is its tokens, split at `;`.
//!
//! Cost: one pass over the text, O(length).

use crate::ImportError;
use crate::error::syntax;

/// One token: an identifier or number (`d1`, `10s`, `1.5`), a string's
/// contents, or one punctuation character.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub text: String,
    pub string: bool,
    pub line: usize,
}

impl Token {
    /// Whether this is the punctuation or word `text` (not a string).
    pub fn is(&self, text: &str) -> bool {
        !self.string && self.text == text
    }
}

/// Splits `text` into tokens, dropping comments.
pub(crate) fn tokens(text: &str) -> Result<Vec<Token>, ImportError> {
    let bytes = text.as_bytes();
    let (mut i, mut line) = (0, 1);
    let mut out = Vec::new();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.';
    while i < bytes.len() {
        let b = bytes[i];
        let rest = &text[i..];
        if b == b'\n' {
            line += 1;
            i += 1;
        } else if b.is_ascii_whitespace() {
            i += 1;
        } else if b == b'#' || rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if let Some(after) = rest.strip_prefix("/*") {
            let end = after
                .find("*/")
                .ok_or_else(|| syntax(line, "a /* comment is not closed"))?;
            line += rest[..end + 4].matches('\n').count();
            i += end + 4;
        } else if let Some(after) = rest.strip_prefix("{\"") {
            let end = after
                .find("\"}")
                .ok_or_else(|| syntax(line, "a {\" long string is not closed with \"}"))?;
            out.push(Token {
                text: after[..end].to_owned(),
                string: true,
                line,
            });
            line += rest[..end + 4].matches('\n').count();
            i += end + 4;
        } else if b == b'"' {
            let end = rest[1..]
                .find(['"', '\n'])
                .filter(|&e| rest.as_bytes()[1 + e] == b'"')
                .ok_or_else(|| syntax(line, "a string is not closed on its line"))?;
            out.push(Token {
                text: rest[1..1 + end].to_owned(),
                string: true,
                line,
            });
            i += end + 2;
        } else if word(b) && b != b'.'
            || (b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // A word; dots inside numbers (1.5) stay, a dot before a name
            // (`.host`, `d.add_backend`) is punctuation.
            let mut end = i + 1;
            while end < bytes.len()
                && (word(bytes[end]) && bytes[end] != b'.'
                    || bytes[end] == b'.' && bytes[i].is_ascii_digit())
            {
                end += 1;
            }
            out.push(Token {
                text: text[i..end].to_owned(),
                string: false,
                line,
            });
            i = end;
        } else {
            let len = rest.chars().next().map_or(1, char::len_utf8);
            out.push(Token {
                text: rest[..len].to_owned(),
                string: false,
                line,
            });
            i += len;
        }
    }
    Ok(out)
}

/// The index just past the `}` closing the `{` at `open`.
fn block_end(tokens: &[Token], open: usize) -> Result<usize, ImportError> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if t.is("{") {
            depth += 1;
        } else if t.is("}") {
            depth -= 1;
            if depth == 0 {
                return Ok(i + 1);
            }
        }
    }
    Err(syntax(tokens[open].line, "a { is not closed"))
}

/// A top-level declaration: `backend` or `sub` and its name, with the
/// tokens inside its braces.
#[derive(Debug)]
pub(crate) struct Declaration<'a> {
    pub kind: &'a str,
    pub name: &'a Token,
    pub body: &'a [Token],
}

/// The `backend` and `sub` declarations; the others (`vcl 4.1;`, `import`,
/// `probe`, `acl`, `include`) are skipped. An `include` is refused: its
/// file is not here.
pub(crate) fn declarations(tokens: &[Token]) -> Result<Vec<Declaration<'_>>, ImportError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if t.is("include") {
            return Err(ImportError::Unsupported {
                line: t.line,
                setting: "include".into(),
                reason: "the included file is not read: import the VCL with the backends and \
                         vcl_init inline (varnishd -C prints it)"
                    .into(),
            });
        }
        let open = tokens[i..].iter().position(|t| t.is("{") || t.is(";"));
        let Some(open) = open.map(|o| o + i) else {
            return Err(syntax(t.line, "a declaration without ; or { ... }"));
        };
        if tokens[open].is(";") {
            i = open + 1;
            continue;
        }
        let end = block_end(tokens, open)?;
        if (t.is("backend") || t.is("sub")) && open == i + 2 {
            out.push(Declaration {
                kind: &t.text,
                name: &tokens[i + 1],
                body: &tokens[open + 1..end - 1],
            });
        }
        i = end;
    }
    Ok(out)
}

/// The statements of a body: tokens up to each `;` at depth 0, or a whole
/// `if (...) { ... } else { ... }`.
pub(crate) fn statements(body: &[Token]) -> Result<Vec<&[Token]>, ImportError> {
    let mut out = Vec::new();
    let (mut start, mut i, mut parens) = (0, 0, 0usize);
    while i < body.len() {
        let t = &body[i];
        if t.is("(") {
            parens += 1;
        } else if t.is(")") {
            parens = parens.saturating_sub(1);
        } else if t.is("{") && parens == 0 {
            i = block_end(body, i)?;
            let chained = body.get(i).is_some_and(|t| t.is("else") || t.is("elsif"));
            if !chained {
                out.push(&body[start..i]);
                start = i;
            }
            continue;
        } else if t.is(";") && parens == 0 {
            out.push(&body[start..i]);
            start = i + 1;
        }
        i += 1;
    }
    if start < body.len() {
        return Err(syntax(
            body[start].line,
            "a statement without its closing ;",
        ));
    }
    Ok(out)
}

/// The arguments of a call whose `(` is at `open`: each one's tokens,
/// split at commas outside parentheses, and the index past the `)`.
pub(crate) fn arguments(
    tokens: &[Token],
    open: usize,
) -> Result<(Vec<&[Token]>, usize), ImportError> {
    let mut args = Vec::new();
    let (mut depth, mut start) = (0usize, open + 1);
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            depth -= 1;
            if depth == 0 {
                if i > start {
                    args.push(&tokens[start..i]);
                }
                return Ok((args, i + 1));
            }
        } else if t.is(",") && depth == 1 {
            args.push(&tokens[start..i]);
            start = i + 1;
        }
    }
    Err(syntax(tokens[open].line, "a ( is not closed"))
}

/// Tokens as written, joined by spaces (for messages).
pub(crate) fn written(tokens: &[Token]) -> String {
    let mut out = String::new();
    for t in tokens {
        let glue = [".", "(", ")", ",", "="].iter().any(|p| t.is(p))
            || out.ends_with(['.', '(', ' ', '=']);
        if !out.is_empty() && !glue {
            out.push(' ');
        }
        if t.string {
            out.push_str(&format!("\"{}\"", t.text));
        } else {
            out.push_str(&t.text);
        }
        if t.is(",") {
            out.push(' ');
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_lines_comments_and_strings() {
        let text = "vcl 4.1; # c\n// c\n/* a\n b */ backend b-1 { .port = \"80\"; }\nsub x { d.w(1.5, {\"q\nr\"}); }\n";
        let toks = tokens(text).expect("tokens");
        let texts: Vec<&str> = toks.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "vcl", "4.1", ";", "backend", "b-1", "{", ".", "port", "=", "80", ";", "}", "sub",
                "x", "{", "d", ".", "w", "(", "1.5", ",", "q\nr", ")", ";", "}"
            ]
        );
        assert_eq!(toks[3].line, 4);
        assert_eq!(toks[12].line, 5);
        let decls = declarations(&toks).expect("declarations");
        assert_eq!(decls.len(), 2);
        assert_eq!(decls[0].name.text, "b-1");
        let body = statements(decls[1].body).expect("statements");
        assert_eq!(body.len(), 1);
        let (args, _) = arguments(body[0], 3).expect("arguments");
        assert_eq!(args.len(), 2);
        assert_eq!(written(body[0]), "d.w(1.5, \"q\nr\")");
    }

    #[test]
    fn broken_syntax_has_its_line() {
        for (text, line) in [
            ("sub a {\n", 1),
            ("x \"a\n\";", 1),
            ("/* x", 1),
            ("sub a { b }\n", 1),
        ] {
            let err = tokens(text)
                .and_then(|t| {
                    let d = declarations(&t)?;
                    for decl in d {
                        statements(decl.body)?;
                    }
                    Ok(())
                })
                .expect_err(text);
            assert_eq!(err.line(), Some(line), "{text}: {err}");
        }
    }
}
