//! The benchmark keys `user:0..user:199999`, shared by the bench targets.

/// Keys per benchmark iteration.
pub const KEYS: usize = 200_000;

/// The keys packed in one buffer (2.2 MB), as a server would see them
/// arriving, rather than 200,000 separate heap strings (11 MB) whose
/// streaming would evict the ring from the cache and measure that instead.
pub struct Keys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Keys {
    pub fn new() -> Self {
        let mut keys = Keys {
            bytes: Vec::new(),
            ends: Vec::new(),
        };
        for i in 0..KEYS {
            keys.bytes.extend_from_slice(format!("user:{i}").as_bytes());
            keys.ends.push(keys.bytes.len());
        }
        keys
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(s, &e)| &self.bytes[s..e])
    }

    /// The keys as a slice of slices, the input of the batch calls (and of
    /// the per-key loops they are compared with).
    #[allow(dead_code)] // not every bench target uses it
    pub fn slices(&self) -> Vec<&[u8]> {
        self.iter().collect()
    }
}
