//! Reading a prefix as one consistent snapshot, and the one-shot reads and
//! writes of `ringwise lookup` and `ringwise config`.
//!
//! How a snapshot is read. ZooKeeper has no range read, but it has
//! `multiRead` (3.6+): reads sent as one request and answered from one
//! state of the server's tree (one worker reads the whole request, and the
//! commit processor drains the reads in flight before it applies a
//! write). [`list`] sends, as one multiRead, `getChildren(PREFIX/
//! nodes)`, `getData` of the prefix, of `PREFIX/nodes`, of `PREFIX/config`
//! and of every member it expects; if a child it gets is not among the
//! members it asked for (one joined since the names were known), it asks
//! again with the new names. So the contents are the tree at one point.
//!
//! The version of that snapshot is the highest zxid it reflects: the
//! `pzxid` of the prefix (config created or deleted) and of `PREFIX/nodes`
//! (a member created or deleted), the `mzxid` of the config and of every
//! member. Every change of the contents raises one of them to its own
//! zxid, so two snapshots with the same version hold the same contents,
//! on any server of the ensemble: equal zxid, equal ring.
//!
//! Cost: one round trip when the names are known (two after a join), with
//! one operation per member; a prefix of 10,000 members is a reply of
//! about 2 MB.

use zookeeper_client as zk;

use ringwise_membership::member::config_key;
use ringwise_membership::{Contents, change_settings, read_settings};

use crate::error::{Error, classify};
use crate::session::{Settings, nodes_dir};

/// How many times [`list`] asks again when the members keep changing
/// between its reads.
const ATTEMPTS: usize = 20;

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
    for _ in 0..ATTEMPTS {
        names.sort_unstable();
        names.dedup();
        let mut reader = client.new_multi_reader();
        reader.add_get_children(&dir).map_err(here)?;
        for path in [prefix, dir.as_str(), config.as_str()] {
            reader.add_get_data(path).map_err(here)?;
        }
        for name in &names {
            reader
                .add_get_data(&format!("{dir}/{name}"))
                .map_err(here)?;
        }
        let mut results = reader.commit().await.map_err(here)?.into_iter();
        let mut children = match results.next() {
            Some(zk::MultiReadResult::Children { children }) => children,
            Some(zk::MultiReadResult::Error {
                err: zk::Error::NoNode,
            }) => Vec::new(),
            Some(zk::MultiReadResult::Error { err }) => return Err(here(err)),
            _ => return Err(here(zk::Error::UnexpectedError("multiRead answer".into()))),
        };
        children.sort_unstable();
        // Every member was read? Names read that are not children (gone
        // since they were known) read as NoNode and are left out.
        if children.iter().any(|c| names.binary_search(c).is_err()) {
            names = children;
            continue;
        }
        let mut contents = Contents::new(prefix);
        let mut version = 0i64;
        let stat_of = |result: Option<zk::MultiReadResult>| match result {
            Some(zk::MultiReadResult::Data { data, stat }) => Ok(Some((data, stat))),
            Some(zk::MultiReadResult::Error {
                err: zk::Error::NoNode,
            }) => Ok(None),
            Some(zk::MultiReadResult::Error { err }) => Err(here(err)),
            _ => Err(here(zk::Error::UnexpectedError("multiRead answer".into()))),
        };
        let parents = [stat_of(results.next())?, stat_of(results.next())?];
        for (_, stat) in parents.iter().flatten() {
            version = version.max(stat.pzxid);
        }
        if let Some((data, stat)) = stat_of(results.next())? {
            version = version.max(stat.mzxid);
            contents.put(&config, &data, stat.czxid, stat.mzxid);
        }
        for name in &names {
            let read = stat_of(results.next())?;
            if children.binary_search(name).is_err() {
                continue;
            }
            // A child of the same read cannot be missing from it; tolerate
            // it anyway (it is then simply not there).
            if let Some((data, stat)) = read {
                version = version.max(stat.mzxid);
                contents.put(&format!("{dir}/{name}"), &data, stat.czxid, stat.mzxid);
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

/// The settings stored at `PREFIX/config` (empty when none are).
pub(crate) async fn settings(
    client: &zk::Client,
    settings: &Settings,
    prefix: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let key = config_key(prefix);
    match client.get_data(&key).await {
        Ok((data, _)) => Ok(read_settings(&key, Some(&data))?),
        Err(zk::Error::NoNode) => Ok(read_settings(&key, None)?),
        Err(e) => Err(classify(
            "read the config",
            &key,
            settings.authenticated(),
            e,
        )),
    }
}

/// Changes `PREFIX/config`, checked against the members present, written
/// only if the config did not change meanwhile (its version, or its
/// absence: a create). Returns the new settings.
pub(crate) async fn configure(
    client: &zk::Client,
    settings: &Settings,
    prefix: &str,
    changes: &[(String, Option<serde_json::Value>)],
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let key = config_key(prefix);
    let authenticated = settings.authenticated();
    let (mut contents, _) = list(client, settings, prefix, Vec::new()).await?;
    let held = match client.get_data(&key).await {
        Ok((data, stat)) => Some((data, stat.version)),
        Err(zk::Error::NoNode) => None,
        Err(e) => return Err(classify("read the config", &key, authenticated, e)),
    };
    let stored = held.as_ref().map(|(data, _)| data.as_slice());
    let (config, text) = change_settings(&mut contents, stored, changes)?;
    let written = match held {
        Some((_, version)) => client
            .set_data(&key, text.as_bytes(), Some(version))
            .await
            .map(drop),
        None => {
            crate::session::make_path(client, settings, prefix).await?;
            let options = zk::CreateMode::Persistent.with_acls(settings.acls());
            client
                .create(&key, text.as_bytes(), &options)
                .await
                .map(drop)
        }
    };
    match written {
        Ok(()) => Ok(config),
        Err(zk::Error::BadVersion | zk::Error::NodeExists) => Err(Error::Membership(
            ringwise_membership::Error::InvalidValue {
                key,
                message: "changed by someone else meanwhile; nothing written, try again".into(),
            },
        )),
        Err(e) => Err(classify("write the config", &key, authenticated, e)),
    }
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
