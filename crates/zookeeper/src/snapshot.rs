//! Reading a prefix as one consistent snapshot, versioned by zxid.
//!
//! ZooKeeper has no range read, but it has `multiRead` (3.6+): reads sent
//! as one request and answered from one state of the server's tree (one
//! worker reads the whole request, and the commit processor drains the
//! reads in flight before it applies a write). [`list`] sends, as one
//! multiRead, `getChildren(PREFIX/nodes)`, `getData` of the prefix, of
//! `PREFIX/nodes`, of `PREFIX/config` and of every member it expects; if a
//! child it gets is not among the members it asked for (one joined since
//! the names were known), it asks again with the new names. So the
//! contents are the tree at one point.
//!
//! The version of that snapshot is the highest zxid it reflects: the
//! `pzxid` of the prefix (config created or deleted) and of `PREFIX/nodes`
//! (a member created or deleted), the `mzxid` of the config and of every
//! member. Every change of the contents raises one of them to its own
//! zxid, so two snapshots with the same version hold the same contents,
//! on any server of the ensemble: equal zxid, equal ring.
//!
//! Quirk: a request is bounded by the server's `jute.maxbuffer` (1 MiB by
//! default: about 27,000 reads of 24-character paths), and a larger one
//! makes the server drop the connection. So above [`CHUNK_BYTES`] of reads
//! (about 13,000 such members) they go in several multiReads, each with the prefix's and the nodes' stats again: a join,
//! a leave or a config change between them changes a stat and the whole
//! read starts over, so the members are one set at one point. What this
//! cannot see is a member's value rewritten in place (`set`) between two
//! parts; registrars never do that (a member that changes leaves and joins
//! again), and the write's event lists again right after.
//!
//! Cost: one round trip (one per 13,000 members or so) when the names are
//! known, one more after a join the events did not name; a prefix of
//! 10,000 members is about 1.5 MB of replies.

use zookeeper_client as zk;

use ringwise_membership::Contents;
use ringwise_membership::member::config_key;

use crate::error::{Error, classify};
use crate::session::{Settings, nodes_dir};

/// How many times [`list`] starts over when the members keep changing
/// between its reads.
const ATTEMPTS: usize = 20;

/// The most bytes of member reads in one multiRead: half of the default
/// `jute.maxbuffer` (about 13,000 members of 24-character paths).
pub(crate) const CHUNK_BYTES: usize = 512 * 1024;

/// `names` in parts of at most [`CHUNK_BYTES`] of requests each (one
/// empty part for none). A read costs 9 bytes of multi header, 4 of
/// length, the path and 1 (the watch flag).
fn parts<'a>(dir: &str, names: &'a [String]) -> Vec<&'a [String]> {
    let mut parts = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, name) in names.iter().enumerate() {
        let cost = 9 + 4 + dir.len() + 1 + name.len() + 1;
        if bytes + cost > CHUNK_BYTES && i > start {
            parts.push(&names[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += cost;
    }
    parts.push(&names[start..]);
    parts
}

/// The contents under `prefix` as of one state of the tree, and its
/// version (the highest zxid they reflect; 0 for an empty prefix never
/// written). `names` are the members expected (any guess: one missing
/// costs a round trip, one too many an operation).
pub(crate) async fn list(
    client: &zk::Client,
    settings: &Settings,
    prefix: &str,
    mut names: Vec<String>,
) -> Result<(Contents, i64), Error> {
    let dir = nodes_dir(prefix);
    let config = config_key(prefix);
    let here = |e| classify("list the members", prefix, settings.authenticated(), e);
    'attempt: for _ in 0..ATTEMPTS {
        names.sort_unstable();
        names.dedup();
        let mut children = Vec::new();
        let mut parents = None;
        let mut read = Vec::with_capacity(names.len());
        for (part, chunk) in parts(&dir, &names).into_iter().enumerate() {
            let mut reader = client.new_multi_reader();
            if part == 0 {
                reader.add_get_children(&dir).map_err(here)?;
            }
            for path in [prefix, dir.as_str(), config.as_str()] {
                reader.add_get_data(path).map_err(here)?;
            }
            for name in chunk {
                reader
                    .add_get_data(&format!("{dir}/{name}"))
                    .map_err(here)?;
            }
            let mut results = reader.commit().await.map_err(here)?.into_iter();
            if part == 0 {
                children = match results.next() {
                    Some(zk::MultiReadResult::Children { children }) => children,
                    Some(zk::MultiReadResult::Error {
                        err: zk::Error::NoNode,
                    }) => Vec::new(),
                    Some(zk::MultiReadResult::Error { err }) => return Err(here(err)),
                    _ => return Err(here(unexpected())),
                };
                children.sort_unstable();
                // Every member read? Names read that are not children
                // (gone since they were known) read as NoNode, left out.
                if children.iter().any(|c| names.binary_search(c).is_err()) {
                    names = children;
                    continue 'attempt;
                }
            }
            let stats = [
                data(results.next()).map_err(here)?,
                data(results.next()).map_err(here)?,
                data(results.next()).map_err(here)?,
            ];
            let probe: Vec<Option<(i64, i64)>> = stats
                .iter()
                .map(|s| s.as_ref().map(|(_, stat)| (stat.pzxid, stat.mzxid)))
                .collect();
            match &parents {
                None => parents = Some((probe, stats)),
                // A join, a leave or a config change between the parts.
                Some((first, _)) if *first != probe => continue 'attempt,
                Some(_) => {}
            }
            for name in chunk {
                read.push((name, data(results.next()).map_err(here)?));
            }
        }
        let Some((_, [prefix_stat, dir_stat, config_data])) = parents else {
            continue;
        };
        let mut contents = Contents::new(prefix);
        let mut version = 0i64;
        for (_, stat) in prefix_stat.iter().chain(dir_stat.iter()) {
            version = version.max(stat.pzxid);
        }
        if let Some((value, stat)) = config_data {
            version = version.max(stat.mzxid);
            contents.put(&config, &value, stat.czxid, stat.mzxid);
        }
        for (name, found) in read {
            // A child of the same read cannot be missing from it; tolerate
            // it anyway (it is then simply not there).
            let Some((value, stat)) = found else { continue };
            if children.binary_search(name).is_ok() {
                version = version.max(stat.mzxid);
                contents.put(&format!("{dir}/{name}"), &value, stat.czxid, stat.mzxid);
            }
        }
        return Ok((contents, version));
    }
    Err(Error::InvalidOption {
        option: "prefix",
        message: format!(
            "{prefix}: the members changed between every one of {ATTEMPTS} reads; try again"
        ),
    })
}

/// A `getData` answer of a multiRead: `None` for a znode that is not there.
fn data(result: Option<zk::MultiReadResult>) -> Result<Option<(Vec<u8>, zk::Stat)>, zk::Error> {
    match result {
        Some(zk::MultiReadResult::Data { data, stat }) => Ok(Some((data, stat))),
        Some(zk::MultiReadResult::Error {
            err: zk::Error::NoNode,
        }) => Ok(None),
        Some(zk::MultiReadResult::Error { err }) => Err(err),
        _ => Err(unexpected()),
    }
}

fn unexpected() -> zk::Error {
    zk::Error::UnexpectedError("a multiRead answer of another shape than asked".into())
}

/// `sync`, then the stats of the prefix, `PREFIX/nodes` and the config in
/// one multiRead: the highest of their zxids (the prefix's and the
/// nodes' `pzxid`, the config's `mzxid`). A watcher holding that version
/// or later is current, but for member data changes, which come as
/// events. Cost: two small round trips.
pub(crate) async fn stamp(
    client: &zk::Client,
    settings: &Settings,
    prefix: &str,
) -> Result<i64, Error> {
    let here = |e| classify("confirm the version", prefix, settings.authenticated(), e);
    client.sync(prefix).await.map_err(here)?;
    let dir = nodes_dir(prefix);
    let config = config_key(prefix);
    let mut reader = client.new_multi_reader();
    for path in [prefix, dir.as_str(), config.as_str()] {
        reader.add_get_data(path).map_err(here)?;
    }
    let mut seen = 0i64;
    for (i, result) in reader.commit().await.map_err(here)?.into_iter().enumerate() {
        match result {
            zk::MultiReadResult::Data { stat, .. } if i < 2 => seen = seen.max(stat.pzxid),
            zk::MultiReadResult::Data { stat, .. } => seen = seen.max(stat.mzxid),
            zk::MultiReadResult::Error {
                err: zk::Error::NoNode,
            } => {}
            zk::MultiReadResult::Error { err } => return Err(here(err)),
            _ => {}
        }
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_split_by_request_bytes() {
        let none: Vec<String> = Vec::new();
        assert_eq!(parts("/p/nodes", &none), [&[] as &[String]]);
        let names: Vec<String> = (0..30_000).map(|i| format!("member-{i:05}")).collect();
        let split = parts("/big/nodes", &names);
        assert_eq!(split.len(), 3, "30,000 reads of 37 bytes in 512 KiB parts");
        assert_eq!(split.iter().map(|p| p.len()).sum::<usize>(), 30_000);
        assert_eq!(split.concat(), names, "in order, none lost");
    }
}
