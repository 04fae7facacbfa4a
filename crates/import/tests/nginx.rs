//! The `nginx` kind through the crate's public entry, `import`: what an
//! upstream block becomes, and what nginx does that ringwise refuses.

use ringwise_import::{Kind, import};

fn upstream(body: &str) -> String {
    format!("http {{\n  upstream u {{\n{body}  }}\n}}\n")
}

#[test]
fn servers_weights_down_and_backup_are_read_as_nginx_reads_them() {
    let text = "events {}\nhttp {\n  include mime.types;\n  server { listen 80; location / { proxy_pass http://cache; } }\n  \
                upstream cache {\n    server 10.0.0.9:80 backup;\n    hash $request_uri consistent;\n    \
                server 10.0.0.1:8080 weight=2 max_fails=3;\n    server 10.0.0.2:8080 down;\n    \
                server 'unix:/run/c.sock';\n    keepalive 16;\n  }\n}\n";
    let imported = import(Kind::Nginx, text, None).expect("import");
    let names: Vec<_> = imported.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["10.0.0.1:8080", "unix:/run/c.sock"]);
    assert_eq!(imported.members[0].weight, Some(2.0));
    assert_eq!(imported.member_lines, [8, 10]);
    assert_eq!(imported.selected.as_deref(), Some("cache"));
    let notes = imported.notes.join("\n");
    for words in [
        "line 7: the key is `$request_uri` (http upstream cache)",
        "line 6: `server 10.0.0.9:80 backup`: left out",
        "line 9: `server 10.0.0.2:8080 down`: left out",
        "line 8: `server 10.0.0.1:8080 max_fails=3`",
        "line 11: `keepalive 16` does not change placement",
    ] {
        assert!(notes.contains(words), "{words:?} in\n{notes}");
    }
    let spec = imported.spec().expect("a valid cluster");
    assert_eq!(spec.algorithm.name(), "nginx");
}

#[test]
fn several_upstreams_need_a_choice_and_stream_ones_count() {
    let text = "http { upstream a { hash $uri consistent; server h1:1; } }\n\
                stream { upstream b { hash $remote_addr consistent; server h2:2; } }\n";
    let e = import(Kind::Nginx, text, None).expect_err("no choice");
    assert!(e.to_string().contains("2 upstreams (a, b)"), "{e}");
    let b = import(Kind::Nginx, text, Some("b")).expect("b");
    assert_eq!(b.members[0].name, "h2:2");
    assert!(b.notes[0].contains("stream upstream b"), "{:?}", b.notes);
    assert!(b.notes[1].contains("is a name"), "{:?}", b.notes);
    let e = import(Kind::Nginx, "http { include conf.d/*.conf; }", None).expect_err("none");
    assert!(e.to_string().contains("includes conf.d/*.conf"), "{e}");
}

#[test]
fn what_nginx_does_not_place_on_its_ring_is_refused_with_its_line() {
    for (body, line, words) in [
        (
            "    hash $uri;\n    server a:1;\n",
            3,
            "hash % total weight",
        ),
        ("    server a:1;\n", 2, "round robin"),
        (
            "    hash $uri consistent;\n    least_conn;\n    server a:1;\n",
            4,
            "not a consistent hash",
        ),
        (
            "    hash $uri consistent;\n    server a:1 backup;\n",
            4,
            "does not support parameter \"backup\"",
        ),
        (
            "    hash $uri consistent;\n    server a:1 weight=0;\n",
            4,
            "whole weight",
        ),
        (
            "    hash $uri consistent;\n    server a:1 wieght=2;\n",
            4,
            "unknown setting",
        ),
        (
            "    hash $uri consistent;\n    server a:1 slow_start=30s;\n",
            4,
            "NGINX Plus",
        ),
        (
            "    hash $uri consistent;\n    server a:1 resolve service=_http._tcp;\n",
            4,
            "SRV",
        ),
        (
            "    hash $uri consistent;\n    sticky cookie srv;\n    server a:1;\n",
            4,
            "sticky",
        ),
        (
            "    hash $uri consistent;\n    server a:1;\n    server a:1;\n",
            5,
            "duplicate node",
        ),
        (
            "    hash $uri consistent;\n    server a:1 down;\n",
            0,
            "no server that is up",
        ),
        (
            "    hash $uri consistent;\n    server a:1\n",
            5,
            "unexpected \"}\"",
        ),
        (
            "    hash $uri consistent;\n    frobnicate;\n    server a:1;\n",
            4,
            "unknown setting `frobnicate`",
        ),
    ] {
        let text = upstream(body);
        let e = import(Kind::Nginx, &text, None).expect_err(&text);
        assert_eq!(e.line().unwrap_or(0), line, "{text}: {e}");
        assert!(e.to_string().contains(words), "{text}: {e}");
    }
}

#[test]
fn a_down_server_holding_21_points_in_a_row_is_refused() {
    // A down server of weight 1000 beside one of weight 1: runs of far
    // more than 21 of its 160,000 points fall between the other's 160.
    let text =
        upstream("    hash $uri consistent;\n    server a:1 weight=1000 down;\n    server b:1;\n");
    let e = import(Kind::Nginx, &text, None).expect_err("refused");
    assert!(
        e.to_string()
            .contains("points in a row are of down servers"),
        "{e}"
    );
    // A small down server is fine.
    let text =
        upstream("    hash $uri consistent;\n    server a:1 down;\n    server b:1 weight=50;\n");
    assert_eq!(
        import(Kind::Nginx, &text, None)
            .expect("fine")
            .members
            .len(),
        1
    );
}
