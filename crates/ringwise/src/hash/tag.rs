//! [`HashTag`]: which bytes of a key are hashed.
//!
//! Two rules are deployed. Anywhere (twemproxy's `hash_tag: "{}"`, Redis
//! Cluster, go-redis): the first opening byte, then the next closing byte,
//! with something between. At a line start (redis-rb's
//! `Redis::Distributed`, the regexp `/^\{(.+?)\}/`): the opening byte must
//! start the key or follow a `\n` (Ruby's `^` is a line anchor), at least
//! one byte follows it, none of them a `\n`, up to the first closing byte
//! after that one; so `{}}` is tagged `}` there and hashed whole anywhere.
//! A key without a tag is hashed whole. Cost: O(key length), no
//! allocation.

use crate::Error;

/// A hash tag: when a key holds a tag, only the bytes between its
/// delimiters are hashed, so `user:{42}:cart` and `user:{42}:profile` land
/// together. Written `"{}"` (anywhere in the key) or `"^{}"` (at a line
/// start, redis-rb's rule; see the module doc of `hash/tag.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashTag {
    open: u8,
    close: u8,
    line_start: bool,
}

impl HashTag {
    /// Redis Cluster's and go-redis's `{}`, anywhere in the key.
    pub const BRACES: HashTag = HashTag {
        open: b'{',
        close: b'}',
        line_start: false,
    };

    /// redis-rb's `/^\{(.+?)\}/`, written `"^{}"`.
    pub const REDIS_RB: HashTag = HashTag {
        open: b'{',
        close: b'}',
        line_start: true,
    };

    /// A tag from its two delimiter characters, e.g. `"{}"`, or from `^`
    /// and two delimiters for the line-start rule, e.g. `"^{}"`.
    pub fn new(delimiters: &str) -> Result<Self, Error> {
        let tag = |open: u8, close: u8, line_start| HashTag {
            open,
            close,
            line_start,
        };
        match *delimiters.as_bytes() {
            [open, close] if open.is_ascii() && close.is_ascii() => Ok(tag(open, close, false)),
            [b'^', open, close] if open.is_ascii() && close.is_ascii() && open != b'\n' => {
                Ok(tag(open, close, true))
            }
            _ => Err(Error::InvalidParameter {
                algorithm: "keys",
                parameter: "hash_tag",
                value: format!("{delimiters:?}"),
                expected: "two ASCII characters, the tag's opening and closing one, e.g. \"{}\" \
                           (or \"^{}\" for a tag only at a line start, as redis-rb)",
            }),
        }
    }

    /// The bytes of `key` that are hashed: the first tag's content, or the
    /// whole key.
    #[inline]
    pub fn hashed<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        if self.line_start {
            return self.at_line_start(key);
        }
        let Some(start) = key.iter().position(|&b| b == self.open) else {
            return key;
        };
        let rest = &key[start + 1..];
        match rest.iter().position(|&b| b == self.close) {
            Some(len) if len > 0 => &rest[..len],
            _ => key,
        }
    }

    /// `/^\{(.+?)\}/`: the leftmost line start where it matches.
    fn at_line_start<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        let mut line = 0;
        loop {
            if key.get(line) == Some(&self.open) {
                let body = &key[line + 1..];
                // `.+?`: one byte at least, then up to the first closing
                // byte; `.` matches anything but a newline.
                if body.first().is_some_and(|&b| b != b'\n') {
                    for (at, &b) in body.iter().enumerate().skip(1) {
                        if b == b'\n' {
                            break;
                        }
                        if b == self.close {
                            return &body[..at];
                        }
                    }
                }
            }
            match key[line..].iter().position(|&b| b == b'\n') {
                Some(newline) => line += newline + 1,
                None => return key,
            }
        }
    }

    /// The delimiters as written (`"^{}"` for the line-start rule).
    pub fn delimiters(&self) -> String {
        let mut text = String::from(if self.line_start { "^" } else { "" });
        text.push_str(&String::from_utf8_lossy(&[self.open, self.close]));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_rules() {
        let any = HashTag::new("{}").expect("tag");
        assert_eq!(any, HashTag::BRACES);
        let rb = HashTag::new("^{}").expect("tag");
        assert_eq!(rb, HashTag::REDIS_RB);
        let cases: [(&[u8], &[u8], &[u8]); 9] = [
            (b"{user}:1", b"user", b"user"),
            (b"a{user}:1", b"user", b"a{user}:1"),
            (b"{}}", b"{}}", b"}"),
            (b"{}", b"{}", b"{}"),
            (b"{a\nb}", b"a\nb", b"{a\nb}"),
            (b"x\n{t}y", b"t", b"t"),
            (b"{\n}\n{t}", b"\n", b"t"),
            (b"{abc", b"{abc", b"{abc"),
            (b"", b"", b""),
        ];
        for (key, anywhere, line_start) in cases {
            assert_eq!(any.hashed(key), anywhere, "{key:?}");
            assert_eq!(rb.hashed(key), line_start, "{key:?}");
        }
        assert_eq!(rb.delimiters(), "^{}");
        assert!(HashTag::new("^{}x").is_err());
        assert!(HashTag::new("{}}").is_err());
    }
}
