//! The `grpc` kind through `import`: the docs' channel is the cluster file
//! beside it, gRPC's defaults and duplicate merge, endpoint lists with
//! hash keys, and every refusal naming its line. The placements themselves
//! are proven against real grpcio channels in the CLI's
//! `compat::grpc` test, which builds its clusters through this kind.

use ringwise::{ClusterSpec, Param, ParamValue};
use ringwise_import::{ImportError, Kind, import};

fn examples(name: &str) -> String {
    let path = format!("{}/../../docs/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A channel document: `endpoints` is the `"target": ...` or
/// `"endpoints": [...]` entry, `lb` the policy's fields.
fn channel(endpoints: &str, lb: &str, rest: &str) -> String {
    format!(
        "{{{endpoints},\n\"serviceConfig\": {{\"loadBalancingConfig\": \
         [{{\"ring_hash_experimental\": {{{lb}}}}}]}}{rest}}}"
    )
}

fn spec(text: &str) -> ClusterSpec {
    import(Kind::Grpc, text, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .spec()
        .expect("valid")
}

/// The nodes in listed order (the ring's), with their weights.
fn nodes(spec: &ClusterSpec) -> Vec<(String, f64)> {
    spec.listed
        .iter()
        .map(|name| {
            let id = spec.nodes.id(name).expect("a listed node");
            (name.clone(), spec.nodes.get(id).expect("its node").weight)
        })
        .collect()
}

fn refused(text: &str) -> ImportError {
    import(Kind::Grpc, text, None).expect_err("refused")
}

#[test]
fn the_docs_channel_is_the_cluster_file_beside_it() {
    let ours = spec(&examples("grpc-channel.json"));
    let theirs = ClusterSpec::from_toml(&examples("grpc.toml")).expect("the docs' file");
    assert_eq!(ours, theirs);
}

#[test]
fn absent_sizes_are_grpcs_defaults_not_envoys() {
    let spec = spec(&channel("\"target\": \"ipv4:10.0.0.1:1\"", "", ""));
    assert_eq!(spec.algorithm.name(), "grpc-ring");
    assert_eq!(spec.params.hash.name(), "xxh64");
    assert_eq!(spec.params.get(Param::MinRingSize), ParamValue::Count(1024));
    assert_eq!(spec.params.get(Param::MaxRingSize), ParamValue::Count(4096));
    assert_eq!(spec.params.get(Param::RingSizeCap), ParamValue::Count(4096));
}

#[test]
fn duplicates_merge_at_their_first_position() {
    let target = "\"target\": \"ipv4:///10.0.0.2:80,10.0.0.1:80,10.0.0.2:80,10.0.0.2:80\"";
    let imported = import(Kind::Grpc, &channel(target, "", ""), None).expect("import");
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.contains("10.0.0.2:80 is listed 3 times")),
        "{:?}",
        imported.notes
    );
    let spec = imported.spec().expect("valid");
    assert_eq!(
        nodes(&spec),
        [("10.0.0.2:80".into(), 3.0), ("10.0.0.1:80".into(), 1.0)]
    );
}

#[test]
fn endpoint_lists_take_weights_and_hash_keys() {
    let list = "\"endpoints\": [\n{\"address\": \"10.0.0.1:80\", \"weight\": 2, \"hashKey\": \"pod-a\"},\n\
                {\"address\": \"[::1]:80\"},\n{\"address\": \"10.0.0.1:80\"},\n\
                {\"address\": \"10.0.0.3:80\", \"hashKey\": \"\"}]";
    let spec = spec(&channel(
        list,
        "\"maxRingSize\": 8192",
        ", \"channelArgs\": {\"grpc.lb.ring_hash.ring_size_cap\": 8192, \"grpc.primary_user_agent\": \"x\"}",
    ));
    // The second 10.0.0.1:80 adds 1 (no weight) to the first's 2; an
    // empty hash key is the address, as in gRPC.
    assert_eq!(
        nodes(&spec),
        [
            ("pod-a".into(), 3.0),
            ("[::1]:80".into(), 1.0),
            ("10.0.0.3:80".into(), 1.0)
        ]
    );
    assert_eq!(spec.params.get(Param::RingSizeCap), ParamValue::Count(8192));
    assert_eq!(spec.params.get(Param::MaxRingSize), ParamValue::Count(8192));
}

#[test]
fn ipv6_targets_are_written_as_grpc_prints_them() {
    let spec = spec(&channel(
        "\"target\": \"ipv6:[2001:db8:0:0::1]:50051,[::1]:50051\"",
        "",
        "",
    ));
    assert_eq!(
        nodes(&spec),
        [
            ("[2001:db8::1]:50051".into(), 1.0),
            ("[::1]:50051".into(), 1.0)
        ]
    );
}

#[test]
fn what_grpc_refuses_or_ringwise_cannot_know_is_refused() {
    let target = "\"target\": \"ipv4:10.0.0.1:80\"";
    let cases: [(String, &str); 12] = [
        (
            "{\"target\": \"ipv4:10.0.0.1:80\", \"serviceConfig\": {\"loadBalancingConfig\": \
             [{\"round_robin\": {}}, {\"ring_hash_experimental\": {}}]}}"
                .into(),
            "gRPC uses the first policy",
        ),
        (
            channel(target, "\"minRingSize\": 8192", ""),
            "maxRingSize cannot be smaller than minRingSize",
        ),
        (channel(target, "\"maxRingSize\": 0", ""), "[1, 8388608]"),
        (
            channel(
                target,
                "\"minRingSize\": 8388609, \"maxRingSize\": 8388609",
                "",
            ),
            "[1, 8388608]",
        ),
        (
            channel(target, "\"requestHashHeader\": \"x-key-bin\"", ""),
            "binary",
        ),
        (
            channel(target, "\"requestHashHeader\": \"X-Key\"", ""),
            "not a gRPC metadata key",
        ),
        (
            channel(target, "\"minringsize\": 10", ""),
            "unknown setting `ring_hash_experimental.minringsize`",
        ),
        (
            channel(
                target,
                "",
                ", \"channelArgs\": {\"grpc.lb.ring_hash.ring_size_cap\": 0}",
            ),
            "from 1 to 2147483647",
        ),
        (
            channel("\"target\": \"dns:///grpc.example:50051\"", "", ""),
            "a resolver's target",
        ),
        (
            channel("\"target\": \"ipv4:10.0.0.1\"", "", ""),
            "has no port",
        ),
        (
            channel("\"target\": \"ipv4:[::1]:80\"", "", ""),
            "is not an ipv4 address",
        ),
        (
            channel(&format!("{target}, \"endpoints\": []"), "", ""),
            "not both",
        ),
    ];
    for (text, wanted) in cases {
        let message = refused(&text).to_string();
        assert!(
            message.contains(wanted),
            "{text}\n=> {message}\n(wanted {wanted:?})"
        );
    }
    let error = refused(&channel(target, "\"requestHashHeader\": \"x-key-bin\"", ""));
    assert_eq!(error.line(), Some(2), "{error}");
}

#[test]
fn settings_that_move_nothing_are_notes() {
    let text = "{\"target\": \"ipv4:10.0.0.1:80\",\n\"serviceConfig\": {\"methodConfig\": [],\n\
                \"loadBalancingConfig\": [{\"ring_hash_experimental\": {}}]},\n\
                \"channelArgs\": {\"grpc.keepalive_time_ms\": 1000}}";
    let notes = import(Kind::Grpc, text, None).expect("import").notes;
    for wanted in [
        "serviceConfig.methodConfig does not change placement",
        "channel argument grpc.keepalive_time_ms does not change placement",
        "no requestHashHeader",
    ] {
        assert!(
            notes.iter().any(|n| n.contains(wanted)),
            "{wanted}: {notes:?}"
        );
    }
}
