//! The `envoy` kind through `import`. Envoy itself is not installable here
//! (no Debian package), so the proof is Envoy's own unit tests, which the
//! core already reproduces point for point: the same clusters written as
//! Envoy configuration must give those rings and tables, and the docs'
//! `envoy.yaml` the cluster files beside it.

use ringwise::{ClusterSpec, Placement};
use ringwise_import::{Kind, import};

fn examples(name: &str) -> String {
    let path = format!("{}/../../docs/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A STATIC cluster of `hosts` (`(lb_endpoint YAML, weight)`).
fn cluster(policy: &str, config: &str, common: &str, endpoints: &str) -> String {
    format!(
        "name: c\ntype: STATIC\nlb_policy: {policy}\n{config}{common}load_assignment:\n  \
         cluster_name: c\n  endpoints:\n{endpoints}"
    )
}

#[test]
fn the_docs_envoy_yaml_is_the_cluster_files_beside_it() {
    let text = examples("envoy.yaml");
    for (pool, file) in [("cache", "envoy-ring.toml"), ("api", "envoy-maglev.toml")] {
        let imported = import(Kind::Envoy, &text, Some(pool)).expect(pool);
        let ours = imported.spec().expect("valid");
        let theirs = ClusterSpec::from_toml(&examples(file)).expect("the docs' file");
        assert_eq!(ours, theirs, "{pool}");
    }
}

#[test]
fn envoys_ring_test_by_hostname_gives_envoys_points() {
    // ring_hash_lb_test.cc, hosts hashed by hostname "90".."95", ring 12.
    let endpoints: String = (90..=95)
        .map(|p| {
            format!(
                "  - lb_endpoints:\n    - endpoint:\n        hostname: \"{p}\"\n        \
                 address: {{socket_address: {{address: 127.0.0.1, port_value: {p}}}}}\n"
            )
        })
        .collect();
    let text = cluster(
        "RING_HASH",
        "ring_hash_lb_config: {minimum_ring_size: 12}\n",
        "common_lb_config:\n  consistent_hashing_lb_config: {use_hostname_for_hashing: true}\n",
        &endpoints,
    );
    let keyed = import(Kind::Envoy, &text, None)
        .expect("import")
        .spec()
        .expect("spec")
        .build()
        .expect("build");
    let ring = keyed.placement().as_ring().expect("a ring");
    let names = keyed.placement().nodes();
    let got: Vec<(u64, &str)> = ring
        .points()
        .map(|(p, id)| (p, names.name(id).expect("name")))
        .collect();
    assert_eq!(got[0], (1_975_508_444_536_362_413, "95"));
    assert_eq!(got[6], (8_787_465_352_164_086_522, "90"));
    assert_eq!(got[11], (15_364_271_037_087_512_980, "94"));
    assert_eq!(got.len(), 12);
}

#[test]
fn envoys_maglev_test_in_json_gives_envoys_table() {
    // maglev_lb_test.cc `Basic`: 127.0.0.1:90..95, table 7; JSON with
    // protobuf's lowerCamelCase names, as Envoy also accepts.
    let endpoints: Vec<String> = (90..=95)
        .map(|p| format!("{{\"endpoint\": {{\"address\": {{\"socketAddress\": {{\"address\": \"127.0.0.1\", \"portValue\": {p}}}}}}}}}"))
        .collect();
    let text = format!(
        "{{\"clusters\": [{{\"name\": \"m\", \"lbPolicy\": \"MAGLEV\", \"maglevLbConfig\": {{\"tableSize\": 7}}, \
         \"loadAssignment\": {{\"endpoints\": [{{\"lbEndpoints\": [{}]}}]}}}}]}}",
        endpoints.join(", ")
    );
    let keyed = import(Kind::Envoy, &text, None)
        .expect("import")
        .spec()
        .expect("spec")
        .build()
        .expect("build");
    let table: Vec<&str> = (0..7)
        .map(|h| {
            keyed
                .placement()
                .nodes()
                .name(keyed.placement().owner(h).expect("owner"))
                .expect("name")
        })
        .collect();
    let want = [":92", ":94", ":90", ":91", ":95", ":90", ":93"].map(|p| format!("127.0.0.1{p}"));
    assert_eq!(table, want);
}

#[test]
fn keys_weights_priorities_and_bootstraps() {
    let text = "static_resources:\n  clusters:\n  - name: a\n    lb_policy: MAGLEV\n    \
                connect_timeout: 1s\n    load_assignment:\n      endpoints:\n      - priority: 1\n        \
                lb_endpoints:\n        - endpoint: {address: {socket_address: {address: 10.0.0.9, port_value: 1}}}\n      \
                - load_balancing_weight: 5\n        lb_endpoints:\n        \
                - endpoint: {address: {socket_address: {address: \"::1\", port_value: 80}}}\n          \
                load_balancing_weight: 3\n        \
                - endpoint: {address: {socket_address: {address: 10.0.0.2, port_value: 80}}}\n          \
                metadata: {filter_metadata: {envoy.lb: {hash_key: shard-2}}}\n";
    let imported = import(Kind::Envoy, text, None).expect("import");
    let names: Vec<_> = imported.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["[::1]:80", "shard-2"]);
    assert_eq!(imported.members[0].weight, Some(3.0));
    assert_eq!(imported.member_lines, [13, 15]);
    let notes = imported.notes.join("\n");
    assert!(
        notes.contains("line 5: connect_timeout does not change"),
        "{notes}"
    );
    assert!(
        notes.contains("line 8: the endpoints of priority 1 are left out"),
        "{notes}"
    );
    assert!(
        notes.contains("line 11: the locality's load_balancing_weight is not used"),
        "{notes}"
    );
}

#[test]
fn what_envoy_does_not_place_as_ringwise_is_refused_with_its_line() {
    let one = "  - lb_endpoints:\n    - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}\n";
    for (text, line, words) in [
        (
            cluster("ROUND_ROBIN", "", "", one),
            3,
            "not a consistent hash",
        ),
        (
            cluster(
                "RING_HASH",
                "ring_hash_lb_config: {hash_function: MURMUR_HASH_2}\n",
                "",
                one,
            ),
            4,
            "xxHash64",
        ),
        (
            cluster(
                "RING_HASH",
                "ring_hash_lb_config: {minimum_ring: 2}\n",
                "",
                one,
            ),
            4,
            "unknown setting",
        ),
        (
            cluster(
                "MAGLEV",
                "",
                "common_lb_config: {locality_weighted_lb_config: {}}\n",
                one,
            ),
            4,
            "locality-weighted",
        ),
        (
            cluster(
                "MAGLEV",
                "",
                "common_lb_config: {consistent_hashing_lb_config: {hash_balance_factor: 150}}\n",
                one,
            ),
            4,
            "bounded loads",
        ),
        (
            cluster("MAGLEV", "lb_subset_config: {}\n", "", one),
            4,
            "subsets",
        ),
        (
            cluster("MAGLEV", "frobnicate: 1\n", "", one),
            4,
            "unknown setting `cluster.frobnicate`",
        ),
        (
            cluster(
                "MAGLEV",
                "",
                "",
                "  - lb_endpoints:\n    - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}\n      health_status: DRAINING\n",
            ),
            9,
            "healthy",
        ),
        (
            cluster(
                "MAGLEV",
                "",
                "",
                "  - lb_endpoints:\n    - endpoint: {address: {socket_address: {address: web.internal, port_value: 80}}}\n",
            ),
            8,
            "not an IP address",
        ),
        (
            cluster("MAGLEV", "", "", one).replace("STATIC", "STRICT_DNS"),
            8,
            "resolved ip:port",
        ),
        (
            cluster("MAGLEV", "", "", one).replace("STATIC", "EDS"),
            2,
            "STATIC, STRICT_DNS",
        ),
    ] {
        let e = import(Kind::Envoy, &text, None).expect_err(&text);
        assert_eq!(e.line().unwrap_or(0), line, "{text}: {e}");
        assert!(e.to_string().contains(words), "{text}: {e}");
    }
}
