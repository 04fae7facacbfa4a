//! One-shot reads and writes of a cluster under a prefix: what `ringwise
//! lookup --etcd` and `ringwise config` do without following changes.
//! Each fails over between the endpoints until the connection's deadline
//! ([`Connection::deadline`]).

use etcd_client::{Client, Compare, CompareOp, GetOptions, Txn, TxnOp};

use ringwise_membership::member::config_key;
use ringwise_membership::{Cluster, Contents, change_settings, read_settings};

use crate::Error;
use crate::connect::{Connection, Link, bounded};

/// The cluster under `prefix` now (a linearizable read) and its revision.
/// Cost: one round trip and one build.
pub async fn read(connection: &Connection, prefix: &str) -> Result<(Cluster, i64), Error> {
    let (mut contents, revision) = list_anywhere(connection, prefix, &mut None).await?;
    Ok((Cluster::from_contents(&mut contents)?, revision))
}

/// The settings stored at `PREFIX/config` (empty when none are).
pub async fn settings(
    connection: &Connection,
    prefix: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let key = config_key(prefix);
    let wanted = key.as_str();
    let answer = connection
        .call("read the config", |mut client| async move {
            let get = client.get(wanted, None);
            bounded("read the config", connection.timeout, get).await
        })
        .await?;
    let value = answer.kvs().first().map(|kv| kv.value());
    Ok(read_settings(&key, value)?)
}

/// Changes `PREFIX/config`: each `(setting, Some(value))` sets a
/// cluster-file setting, `(setting, None)` removes it (back to its
/// default). The result is checked against the members present (the same
/// checks as a cluster file) and written only if the config did not change
/// meanwhile (a transaction on its revision), so nothing invalid or lost is
/// ever stored. Returns the new config.
///
/// After a failure to reach etcd the whole read-check-write is repeated on
/// the next endpoint: a write that was applied although its answer was
/// lost is read back and written again unchanged.
pub async fn configure(
    connection: &Connection,
    prefix: &str,
    changes: &[(String, Option<serde_json::Value>)],
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    connection
        .call("change the config", |mut client| async move {
            configure_once(&mut client, connection, prefix, changes).await
        })
        .await
}

/// One attempt of [`configure`].
async fn configure_once(
    client: &mut Client,
    connection: &Connection,
    prefix: &str,
    changes: &[(String, Option<serde_json::Value>)],
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let key = config_key(prefix);
    let timeout = connection.timeout;
    let (mut contents, _) = list(client, prefix, connection).await?;
    let current = bounded("read the config", timeout, client.get(key.clone(), None)).await?;
    let held = current.kvs().first();
    let (config, text) = change_settings(&mut contents, held.map(|kv| kv.value()), changes)?;
    let unchanged = match held {
        Some(kv) => Compare::mod_revision(key.clone(), CompareOp::Equal, kv.mod_revision()),
        None => Compare::create_revision(key.clone(), CompareOp::Equal, 0),
    };
    let txn = Txn::new()
        .when([unchanged])
        .and_then([TxnOp::put(key.clone(), text, None)]);
    let answer = bounded("write the config", timeout, client.txn(txn)).await?;
    if !answer.succeeded() {
        return Err(Error::InvalidValue {
            key,
            message: "changed by someone else meanwhile; nothing written, try again".into(),
        });
    }
    Ok(config)
}

/// [`list`] through any endpoint that answers, failing over until the
/// connection's deadline; `link` (connected afresh when `None`) ends on
/// the endpoint that answered.
pub(crate) async fn list_anywhere(
    connection: &Connection,
    prefix: &str,
    link: &mut Option<Link>,
) -> Result<(Contents, i64), Error> {
    connection
        .retry("list the members", link, |mut client| async move {
            list(&mut client, prefix, connection).await
        })
        .await
}

/// A linearizable read of everything under `prefix`, and its revision.
pub(crate) async fn list(
    client: &mut Client,
    prefix: &str,
    connection: &Connection,
) -> Result<(Contents, i64), Error> {
    let prefix = format!("{}/", prefix.trim_end_matches('/'));
    let options = GetOptions::new().with_prefix();
    let answer = bounded(
        "list the members",
        connection.timeout,
        client.get(prefix.clone(), Some(options)),
    )
    .await?;
    let revision = answer.header().map_or(0, |h| h.revision());
    let mut contents = Contents::new(&prefix);
    for kv in answer.kvs() {
        let key = String::from_utf8_lossy(kv.key());
        contents.put(&key, kv.value(), kv.create_revision(), kv.mod_revision());
    }
    Ok((contents, revision))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_endpoint_is_a_clear_error_not_a_panic() {
        let mut none = Connection::parse("127.0.0.1:2379").expect("one");
        none.endpoints.clear();
        match read(&none, "/p").await {
            Err(Error::InvalidOption { option, .. }) => assert_eq!(option, "endpoints"),
            other => panic!("{other:?}"),
        }
    }
}
