//! Hostile files through the crate's public entry, `import`: whatever the
//! text, a reader answers with an error naming the line, in bounded time
//! and memory, and never overflows its stack (the tests run on the test
//! harness's 2 MiB threads, where the unbounded recursion crashed).

use ringwise_import::{Kind, import};

/// A "billion laughs" YAML file: each level lists the one before nine
/// times, so `i` copies 9^9 scalars from 342 bytes.
fn laughs() -> String {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for pair in names.windows(2) {
        let (before, this) = (pair[0], pair[1]);
        let items = vec![format!("*{before}"); 9].join(",");
        text.push_str(&format!("{this}: &{this} [{items}]\n"));
    }
    text
}

#[test]
fn nested_aliases_are_refused_by_their_expanded_size() {
    let text = laughs();
    assert!(text.len() < 700, "{} bytes", text.len());
    for kind in [Kind::Twemproxy, Kind::Envoy, Kind::Grpc] {
        let e = import(kind, &text, None).expect_err("expands to billions of nodes");
        let message = e.to_string();
        assert!(message.contains("expands past"), "{kind}: {message}");
        assert!(message.contains("aliases"), "{kind}: {message}");
        // The level that crosses the budget: `e` (line 5) copies 9^5
        // scalars.
        assert_eq!(e.line(), Some(5), "{kind}: {message}");
    }
}

#[test]
fn aliases_a_real_file_uses_still_expand() {
    // Twemproxy pools sharing their settings by an anchor, as operators
    // write them: well inside the budget.
    let text = "alpha:\n  listen: 127.0.0.1:22121\n  hash: &h fnv1a_64\n  distribution: &d ketama\n  \
                servers: &s\n    - 10.0.0.1:11211:1\n    - 10.0.0.2:11211:1\n\
                beta:\n  listen: 127.0.0.1:22122\n  hash: *h\n  distribution: *d\n  servers: *s\n";
    let imported = import(Kind::Twemproxy, text, Some("beta")).expect("aliases");
    assert_eq!(imported.members.len(), 2);
}

#[test]
fn a_server_list_shared_by_six_pools_fits_the_budget() {
    // 300 servers anchored once and copied into five more pools: the
    // list is most of the file and is built six times (and kept once
    // more as the anchor): inside eight times the file's length and 64
    // KiB (four times and 4096 refused it).
    let servers: String = (0..300)
        .map(|i| format!("    - 10.0.{}.{}:11211:1\n", i / 250, i % 250 + 1))
        .collect();
    let mut text = format!("p0:\n  distribution: ketama\n  servers: &shared\n{servers}");
    for pool in 1..6 {
        text.push_str(&format!(
            "p{pool}:\n  distribution: ketama\n  servers: *shared\n"
        ));
    }
    let imported = import(Kind::Twemproxy, &text, Some("p5")).expect("shared servers");
    assert_eq!(imported.members.len(), 300);
}

#[test]
fn yaml_nested_deeper_than_the_cap_is_refused_with_its_line() {
    // 100,000 block lists in one another on line 3: `- - - ... x`.
    let deep = format!("p:\n  servers:\n    {}x\n", "- ".repeat(100_000));
    for kind in [Kind::Twemproxy, Kind::Envoy, Kind::Grpc] {
        let e = import(kind, &deep, None).expect_err("too deep");
        assert!(
            e.to_string().contains("nest more than 100 deep"),
            "{kind}: {e}"
        );
        assert_eq!(e.line(), Some(3), "{kind}: {e}");
    }
    // A shallow anchor copied into a deep place counts its own depth.
    let nest = |inner: &str| format!("{}{inner}{}", "[".repeat(60), "]".repeat(60));
    let text = format!("a: &a {}\nb: {}\n", nest("x"), nest("*a"));
    let e = import(Kind::Envoy, &text, None).expect_err("too deep by its alias");
    assert!(e.to_string().contains("an alias counting"), "{e}");
    assert_eq!(e.line(), Some(2), "{e}");
}

#[test]
fn json_nested_deeper_than_the_cap_is_refused_with_its_line() {
    // JSON is read by the YAML reader; flow nesting is capped by the
    // parser at 255, below it by the reader at 100.
    let deep = format!("{{\"x\": {}1{}}}\n", "[".repeat(200), "]".repeat(200));
    for kind in [Kind::Envoy, Kind::Grpc] {
        let e = import(kind, &deep, None).expect_err("too deep");
        assert!(
            e.to_string().contains("nest more than 100 deep"),
            "{kind}: {e}"
        );
        assert_eq!(e.line(), Some(1), "{kind}: {e}");
    }
    let deeper = format!("{}1{}\n", "[".repeat(30_000), "]".repeat(30_000));
    let e = import(Kind::Grpc, &deeper, None).expect_err("too deep");
    assert_eq!(e.line(), Some(1), "{e}");
}

#[test]
fn nginx_blocks_nested_20000_deep_are_refused_with_their_line() {
    let text = format!(
        "http {{\n{}{}}}\n",
        "location / {\n".repeat(20_000),
        "}\n".repeat(20_000)
    );
    let e = import(Kind::Nginx, &text, None).expect_err("too deep");
    assert!(
        e.to_string()
            .contains("`location / {` opens a block nested more than 100 deep"),
        "{e}"
    );
    assert_eq!(e.line(), Some(101), "{e}");
}

#[test]
fn vcl_blocks_nested_20000_deep_are_read_without_recursion() {
    // The VCL reader walks blocks by counting braces, not by recursion: a
    // deep `if` nest is the condition refusal it always was.
    let text = format!(
        "vcl 4.1;\nimport directors;\nbackend a {{ .host = \"10.0.0.1\"; .port = \"80\"; }}\n\
         sub vcl_init {{\n  new d = directors.shard();\n{}  d.add_backend(a);\n{}  d.reconfigure();\n}}\n",
        "if (true) {\n".repeat(20_000),
        "}\n".repeat(20_000)
    );
    let e = import(Kind::Varnish, &text, None).expect_err("under a condition");
    assert!(e.line().is_some(), "{e}");
}

/// An address that is a shell command, as a hostile file writes it (no
/// space: every format splits words there).
const HOSTILE: &str = "127.0.0.1$(id)";

#[test]
fn every_kind_refuses_an_address_that_is_not_host_port_with_its_line() {
    let id = "3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e";
    let cases: Vec<(Kind, String, usize)> = vec![
        (
            Kind::Libmemcached,
            format!("--DISTRIBUTION=consistent --HASH=MD5 --SERVER={HOSTILE}:7000/?2"),
            1,
        ),
        (
            Kind::Twemproxy,
            format!(
                "p:\n  distribution: ketama\n  servers:\n    - 10.0.0.1:1:1\n    - \"{HOSTILE}:7000:1\"\n"
            ),
            5,
        ),
        (
            Kind::Nginx,
            format!(
                "http {{ upstream u {{ hash $uri consistent;\n server \"{HOSTILE}:7000\"; }} }}\n"
            ),
            2,
        ),
        (
            Kind::Nginx,
            "http { upstream u { hash $uri consistent;\n server 'unix:/run/a;b.sock'; } }\n".into(),
            2,
        ),
        (
            Kind::Envoy,
            format!(
                "name: c\ntype: STRICT_DNS\nlb_policy: RING_HASH\ncommon_lb_config:\n  \
                 consistent_hashing_lb_config: {{use_hostname_for_hashing: true}}\n\
                 load_assignment:\n  cluster_name: c\n  endpoints:\n  - lb_endpoints:\n    \
                 - endpoint:\n        hostname: \"{HOSTILE}\"\n        address: {{socket_address: \
                 {{address: a.example, port_value: 80}}}}\n"
            ),
            10,
        ),
        (
            Kind::Envoy,
            "name: c\ntype: STATIC\nlb_policy: RING_HASH\nload_assignment:\n  cluster_name: c\n  \
             endpoints:\n  - lb_endpoints:\n    - endpoint:\n        address: {socket_address: \
             {address: 10.0.0.1, port_value: 70000}}\n"
                .into(),
            9,
        ),
        (
            Kind::Grpc,
            "{\"target\": \"ipv4:10.0.0.1:0\",\n\"serviceConfig\": {\"loadBalancingConfig\": \
             [{\"ring_hash_experimental\": {}}]}}"
                .into(),
            1,
        ),
        (
            Kind::NodetoolRing,
            format!(
                "Datacenter: dc1\n==========\nAddress Rack Status State Load Owns Token\n\
                 50\n{HOSTILE} rack1 Up Normal 1KiB 50% 50\n"
            ),
            5,
        ),
        (
            Kind::RedisCluster,
            format!("{id} {HOSTILE}:7000@17000 myself,master - 0 0 1 connected 0-16383\n"),
            1,
        ),
        (
            Kind::RedisCluster,
            format!("{id} 10.0.0.1:7000@17000,`id` myself,master - 0 0 1 connected 0-16383\n"),
            1,
        ),
        (
            Kind::RedisCluster,
            format!(
                "1) 1) \"slots\"\n   2) 1) (integer) 0\n      2) (integer) 16383\n   3) \"nodes\"\n   \
                 4) 1)  1) \"id\"\n          2) \"{id}\"\n          3) \"port\"\n          4) (integer) 7000\n          \
                 5) \"ip\"\n          6) \"{HOSTILE}\"\n          7) \"role\"\n          8) \"master\"\n"
            ),
            5,
        ),
    ];
    for (kind, text, line) in cases {
        let e = import(kind, &text, None).expect_err(&text);
        let message = e.to_string();
        // libmemcached's own host check (the shared one after it) answers
        // in its words.
        let named = ["HOST:PORT", "socket path", "not a host name"];
        assert!(
            named.iter().any(|w| message.contains(w)),
            "{kind}: {message}"
        );
        assert_eq!(e.line(), Some(line), "{kind}: {message}");
    }
}

#[test]
fn legitimate_address_forms_of_every_kind_still_pass() {
    let id = "3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e";
    // Redis writes IPv6 unbracketed; nginx names without a port and
    // unix sockets; twemproxy leading zeros; gRPC bracketed IPv6.
    for (kind, text) in [
        (
            Kind::RedisCluster,
            format!("{id} 2001:db8::1:7000@17000,cache-a.example myself,master - 0 0 1 connected 0-16383\n"),
        ),
        (
            Kind::Nginx,
            "http { upstream u { hash $uri consistent; server backend_1.example.com; \
             server unix:/run/c.sock; server [::1]:80; } }\n"
                .into(),
        ),
        (
            Kind::Twemproxy,
            "p:\n  distribution: ketama\n  servers:\n    - cache-a:011211:1\n    - cache_b.example:11212:1\n".into(),
        ),
        (
            Kind::Grpc,
            "{\"target\": \"ipv6:[::1]:80,[2001:db8::1]:81\",\n\"serviceConfig\": {\"loadBalancingConfig\": \
             [{\"ring_hash_experimental\": {}}]}}"
                .into(),
        ),
    ] {
        import(kind, &text, None).unwrap_or_else(|e| panic!("{kind}: {e}\n{text}"));
    }
}

#[test]
fn a_redis_node_id_listed_twice_is_refused_with_both_lines() {
    let id = "3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e";
    let text = format!(
        "{id} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-8000\n\
         {id} 10.0.0.2:7000@17000 master - 0 0 2 connected 8001-16383\n"
    );
    let e = import(Kind::RedisCluster, &text, None).expect_err("an id twice");
    assert_eq!(e.line(), Some(2), "{e}");
    assert!(
        e.to_string().contains("listed twice (first on line 1)"),
        "{e}"
    );
}
