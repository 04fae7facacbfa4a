//! Core limits: a point given to two nodes, the cluster file's structure
//! budget before parsing, membership code that grew with N, bounded loads
//! with a hot key, memento's cost with removals and the work estimates of
//! memento, anchor and dx, `capacity = 0` and zone names, secrets never
//! quoted. Scale tests count work (list entries read, removed buckets
//! visited), never time it.

use ringwise::{
    Algorithm, AnyPlacement, Bounded, ClusterSpec, Error, Given, Jump, Layout, Memento, Node,
    NodeId, Params, Placement, Ring, StableHash,
};

fn names(n: usize) -> Vec<Node> {
    (0..n).map(|i| Node::new(format!("node-{i}"))).collect()
}

/// The line, field and message of the cluster-file error `text` gives.
fn file_error(text: &str) -> (Option<usize>, Option<String>, String) {
    crate::cluster_file::error(text)
}

// A point given to two nodes.

#[test]
fn a_point_given_to_two_nodes_is_refused_naming_both() {
    let text = "[[nodes]]\nname = \"a\"\npoints = [5, 7]\n\n[[nodes]]\nname = \"b\"\n\
                points = [7]\n";
    let (line, field, message) = file_error(text);
    assert_eq!(
        (line, field.as_deref()),
        (Some(7), Some("points")),
        "{message}"
    );
    assert!(
        message.contains("point 7") && message.contains("\"a\"") && message.contains("\"b\""),
        "{message}"
    );
    // The same through the library constructor.
    let mut layout = Layout::new();
    layout.insert("a".into(), Given::Points(vec![5, 7]));
    layout.insert("b".into(), Given::Points(vec![7]));
    let nodes = vec![Node::new("a"), Node::new("b")];
    let built = AnyPlacement::build_with(Algorithm::Ring, nodes, &Params::DEFAULT, &layout);
    assert!(
        matches!(&built, Err(Error::InvalidLayout { node: Some(b), message })
            if b == "b" && message.contains("\"a\"")),
        "{built:?}"
    );
}

#[test]
fn a_given_point_that_is_another_nodes_made_point_is_refused() {
    // "b" makes its points from its name; "a" is given one of them.
    let b_alone = ClusterSpec::from_toml("[[nodes]]\nname = \"b\"\n")
        .expect("valid")
        .build()
        .expect("builds");
    let taken = b_alone
        .placement()
        .as_ring()
        .expect("a ring")
        .points()
        .next();
    let (taken, _) = taken.expect("b has points");
    let text = format!("[[nodes]]\nname = \"a\"\npoints = [{taken}]\n[[nodes]]\nname = \"b\"\n");
    let (line, _, message) = file_error(&text);
    assert_eq!(line, Some(3), "{message}");
    assert!(message.contains(&format!("point {taken}")), "{message}");
    // Joining with that point (an allocator's or a hand's) is refused too,
    // and so is a made node joining onto a given point.
    let joined = b_alone
        .placement()
        .with_node_points(Node::new("a"), vec![taken]);
    assert!(
        matches!(joined, Err(Error::InvalidLayout { .. })),
        "{joined:?}"
    );
    let mut layout = Layout::new();
    layout.insert("a".into(), Given::Points(vec![taken]));
    let a_alone = AnyPlacement::build_with(
        Algorithm::Ring,
        vec![Node::new("a")],
        &Params::DEFAULT,
        &layout,
    )
    .expect("alone it is fine");
    let grown = a_alone.with_node(Node::new("b"));
    assert!(
        matches!(grown, Err(Error::InvalidLayout { .. })),
        "{grown:?}"
    );
    // Moving a point onto another node's (`with_points_of`) is refused.
    let two = AnyPlacement::build_with(
        Algorithm::Ring,
        vec![Node::new("a"), Node::new("c")],
        &Params::DEFAULT,
        &layout,
    )
    .expect("distinct points");
    let c_point = two
        .as_ring()
        .expect("ring")
        .points()
        .find(|&(_, id)| two.nodes().name(id) == Some("c"))
        .expect("c has points")
        .0;
    let moved = two.with_points_of("a", vec![c_point]);
    assert!(
        matches!(moved, Err(Error::InvalidLayout { .. })),
        "{moved:?}"
    );
}

#[test]
fn a_cassandra_token_given_that_is_another_nodes_made_token_is_refused() {
    let b_alone = ClusterSpec::from_toml("algorithm = \"cassandra\"\n[[nodes]]\nname = \"b\"\n")
        .expect("valid")
        .build()
        .expect("builds");
    let (point, _) = b_alone
        .placement()
        .as_ring()
        .expect("ring")
        .points()
        .next()
        .expect("tokens");
    let token = ringwise::point_token(point);
    let text = format!(
        "algorithm = \"cassandra\"\n[[nodes]]\nname = \"a\"\ntokens = [{token}]\n\
         [[nodes]]\nname = \"b\"\n"
    );
    let (line, _, message) = file_error(&text);
    assert_eq!(line, Some(4), "{message}");
    assert!(message.contains(&format!("token {token}")), "{message}");
}

#[test]
fn explicit_rings_keep_shared_points_and_their_tie_rule() {
    // The builder of deployed rings (`Explicit`) still writes ties down.
    let ring = Ring::builder()
        .scheme(ringwise::Explicit)
        .node_points(Node::new("b"), [100, 300])
        .node_points(Node::new("a"), [100, 200])
        .build()
        .expect("ties are allowed here");
    assert_eq!(ring.owner(50), ring.nodes().id("a"));
}

// The cluster file's structure budget, before parsing.

/// Each spelling of the same node table array, one past the cap, with a
/// tail that is not TOML: the budget answers before the parser.
#[test]
fn every_spelling_of_a_runaway_node_list_is_refused_before_parsing() {
    let over = ringwise::MAX_NODES + 1;
    let spellings = [
        "[[ nodes ]]\n".to_owned(),
        "[[\"nodes\"]]\n".to_owned(),
        "[[ 'nodes' ]] # a comment\n".to_owned(),
        "\t[[nodes]]\t\n".to_owned(),
    ];
    for table in spellings {
        let mut text = table.repeat(over);
        text.push_str("this is not toml");
        let err = ClusterSpec::from_toml(&text).expect_err("too many");
        assert!(
            matches!(err, Error::TooManyNodes { nodes, limit } if nodes == limit + 1),
            "{table:?}: {err}"
        );
    }
    // An inline array of node tables, on one line or many.
    for separator in [",", ",\n"] {
        let mut text = String::from("nodes = [");
        text.push_str(&vec!["{name=\"a\"}"; over].join(separator));
        text.push_str("] not toml");
        let err = ClusterSpec::from_toml(&text).expect_err("too many");
        assert!(
            matches!(err, Error::TooManyNodes { nodes, limit } if nodes == limit + 1),
            "{separator:?}: {err}"
        );
    }
}

#[test]
fn a_runaway_array_or_nesting_is_refused_before_parsing() {
    // 2^23 + 1 elements: `points = [1,1,...]` is 16 MiB, under the file cap.
    let mut text = String::from("[[nodes]]\nname = \"a\"\npoints = [");
    text.push_str(&"1,".repeat(1 << 23));
    text.push_str("1] not toml");
    let (line, field, message) = file_error(&text);
    assert_eq!((line, field), (Some(3), None), "{message}");
    assert!(message.contains("more than 8388608 values"), "{message}");
    // Nesting past 32 levels, arrays or inline tables.
    for (open, close) in [("[", "]"), ("{a=", "}")] {
        let text = format!("x = {}1{}", open.repeat(33), close.repeat(33));
        let (_, _, message) = file_error(&text);
        assert!(message.contains("nested more than 32 deep"), "{message}");
    }
    // Dotted keys and plain tables open tables too.
    let dotted = format!("{} = 1\n", vec!["a"; (1 << 20) + 1100].join("."));
    let (_, _, message) = file_error(&dotted);
    assert!(message.contains("tables"), "{message}");
}

#[test]
fn brackets_in_strings_and_comments_do_not_count() {
    // A name full of `[[nodes]]` and commas, and comments of them, on a
    // file that is otherwise small: accepted.
    let noise = "[[nodes]], {[".repeat(1000);
    let text = format!(
        "# {noise}\n[[nodes]]\nname = \"{noise}x\"\nzone = '''\n{noise}'''\n\
         [[nodes]] # {noise}\nname = \"b\"\n"
    );
    let err = ClusterSpec::from_toml(&text).expect_err("the name is too long");
    assert!(matches!(err, Error::ClusterFile { .. }), "{err}");
    let ok =
        "[[nodes]]\nname = \"[[nodes]] , { [\"\n# [[nodes]] = [1,1,1]\n[[nodes]]\nname = 'b'\n";
    let spec = ClusterSpec::from_toml(ok).expect("valid");
    assert_eq!(spec.nodes.len(), 2);
}

/// A plain big file within the caps still reads: 20,000 nodes with 100
/// given 20-digit points each (2 M values, 40 MiB) pass the budget.
#[test]
fn a_plain_file_at_the_caps_passes_the_budget() {
    use std::fmt::Write;
    let mut text = String::from("max_points = 4000000\n");
    for node in 0..20_000u64 {
        let _ = write!(text, "[[nodes]]\nname = \"n{node}\"\npoints = [");
        for i in 0..100u64 {
            let point = 10_000_000_000_000_000_000 + node * 1000 + i;
            let _ = write!(text, "{point}, ");
        }
        text.push_str("]\n");
    }
    let spec = ClusterSpec::from_toml_unbuilt(&text).expect("within the budget");
    assert_eq!(spec.nodes.len(), 20_000);
}

// Membership code linear in the nodes.

/// `pinned` after a join on 200,000 jump nodes: it was a `Vec::contains`
/// per node (O(N²): 168 s in release). Linear now; the result is the
/// snapshot's order, and the pinned spec builds the same placement.
#[test]
fn pinned_is_linear_in_nodes() {
    let n = 200_000;
    let spec = ClusterSpec::new(Algorithm::Jump, names(n)).expect("valid");
    let built = spec.build().expect("builds");
    let grown = built
        .placement()
        .with_node(Node::new("node-new"))
        .expect("joins");
    let pinned = spec.pinned(&grown).expect("pins");
    assert_eq!(pinned.listed.len(), n + 1);
    assert_eq!(pinned.listed.last().map(String::as_str), Some("node-new"));
    assert_eq!(pinned.listed[..n], spec.listed[..]);
    let again = pinned.build().expect("rebuilds");
    for h in (0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
        assert_eq!(again.placement().owner(h), grown.owner(h));
    }
}

// Bounded loads with a hot key.

/// The reference answer: the first node with room on the whole list.
fn model<P: Placement>(bounded: &Bounded<P>, hashes: &[u64]) -> Vec<NodeId> {
    let n = bounded.placement().len();
    let mut load = vec![0u64; n];
    let mut list = Vec::new();
    hashes
        .iter()
        .map(|&h| {
            bounded.placement().replicas_into(h, n, &mut list);
            let m = hashes.len() as u64;
            let pick = list
                .iter()
                .copied()
                .find(|&id| load[id as usize] < bounded.capacity(id, m))
                .expect("room");
            load[pick as usize] += 1;
            pick
        })
        .collect()
}

#[test]
fn a_hot_key_does_not_restart_its_walk() {
    let n = 2_000;
    let k = 100_000u64;
    let ring = Ring::builder()
        .hasher(StableHash::Xxh3)
        .vnodes(20)
        .nodes(names(n))
        .build()
        .expect("ring");
    let jump = Jump::new(names(n)).expect("jump");
    let hot = vec![0xdead_beef_u64; k as usize];
    let mixed: Vec<u64> = (0..k)
        .map(|i| if i % 2 == 0 { 7 } else { i % 50 })
        .collect();
    let check = |read: u64, what: &str| {
        // K owner calls, plus each distinct hash's list read once in
        // doubling prefixes (at most 4·(N + 1) entries): the stated bound.
        // Restarting the walk per copy read about K·N/2 (10^8 here).
        assert!(
            read <= k + 51 * 4 * (n as u64 + 1),
            "{what}: {read} entries read"
        );
    };
    let bounded = Bounded::new(ring, 0.25).expect("valid");
    for (hashes, what) in [(&hot, "ring, hot"), (&mixed, "ring, mixed")] {
        let (owners, read) = bounded.assign_counted(hashes);
        check(read, what);
        assert_eq!(owners.len(), hashes.len());
    }
    let small: Vec<u64> = hot[..5_000]
        .iter()
        .chain(&mixed[..5_000])
        .copied()
        .collect();
    assert_eq!(
        bounded.assign(&small),
        model(&bounded, &small),
        "ring model"
    );
    let bounded = Bounded::new(jump, 0.25).expect("valid");
    for (hashes, what) in [(&hot, "jump, hot"), (&mixed, "jump, mixed")] {
        let (_, read) = bounded.assign_counted(hashes);
        check(read, what);
    }
    assert_eq!(
        bounded.assign(&small),
        model(&bounded, &small),
        "jump model"
    );
}

// Memento's cost with removals; the work estimates.

fn memento(working: usize, removed: &[u32]) -> Memento {
    Memento::with_removed(names(working), removed).expect("valid")
}

/// Mean removed buckets visited per lookup over `keys` fixed hashes.
fn steps(memento: &Memento, keys: u64) -> f64 {
    let mut steps = 0;
    for i in 0..keys {
        memento.bucket_counted(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i, &mut steps);
    }
    steps as f64 / keys as f64
}

#[test]
fn memento_cost_with_removals_is_the_documented_one() {
    // Removals from the front: about 2 ln(n / w) steps, flat in m.
    let front = |m: u32| memento(1, &(0..m).collect::<Vec<_>>());
    let (at_1k, at_4k) = (steps(&front(1000), 2000), steps(&front(4000), 2000));
    assert!(at_1k < 20.0 && at_4k < 25.0, "{at_1k} {at_4k}");
    // Descending order: every removed bucket once, linear in m.
    let down = |m: u32| memento(1, &(0..m).rev().collect::<Vec<_>>());
    let (d_1k, d_2k) = (steps(&down(1000), 200), steps(&down(2000), 200));
    assert!((900.0..=1100.0).contains(&d_1k), "{d_1k}");
    assert!((1800.0..=2200.0).contains(&d_2k), "{d_2k}");
    // Random order: Θ(n / w) too, between the two.
    let mut x = 1u64;
    let mut order: Vec<u32> = (0..4001).collect();
    for i in (1..order.len()).rev() {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        order.swap(i, (x >> 33) as usize % (i + 1));
    }
    order.truncate(4000);
    let random = steps(&memento(1, &order), 500);
    assert!((at_4k * 10.0..=4000.0 * 2.0).contains(&random), "{random}");
}

#[test]
fn memento_estimates_its_work_per_lookup_cheaply() {
    assert_eq!(memento(10, &[]).expected_steps(), 0.0);
    let front = memento(1, &(0..4000).collect::<Vec<_>>());
    let estimate = front.expected_steps();
    let measured = steps(&front, 4000);
    assert!(
        (estimate - measured).abs() < measured * 0.5 + 2.0,
        "{estimate} vs {measured}"
    );
    // A walk of 2^20 steps per lookup: the estimate stops at its budget
    // and says at least 1024, enough to refuse.
    let down = memento(1, &(0..1 << 20).rev().collect::<Vec<_>>());
    assert!(down.expected_steps() >= 1024.0, "{}", down.expected_steps());
}

#[test]
fn anchor_and_dx_estimate_their_work_per_lookup() {
    let built = |algorithm: &str| {
        let text = format!(
            "algorithm = \"{algorithm}\"\ncapacity = 1024\n[[nodes]]\nname = \"a\"\n\
             [[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n[[nodes]]\nname = \"d\"\n"
        );
        ClusterSpec::from_toml(&text)
            .expect("valid")
            .build()
            .expect("builds")
    };
    match built("anchor").placement() {
        AnyPlacement::Anchor(anchor) => {
            let expected = 1.0 + 256f64.ln();
            assert!((anchor.expected_steps() - expected).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    match built("dx").placement() {
        AnyPlacement::Dx(dx) => assert_eq!(dx.expected_steps(), 256.0),
        other => panic!("{other:?}"),
    }
}

// `capacity = 0` and zone names.

#[test]
fn capacity_zero_is_refused_naming_the_field_and_the_range() {
    for algorithm in ["anchor", "dx", "memento"] {
        let text = format!("algorithm = \"{algorithm}\"\ncapacity = 0\n[[nodes]]\nname = \"a\"\n");
        let (line, field, message) = file_error(&text);
        assert_eq!(
            (line, field.as_deref()),
            (Some(2), Some("capacity")),
            "{message}"
        );
        assert!(message.contains("from 1 to 4194304"), "{message}");
    }
}

#[test]
fn a_zone_name_follows_the_node_name_rule() {
    let long = "z".repeat(1025);
    let text = format!("[[nodes]]\nname = \"a\"\nzone = \"{long}\"\n");
    let (line, field, message) = file_error(&text);
    assert_eq!(
        (line, field.as_deref()),
        (Some(3), Some("zone")),
        "{message}"
    );
    assert!(
        message.contains("at most 1024 bytes") && message.len() < 600,
        "{message}"
    );
    let ok = format!("[[nodes]]\nname = \"a\"\nzone = \"{}\"\n", "z".repeat(1024));
    ClusterSpec::from_toml(&ok).expect("1024 bytes is a zone");
    let err = Node::new("a").zone("").validate().expect_err("empty");
    assert!(matches!(err, Error::InvalidZone { .. }), "{err}");
}

/// A `secret` of the wrong kind (a number, a list) made
/// TOML's message quote the value, secret digits included. The error names
/// the line and the field, says what to write, and never shows the value.
#[test]
fn a_secret_of_the_wrong_kind_is_never_quoted() {
    for value in [
        "112233445566778899",
        "[112233445566778899]",
        "1122334455.66778899",
        "{ x = 112233445566778899 }",
    ] {
        let text = format!("hash = \"siphash\"\nsecret = {value}\n[[nodes]]\nname = \"a\"\n");
        let error = ringwise::ClusterSpec::from_toml(&text).expect_err("refused");
        let message = error.to_string();
        assert!(
            !message.contains("112233445566778899"),
            "{value}: {message}"
        );
        assert!(!message.contains("66778899"), "{value}: {message}");
        assert!(message.contains("line 2"), "{value}: {message}");
        assert!(message.contains("32 hex digits"), "{value}: {message}");
    }
}
