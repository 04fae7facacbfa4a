//! Hostile files through the crate's public entry, `import`: whatever the
//! text, a reader answers with an error naming the line, in bounded time
//! and memory, and never overflows its stack (the tests run on the test
//! harness's 2 MiB threads, where the unbounded recursion crashed).

use ringwise_import::{Kind, import};

/// A "billion laughs" YAML file: each level lists the one before nine
/// times, so `i` copies 9^9 scalars from 626 bytes.
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
        // The level that crosses the budget: `e` copies 9^5 scalars.
        assert!(e.line().is_some_and(|l| l <= 6), "{kind}: {message}");
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
    assert!(e.to_string().contains("nested more than 100 deep"), "{e}");
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
