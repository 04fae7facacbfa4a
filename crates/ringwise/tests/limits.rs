//! Limits in the core: the point budget and how to raise it, the
//! lightest weight, the hash only `slots` can use, the parameters each
//! algorithm reads, and cluster-file errors in plain words.

use ringwise::{
    Algorithm, AnyPlacement, ClusterSpec, Error, MAX_POINTS, MAX_POINTS_CEILING, MIN_WEIGHT, Node,
    Params, Ring, StableHash,
};

fn nodes(names: &[&str]) -> Vec<Node> {
    names.iter().map(|&n| Node::new(n)).collect()
}

/// One node of weight 1,000 at 20,000 vnodes: 2·10^7 points, above the
/// default budget of 2^24 but below the ceiling of 2^28.
fn heavy() -> Vec<Node> {
    vec![Node::new("a").weight(1000.0)]
}

#[test]
fn the_default_point_budget_is_2_pow_24_and_says_how_to_raise_it() {
    assert_eq!(MAX_POINTS, 1 << 24);
    let params = Params {
        vnodes: 20_000,
        ..Params::DEFAULT
    };
    let err = AnyPlacement::build(Algorithm::Ring, heavy(), &params).expect_err("over budget");
    assert_eq!(
        err,
        Error::TooManyPoints {
            points: 20_000_000,
            limit: 1 << 24
        }
    );
    let text = err.to_string();
    for needle in [
        "20000000 points",
        "16777216",
        "max_points",
        "--max-points",
        "268435456",
    ] {
        assert!(text.contains(needle), "{text:?} lacks {needle:?}");
    }
    let builder = Ring::builder().vnodes(20_000).nodes(heavy()).build();
    assert!(matches!(builder, Err(Error::TooManyPoints { .. })));
}

#[test]
fn the_budget_can_be_raised_up_to_the_ceiling_and_no_further() {
    // Raised: the same ring builds (a smaller one, to stay quick: the
    // budget is what is tested, the lower default refuses it).
    let params = Params {
        vnodes: 100,
        max_points: 100,
        ..Params::DEFAULT
    };
    let refused = AnyPlacement::build(Algorithm::Ring, nodes(&["a", "b"]), &params);
    assert_eq!(
        refused.expect_err("200 > 100"),
        Error::TooManyPoints {
            points: 200,
            limit: 100
        }
    );
    let raised = Params {
        max_points: 200,
        ..params
    };
    let ring = AnyPlacement::build(Algorithm::Ring, nodes(&["a", "b"]), &raised).expect("fits");
    // A join keeps the ring's budget.
    use ringwise::Placement;
    assert!(matches!(
        ring.with_node(Node::new("c")),
        Err(Error::TooManyPoints { limit: 200, .. })
    ));
    for bad in [0, MAX_POINTS_CEILING + 1] {
        let params = Params {
            max_points: bad,
            ..Params::DEFAULT
        };
        let err = AnyPlacement::build(Algorithm::Ring, nodes(&["a"]), &params).expect_err("bad");
        assert!(
            matches!(
                err,
                Error::InvalidParameter {
                    parameter: "max_points",
                    ..
                }
            ),
            "{err:?}"
        );
    }
    let ok = Ring::builder()
        .max_points(MAX_POINTS_CEILING)
        .node(Node::new("a"))
        .build();
    assert!(ok.is_ok());
    // The cluster file: `max_points` raises it, on its own line when bad.
    let file = "vnodes = 100\nmax_points = 150\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n";
    assert!(matches!(
        ClusterSpec::from_toml(file),
        Err(Error::ClusterFile { .. })
    ));
    let file = file.replace("150", "200");
    let spec = ClusterSpec::from_toml(&file).expect("fits");
    assert_eq!(spec.params.max_points, 200);
    let file = file.replace("200", "0");
    match ClusterSpec::from_toml(&file) {
        Err(Error::ClusterFile { line, field, .. }) => {
            assert_eq!((line, field.as_deref()), (Some(2), Some("max_points")));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn weights_below_the_minimum_are_refused_by_name() {
    assert_eq!(MIN_WEIGHT, 1e-6);
    let err = AnyPlacement::build(
        Algorithm::Rendezvous,
        vec![Node::new("tiny").weight(1e-308), Node::new("b")],
        &Params::DEFAULT,
    )
    .expect_err("too light");
    assert!(matches!(err, Error::InvalidWeight { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("\"tiny\"") && text.contains("1e-6"), "{text}");
    assert!(Node::new("light").weight(MIN_WEIGHT).validate().is_ok());
}

/// Redis's 14-bit slot numbers are refused for every algorithm but slots,
/// the same way through the library and a cluster file.
#[test]
fn redis_crc16_is_for_slots_only() {
    let with_crc = Params {
        hash: StableHash::RedisCrc16,
        ..Params::DEFAULT
    };
    for &algorithm in Algorithm::ALL {
        let built = AnyPlacement::build(algorithm, nodes(&["a", "b", "c"]), &with_crc);
        let file = format!(
            "algorithm = \"{algorithm}\"\nhash = \"redis-crc16\"\n[[nodes]]\nname = \"a\"\n"
        );
        let spec = ClusterSpec::from_toml(&file);
        if algorithm == Algorithm::Slots {
            assert!(built.is_ok() && spec.is_ok(), "{algorithm}");
            continue;
        }
        let err = built.expect_err("refused");
        assert!(
            matches!(
                err,
                Error::InvalidParameter {
                    parameter: "hash",
                    ..
                }
            ),
            "{algorithm}: {err:?}"
        );
        assert!(err.to_string().contains("only algorithm slots"), "{err}");
        assert_eq!(algorithm.check_hash(StableHash::RedisCrc16), Err(err));
        match spec {
            Err(Error::ClusterFile { line, field, .. }) => {
                assert_eq!(
                    (line, field.as_deref()),
                    (Some(2), Some("hash")),
                    "{algorithm}"
                );
            }
            other => panic!("{algorithm}: {other:?}"),
        }
    }
}

#[test]
fn algorithms_say_which_parameters_they_read() {
    let reads = |a: Algorithm| a.reads().to_vec();
    assert_eq!(reads(Algorithm::Ring), ["vnodes", "max_points"]);
    assert_eq!(reads(Algorithm::Maglev), ["table_size"]);
    assert_eq!(reads(Algorithm::MultiProbe), ["probes"]);
    assert_eq!(reads(Algorithm::Slots), ["slot_layout"]);
    for a in [
        Algorithm::Jump,
        Algorithm::Memento,
        Algorithm::JumpBack,
        Algorithm::Binomial,
        Algorithm::FlipHash,
        Algorithm::Rendezvous,
    ] {
        assert!(reads(a).is_empty(), "{a}");
    }
    let spec = ClusterSpec::from_toml("table_size = 7\nvnodes = 10\n[[nodes]]\nname = \"a\"\n")
        .expect("valid");
    assert_eq!(spec.ignored_params(), ["table_size"]);
    let spec = ClusterSpec::from_toml(
        "algorithm = \"jump\"\nvnodes = 10\nprobes = 3\n[[nodes]]\nname = \"a\"\n",
    )
    .expect("valid");
    assert_eq!(spec.ignored_params(), ["vnodes", "probes"]);
}

/// TOML errors name what to write, not Rust types.
#[test]
fn cluster_file_type_errors_speak_plain_words() {
    let cases = [
        (
            "vnodes = \"many\"\n[[nodes]]\nname = \"a\"\n",
            "a whole number",
        ),
        ("[[nodes]]\nname = \"a\"\nweight = \"heavy\"\n", "a number"),
        ("nodes = [1]\n", "a [[nodes]] table"),
        ("nodes = 3\n", "a list of [[nodes]] tables"),
    ];
    for (text, needle) in cases {
        let err = ClusterSpec::from_toml(text)
            .expect_err("bad type")
            .to_string();
        assert!(err.contains(needle), "{text:?}: {err:?} lacks {needle:?}");
        for rust in [
            "f64",
            "u32",
            "u64",
            "struct",
            "RawNode",
            "RawCluster",
            "sequence",
        ] {
            assert!(!err.contains(rust), "{text:?}: {err:?} leaks {rust:?}");
        }
    }
}
