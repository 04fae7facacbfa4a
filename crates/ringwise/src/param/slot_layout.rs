//! [`SlotLayout`]: how a `slots` cluster deals its 16384 slots out to nodes
//! whose slots the description does not list.
//!
//! The value of the `slot_layout` parameter, kept apart from
//! `algo/slots.rs` (which computes each layout) so that the parameter list
//! depends on this small file and not on the slot table, which itself reads
//! the parameters.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// Which contiguous layout a `slots` cluster starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SlotLayout {
    /// What `redis-cli --cluster create` assigns to the same masters
    /// (`clusterManagerCommandCreate`): a 32-bit float cursor advanced by
    /// `16384 / N`, each master's last slot `lround(cursor + 16384/N - 1)`.
    /// For 3 masters: 0–5460, 5461–10922, 10923–16383.
    #[default]
    RedisCli,
    /// Node `i` of `N` gets `[i·16384/N, (i+1)·16384/N)` in integers (the
    /// default before redis-cli's was matched). For 3 nodes: 0–5460,
    /// 5461–10921, 10922–16383.
    Even,
}

impl SlotLayout {
    /// Every layout, in documentation order.
    pub const ALL: &'static [SlotLayout] = &[SlotLayout::RedisCli, SlotLayout::Even];

    /// Their names, in the same order.
    pub const NAMES: &'static [&'static str] = &["redis-cli", "even"];

    /// The name as a cluster file writes it.
    pub fn name(self) -> &'static str {
        SlotLayout::NAMES[SlotLayout::ALL.iter().position(|&l| l == self).unwrap_or(0)]
    }
}

impl FromStr for SlotLayout {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Error> {
        let at = SlotLayout::NAMES.iter().position(|&n| n == name);
        at.map(|i| SlotLayout::ALL[i])
            .ok_or_else(|| Error::InvalidParameter {
                algorithm: "slots",
                parameter: "slot_layout",
                value: format!("{name:?}"),
                expected: "one of redis-cli (what `redis-cli --cluster create` assigns), even",
            })
    }
}

impl fmt::Display for SlotLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (&l, &name) in SlotLayout::ALL.iter().zip(SlotLayout::NAMES) {
            assert_eq!(name.parse::<SlotLayout>(), Ok(l));
            assert_eq!(l.to_string(), name);
        }
        assert!("redis".parse::<SlotLayout>().is_err());
    }
}
