//! Against real etcd: values under the prefix that are not what
//! they seem (a member stored as an array, a number, text or null; a
//! config that drops the members already in the ring), endpoints refused
//! before anything connects, and test servers that die with the process
//! that started them, SIGKILL included.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::live::serial;
use crate::support::etcd::{Etcd, free_port};
use etcd_client::Client;
use ringwise_etcd::member::{config_key, node_key};
use ringwise_etcd::{Connection, Error, Member, Options, Tls};

const PREFIX: &str = "/ringwise-stored-values";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

async fn client(etcd: &Etcd) -> Client {
    Client::connect([etcd.endpoint(0)], None)
        .await
        .expect("connect")
}

/// Puts every `(key, value)` pair, in order (each at its own revision).
async fn put_all(raw: &mut Client, pairs: &[(String, String)]) {
    for (key, value) in pairs {
        raw.put(key.as_str(), value.as_str(), None)
            .await
            .expect("put");
    }
}

/// A skip reason names the field or what the value is, never the line of
/// a file (there is none: nothing is written out and parsed again).
fn no_file_line(why: &str) {
    for mark in ["cluster file", "line ", "column "] {
        assert!(!why.contains(mark), "{mark:?} in {why:?}");
    }
}

/// The value of a member is a JSON object of its fields or nothing: an
/// array (serde's derive would read it by position: weight 7.5, zone
/// "zone-q", address "10.0.0.9:1"), a number, text, null, or a field of
/// the wrong type are left out, each under its key with what is wrong.
#[test]
fn a_member_stored_as_a_json_array_is_skipped_by_key() {
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        let member = |name: &str, value: &str| (node_key(PREFIX, name), value.to_owned());
        let pairs = [
            member("good", r#"{"weight": 2, "zone": "eu-1a"}"#),
            member("array", r#"[7.5, "zone-q", "10.0.0.9:1"]"#),
            member("number", "7.5"),
            member("text", r#""weight""#),
            member("null", "null"),
            member("metadata-array", r#"{"metadata": [1, 2]}"#),
            member("weight-text", r#"{"weight": "2"}"#),
            member("weight-null", r#"{"weight": null}"#),
            member("points-object", r#"{"points": {"0": 1}}"#),
        ];
        put_all(&mut raw, &pairs).await;
        let connection = Connection::parse(&etcd.endpoint(0)).expect("endpoint");
        let (cluster, _) = ringwise_etcd::read(&connection, PREFIX)
            .await
            .expect("a read of the valid member");
        let names: Vec<&str> = cluster.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["good"], "skipped: {:?}", cluster.skipped);
        let why = |name: &str| {
            let key = node_key(PREFIX, name);
            let why = cluster.skipped.get(&key).unwrap_or_else(|| {
                panic!("{key} not skipped: {:?}", cluster.skipped);
            });
            no_file_line(why);
            why.clone()
        };
        for (name, what) in [
            ("array", "an array"),
            ("number", "a number (7.5)"),
            ("text", "text"),
            ("null", "null"),
        ] {
            let why = why(name);
            assert!(
                why.starts_with(what) && why.contains("JSON object"),
                "{name}: {why}"
            );
        }
        for (name, field, what) in [
            ("metadata-array", "metadata", "an array"),
            ("weight-text", "weight", "text (\"2\")"),
            ("weight-null", "weight", "null"),
            ("points-object", "points", "an object"),
        ] {
            let why = why(name);
            assert!(
                why.starts_with(&format!("field `{field}`: expected "))
                    && why.contains(&format!("not {what}")),
                "{name}: {why}"
            );
        }
        assert_eq!(cluster.skipped.len(), pairs.len() - 1);
    });
    // The same through serde, which every other reader of a member uses.
    let array = serde_json::from_str::<Member>(r#"[7.5, "zone-q", "10.0.0.9:1"]"#);
    let error = array.expect_err("an array is not a member").to_string();
    assert!(error.contains("an array"), "{error}");
    let object = serde_json::from_str::<Member>(r#"{"weight": 7.5, "zone": "zone-q"}"#);
    assert_eq!(object.expect("an object").weight, Some(7.5));
}

/// A config that is not a JSON object (an array, a number, text, null)
/// is refused by a read and by the settings reader, saying what it is.
#[test]
fn a_config_that_is_not_an_object_is_refused_with_what_it_is() {
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        raw.put(node_key(PREFIX, "a"), "{}", None)
            .await
            .expect("put");
        let connection = Connection::parse(&etcd.endpoint(0)).expect("endpoint");
        for (value, what) in [
            (r#"["algorithm", "jump"]"#, "an array"),
            ("3", "a number (3)"),
            (r#""jump""#, "text (\"jump\")"),
            ("null", "null"),
        ] {
            raw.put(config_key(PREFIX), value, None).await.expect("put");
            match ringwise_etcd::read(&connection, PREFIX).await {
                Err(Error::InvalidValue { key, message }) => {
                    assert_eq!(key, "config");
                    assert!(message.starts_with(what), "{value}: {message}");
                    assert!(message.contains("JSON object"), "{value}: {message}");
                }
                other => panic!("{value}: a read must refuse it, got {other:?}"),
            }
            match ringwise_etcd::settings(&connection, PREFIX).await {
                Err(Error::InvalidValue { message, .. }) => {
                    assert!(message.starts_with(what), "{value}: {message}");
                }
                other => panic!("{value}: the settings reader must refuse it, got {other:?}"),
            }
        }
        // A written capacity of 0 would silently mean the default: refused
        // by name, as a cluster file refuses it.
        let zero = r#"{"algorithm": "anchor", "capacity": 0}"#;
        raw.put(config_key(PREFIX), zero, None).await.expect("put");
        match ringwise_etcd::read(&connection, PREFIX).await {
            Err(Error::InvalidValue { key, message }) => {
                assert_eq!(key, "config");
                assert!(message.contains("capacity"), "{message}");
                assert!(message.contains("4194304"), "{message}");
            }
            other => panic!("capacity 0 must be refused, got {other:?}"),
        }
        // A secret of the wrong kind is refused without its value: the
        // message reaches watch's warnings and the logs.
        let numeric = r#"{"hash": "siphash", "secret": 112233445566778899}"#;
        raw.put(config_key(PREFIX), numeric, None)
            .await
            .expect("put");
        match ringwise_etcd::read(&connection, PREFIX).await {
            Err(Error::InvalidValue { message, .. }) => {
                assert!(message.contains("`secret`"), "{message}");
                assert!(!message.contains("66778899"), "{message}");
            }
            other => panic!("a numeric secret must be refused, got {other:?}"),
        }
    });
}

/// `{"algorithm": "jump"}` written straight to etcd over weighted members
/// (and members with points): jump cannot build them, and they were in
/// the ring before the config. The config is bad: the watcher holds its
/// ring and says why (naming a member's key and field), a read and a new
/// watcher refuse it, `configure` refuses to write it. A member that joins
/// after a config it does not fit is the member's fault: it alone is left
/// out. A good config then applies with every member.
#[test]
fn a_config_that_drops_members_keeps_the_ring() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        let mut pairs = Vec::new();
        for i in 0..30 {
            let value = match i % 3 {
                0 => r#"{"weight": 2.5}"#.to_owned(),
                1 => format!(r#"{{"points": [{}]}}"#, 1000 + i),
                _ => "{}".to_owned(),
            };
            pairs.push((node_key(PREFIX, &format!("node-{i}")), value));
        }
        put_all(&mut raw, &pairs).await;
        let connection = Connection::parse(&etcd.endpoint(0)).expect("endpoint");
        let watcher = ringwise_etcd::watch(&connection, PREFIX, Options::default())
            .await
            .expect("a watcher of the 30 members");
        let before = watcher.load();
        assert_eq!(before.placement.members.len(), 30);
        assert!(before.placement.skipped.is_empty());

        raw.put(config_key(PREFIX), r#"{"algorithm": "jump"}"#, None)
            .await
            .expect("put");
        let deadline = Instant::now() + Duration::from_secs(10);
        let held = loop {
            if let Some(held) = watcher.status().held {
                break held;
            }
            assert!(Instant::now() < deadline, "{:?}", watcher.status());
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let node = node_key(PREFIX, "node-");
        assert!(
            held.starts_with("config: it cannot build member "),
            "{held}"
        );
        assert!(held.contains(&node), "{held}");
        assert!(
            held.contains("field `weight`") || held.contains("field `points`"),
            "{held}"
        );
        no_file_line(&held);
        let now = watcher.load();
        assert_eq!(now.placement.fingerprint, before.placement.fingerprint);
        assert_eq!(now.placement.members.len(), 30, "every member still in");
        assert!(
            watcher
                .status()
                .last_error
                .is_some_and(|e| e.contains(&node))
        );

        match ringwise_etcd::read(&connection, PREFIX).await {
            Err(Error::InvalidValue { key, message }) => {
                assert_eq!(key, "config");
                assert!(message.contains(&node), "{message}");
            }
            other => panic!("a read must refuse the config, got {other:?}"),
        }
        let fresh = ringwise_etcd::watch(&connection, PREFIX, Options::default()).await;
        assert!(
            matches!(&fresh, Err(Error::InvalidValue { key, .. }) if key == "config"),
            "{fresh:?}"
        );
        let set = [("algorithm".to_owned(), Some(serde_json::json!("jump")))];
        raw.delete(config_key(PREFIX), None).await.expect("delete");
        let refused = ringwise_etcd::configure(&connection, PREFIX, &set).await;
        assert!(
            matches!(&refused, Err(Error::InvalidValue { key, message })
                if key == "config" && message.contains(&node)),
            "{refused:?}"
        );
        let config = raw.get(config_key(PREFIX), None).await.expect("get");
        assert!(config.kvs().is_empty(), "nothing written");

        // A good config: a new ring of every member, nothing held.
        let mut changes = watcher.changes();
        raw.put(config_key(PREFIX), r#"{"vnodes": 40}"#, None)
            .await
            .expect("put");
        changes.changed().await.expect("a new ring");
        let ring = watcher.load();
        let spec = ring.placement.spec.as_ref().expect("members");
        assert_eq!((spec.params.vnodes, spec.nodes.len()), (40, 30));
        assert_eq!(watcher.status().held, None);
    });
}

/// Under a config already written (jump), a member that joins with a
/// weight is the one at fault: it alone is left out, under its key and
/// field, and the ring of the others is built.
#[test]
fn a_member_that_joins_after_a_config_it_does_not_fit_is_skipped() {
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        let pairs = [
            (node_key(PREFIX, "a"), "{}".to_owned()),
            (node_key(PREFIX, "b"), "{}".to_owned()),
            (config_key(PREFIX), r#"{"algorithm": "jump"}"#.to_owned()),
            (node_key(PREFIX, "heavy"), r#"{"weight": 3}"#.to_owned()),
            // Invalid in itself, written before the config: its own fault.
            (node_key(PREFIX, "negative"), r#"{"weight": -1}"#.to_owned()),
        ];
        put_all(&mut raw, &pairs[..2]).await;
        put_all(&mut raw, &pairs[4..]).await;
        put_all(&mut raw, &pairs[2..4]).await;
        let connection = Connection::parse(&etcd.endpoint(0)).expect("endpoint");
        let (cluster, _) = ringwise_etcd::read(&connection, PREFIX)
            .await
            .expect("a ring of a and b");
        let names: Vec<&str> = cluster.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "b"], "{:?}", cluster.skipped);
        let heavy = &cluster.skipped[&node_key(PREFIX, "heavy")];
        assert!(heavy.starts_with("field `weight`: "), "{heavy}");
        no_file_line(heavy);
        let negative = &cluster.skipped[&node_key(PREFIX, "negative")];
        assert!(negative.starts_with("field `weight`: "), "{negative}");
    });
}

/// Every malformed endpoint is an [`Error::InvalidOption`] of the
/// endpoints naming it, from `Connection::parse`, before any connection;
/// well-formed ones are kept (scheme added, in lower case). A malformed
/// endpoint set later in the public list, or TLS files with an http://
/// endpoint further down it, are refused by the first call before it
/// connects, although the first endpoint is a working etcd.
#[test]
fn a_malformed_endpoint_is_refused_before_any_connection() {
    for bad in [
        "http://[::1",
        "http://[::1]x:2379",
        "http://[not-v6]:2379",
        "http://::1:2379",
        "http://127.0.0.1:99999",
        "http://127.0.0.1:0",
        "http://127.0.0.1:port",
        "http://127.0.0.1:",
        "http://127.0.0.1:+80",
        "http://127.0.0.1",
        "http://:2379",
        "http://",
        "",
        "127.0.0.1:2379,,127.0.0.1:2380",
        "127.0.0.1:2379,",
        "ftp://127.0.0.1:2379",
        "unix:///run/etcd.sock",
        "https://[::1",
        "https://:2379",
        "http://127.0.0.1:2379/v3",
        "http://127.0.0.1:2379?x=1",
        "http://user:pw@127.0.0.1:2379",
        "http://127.0.0.1 :2379",
        "http://127.0.0.1:23\t79",
        "http://exa mple:2379",
        "http://300.1.1.1:2379",
        "http://-bad.example:2379",
        "http://bad..example:2379",
        "http://ex%41mple:2379",
        "http://exämple:2379",
        "http:/127.0.0.1:2379",
    ] {
        match Connection::parse(bad) {
            Err(Error::InvalidOption { option, message }) => {
                assert_eq!(option, "endpoints", "{bad:?}");
                let named = bad
                    .split(',')
                    .map(str::trim)
                    .any(|e| message.contains(&format!("{e:?}")));
                assert!(named || bad.trim().is_empty(), "{bad:?}: {message}");
            }
            other => panic!("{bad:?} must be refused, got {other:?}"),
        }
    }
    for (good, written) in [
        ("127.0.0.1:2379", "http://127.0.0.1:2379"),
        ("HTTP://etcd-0.example:2379/", "http://etcd-0.example:2379"),
        ("https://[::1]:2379", "https://[::1]:2379"),
        (
            " http://a_b:1 , http://c:65535",
            "http://a_b:1,http://c:65535",
        ),
    ] {
        let connection = Connection::parse(good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        assert_eq!(connection.endpoints.join(","), written);
    }

    let etcd = Etcd::single();
    let runtime = runtime();
    let mut later = Connection::parse(&etcd.endpoint(0)).expect("endpoint");
    later.endpoints.push("http://[::1".into());
    let read = runtime.block_on(ringwise_etcd::read(&later, PREFIX));
    assert!(
        matches!(&read, Err(Error::InvalidOption { message, .. }) if message.contains("[::1")),
        "{read:?}"
    );
    let secure = format!("https://127.0.0.1:{}", free_port());
    let plain = format!("http://127.0.0.1:{}", free_port());
    let mut mixed = Connection::parse(&format!("{secure},{plain}")).expect("endpoints");
    mixed.tls = Some(Tls::default());
    let read = runtime.block_on(ringwise_etcd::read(&mixed, PREFIX));
    assert!(
        matches!(&read, Err(Error::InvalidOption { message, .. })
            if message.contains(&plain) && message.contains("plain HTTP")),
        "{read:?}"
    );
}

/// Set by [`an_etcd_dies_with_the_process_that_started_it`] for the copy
/// of this binary it starts.
const ORPHAN: &str = "RINGWISE_TEST_ETCD_PARENT";

/// Not a test of its own: run (by the test below, in a copy of this
/// binary) it starts an etcd, says its pid and data directory, and waits
/// to be killed.
#[test]
#[ignore = "run by an_etcd_dies_with_the_process_that_started_it"]
fn starts_an_etcd_and_waits_to_be_killed() {
    if std::env::var_os(ORPHAN).is_none() {
        return;
    }
    let etcd = Etcd::single();
    let pid = etcd.pid(0).expect("running");
    // A mark of its own: libtest may write the test's name on the line.
    println!("ETCD-PID {pid} {}", etcd.dir(0).display());
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// Whether process `pid` has ended: gone, or a zombie that its new parent
/// has not reaped yet (a container's pid 1 may never reap it).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// A test process killed with SIGKILL runs no drop: the etcd it started
/// must die all the same (the kernel's parent-death signal, set through
/// setpriv). A copy of this binary starts an etcd and is killed; the etcd
/// is then gone. Had it survived, it is killed here by its pid.
#[test]
fn an_etcd_dies_with_the_process_that_started_it() {
    let mut parent = Command::new(std::env::current_exe().expect("this binary"))
        .args([
            "stored_values::starts_an_etcd_and_waits_to_be_killed",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ORPHAN, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the test binary runs");
    let mut lines = BufReader::new(parent.stdout.take().expect("piped stdout")).lines();
    let said = lines.by_ref().map_while(Result::ok).find_map(|line| {
        let at = line.find("ETCD-PID ")?;
        Some(line[at + "ETCD-PID ".len()..].to_owned())
    });
    let Some(said) = said else {
        let _ = parent.kill();
        let _ = parent.wait();
        panic!("the parent said no etcd pid");
    };
    let (pid, dir) = said.split_once(' ').expect("a pid and a directory");
    let pid: u32 = pid.parse().expect("a pid");
    assert!(!ended(pid), "etcd {pid} runs while its parent does");
    parent.kill().expect("SIGKILL the parent");
    parent.wait().expect("reap the parent");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ended(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = !ended(pid);
    if survived {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let _ = std::fs::remove_dir_all(dir);
    assert!(!survived, "etcd {pid} outlived the process that started it");
}
