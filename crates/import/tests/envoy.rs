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
fn the_docs_rendezvous_yaml_is_the_cluster_file_beside_it() {
    let imported = import(Kind::Envoy, &examples("envoy-rendezvous.yaml"), None).expect("import");
    assert_eq!(imported.selected.as_deref(), Some("sessions"));
    let theirs =
        ClusterSpec::from_toml(&examples("envoy-rendezvous.toml")).expect("the docs' file");
    assert_eq!(imported.spec().expect("valid"), theirs);
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

/// A STATIC cluster with `load_balancing_policy` (one policy of `type_`,
/// its `typed_config` fields `config`) over `endpoints`.
fn typed(type_: &str, config: &str, endpoints: &str) -> String {
    format!(
        "name: c\ntype: STATIC\nload_balancing_policy:\n  policies:\n  - typed_extension_config:\n      \
         name: envoy.load_balancing_policies.x\n      typed_config:\n        \
         \"@type\": type.googleapis.com/envoy.extensions.load_balancing_policies.{type_}\n{config}\
         load_assignment:\n  cluster_name: c\n  endpoints:\n{endpoints}"
    )
}

/// Envoy's test hosts 127.0.0.1:90..95, hostnames "90".."95".
fn test_hosts(weights: &[u32]) -> String {
    weights
        .iter()
        .zip(90..)
        .map(|(w, p)| {
            format!(
                "  - lb_endpoints:\n    - endpoint:\n        hostname: \"{p}\"\n        \
                 address: {{socket_address: {{address: 127.0.0.1, port_value: {p}}}}}\n      \
                 load_balancing_weight: {w}\n"
            )
        })
        .collect()
}

fn spec(text: &str) -> ClusterSpec {
    import(Kind::Envoy, text, None)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .spec()
        .expect("spec")
}

#[test]
fn the_rendezvous_policy_is_envoy_rendezvous_over_envoys_hash_keys() {
    use ringwise::{Algorithm, AnyPlacement, Node, Params};
    let text = typed(
        "rendezvous_hash.v3.RendezvousHash",
        "",
        &test_hosts(&[1, 2, 3]),
    );
    let ours = spec(&text);
    assert_eq!(ours.algorithm, Algorithm::EnvoyRendezvous);
    assert_eq!(ours.params.hash, ringwise::StableHash::Xxh64);
    let keyed = ours.build().expect("build");
    // The hosts in Envoy's order with their weights, as the core builds them.
    let nodes = [1.0, 2.0, 3.0]
        .iter()
        .zip(90..)
        .map(|(&w, p)| Node::new(format!("127.0.0.1:{p}")).weight(w))
        .collect();
    let core =
        AnyPlacement::build(Algorithm::EnvoyRendezvous, nodes, &Params::DEFAULT).expect("core");
    for i in 0..6000u64 {
        let h = i * (u64::MAX / 6000);
        let name = |p: &AnyPlacement| {
            p.owner(h)
                .and_then(|id| p.nodes().name(id).map(str::to_owned))
        };
        assert_eq!(name(keyed.placement()), name(&core), "hash {h}");
    }
    // By hostname, through the policy's own consistent_hashing_lb_config.
    let by_name = typed(
        "rendezvous_hash.v3.RendezvousHash",
        "        consistent_hashing_lb_config: {use_hostname_for_hashing: true}\n",
        &test_hosts(&[1, 1]),
    );
    let names: Vec<String> = spec(&by_name)
        .nodes
        .iter()
        .map(|n| n.name.clone())
        .collect();
    assert_eq!(names, ["90", "91"]);
}

#[test]
fn typed_ring_hash_and_maglev_equal_their_legacy_fields() {
    let hosts = test_hosts(&[1, 2, 1]);
    for (typed_text, legacy_text) in [
        (
            typed(
                "ring_hash.v3.RingHash",
                "        minimum_ring_size: 12\n        maximum_ring_size: 4096\n        \
                 hash_function: XX_HASH\n",
                &hosts,
            ),
            cluster(
                "RING_HASH",
                "ring_hash_lb_config: {minimum_ring_size: 12, maximum_ring_size: 4096}\n",
                "",
                &hosts,
            ),
        ),
        (
            // The deprecated field, read without consistent_hashing_lb_config.
            typed(
                "ring_hash.v3.RingHash",
                "        use_hostname_for_hashing: true\n",
                &hosts,
            ),
            cluster(
                "RING_HASH",
                "",
                "common_lb_config:\n  consistent_hashing_lb_config: {use_hostname_for_hashing: true}\n",
                &hosts,
            ),
        ),
        (
            // consistent_hashing_lb_config wins over the deprecated field.
            typed(
                "ring_hash.v3.RingHash",
                "        use_hostname_for_hashing: true\n        \
                 consistent_hashing_lb_config: {use_hostname_for_hashing: false}\n",
                &hosts,
            ),
            cluster("RING_HASH", "", "", &hosts),
        ),
        (
            typed("maglev.v3.Maglev", "        table_size: 251\n", &hosts),
            cluster(
                "MAGLEV",
                "maglev_lb_config: {table_size: 251}\n",
                "",
                &hosts,
            ),
        ),
    ] {
        assert_eq!(spec(&typed_text), spec(&legacy_text), "{typed_text}");
    }
}

#[test]
fn beside_load_balancing_policy_lb_policy_is_ignored_and_hash_policy_noted() {
    let text = typed(
        "rendezvous_hash.v3.RendezvousHash",
        "        consistent_hashing_lb_config:\n          \
         hash_policy: [{header: {header_name: x-user}}]\n",
        &test_hosts(&[1]),
    )
    .replace("type: STATIC\n", "type: STATIC\nlb_policy: ROUND_ROBIN\n");
    let imported = import(Kind::Envoy, &text, None).expect("import");
    let notes = imported.notes.join("\n");
    assert!(notes.contains("line 3: lb_policy is ignored"), "{notes}");
    assert!(
        notes.contains("line 11: hash_policy says what Envoy hashes"),
        "{notes}"
    );
}

#[test]
fn typed_policies_envoy_would_not_place_as_ringwise_are_refused_with_their_line() {
    let one = test_hosts(&[1]);
    let rendezvous = "rendezvous_hash.v3.RendezvousHash";
    for (text, line, words) in [
        (
            typed("random.v3.Random", "", &one),
            8,
            "not a consistent hash",
        ),
        (
            typed("acme.v1.Custom", "", &one),
            8,
            "list the hash policy first",
        ),
        (
            typed(
                rendezvous,
                "        locality_weighted_lb_config: {}\n",
                &one,
            ),
            9,
            "locality-weighted",
        ),
        (
            typed(
                rendezvous,
                "        consistent_hashing_lb_config: {hash_balance_factor: 150}\n",
                &one,
            ),
            9,
            "bounded loads",
        ),
        (
            typed(
                "ring_hash.v3.RingHash",
                "        hash_function: MURMUR_HASH_2\n",
                &one,
            ),
            9,
            "xxHash64",
        ),
        (
            typed(rendezvous, "        frobnicate: 1\n", &one),
            9,
            "unknown setting `RendezvousHash.frobnicate`",
        ),
        (
            typed(rendezvous, "", &one).replace(
                "type: STATIC\n",
                "type: STATIC\ncommon_lb_config:\n  consistent_hashing_lb_config: {}\n",
            ),
            4,
            "Envoy refuses it beside load_balancing_policy",
        ),
        (
            "name: c\nload_balancing_policy: {policies: []}\n".to_owned(),
            2,
            "no policies",
        ),
    ] {
        let e = import(Kind::Envoy, &text, None).expect_err(&text);
        assert_eq!(e.line().unwrap_or(0), line, "{text}: {e}");
        assert!(e.to_string().contains(words), "{text}: {e}");
    }
}
