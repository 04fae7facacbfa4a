//! The one-shot reads and writes of `ringwise config`: the settings at
//! `PREFIX/config`, read, and changed only if nobody changed them
//! meanwhile (a compare on the znode's version, or its absence).
//!
//! Cost: one snapshot of the prefix (to check the settings against the
//! members present) and two round trips.

use zookeeper_client as zk;

use ringwise_membership::member::config_key;
use ringwise_membership::{change_settings, read_settings};

use crate::error::{Error, classify};
use crate::session::Settings;
use crate::snapshot::list;

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
