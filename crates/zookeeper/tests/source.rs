//! The crate through `ringwise_membership::Source`, as the commands use it:
//! built from a `zk://` URL, boxed; register, watch, configure, read and
//! leave, each seen by the others.

use std::time::Duration;

use ringwise_membership::{Source, Url};
use ringwise_zookeeper::{Member, ZooKeeper};
use serde_json::json;

use crate::common::{all_hold, options, until};
use crate::support::zookeeper::Zk;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zk_url_is_a_source_the_commands_can_take() {
    let server = Zk::single();
    let url: Url = format!(
        "zk://{}/via/url?session_timeout=2",
        server.hosts().join(",")
    )
    .parse()
    .expect("url");
    let source: Box<dyn Source> = Box::new(ZooKeeper::from_url(&url).expect("source"));
    assert_eq!(source.kind(), "zookeeper");
    assert_eq!(
        source.describe(),
        format!("zookeeper {}/via/url", server.host(0))
    );
    let member = Member {
        address: Some("10.0.0.7:11211".into()),
        ..Member::default()
    };
    let registration = source
        .register("a", member, Duration::from_secs(2))
        .await
        .expect("register");
    assert!(registration.is_registered());
    assert!(
        registration
            .describe()
            .starts_with("/via/url/nodes/a (session 0x"),
        "{}",
        registration.describe()
    );
    let watchers = [source.watch(options()).await.expect("watch")];
    assert!(all_hold(&watchers, &["a"]));
    let before = watchers[0].load().placement.fingerprint;
    let address = watchers[0]
        .load()
        .placement
        .member("a")
        .and_then(|m| m.member.address.clone());
    assert_eq!(address.as_deref(), Some("10.0.0.7:11211"));

    // Settings: written through the source, seen by the watcher.
    let set = source
        .configure(&[("vnodes".into(), Some(json!(40)))])
        .await
        .expect("configure");
    assert_eq!(set["vnodes"], 40);
    assert_eq!(source.settings().await.expect("settings")["vnodes"], 40);
    until(
        Duration::from_secs(10),
        "the new config reaches the ring",
        || watchers[0].load().placement.fingerprint != before,
    )
    .await;
    // A bad setting is refused before anything is written.
    let refused = source
        .configure(&[("algorithm".into(), Some(json!("nope")))])
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(source.settings().await.expect("settings").len(), 1);
    source
        .configure(&[("vnodes".into(), None)])
        .await
        .expect("unset");
    let (cluster, zxid) = source.read().await.expect("read");
    assert_eq!(cluster.fingerprint, before, "back to the defaults");
    until(
        Duration::from_secs(10),
        "the watcher at the read's zxid",
        || {
            let ring = watchers[0].load();
            ring.revision == zxid && ring.placement.fingerprint == before
        },
    )
    .await;

    registration.shutdown().await.expect("leave");
    until(Duration::from_secs(5), "it left", || {
        all_hold(&watchers, &[])
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_larger_than_one_request_is_read_in_parts_as_one_set() {
    use zookeeper_client as zk;
    let server = Zk::single();
    let hosts = server.hosts();
    // 30,000 members: three multiReads of at most 512 KiB; one request of all
    // of them (about 1.1 MB) is over the server's 1 MiB jute.maxbuffer,
    // which drops the connection.
    let client = crate::common::raw(&hosts).await;
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    client.mkdir("/big/nodes", &open).await.expect("prefix");
    let names: Vec<String> = (0..30_000).map(|i| format!("member-{i:05}")).collect();
    for batch in names.chunks(2_000) {
        let mut multi = client.new_multi_writer();
        for name in batch {
            multi
                .add_create(&format!("/big/nodes/{name}"), b"{}", &open)
                .expect("op");
        }
        multi.commit().await.expect("create a batch");
    }
    let source = crate::common::source(hosts, "/big");
    let watcher = source.watch(options()).await.expect("watch");
    let ring = watcher.load();
    assert_eq!(ring.placement.members.len(), 30_000);
    let (cluster, zxid) = Source::read(&source).await.expect("read");
    assert_eq!(
        (ring.revision, ring.placement.fingerprint),
        (zxid, cluster.fingerprint)
    );
    client
        .delete("/big/nodes/member-00042", None)
        .await
        .expect("leave");
    until(Duration::from_secs(30), "the leave is seen", || {
        watcher.load().placement.members.len() == 29_999
    })
    .await;
}
