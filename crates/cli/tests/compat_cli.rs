//! The compatibility flavours on the command line (ketama, nginx,
//! envoy-ring, cassandra) through `lookup`, `inspect` and `simulate`, their
//! options, `token`, and hash tags. Expected answers come from the library
//! (proven against the peers' own fixtures), never typed in, except the
//! published Cassandra vector.

use ringwise::{
    Algorithm, ClusterSpec, Flavor, Keyed, Placement, StableHash, cassandra_token,
    composite_partition_key,
};

use crate::support::{TempDir, assert_success, ringwise, stderr, stdout};

/// Keys `key-0 ..` as stdin lines.
fn key_lines(n: usize) -> (Vec<String>, Vec<u8>) {
    let keys: Vec<String> = (0..n).map(|i| format!("key-{i}")).collect();
    let stdin = keys
        .iter()
        .flat_map(|k| format!("{k}\n").into_bytes())
        .collect();
    (keys, stdin)
}

/// `KEY<TAB>VALUE` lines as pairs.
fn pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| {
            let (key, value) = line.split_once('\t').expect("KEY<TAB>VALUE");
            (key.to_owned(), value.to_owned())
        })
        .collect()
}

/// The library's cluster from a cluster file's text.
fn library(toml: &str) -> Keyed<ringwise::AnyPlacement> {
    ClusterSpec::from_toml(toml)
        .expect("valid cluster")
        .build()
        .expect("builds")
}

/// A ketama cluster in libmemcached's style: ports, uneven whole weights.
fn ketama_toml(flavor: &str, hash: Option<&str>) -> String {
    let mut text = format!("algorithm = \"ketama\"\nflavor = \"{flavor}\"\n");
    if let Some(hash) = hash {
        text += &format!("hash = \"{hash}\"\n");
    }
    for (name, weight) in [
        ("10.0.1.1:11211", 600),
        ("10.0.1.2:11211", 300),
        ("10.0.1.3:11212", 200),
        ("cache-d", 350),
    ] {
        text += &format!("[[nodes]]\nname = \"{name}\"\nweight = {weight}\n");
    }
    text
}

#[test]
fn token_prints_cassandras_murmur3_token() {
    // The compatibility notes' vector.
    let out = ringwise(&["token", "123"], b"");
    assert_success(&out);
    assert_eq!(stdout(&out), "123\t-7468325962851647638\n");
    // From stdin, with CRLF line ends and a key that needs escaping.
    let out = ringwise(&["token"], b"123\r\nuser:42\na\tb\n\n");
    assert_success(&out);
    let want: String = [&b"123"[..], b"user:42", b"a\tb", b""]
        .iter()
        .map(|k| {
            let shown = String::from_utf8_lossy(k).replace('\t', "\\t");
            format!("{shown}\t{}\n", cassandra_token(k))
        })
        .collect();
    assert_eq!(stdout(&out), want);
    assert!(want.starts_with("123\t-7468325962851647638\n"));
}

#[test]
fn token_json_lines_and_composite_keys() {
    let out = ringwise(
        &[
            "token",
            "--format",
            "json",
            "--composite",
            ":",
            "user:42",
            "plain",
        ],
        b"",
    );
    assert_success(&out);
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let composite = composite_partition_key(&[b"user", b"42"]).expect("short columns");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["version"], 2);
    assert_eq!(lines[0]["key"], "user:42");
    assert_eq!(lines[0]["token"], cassandra_token(&composite).to_string());
    // A key without the separator is a one-column key: its bytes alone.
    assert_eq!(lines[1]["token"], cassandra_token(b"plain").to_string());
    // The composite serialization really changes the token.
    assert_ne!(cassandra_token(&composite), cassandra_token(b"user:42"));
    // Without --composite the same key is hashed whole.
    let out = ringwise(&["token", "--format", "json", "user:42"], b"");
    let line: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    assert_eq!(line["token"], cassandra_token(b"user:42").to_string());
    // A multi-byte separator, from stdin.
    let out = ringwise(&["token", "--composite", "::"], b"a::b::c\n");
    let parts: [&[u8]; 3] = [b"a", b"b", b"c"];
    let want = cassandra_token(&composite_partition_key(&parts).expect("short"));
    assert_eq!(stdout(&out), format!("a::b::c\t{want}\n"));
}

#[test]
fn token_refuses_a_column_over_65535_bytes_naming_the_key() {
    let long = "x".repeat(65_536);
    let stdin = format!("ok:1\n{long}:2\nnever:3\n");
    let out = ringwise(&["token", "--composite", ":"], stdin.as_bytes());
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains("key 2") && message.contains("65536 bytes"),
        "{message}"
    );
    // The keys before it were answered; the ones after it were not.
    assert!(stdout(&out).starts_with("ok:1\t"));
    assert!(!stdout(&out).contains("never"));
    // 65535 bytes is the limit, not past it.
    let fits = format!("{}:2\n", "x".repeat(65_535));
    assert_success(&ringwise(&["token", "--composite", ":"], fits.as_bytes()));
    // An empty separator is a usage error.
    let out = ringwise(&["token", "--composite", "", "k"], b"");
    assert_eq!(out.status.code(), Some(2));
}

/// `lookup --flavor F` over a libmemcached cluster file places a few hundred
/// keys where the library's flavour-F cluster does, with F's key hash.
#[test]
fn lookup_with_each_ketama_flavor_matches_the_library() {
    let dir = TempDir::create("compat-ketama");
    let file = dir.write("ketama.toml", &ketama_toml("libmemcached", None));
    let (keys, stdin) = key_lines(400);
    let mut answers = Vec::new();
    for &flavor in Flavor::NAMES {
        let out = ringwise(&["lookup", "--cluster", &file, "--flavor", flavor], &stdin);
        assert_success(&out);
        let want = library(&ketama_toml(flavor, None));
        let got = pairs(&stdout(&out));
        assert_eq!(got.len(), keys.len());
        for (key, (got_key, node)) in keys.iter().zip(&got) {
            assert_eq!(key, got_key);
            assert_eq!(Some(node.as_str()), want.locate(key), "{flavor}: {key}");
        }
        answers.push(got);
    }
    // The flavours do differ on these keys, so the option is not ignored.
    assert!(answers.iter().any(|a| a != &answers[0]));
    // twemproxy hashes keys with its own fnv1a64 unless the file names a
    // hash; a named hash stays.
    let twemproxy = library(&ketama_toml("twemproxy", None));
    assert_eq!(*twemproxy.hasher(), StableHash::Fnv1a64Twemproxy);
    let named = dir.write("named.toml", &ketama_toml("libmemcached", Some("md5-le32")));
    let out = ringwise(
        &["lookup", "--cluster", &named, "--flavor", "twemproxy"],
        &stdin,
    );
    let want = library(&ketama_toml("twemproxy", Some("md5-le32")));
    for (key, node) in pairs(&stdout(&out)) {
        assert_eq!(Some(node.as_str()), want.locate(&key), "{key}");
    }
    assert_ne!(
        pairs(&stdout(&out)),
        answers[3],
        "md5-le32 vs fnv1a64-twemproxy"
    );
}

#[test]
fn inspect_shows_ketamas_32_bit_points() {
    let dir = TempDir::create("compat-inspect-ketama");
    let toml = ketama_toml("libmemcached", None);
    let file = dir.write("ketama.toml", &toml);
    let out = ringwise(&["inspect", "--cluster", &file], b"");
    assert_success(&out);
    let header = stdout(&out).lines().next().expect("header").to_owned();
    assert!(
        header.starts_with("algorithm ketama (libmemcached), hash md5-le32")
            && header.contains("32-bit points"),
        "{header}"
    );
    // Every point, as libmemcached writes it, in ring order.
    let keyed = library(&toml);
    let ring = keyed.placement().as_ring().expect("ketama is a ring");
    let nodes = keyed.placement().nodes();
    let want: String = ring
        .points()
        .map(|(p, id)| {
            let value = u32::try_from(ring.width().native(p)).expect("32-bit");
            format!("{value}\t{}\n", nodes.name(id).unwrap_or_default())
        })
        .collect();
    let out = ringwise(&["inspect", "--cluster", &file, "--points"], b"");
    assert_success(&out);
    assert_eq!(stdout(&out), want);
    assert_eq!(want.lines().count(), ring.point_count());
    // JSON: the width, the flavour, and the same points.
    let out = ringwise(
        &[
            "inspect",
            "--cluster",
            &file,
            "--points",
            "--format",
            "json",
        ],
        b"",
    );
    let doc: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    assert_eq!(doc["width"], "u32");
    assert_eq!(doc["flavor"], "libmemcached");
    let listed = doc["ring"].as_array().expect("ring");
    assert_eq!(listed.len(), ring.point_count());
    for (entry, line) in listed.iter().zip(want.lines()) {
        let (point, node) = line.split_once('\t').expect("pair");
        assert_eq!(entry[0], point, "points are decimal strings");
        assert_eq!(entry[1], node);
    }
}

/// nginx, envoy-ring and cassandra (listed tokens and generated ones):
/// inspect's exact shares and point counts are the library's, and the
/// header names the width.
#[test]
fn inspect_on_nginx_envoy_and_cassandra() {
    let dir = TempDir::create("compat-inspect");
    let cases = [
        (
            "algorithm = \"nginx\"\n[[nodes]]\nname = \"10.0.0.1:443\"\n\
             [[nodes]]\nname = \"10.0.0.2:443\"\nweight = 2\n",
            "32-bit points",
            "u32",
        ),
        (
            "algorithm = \"envoy-ring\"\nmin_ring_size = 12\n\
             [[nodes]]\nname = \"127.0.0.1:90\"\n[[nodes]]\nname = \"127.0.0.1:91\"\n\
             [[nodes]]\nname = \"127.0.0.1:92\"\n",
            "64-bit points",
            "u64",
        ),
        (
            "algorithm = \"cassandra\"\n\
             [[nodes]]\nname = \"n1\"\ntokens = [-9223372036854775808, -3074457345618258603]\n\
             [[nodes]]\nname = \"n2\"\ntokens = [3074457345618258602]\n\
             [[nodes]]\nname = \"n3\"\n",
            "signed 64-bit tokens",
            "i64",
        ),
    ];
    for (i, (toml, words, width)) in cases.into_iter().enumerate() {
        let file = dir.write(&format!("c{i}.toml"), toml);
        let text = ringwise(&["inspect", "--cluster", &file], b"");
        assert_success(&text);
        assert!(
            stdout(&text)
                .lines()
                .next()
                .expect("header")
                .contains(words)
        );
        let out = ringwise(&["inspect", "--cluster", &file, "--format", "json"], b"");
        assert_success(&out);
        let doc: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("json");
        assert_eq!(doc["width"], width);
        let keyed = library(toml);
        let ring = keyed.placement().as_ring().expect("ring-shaped");
        assert_eq!(doc["points"], ring.point_count());
        for (node, want) in doc["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .zip(ring.stats().nodes)
        {
            assert_eq!(node["name"], want.name.as_str());
            assert_eq!(node["points"], want.points);
            assert_eq!(node["share"].as_f64(), Some(want.share), "{}", want.name);
        }
    }
    // The listed tokens come back as Cassandra writes them.
    let file = dir.write(
        "tokens.toml",
        "algorithm = \"cassandra\"\n[[nodes]]\nname = \"a\"\ntokens = [5, -7]\n\
         [[nodes]]\nname = \"b\"\ntokens = [-9223372036854775808]\n",
    );
    let out = ringwise(&["inspect", "--cluster", &file, "--points"], b"");
    assert_eq!(stdout(&out), "-9223372036854775808\tb\n-7\ta\n5\ta\n");
}

/// Cassandra's replicas are SimpleStrategy's walk; `--zones` works on every
/// ring-shaped placement and is refused, naming them, elsewhere.
#[test]
fn lookup_replicas_and_zones_on_the_flavours() {
    let (keys, stdin) = key_lines(200);
    let nodes = "a@z1,b@z1,c@z2,d@z2";
    for algo in [
        "cassandra",
        "ketama",
        "nginx",
        "envoy-ring",
        "varnish-shard",
    ] {
        let toml = format!(
            "algorithm = \"{algo}\"\n{}",
            ["a", "b", "c", "d"]
                .iter()
                .zip(["z1", "z1", "z2", "z2"])
                .map(|(n, z)| format!("[[nodes]]\nname = \"{n}\"\nzone = \"{z}\"\n"))
                .collect::<String>()
        );
        let keyed = library(&toml);
        let ring = keyed.placement().as_ring().expect("ring-shaped");
        for zones in [false, true] {
            let mut args = vec![
                "lookup",
                "--algo",
                algo,
                "--nodes",
                nodes,
                "--replicas",
                "2",
            ];
            if zones {
                args.push("--zones");
            }
            let out = ringwise(&args, &stdin);
            assert_success(&out);
            let got = pairs(&stdout(&out));
            assert_eq!(got.len(), keys.len());
            let mut ids = Vec::new();
            for (key, (_, list)) in keys.iter().zip(&got) {
                match zones {
                    true => ring.zoned_replicas_into(keyed.hash(key.as_bytes()), 2, &mut ids),
                    false => keyed.replicas_into(key, 2, &mut ids),
                }
                let names = keyed.placement().nodes();
                let want: Vec<&str> = ids.iter().filter_map(|&id| names.name(id)).collect();
                assert_eq!(list, &want.join(","), "{algo} zones={zones}: {key}");
            }
        }
    }
    let out = ringwise(
        &[
            "lookup", "--algo", "maglev", "--nodes", nodes, "--zones", "k",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    for algo in [
        "ring",
        "ketama",
        "nginx",
        "envoy-ring",
        "cassandra",
        "varnish-shard",
    ] {
        assert!(message.contains(algo), "{message}");
    }
}

#[test]
fn bad_values_of_the_new_options() {
    let out = ringwise(
        &[
            "lookup", "--nodes", "a,b", "--algo", "ketama", "--flavor", "nope", "k",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    for &name in Flavor::NAMES {
        assert!(stderr(&out).contains(name), "{}", stderr(&out));
    }
    for args in [
        &["--algo", "envoy-ring", "--min-ring-size", "0"][..],
        &["--algo", "envoy-ring", "--max-ring-size", "8388609"],
        &[
            "--algo",
            "envoy-ring",
            "--min-ring-size",
            "100",
            "--max-ring-size",
            "10",
        ],
        &["--algo", "cassandra", "--num-tokens", "0"],
        &["--hash-tag", "{"],
        &["--hash-tag", "{}}"],
    ] {
        let out = ringwise(&[&["lookup", "--nodes", "a,b"], args, &["k"]].concat(), b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    // A fractional weight is bad cluster data for ketama, wherever it is.
    let dir = TempDir::create("compat-bad");
    let file = dir.write(
        "frac.toml",
        "algorithm = \"ketama\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"odd\"\nweight = 1.5\n",
    );
    let out = ringwise(&["lookup", "--cluster", &file, "k"], b"");
    assert_eq!(out.status.code(), Some(65));
    assert!(stderr(&out).contains("\"odd\""), "{}", stderr(&out));
    let out = ringwise(
        &["lookup", "--algo", "ketama", "--nodes", "a,odd=0.5", "k"],
        b"",
    );
    assert_eq!(out.status.code(), Some(65));
    assert!(stderr(&out).contains("\"odd\""), "{}", stderr(&out));
    // Settings the algorithm does not read are warned about, not refused.
    let out = ringwise(
        &["lookup", "--nodes", "a,b", "--flavor", "twemproxy", "k"],
        b"",
    );
    assert_success(&out);
    assert!(
        stderr(&out).contains("--flavor is ignored: ring does not read it (only ketama reads it)"),
        "{}",
        stderr(&out)
    );
}

/// `--hash-tag {}` makes `a{x}b` and `c{x}d` land together, on every
/// algorithm; `[]` too. (Slots' redis-crc16 reads `{}` tags by itself, as
/// Redis does, so there whole keys pair up already.)
#[test]
fn hash_tag_puts_tagged_keys_together() {
    for (tag, open, close) in [("{}", '{', '}'), ("[]", '[', ']')] {
        let keys: Vec<String> = (0..40)
            .flat_map(|i| {
                [
                    format!("a{open}t{i}{close}b"),
                    format!("c{open}t{i}{close}d"),
                ]
            })
            .collect();
        let stdin: Vec<u8> = keys
            .iter()
            .flat_map(|k| format!("{k}\n").into_bytes())
            .collect();
        for &algo in Algorithm::NAMES {
            let base = ["lookup", "--algo", algo, "--nodes", "n1,n2,n3,n4,n5"];
            let tagged = ringwise(&[&base[..], &["--hash-tag", tag]].concat(), &stdin);
            assert_success(&tagged);
            let owners: Vec<String> = pairs(&stdout(&tagged)).into_iter().map(|p| p.1).collect();
            assert_eq!(owners.len(), keys.len());
            for pair in owners.chunks(2) {
                assert_eq!(pair[0], pair[1], "{algo} {tag}");
            }
            // slots and go-redis tag keys with `{}` by default.
            if (algo == "slots" || algo == "go-redis") && tag == "{}" {
                continue;
            }
            // Whole keys do not all pair up, so the option did something.
            let whole = ringwise(&base, &stdin);
            let owners: Vec<String> = pairs(&stdout(&whole)).into_iter().map(|p| p.1).collect();
            assert!(owners.chunks(2).any(|p| p[0] != p[1]), "{algo} {tag}");
        }
    }
}

/// `--nodes` keeps the order given: Envoy's point counts depend on it
/// (2, 3, 3 with min ring 1: the second host gets 2 points, the third 1).
#[test]
fn nodes_keep_their_listed_order() {
    let mut counts = Vec::new();
    for order in [["a", "b", "c"], ["a", "c", "b"]] {
        let weights = |n: &str| if n == "a" { 2 } else { 3 };
        let list: Vec<String> = order
            .iter()
            .map(|n| format!("{n}={}", weights(n)))
            .collect();
        let out = ringwise(
            &[
                "inspect",
                "--algo",
                "envoy-ring",
                "--min-ring-size",
                "1",
                "--format",
                "json",
                "--nodes",
                &list.join(","),
            ],
            b"",
        );
        assert_success(&out);
        let doc: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("json");
        let got: Vec<u64> = doc["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| n["points"].as_u64().expect("points"))
            .collect();
        let toml: String =
            std::iter::once("algorithm = \"envoy-ring\"\nmin_ring_size = 1\n".into())
                .chain(
                    order
                        .iter()
                        .map(|n| format!("[[nodes]]\nname = \"{n}\"\nweight = {}\n", weights(n))),
                )
                .collect();
        let want: Vec<u64> = library(&toml)
            .placement()
            .as_ring()
            .expect("ring")
            .stats()
            .nodes
            .iter()
            .map(|n| n.points)
            .collect();
        assert_eq!(got, want, "{order:?}");
        counts.push(got);
    }
    assert_ne!(counts[0], counts[1], "the order must matter here");
}

/// Every experiment runs on the four flavours, with their peer's key hash
/// when none is given.
#[test]
fn simulate_runs_on_the_flavours() {
    for algo in ["ketama", "nginx", "envoy-ring", "cassandra"] {
        let out = ringwise(
            &[
                "simulate",
                "--algo",
                algo,
                "--keys",
                "5000",
                "--seeds",
                "2",
                "--seed-keys",
                "1000",
                "--rendezvous-keys",
                "1000",
                "--compare",
                "--format",
                "json",
            ],
            b"",
        );
        assert_success(&out);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        let algorithm: Algorithm = algo.parse().expect("known");
        let hash = algorithm.default_hash_with(&ringwise::Params::DEFAULT);
        assert_eq!(
            doc["params"]["hash"],
            hash.name(),
            "{algo}: {}",
            doc["params"]
        );
    }
}

/// `simulate` takes the flavours' parameters like `lookup`: the flavour
/// changes the placement (and twemproxy's key hash), the report says
/// which ran, and a bad pair of ring sizes is a usage error.
#[test]
fn simulate_takes_the_flavour_parameters() {
    let run = |extra: &[&str]| {
        let args = [
            &["simulate", "--algo", "ketama", "--keys", "20000"][..],
            &["--experiments", "single", "--format", "json"],
            extra,
        ]
        .concat();
        let out = ringwise(&args, b"");
        assert_success(&out);
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).expect("json")
    };
    let libmemcached = run(&[]);
    let twemproxy = run(&["--flavor", "twemproxy"]);
    let uhashring = run(&["--flavor", "uhashring", "--hash", "md5-le32"]);
    // spymemcached hashes "/node-0:11211-i" instead of "node-0-i".
    let spy = run(&["--flavor", "spymemcached"]);
    assert_eq!(
        libmemcached["params"]["algorithm_params"]["flavor"],
        "libmemcached"
    );
    assert_eq!(
        twemproxy["params"]["algorithm_params"]["flavor"],
        "twemproxy"
    );
    assert_eq!(twemproxy["params"]["hash"], "fnv1a64-twemproxy");
    assert_eq!(uhashring["params"]["hash"], "md5-le32");
    // Same keys and hash, another client's points: the figures differ.
    // (uhashring's points are libmemcached's here: equal weights give both
    // 40 groups, and they differ only for a key hash equal to a point.)
    assert_ne!(libmemcached["single"], spy["single"]);
    assert_eq!(libmemcached["single"], uhashring["single"]);
    let text = ringwise(
        &[
            "simulate",
            "--algo",
            "ketama",
            "--flavor",
            "spymemcached",
            "--keys",
            "2000",
            "--experiments",
            "single",
        ],
        b"",
    );
    assert_success(&text);
    assert!(stdout(&text).starts_with("ringwise simulate: algorithm ketama (spymemcached)"));
    let bad = ringwise(
        &[
            "simulate",
            "--algo",
            "envoy-ring",
            "--min-ring-size",
            "100",
            "--max-ring-size",
            "10",
        ],
        b"",
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("min_ring_size = 100"));
}
