//! A backend's answers: where one ends, and the values of a retrieval.
//!
//! Source: memcached's `protocol.txt` and 1.6.18's `proto_text.c`. Every
//! answer the proxy waits for is one line ending `\r\n` (`STORED`,
//! `DELETED`, a number, `VERSION 1.6.18`, `ERROR`, `CLIENT_ERROR ...`,
//! `SERVER_ERROR ...`), except a retrieval's: any number of
//! `VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n` blocks and `END\r\n`,
//! or a single error line instead.
//!
//! Cost: O(lines) per answer, the data blocks skipped by their length.

/// What a request's answer looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// One line.
    Line,
    /// `VALUE` blocks and `END`.
    Values,
    /// A meta command's answer: one line, and when it is `VA <len> ...`
    /// a data block of `len` bytes and `\r\n`.
    Meta,
}

/// A backend sent something that is not a memcached answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Garbled(pub String);

/// The length of the whole answer at the start of `buf`, `Ok(None)` when
/// more is to come.
pub fn frame(buf: &[u8], expect: Expect) -> Result<Option<usize>, Garbled> {
    let mut at = 0;
    loop {
        let Some(end) = line_end(&buf[at..])? else {
            return Ok(None);
        };
        let line = &buf[at..at + end];
        let next = at + end + 2;
        if expect == Expect::Meta {
            let Some(len) = meta_value_len(line) else {
                return Ok(Some(next));
            };
            let end = block_end(next, len)?;
            return Ok((buf.len() >= end).then_some(end));
        }
        if expect == Expect::Line || line == b"END" || is_error(line) {
            return Ok(Some(next));
        }
        let Some(len) = value_len(line) else {
            return Err(Garbled(format!(
                "expected VALUE or END, got {:?}",
                String::from_utf8_lossy(&line[..line.len().min(80)])
            )));
        };
        let end = block_end(next, len)?;
        if buf.len() < end {
            return Ok(None);
        }
        at = end;
    }
}

/// The largest value a backend may announce: memcached's item size tops
/// out at 1 GiB (`-I`); past that the answer is garbled, not buffered.
const MAX_VALUE: usize = 1 << 30;

/// Where a data block of `len` bytes starting at `start` ends (with its
/// `\r\n`).
fn block_end(start: usize, len: usize) -> Result<usize, Garbled> {
    if len > MAX_VALUE {
        return Err(Garbled(format!("a value of {len} bytes announced")));
    }
    Ok(start + len + 2)
}

/// Whether `line` is one of memcached's error answers.
pub fn is_error(line: &[u8]) -> bool {
    line == b"ERROR" || line.starts_with(b"CLIENT_ERROR") || line.starts_with(b"SERVER_ERROR")
}

/// The position of the `\r\n` ending the first line of `buf`.
/// `Ok(None)` while no `\n` came; a bare `\n` (memcached always writes
/// `\r\n`) is garbled.
fn line_end(buf: &[u8]) -> Result<Option<usize>, Garbled> {
    let Some(newline) = memchr::memchr(b'\n', buf) else {
        return Ok(None);
    };
    match newline.checked_sub(1) {
        Some(end) if buf[end] == b'\r' => Ok(Some(end)),
        _ => Err(Garbled("a line ended without \\r\\n".into())),
    }
}

/// The `<bytes>` of a `VALUE` line.
fn value_len(line: &[u8]) -> Option<usize> {
    let rest = line.strip_prefix(b"VALUE ")?;
    let len = rest.split(|&b| b == b' ').nth(2)?;
    std::str::from_utf8(len).ok()?.parse().ok()
}

/// The `<len>` of a meta `VA <len> <flags>*` line.
pub fn meta_value_len(line: &[u8]) -> Option<usize> {
    let rest = line.strip_prefix(b"VA ")?;
    let len = rest.split(|&b| b == b' ').next()?;
    std::str::from_utf8(len).ok()?.parse().ok()
}

/// The `VALUE` blocks of a whole retrieval answer, each with its key
/// (without the final `END`). A whole answer was framed by [`frame`].
pub fn values(answer: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let end = line_end(&answer[at..]).ok().flatten()?;
        let line = &answer[at..at + end];
        let len = value_len(line)?;
        let key = line[6..].split(|&b| b == b' ').next()?;
        let block_end = (at + end + 2 + len + 2).min(answer.len());
        let block = &answer[at..block_end];
        at = block_end;
        Some((key, block))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_lines_and_values() {
        assert_eq!(frame(b"STORED\r\nX", Expect::Line), Ok(Some(8)));
        assert_eq!(frame(b"STOR", Expect::Line), Ok(None));
        let two = b"VALUE a 0 1\r\n1\r\nVALUE b 5 3 9\r\nx\r\n\r\nEND\r\n";
        assert_eq!(frame(two, Expect::Values), Ok(Some(two.len())));
        assert_eq!(frame(&two[..20], Expect::Values), Ok(None));
        assert_eq!(frame(b"SERVER_ERROR oom\r\n", Expect::Values), Ok(Some(18)));
        assert!(frame(b"STORED\r\n", Expect::Values).is_err());
        // What memcached never sends is refused, never sliced past the end.
        assert!(frame(b"\n", Expect::Line).is_err());
        assert!(frame(b"STORED\n", Expect::Line).is_err());
        assert!(frame(b"VALUE a 0 1\n", Expect::Values).is_err());
        assert_eq!(frame(b"EN\r\n", Expect::Meta), Ok(Some(4)));
        assert_eq!(frame(b"VA 2 f5 t-1\r\nhi\r\n", Expect::Meta), Ok(Some(17)));
        assert_eq!(frame(b"VA 2 f5 t-1\r\nhi", Expect::Meta), Ok(None));
        let keys: Vec<&[u8]> = values(two).map(|(k, _)| k).collect();
        assert_eq!(keys, [&b"a"[..], b"b"]);
        let blocks: Vec<&[u8]> = values(two).map(|(_, b)| b).collect();
        assert_eq!(blocks[1], b"VALUE b 5 3 9\r\nx\r\n\r\n");
    }
}
