//! The TOML cluster file: a valid file, and each kind of mistake with the
//! line and field its error names.

use ringwise::{Algorithm, ClusterSpec, Error, StableHash};

/// The line, field and message of the cluster-file error `text` gives
/// (also used by `core_limits`).
pub(crate) fn error(text: &str) -> (Option<usize>, Option<String>, String) {
    match ClusterSpec::from_toml(text) {
        Err(Error::ClusterFile {
            line,
            field,
            message,
        }) => (line, field, message),
        other => panic!("expected a cluster file error, got {other:?}"),
    }
}

#[test]
fn a_full_file_parses() {
    let spec = ClusterSpec::from_toml(
        r#"
algorithm = "ring"
hash = "md5"
vnodes = 100

[[nodes]]
name = "cache-b"
weight = 2

[[nodes]]
name = "cache-a"
weight = 0.5
zone = "eu-1a"
"#,
    )
    .expect("valid");
    assert_eq!(spec.algorithm, Algorithm::Ring);
    assert_eq!(spec.params.hash, StableHash::Md5);
    assert_eq!(spec.params.vnodes, 100);
    let names: Vec<_> = spec.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["cache-a", "cache-b"]);
    let keyed = spec.build().expect("buildable");
    let ring = keyed.placement().as_ring().expect("a ring");
    assert_eq!(ring.point_count(), 250);
}

#[test]
fn defaults_are_ring_xxh3_160() {
    let spec = ClusterSpec::from_toml("[[nodes]]\nname = \"a\"\n").expect("valid");
    assert_eq!(spec.algorithm, Algorithm::Ring);
    assert_eq!(spec.params.hash, StableHash::Xxh3);
    assert_eq!(spec.params.vnodes, 160);
}

#[test]
fn siphash_takes_its_secret_from_the_file() {
    let text = "hash = \"siphash\"\nsecret = \"000102030405060708090a0b0c0d0e0f\"\n\
                [[nodes]]\nname = \"a\"\n";
    let spec = ClusterSpec::from_toml(text).expect("valid");
    assert_eq!(spec.params.hash.name(), "siphash");
    let (line, field, _) = error("hash = \"siphash\"\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(1), Some("hash")));
    let (line, field, _) = error("hash = \"siphash\"\nsecret = \"abc\"\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(2), Some("secret")));
}

#[test]
fn unknown_key_names_its_line() {
    let (line, _, message) = error("vnode = 100\n[[nodes]]\nname = \"a\"\n");
    assert_eq!(line, Some(1));
    assert!(message.contains("vnode"), "{message}");
}

#[test]
fn duplicate_node_names_the_second_line() {
    let (line, field, message) = error("[[nodes]]\nname = \"a\"\n\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(5), Some("name")));
    assert!(message.contains("line 2"), "{message}");
}

#[test]
fn bad_weights_name_the_weight() {
    for weight in ["0", "-1", "nan", "inf", "1e9"] {
        let text = format!("[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\nweight = {weight}\n");
        let (line, field, _) = error(&text);
        assert_eq!(
            (line, field.as_deref()),
            (Some(5), Some("weight")),
            "weight {weight}"
        );
    }
}

#[test]
fn missing_and_malformed_fields() {
    let (line, _, message) = error("[[nodes]]\nweight = 2\n");
    assert_eq!(line, Some(1));
    assert!(message.contains("name"), "{message}");
    let (line, field, _) = error("vnodes = 0\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(1), Some("vnodes")));
    let (line, field, _) = error("hash = \"sha1\"\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(1), Some("hash")));
    let (line, field, _) = error("algorithm = \"chord\"\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(1), Some("algorithm")));
    let (line, field, _) = error("[[nodes]]\nname = \"\"\n");
    assert_eq!((line, field.as_deref()), (Some(2), Some("name")));
    let (line, _, _) = error("vnodes = 100\n[[nodes]\nname = \"a\"\n");
    assert_eq!(line, Some(2));
    let (_, _, message) = error("vnodes = 100\n");
    assert!(message.contains("nodes"), "{message}");
    let (_, field, _) = error("nodes = []\n");
    assert_eq!(field.as_deref(), Some("nodes"));
}

#[test]
fn jump_buckets_follow_the_files_order_and_epsilon_is_read() {
    use ringwise::{AnyPlacement, Placement};
    let spec = ClusterSpec::from_toml(
        "algorithm = \"jump\"\nepsilon = 0.5\n[[nodes]]\nname = \"zeta\"\n[[nodes]]\nname = \"alpha\"\n",
    )
    .expect("valid");
    assert_eq!(spec.epsilon, Some(0.5));
    let keyed = spec.build().expect("buildable");
    let AnyPlacement::Jump(jump) = keyed.placement() else {
        panic!("a jump placement");
    };
    // Bucket 0 is the first node listed, not the first by name.
    let first = jump.buckets()[0];
    assert_eq!(jump.nodes().name(first), Some("zeta"));
    assert_eq!(keyed.placement().len(), 2);
    let (line, field, _) = error("epsilon = 0\n[[nodes]]\nname = \"a\"\n");
    assert_eq!((line, field.as_deref()), (Some(1), Some("epsilon")));
}

/// A cluster file of N `[[nodes]]` tables parsed in
/// O(file), not O(N · file) (100,000 nodes took 96 s when every node's line
/// number was counted from the start of the file). Duplicates are still
/// reported with both lines.
#[test]
fn cluster_file_parsing_is_linear() {
    let nodes = 100_000;
    let mut text = String::from("algorithm = \"jump\"\n");
    for i in 0..nodes {
        text.push_str(&format!("[[nodes]]\nname = \"n{i}\"\n"));
    }
    let spec = ClusterSpec::from_toml(&text).expect("valid");
    assert_eq!(spec.nodes.len(), nodes);
    text.push_str("[[nodes]]\nname = \"n7\"\n");
    let err = ClusterSpec::from_toml(&text).expect_err("duplicate");
    let message = err.to_string();
    assert!(
        message.contains("line 200003") && message.contains("first defined on line 17"),
        "{message}"
    );
}

/// A file of more than `MAX_NODES` `[[nodes]]` tables is
/// refused before the TOML parser holds them all (2^20 + 1 tables took
/// 1.6 GB and 10 s before the count was checked). The file below is not
/// even TOML after its headers: the count answers first.
#[test]
fn a_runaway_node_list_is_refused_before_parsing() {
    let mut text = "[[ nodes ]] # spaces and comments count too\n".repeat(ringwise::MAX_NODES);
    text.push_str("[[nodes]]\nnot toml");
    let err = ClusterSpec::from_toml(&text).expect_err("too many");
    assert!(
        matches!(err, Error::TooManyNodes { nodes, limit } if nodes == limit + 1),
        "{err}"
    );
}

/// The fuzzer's finding (`fuzz/artifacts/cluster_file/crash-c2b70cfb…`):
/// a ring whose one node had `points = []` built, listed a node and
/// answered no key. An empty list of points or tokens is refused on its
/// line, with the fix; so is one given through the builder.
#[test]
fn an_empty_point_list_is_refused() {
    let found =
        "algorithm = \"ring\"\nhash = \"md5\"\n\n[[nodes]]\nname = \"cache-b\"\npoints = []\n";
    let tokens = "algorithm = \"cassandra\"\n[[nodes]]\nname = \"a\"\ntokens = [1]\n\
                  [[nodes]]\nname = \"b\"\ntokens = []\n";
    for (text, line, field) in [(found, 6, "points"), (tokens, 7, "tokens")] {
        let (at, named, message) = error(text);
        assert_eq!(
            (at, named.as_deref()),
            (Some(line), Some(field)),
            "{message}"
        );
        assert!(message.contains("at least one"), "{message}");
    }
    let built = ringwise::Ring::builder()
        .scheme(ringwise::Explicit)
        .node_points(ringwise::Node::new("a"), [])
        .build();
    assert!(matches!(built, Err(Error::InvalidLayout { .. })));
}

/// The fingerprint tells apart every change that moves keys and nothing
/// that does not.
#[test]
fn fingerprint_follows_what_decides_placement() {
    let base = "algorithm = \"jump\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n";
    let fp = |text: &str| ClusterSpec::from_toml(text).expect("valid").fingerprint();
    let same = fp(base);
    assert_eq!(same, fp(base), "deterministic");
    // An ignored parameter (jump reads no vnodes) changes nothing.
    assert_eq!(same, fp(&format!("vnodes = 7\n{base}")));
    let differing = [
        base.replace("jump", "memento"),
        format!("hash = \"md5\"\n{base}"),
        format!("hash_tag = \"{{}}\"\n{base}"),
        format!("epsilon = 0.5\n{base}"),
        base.replace("name = \"b\"", "name = \"c\""),
        base.replace("name = \"b\"", "name = \"b\"\nzone = \"z\""),
        // Jump's buckets follow listed order.
        "algorithm = \"jump\"\n[[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"a\"\n".into(),
    ];
    for text in &differing {
        assert_ne!(same, fp(text), "{text}");
    }
    let ring = "[[nodes]]\nname = \"a\"\npoints = [1, 2]\n[[nodes]]\nname = \"b\"\n";
    assert_ne!(fp(ring), fp(&ring.replace("[1, 2]", "[1, 3]")));
    assert_ne!(
        fp(ring),
        fp(&format!("vnodes = 7\n{ring}")),
        "ring reads vnodes"
    );
    assert_ne!(fp(ring), fp(&format!("{ring}weight = 2\n")));
    // A secret is part of the hash.
    let keyed = |secret: &str| {
        fp(&format!(
            "hash = \"siphash\"\nsecret = \"{secret}\"\n{base}"
        ))
    };
    assert_ne!(keyed(&"0".repeat(32)), keyed(&"1".repeat(32)));
}

/// `capacity` (anchor, dx): read from the file; below the node count or
/// above the limit it names its own line and field.
#[test]
fn capacity_is_read_and_checked_on_its_line() {
    let nodes = "[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n";
    for algorithm in ["anchor", "dx"] {
        let text = format!("algorithm = \"{algorithm}\"\ncapacity = 5\n{nodes}");
        let spec = ClusterSpec::from_toml(&text).expect("valid");
        assert_eq!(spec.params.capacity, 5);
        assert!(spec.to_toml().contains("capacity = 5"));
        for bad in ["1", "4194305"] {
            let text = format!("algorithm = \"{algorithm}\"\ncapacity = {bad}\n{nodes}");
            let (line, field, message) = error(&text);
            assert_eq!(
                (line, field.as_deref()),
                (Some(2), Some("capacity")),
                "{message}"
            );
            assert!(message.contains("capacity"), "{message}");
        }
    }
    // Another algorithm ignores it (with a warning from the CLI).
    let spec = ClusterSpec::from_toml(&format!("capacity = 5\n{nodes}")).expect("valid");
    assert_eq!(spec.ignored_params(), ["capacity"]);
}

/// `removed` (memento, anchor, dx: buckets whose node left, in removal
/// order): each mistake names the entry's line, the field and the fix.
#[test]
fn removed_buckets_are_checked_on_their_line() {
    let nodes = "\n[[nodes]]\nname = \"a\"\n\n[[nodes]]\nname = \"b\"\n";
    let file = |head: &str| format!("{head}{nodes}");
    let ok = ClusterSpec::from_toml(&file("algorithm = \"memento\"\nremoved = [2, 0]\n"));
    assert_eq!(ok.expect("valid").removed, [2, 0]);
    let cases: [(&str, usize, &str); 7] = [
        // a, b and two removed buckets are buckets 0 to 3.
        (
            "algorithm = \"memento\"\nremoved = [\n  1,\n  4,\n]\n",
            4,
            "bucket 4 is out of range: 2 nodes and 2 removed buckets are buckets 0 to 3",
        ),
        (
            "algorithm = \"anchor\"\nremoved = [1,\n 1]\n",
            3,
            "bucket 1 is listed twice",
        ),
        (
            "algorithm = \"ring\"\n\nremoved = [1]\n",
            3,
            "algorithm ring has no removed buckets",
        ),
        (
            "algorithm = \"jump\"\nremoved = [0]\n",
            2,
            "only memento, anchor and dx",
        ),
        (
            "algorithm = \"dx\"\ncapacity = 3\nremoved = [0, 1]\n",
            2,
            "at least the nodes plus the removed buckets",
        ),
        (
            "algorithm = \"dx\"\nremoved = [-1]\n",
            2,
            "a whole number from 0 to 4294967295",
        ),
        (
            "algorithm = \"memento\"\nremoved = [\"1\"]\n",
            2,
            "wrong kind of value",
        ),
    ];
    for (head, want_line, want) in cases {
        let (line, field, message) = error(&file(head));
        assert_eq!(line, Some(want_line), "{head}: {message}");
        assert!(message.contains(want), "{head}: {message}");
        if !want.contains("wrong kind") && !want.contains("whole number") {
            let want_field = if want.contains("at least the nodes") {
                "capacity"
            } else {
                "removed"
            };
            assert_eq!(field.as_deref(), Some(want_field), "{head}: {message}");
        }
    }
    // No node left: every bucket removed.
    let (line, field, message) = error("algorithm = \"memento\"\nremoved = [0, 1]\nnodes = []\n");
    assert_eq!((line, field.as_deref()), (Some(2), Some("removed")));
    assert!(message.contains("every bucket is removed"), "{message}");
    // An empty list is no list.
    let spec = ClusterSpec::from_toml(&file("algorithm = \"ring\"\nremoved = []\n"));
    assert!(spec.expect("valid").removed.is_empty());
}

/// A file of settings alone is refused as a cluster (it has no node to
/// place a key on), but read by `from_toml_new` as a cluster about to
/// start, for every algorithm: built empty, its settings kept, the
/// `removed` list of such a file still refused.
#[test]
fn a_file_of_settings_alone_starts_a_new_cluster() {
    for algorithm in Algorithm::ALL {
        let text = format!("algorithm = \"{}\"\n", algorithm.name());
        let refused = ClusterSpec::from_toml(&text).expect_err(algorithm.name());
        assert!(
            refused.to_string().contains("the cluster has no nodes"),
            "{algorithm}: {refused}"
        );
        let (spec, built) = ClusterSpec::from_toml_new(&text)
            .unwrap_or_else(|e| panic!("{algorithm}: a new cluster: {e}"));
        assert_eq!(spec.algorithm, *algorithm);
        assert!(spec.nodes.is_empty(), "{algorithm}");
        assert_eq!(built.owner("user:1"), None, "{algorithm}: no owner yet");
    }
    let (spec, _) =
        ClusterSpec::from_toml_new("algorithm = \"maglev\"\ntable_size = 251\n").expect("maglev");
    assert_eq!(spec.params.table_size, 251);
    let removed = ClusterSpec::from_toml_new("algorithm = \"anchor\"\nremoved = [0]\n");
    let message = removed.expect_err("every bucket removed").to_string();
    assert!(message.contains("every bucket is removed"), "{message}");
}
