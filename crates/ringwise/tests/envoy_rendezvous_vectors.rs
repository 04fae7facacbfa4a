//! Envoy's own test expectations for `rendezvous_hash`, read from
//! `tests/fixtures/envoy_rendezvous/` (upstream commit and transcription
//! notes in its README.md): every line is checked, and a line whose test
//! this file does not know fails, so nothing transcribed is skipped.

use std::collections::BTreeMap;

use ringwise::{
    Algorithm, AnyPlacement, EnvoyRendezvous, KeyHasher, Node, NodeId, Params, Placement,
};

const MATH: &str = include_str!("fixtures/envoy_rendezvous/math.tsv");
const BALANCER: &str = include_str!("fixtures/envoy_rendezvous/balancer.tsv");

/// One fixture line: the Envoy test's name and its fields.
struct Line {
    test: String,
    fields: BTreeMap<String, String>,
}

impl Line {
    fn get(&self, field: &str) -> &str {
        self.fields
            .get(field)
            .unwrap_or_else(|| panic!("{}: no field `{field}`", self.test))
    }

    fn list<T>(&self, field: &str, parse: impl Fn(&str) -> T) -> Vec<T> {
        let value = self.get(field);
        if value.is_empty() {
            return Vec::new();
        }
        value.split(',').map(parse).collect()
    }

    /// Hashes: a list of numbers, or `step:N:S` for `i·S`, `i` in `0..N`.
    fn hashes(&self, field: &str) -> Vec<u64> {
        let value = self.get(field);
        if let Some(step) = value.strip_prefix("step:") {
            let (count, stride) = step.split_once(':').expect("step:N:S");
            let stride = number(stride);
            return (0..number(count)).map(|i| i * stride).collect();
        }
        self.list(field, number)
    }

    fn f64(&self, field: &str) -> f64 {
        self.get(field).parse().expect("a number")
    }
}

fn lines(text: &str) -> Vec<Line> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split('\t');
            let test = parts.next().unwrap_or_default().to_owned();
            let fields = parts
                .map(|p| {
                    let (k, v) = p.split_once('=').expect("field=value");
                    (k.to_owned(), v.to_owned())
                })
                .collect();
            Line { test, fields }
        })
        .collect()
}

/// A C++ integer literal: decimal, `0x` hex, or `u64max`.
fn number(text: &str) -> u64 {
    if text == "u64max" {
        return u64::MAX;
    }
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).expect("hex"),
        None => text.parse().expect("a decimal integer"),
    }
}

fn float(text: &str) -> f64 {
    text.parse().expect("a float")
}

#[test]
fn envoys_math_expectations() {
    let all = lines(MATH);
    assert_eq!(all.len(), 9, "every line of math.tsv");
    for line in &all {
        let test = line.test.as_str();
        match test {
            "FastLogBasicValues" | "FastLog2BasicValues" | "FastLog2PowersOfTwo" => {
                let function = match line.get("function") {
                    "fast_log" => EnvoyRendezvous::fast_log,
                    "fast_log2" => EnvoyRendezvous::fast_log2,
                    other => panic!("{test}: unknown function {other}"),
                };
                let inputs: Vec<(f64, f64)> = if line.fields.contains_key("exponents") {
                    let (lo, hi) = line.get("exponents").split_once("..").expect("a..b");
                    let (lo, hi): (i32, i32) = (lo.parse().expect("lo"), hi.parse().expect("hi"));
                    (lo..=hi).map(|e| (2f64.powi(e), f64::from(e))).collect()
                } else {
                    let reference = line.get("reference");
                    line.list("inputs", float)
                        .into_iter()
                        .map(|x| {
                            let want = match reference {
                                "ln" => x.ln(),
                                "log2" => x.log2(),
                                "zero" => 0.0,
                                other => panic!("{test}: unknown reference {other}"),
                            };
                            (x, want)
                        })
                        .collect()
                };
                for (x, want) in inputs {
                    let got = function(x);
                    if let Some(max) = line.fields.get("max_relative_error") {
                        let error = ((got - want) / want).abs();
                        assert!(error < float(max), "{test}: f({x}) = {got}, want {want}");
                    } else {
                        let max = line.f64("max_absolute_error");
                        assert!((got - want).abs() <= max, "{test}: f({x}) = {got}");
                    }
                }
            }
            "NormalizeHashRange" => {
                for hash in line.hashes("hashes") {
                    let u = EnvoyRendezvous::normalize(hash);
                    assert!((0.0..1.0).contains(&u), "{test}: {hash} -> {u}");
                }
            }
            "XorshiftMult64NonZero" => {
                for input in line.hashes("inputs") {
                    let out = EnvoyRendezvous::xorshift_star(input);
                    assert!(out != 0 && out != input, "{test}: {input} -> {out}");
                }
            }
            "ComputeScoreValidOutputs" => {
                for key in line.hashes("keys") {
                    for host in line.hashes("host_hashes") {
                        for weight in line.list("weights", float) {
                            let s = EnvoyRendezvous::score(key, host, weight);
                            assert!(s.is_finite() && s > 0.0, "{test}: {key} {host} {weight}");
                        }
                    }
                }
            }
            "ComputeScoreWeightProportionality" => {
                let host = number(line.get("host_hash"));
                let (low, high) = (line.f64("low"), line.f64("high"));
                let wins = line
                    .hashes("keys")
                    .into_iter()
                    .filter(|&k| {
                        EnvoyRendezvous::score(k, host, high) > EnvoyRendezvous::score(k, host, low)
                    })
                    .count();
                let bound: usize = line.get("expect_high_wins_more_than").parse().expect("n");
                assert!(wins > bound, "{test}: {wins}");
            }
            other => panic!("math.tsv: unknown Envoy test {other}"),
        }
    }
}

/// `name*weight,...` in Envoy's host order, built as a cluster file builds.
fn table(list: &str) -> AnyPlacement {
    let nodes: Vec<Node> = list
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|entry| {
            let (name, weight) = entry.split_once('*').expect("name*weight");
            Node::new(name).weight(float(weight))
        })
        .collect();
    AnyPlacement::build(Algorithm::EnvoyRendezvous, nodes, &Params::DEFAULT).expect("builds")
}

fn name(placement: &AnyPlacement, id: Option<NodeId>) -> Option<&str> {
    id.and_then(|id| placement.nodes().name(id))
}

/// Envoy's `LoadBalancerImpl::chooseHost` loop: attempts `0..=retries`,
/// returning the first host the predicate accepts, else the last one.
fn choose(table: &EnvoyRendezvous, hash: u64, retries: u32, reject: Option<NodeId>) -> NodeId {
    let mut host = None;
    for attempt in 0..=retries {
        host = table.attempt(hash, attempt);
        if host != reject {
            break;
        }
    }
    host.expect("a host")
}

#[test]
fn envoys_balancer_expectations() {
    let all = lines(BALANCER);
    assert_eq!(all.len(), 14, "every line of balancer.tsv");
    for line in &all {
        let test = line.test.as_str();
        let placement = table(line.get("hosts"));
        let keys = line.hashes("keys");
        let AnyPlacement::EnvoyRendezvous(rendezvous) = &placement else {
            panic!("{test}: not envoy-rendezvous");
        };
        match test {
            "NoHost" | "ZeroLocalityWeights" => {
                assert_eq!(line.get("expect"), "no_host");
                for &k in &keys {
                    assert_eq!(placement.owner(k), None, "{test}");
                }
            }
            "Basic" | "BasicWithBoundedLoad" | "BasicWithHostname" | "BasicFailover" => {
                for &k in &keys {
                    let first = placement.owner(k);
                    assert!(first.is_some(), "{test}: key {k}");
                    match line.get("expect") {
                        "same_host_twice" => assert_eq!(placement.owner(k), first),
                        "a_host" => {}
                        host => {
                            let host = host.strip_prefix("host:").expect("host:NAME");
                            assert_eq!(name(&placement, first), Some(host), "{test}");
                        }
                    }
                }
            }
            "BasicWithRetryHostPredicate" => {
                let retries: u32 = line.get("retries").parse().expect("retries");
                for &k in &keys {
                    let first = rendezvous.attempt(k, 0).expect("a host");
                    match (line.get("reject"), line.get("expect")) {
                        ("none", "first_attempt_host") => {
                            assert_eq!(choose(rendezvous, k, retries, None), first);
                        }
                        ("first_attempt_host", "a_host") => {
                            let got = choose(rendezvous, k, retries, Some(first));
                            // Envoy returns attempt 1's host whether or not
                            // it is the rejected one.
                            assert_eq!(Some(got), rendezvous.attempt(k, 1), "{test}");
                        }
                        other => panic!("{test}: unknown expectation {other:?}"),
                    }
                }
            }
            "HostWeightedDistribution" | "LocalityWeightedDistribution" => {
                let bounds = line.list("expect_counts", |r| {
                    let (lo, hi) = r.split_once("..").expect("lo..hi");
                    (number(lo), number(hi))
                });
                let mut counts = vec![0u64; placement.len()];
                for &k in &keys {
                    counts[placement.owner(k).expect("a host") as usize] += 1;
                }
                // Ids are in name order, which is the port order here.
                for (i, (&count, &(lo, hi))) in counts.iter().zip(&bounds).enumerate() {
                    assert!(lo < count && count < hi, "{test}: host {i} has {count}");
                }
                if let Some(absent) = line.fields.get("absent") {
                    assert!(!placement.nodes().contains(absent));
                }
            }
            "ConsistencyOnHostChange" => {
                let (joiner, weight) = line.get("join").split_once('*').expect("name*w");
                let joined = placement
                    .with_node(Node::new(joiner).weight(float(weight)))
                    .expect("joins");
                let changed = keys
                    .iter()
                    .filter(|&&k| {
                        name(&placement, placement.owner(k)) != name(&joined, joined.owner(k))
                    })
                    .count();
                let bound: usize = line.get("expect_changed_below").parse().expect("n");
                assert!(changed < bound, "{test}: {changed} changed");
            }
            "TwoHostsBasic" => {
                let mut seen = vec![false; placement.len()];
                for &k in &keys {
                    seen[placement.owner(k).expect("a host") as usize] = true;
                }
                assert!(seen.iter().all(|&s| s), "{test}: {seen:?}");
            }
            other => panic!("balancer.tsv: unknown Envoy test {other}"),
        }
    }
}

/// The request hash: Envoy hashes a header value with xxh64, seed 0, which
/// is the default key hash of `envoy-rendezvous`.
#[test]
fn the_default_key_hash_is_envoys_header_hash() {
    let hash = Algorithm::EnvoyRendezvous.default_hash();
    assert_eq!(
        hash.hash(b"user:42"),
        xxhash_rust::xxh64::xxh64(b"user:42", 0)
    );
}

/// Envoy's retry rule: attempt `a` scores `hash ^ (2^64 - a)`.
#[test]
fn attempts_flip_the_hash_as_envoy_does() {
    let nodes = (90..=95).map(|p| Node::new(format!("127.0.0.1:{p}")));
    let table = EnvoyRendezvous::new(nodes.collect()).expect("builds");
    for hash in [0, 1, 12_345, u64::MAX] {
        assert_eq!(table.attempt(hash, 0), table.owner(hash));
        // 2^64 - 1 = !0: attempt 1 scores the complement.
        assert_eq!(table.attempt(hash, 1), table.owner(!hash));
        let third = hash ^ 3u64.wrapping_neg();
        assert_eq!(table.attempt(hash, 3), table.owner(third));
    }
    // Replicas are the distinct hosts of the attempts, in order.
    let mut out = Vec::new();
    table.replicas_into(12_345, 3, &mut out);
    let mut attempts = (0..).filter_map(|a| table.attempt(12_345, a));
    let mut want: Vec<NodeId> = Vec::new();
    while want.len() < 3 {
        let next = attempts.next().expect("a host");
        if !want.contains(&next) {
            want.push(next);
        }
    }
    assert_eq!(out, want);
}

/// A join lists the new host last and renormalizes: the same as a fresh
/// build in that order; a leave undoes it.
#[test]
fn joins_append_and_leaves_restore() {
    let base = EnvoyRendezvous::new(vec![Node::new("b"), Node::new("a")]).expect("builds");
    let c = Node::new("c").weight(2.0);
    let joined = base.with_node(c.clone()).expect("joins");
    let fresh = EnvoyRendezvous::new(vec![Node::new("b"), Node::new("a"), c]).expect("builds");
    let left = joined.without_node("c").expect("leaves");
    let c_id = joined.nodes().id("c").expect("c");
    assert_eq!(joined.normalized_weight(c_id), 0.5);
    assert_eq!(left.normalized_weight(0), 0.5);
    for i in 0..2_000u64 {
        let h = ringwise::replica_key(i, 1);
        assert_eq!(joined.owner(h), fresh.owner(h));
        assert_eq!(left.owner(h), base.owner(h));
    }
    assert!(base.with_node(Node::new("a")).is_err());
    assert!(base.without_node("z").is_err());
}
