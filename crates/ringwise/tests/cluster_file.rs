//! The TOML cluster file: a valid file, and each kind of mistake with the
//! line and field its error names.

use ringwise::{Algorithm, ClusterSpec, Error, StableHash};

fn error(text: &str) -> (Option<usize>, Option<String>, String) {
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

/// Issue 13, item 1: a cluster file of N `[[nodes]]` tables parsed in
/// O(file), not O(N · file) (100,000 nodes took 96 s when every node's line
/// number was counted from the start of the file). Duplicates are still
/// reported with both lines.
#[test]
fn issue13_1_cluster_file_parsing_is_linear() {
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
