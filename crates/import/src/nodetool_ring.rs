//! `nodetool-ring`: the text `nodetool ring` prints, as Cassandra's
//! `org.apache.cassandra.tools.nodetool.Ring` lays it out.
//!
//! How it reads: one section per datacenter, opened by `Datacenter: NAME`
//! and a rule of `=`; a header `Address Rack Status State Load Owns
//! Token` (`Effective-Ownership` with a keyspace); a line holding only the
//! last token of the section (the ring's wrap, printed first); then one
//! row per token, `ADDRESS RACK STATUS STATE LOAD OWNS TOKEN`, the load
//! being one field (`?`) or two (`1.02 GiB`). A node with vnodes has one
//! row per token. Trailing `Warning:`/`Note:` lines are nodetool's advice.
//!
//! Each address becomes a member (in the order it first appears) with its
//! tokens, its rack as its `zone` and its section's datacenter, on the
//! `cassandra` algorithm (Murmur3Partitioner), so `lookup --replication
//! dc1=3` walks NetworkTopologyStrategy over the cluster as it is. Worked
//! example: the rows `10.0.4.1 rack1 Up Normal 1.02 GiB 15.52%
//! -8531699129511414324` and `... 2784249659845191438` give `[[nodes]]
//! name = "10.0.4.1"`, `zone = "rack1"`, `tokens = [-8531699129511414324,
//! 2784249659845191438]`.
//!
//! Refused: a token outside 64 bits (RandomPartitioner's 0..2^127, not
//! reproduced), an address in two racks or datacenters, a row that is not
//! of this shape. Nodes `Down` or `Joining`/`Leaving`/`Moving` are kept
//! with the tokens listed, and noted: clients route by those tokens.
//!
//! Cost: one pass over the text, O(length).

use ringwise::{Member, Settings};

use crate::{ImportError, Imported};

/// One node: its address, rack, datacenter, tokens and first line.
struct Node {
    address: String,
    rack: String,
    datacenter: Option<String>,
    tokens: Vec<i64>,
    line: usize,
}

pub(crate) fn read(text: &str, _select: Option<&str>) -> Result<Imported, ImportError> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut notes = Vec::new();
    let mut datacenter: Option<String> = None;
    let mut header = false;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if let Some(name) = trimmed.strip_prefix("Datacenter:") {
            datacenter = Some(name.trim().to_owned());
            header = false;
            continue;
        }
        let advice = ["Warning:", "Note:", "To view", "\""]
            .iter()
            .any(|p| trimmed.starts_with(p));
        if trimmed.is_empty() || trimmed.bytes().all(|b| b == b'=') || advice {
            continue;
        }
        if fields.first() == Some(&"Address") {
            header = true;
            continue;
        }
        // The wrap line: the section's last token alone.
        if fields.len() == 1 && fields[0].parse::<i128>().is_ok() {
            continue;
        }
        if !header || !(7..=8).contains(&fields.len()) {
            return Err(ImportError::Syntax {
                line,
                message: format!(
                    "{trimmed:?} is not a row of `nodetool ring` (ADDRESS RACK STATUS STATE \
                     LOAD OWNS TOKEN, under its Address header)"
                ),
            });
        }
        let token_text = fields[fields.len() - 1];
        let token: i64 = match token_text.parse::<i128>() {
            Ok(t) => i64::try_from(t).map_err(|_| ImportError::Unsupported {
                line,
                setting: format!("token {token_text}"),
                reason: "it is beyond 64 bits: a RandomPartitioner ring, which ringwise does \
                         not reproduce (it reproduces Murmur3Partitioner, Cassandra's default)"
                    .into(),
            })?,
            Err(_) => {
                return Err(ImportError::Syntax {
                    line,
                    message: format!("the last field {token_text:?} is not a token"),
                });
            }
        };
        let (address, rack, status, state) = (fields[0], fields[1], fields[2], fields[3]);
        crate::address::host_optional_port(address, line, "the address")?;
        match nodes.iter_mut().find(|n| n.address == address) {
            Some(node) => {
                if node.rack != rack || node.datacenter != datacenter {
                    return Err(ImportError::Syntax {
                        line,
                        message: format!(
                            "{address} is in rack {rack:?} here but {:?} on line {}: one node \
                             has one rack and one datacenter",
                            node.rack, node.line
                        ),
                    });
                }
                node.tokens.push(token);
            }
            None => {
                if status != "Up" || state != "Normal" {
                    notes.push(format!(
                        "line {line}: {address} is {status} and {state}; its tokens are \
                         placed as listed"
                    ));
                }
                nodes.push(Node {
                    address: address.to_owned(),
                    rack: rack.to_owned(),
                    datacenter: datacenter.clone(),
                    tokens: vec![token],
                    line,
                });
            }
        }
    }
    if nodes.is_empty() {
        return Err(ImportError::Missing {
            message: "no token rows: give the output of `nodetool ring`".into(),
        });
    }
    let mut settings = Settings::default();
    settings.algorithm = Some("cassandra".into());
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    for node in nodes {
        let mut member = Member::new(node.address);
        member.zone = Some(node.rack);
        member.datacenter = node.datacenter;
        member.tokens = Some(node.tokens);
        imported.push(member, node.line);
    }
    Ok(imported)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RING: &str = "\nDatacenter: dc1\n==========\nAddress    Rack        Status State   Load            Owns                Token\n                                                                               50\n10.0.4.1   rack1       Up     Normal  1.02 GiB        15.52%              -20\n10.0.4.2   rack2       Down   Normal  ?               61.85%              10\n10.0.4.1   rack1       Up     Normal  1.02 GiB        15.52%              50\n\nDatacenter: dc2\n==========\nAddress    Rack        Status State   Load            Owns                Token\n                                                                               40\n10.1.0.1   r1          Up     Normal  3 KiB           22.63%              40\n\n  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n  To view status related info of a node use \"nodetool status\" instead.\n";

    #[test]
    fn sections_give_datacenters_racks_and_tokens() {
        let imported = read(RING, None).expect("read");
        let names: Vec<&str> = imported.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["10.0.4.1", "10.0.4.2", "10.1.0.1"]);
        assert_eq!(imported.members[0].tokens, Some(vec![-20, 50]));
        assert_eq!(imported.members[0].zone.as_deref(), Some("rack1"));
        assert_eq!(imported.members[2].datacenter.as_deref(), Some("dc2"));
        assert_eq!(imported.member_lines, [6, 7, 14]);
        assert_eq!(imported.notes.len(), 1, "{:?}", imported.notes);
        assert!(imported.notes[0].contains("Down"));
        assert!(imported.spec().is_ok());
    }

    #[test]
    fn what_is_not_a_murmur3_ring_is_refused_with_its_line() {
        let header = "Address Rack Status State Load Owns Token\n";
        for (text, line, words) in [
            (
                format!("{header}a r Up Normal ? 1% 170141183460469231731687303715884105727\n"),
                2,
                "RandomPartitioner",
            ),
            (
                format!("{header}a r Up Normal ? 1% 5\na r2 Up Normal ? 1% 6\n"),
                3,
                "one rack",
            ),
            (format!("{header}a r Up Normal\n"), 2, "not a row"),
            ("a r Up Normal ? 1% 5\n".to_owned(), 1, "not a row"),
            (format!("{header}a r Up Normal ? 1% x5\n"), 2, "not a token"),
        ] {
            let e = read(&text, None).expect_err("refused");
            assert_eq!(e.line(), Some(line), "{text}: {e}");
            assert!(e.to_string().contains(words), "{text}: {e}");
        }
        assert!(read("", None).is_err());
    }
}
