//! A retrieval's command and keys, as [`super::parse`] hands them over:
//! the keys left in the request's line, read on demand, so a line of
//! 100,000 keys costs no list.

/// The retrieval commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retrieval {
    /// `get` (and the ancient `bget`, which memcached still answers).
    Get,
    /// `gets`: with the CAS value.
    Gets,
    /// `gat <exptime>`: get and touch.
    Gat,
    /// `gats <exptime>`.
    Gats,
}

impl Retrieval {
    /// The command word the proxy sends.
    pub fn word(self) -> &'static [u8] {
        match self {
            Retrieval::Get => b"get",
            Retrieval::Gets => b"gets",
            Retrieval::Gat => b"gat",
            Retrieval::Gats => b"gats",
        }
    }
}

/// The keys of a retrieval: the rest of its line, split on spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys<'a> {
    text: &'a [u8],
    count: usize,
}

impl<'a> Keys<'a> {
    /// `count` keys in `text` (the parser counted and checked them).
    pub(super) fn new(text: &'a [u8], count: usize) -> Self {
        Keys { text, count }
    }

    /// The keys as the line wrote them (spaces between, maybe around).
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// How many keys, repeats counted.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is none (`gat <exptime>` alone).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        words(self.text)
    }

    /// The key of a one-key retrieval.
    pub fn single(&self) -> Option<&'a [u8]> {
        (self.count == 1).then(|| self.iter().next()).flatten()
    }
}

/// The space-separated words of `text`.
pub fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b' ').filter(|w| !w.is_empty())
}
