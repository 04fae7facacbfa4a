//! The cluster's settings as every source stores them: one JSON object of
//! cluster-file settings (`PREFIX/config` on etcd and ZooKeeper), read
//! and changed here so that each source only moves bytes.

use serde_json::{Map, Value};

use crate::Error;
use crate::cluster::Cluster;
use crate::member::{Contents, Member, config_key, shown};

/// The settings stored as `bytes` at `key` (`None`: none stored, empty).
pub fn read_settings(key: &str, bytes: Option<&[u8]>) -> Result<Map<String, Value>, Error> {
    let Some(bytes) = bytes else {
        return Ok(Map::new());
    };
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        read => {
            let what = match read {
                Ok(json) => shown(&json),
                Err(e) => format!("not JSON ({e} of the value)"),
            };
            Err(Error::InvalidValue {
                key: key.to_owned(),
                message: format!(
                    "{what} where a JSON object of cluster-file settings is expected; \
                     write the settings again (config --set replaces it)"
                ),
            })
        }
    }
}

/// The settings `held` (as stored: `None` for nothing, or a value that is
/// not an object, which is replaced) with `changes` made: each `(setting,
/// Some(value))` sets a cluster-file setting, `(setting, None)` removes it.
/// Checked against the members of `contents` with the same checks as a
/// cluster file, as if written after every one of them; with no member,
/// on a stand-in node. Returns the new settings and their text to store.
/// Cost: one build of the placement.
pub fn change_settings(
    contents: &mut Contents,
    held: Option<&[u8]>,
    changes: &[(String, Option<Value>)],
) -> Result<(Map<String, Value>, String), Error> {
    let mut config = match held.map(serde_json::from_slice) {
        Some(Ok(Value::Object(map))) => map,
        _ => Map::new(),
    };
    for (setting, value) in changes {
        if setting == "nodes" {
            return Err(Error::InvalidOption {
                option: "config",
                message: "members are not config: they register under nodes/ (ringwise join)"
                    .into(),
            });
        }
        match value {
            Some(value) => config.insert(setting.clone(), value.clone()),
            None => config.remove(setting),
        };
    }
    let text = Value::Object(config.clone()).to_string();
    contents.config = Some(text.clone().into_bytes());
    // Written after every member present: the checks a config written by
    // hand gets at the next read (a member it cannot build that was there
    // before it makes it a bad config) apply to all of them.
    contents.config_written = Some(i64::MAX);
    if contents.members().is_empty() {
        // No member to build with: check the settings on a stand-in node.
        let stand_in = format!("{}check", contents.nodes_prefix());
        contents.put(&stand_in, b"{}", 1, 1);
    }
    Cluster::from_contents(contents)?;
    Ok((config, text))
}

/// Checks that `member`, registered as `name`, can be built under the
/// cluster's `settings` (as [`read_settings`] returns them): what a
/// watcher would otherwise leave out as soon as it joins (a weight whose
/// points pass the budget alone, a weight the algorithm does not take).
/// The error names the field at fault as its option (`weight`, `zone`,
/// `points`, `tokens`, `slots`). Settings no member could be built with
/// are the config's problem, not the member's: `Ok`. Cost: one build of
/// the member alone (refused before it allocates when past the budget).
pub fn check_member(
    settings: &Map<String, Value>,
    name: &str,
    member: &Member,
) -> Result<(), Error> {
    let mut contents = Contents::new("/check");
    let text = Value::Object(settings.clone()).to_string();
    contents.put(&config_key("/check"), text.as_bytes(), 1, 1);
    let Ok(Some(why)) = contents.refusal(name, member) else {
        return Ok(());
    };
    let (option, why) = match why
        .strip_prefix("field `")
        .and_then(|w| w.split_once("`: "))
    {
        Some((field, why)) => {
            let option = ["weight", "zone", "points", "tokens", "slots"]
                .into_iter()
                .find(|f| *f == field)
                .unwrap_or("member");
            (option, why.to_owned())
        }
        None => ("member", why),
    };
    let why = why
        .strip_prefix("this member alone cannot be built under the cluster's settings: ")
        .unwrap_or(&why)
        .replace("; it is left out: ", "; ");
    Err(Error::InvalidOption {
        option,
        message: format!(
            "member \"{name}\" cannot be built under the cluster's settings (every client \
             would leave it out of the ring): {why}"
        ),
    })
}
