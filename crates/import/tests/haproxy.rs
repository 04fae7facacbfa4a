//! The `haproxy` kind through the crate's public entry, `import`: what a
//! backend of an haproxy.cfg becomes, and what HAProxy does that ringwise
//! refuses. (`compat::haproxy` in the CLI tests reads the very file a
//! real haproxy runs, and agrees with it key by key.)

use ringwise::{Param, ParamValue};
use ringwise_import::{Kind, import};

const TEXT: &str = "\
global
    maxconn 100

defaults
    mode http
    balance hdr(X-Key)
    hash-type consistent djb2 avalanche
    default-server weight 3

frontend front
    bind :80
    default_backend cache

backend cache # the pool
    timeout server 5s
    hash-balance-factor 150
    server a 10.0.0.1:80 check inter 2s
    server b 10.0.0.2:80 weight 7 id 1
    server c 10.0.0.3:80 disabled
    server d \"10.0.0.4:80\" weight 2
    server e 10.0.0.5:80 backup

backend other
    balance roundrobin
    server z 10.0.0.9:80
";

fn ids(imported: &ringwise_import::Imported) -> Vec<(String, Option<f64>, Option<u64>)> {
    imported
        .members
        .iter()
        .map(|m| (m.name.clone(), m.weight, m.id))
        .collect()
}

#[test]
fn a_backend_is_read_as_haproxy_reads_it() {
    let imported = import(Kind::Haproxy, TEXT, Some("cache")).expect("import");
    // A counter every server advances: 1 at a (1 is b's: 2, then 3), 4 at
    // c (disabled, keeps 4), 5 at d, 6 at e: as cfgparse.c numbers them.
    assert_eq!(
        ids(&imported),
        [
            ("a".to_owned(), Some(3.0), Some(2)),
            ("b".to_owned(), Some(7.0), Some(1)),
            ("d".to_owned(), Some(2.0), Some(5)),
        ]
    );
    assert_eq!(imported.member_lines, [17, 18, 20]);
    assert_eq!(imported.settings.hash.as_deref(), Some("djb2"));
    assert_eq!(
        imported.settings.params,
        [(Param::Avalanche, ParamValue::Bool(true))]
    );
    let notes = imported.notes.join("\n");
    for words in [
        "line 6: `balance hdr(X-Key)` hashes header X-Key's first comma-separated value",
        "line 15: `timeout server 5s` does not change placement",
        "line 16: `hash-balance-factor 150`",
        "--balance-factor 150",
        "line 19: server c left out: disabled",
        "line 21: server e left out: a backup",
    ] {
        assert!(notes.contains(words), "{words:?} in\n{notes}");
    }
    let spec = imported.spec().expect("valid");
    assert_eq!(spec.algorithm.name(), "haproxy");
    let toml = imported
        .to_toml(Kind::Haproxy, "haproxy.cfg")
        .expect("toml");
    assert!(
        toml.contains("avalanche = true") && toml.contains("id = 5"),
        "{toml}"
    );
}

#[test]
fn consistent_alone_is_sdbm_with_avalanche() {
    let text = "backend b\n  balance uri\n  hash-type consistent\n  server a 1.2.3.4:80\n";
    let imported = import(Kind::Haproxy, text, None).expect("import");
    assert_eq!(imported.settings.hash.as_deref(), Some("sdbm"));
    assert_eq!(
        imported.settings.params,
        [(Param::Avalanche, ParamValue::Bool(true))]
    );
    let text = "backend b\n  balance uri\n  hash-type consistent sdbm\n  server a 1.2.3.4:80\n";
    let imported = import(Kind::Haproxy, text, None).expect("import");
    assert_eq!(
        imported.settings.params,
        [(Param::Avalanche, ParamValue::Bool(false))]
    );
}

#[test]
fn several_backends_need_a_choice() {
    let e = import(Kind::Haproxy, TEXT, None).expect_err("no choice");
    assert!(e.to_string().contains("2 backends (cache, other)"), "{e}");
    let e = import(Kind::Haproxy, TEXT, Some("nope")).expect_err("no such");
    assert!(e.to_string().contains("no backend named \"nope\""), "{e}");
    let e = import(Kind::Haproxy, TEXT, Some("other")).expect_err("round robin");
    assert!(
        e.to_string().contains("line 24") && e.to_string().contains("not a hash"),
        "{e}"
    );
}

#[test]
fn what_haproxy_does_not_place_by_the_tree_is_refused_with_its_line() {
    let head = "backend b\n  balance hdr(K)\n  hash-type consistent wt6\n";
    for (body, words) in [
        ("  server a 1.1.1.1:1\n", ""),
        (
            "  cookie SRV insert\n  server a 1.1.1.1:1\n",
            "line 4: `cookie SRV insert` is not reproduced",
        ),
        (
            "  stick on src\n  server a 1.1.1.1:1\n",
            "line 4: `stick on src` is not reproduced",
        ),
        (
            "  hash-key addr\n  server a 1.1.1.1:1\n",
            "HAProxy 3's other point keys",
        ),
        (
            "  server a 1.1.1.1:1 wieght 2\n",
            "line 4: unknown setting `wieght`",
        ),
        (
            "  server a 1.1.1.1:1 weight 257\n",
            "line 4: `weight` takes a weight from 0 to 256",
        ),
        ("  server a 1.1.1.1:1 id 0\n", "line 4: `id` takes an id"),
        (
            "  server a 1.1.1.1:1 id 3\n  server b 1.1.1.1:2 id 3\n",
            "line 5: server b: custom id 3 already used at line 4",
        ),
        (
            "  server a 1.1.1.1:1 id 5\n  server b 1.1.1.1:2 id 1048581\n",
            "line 5: server b: id 1048581 equals id 5 (line 4) modulo 2^20",
        ),
        ("  server a 1.1.1.1:1 weight 0\n", "no active server"),
        (
            "  frobnicate\n  server a 1.1.1.1:1\n",
            "line 4: unknown setting `frobnicate`",
        ),
    ] {
        let result = import(Kind::Haproxy, &format!("{head}{body}"), None);
        match words {
            "" => assert!(result.is_ok(), "{result:?}"),
            words => {
                let e = result.map(|_| ()).expect_err(words).to_string();
                assert!(e.contains(words), "{words:?}: {e}");
            }
        }
    }
    for (text, words) in [
        (
            "backend b\n  balance hdr(K)\n  server a 1.1.1.1:1\n",
            "map-based",
        ),
        (
            "backend b\n  balance hdr(K)\n  hash-type map-based\n  server a 1.1.1.1:1\n",
            "line 3",
        ),
        (
            "backend b\n  balance hdr(K)\n  hash-type consistent md5\n  server a 1:1\n",
            "sdbm, djb2, wt6 and crc32",
        ),
        (
            "backend b\n  hash-type consistent\n  server a 1.1.1.1:1\n",
            "no `balance`",
        ),
        (
            "backend b from nope\n  balance uri\n",
            "no defaults section named \"nope\"",
        ),
    ] {
        let e = import(Kind::Haproxy, text, None)
            .map(|_| ())
            .expect_err(words)
            .to_string();
        assert!(e.contains(words), "{words:?}: {e}");
    }
}

#[test]
fn server_templates_are_the_servers_haproxy_makes_of_them() {
    let text = "\
backend t
    balance hdr(X-Key)
    hash-type consistent sdbm
    default-server weight 4
    server a 10.0.0.1:80 id 2
    server-template w 3 cache.example:80
    server-template r 5-6 10.0.0.9:80 weight 9 check id 20
    server-template off 0-1 10.0.0.9:80 disabled
    server z 10.0.0.2:80
";
    let imported = import(Kind::Haproxy, text, None).expect("templates");
    let want: Vec<(String, Option<f64>, Option<u64>)> = [
        // The counter every server advances (cfgparse.c), template
        // servers included: a takes 2, so w1 is 3.
        ("a", 4.0, 2),
        ("w1", 4.0, 3),
        ("w2", 4.0, 4),
        ("w3", 4.0, 5),
        // An id is the first server's (HAProxy's `show servers state`).
        ("r5", 9.0, 20),
        ("r6", 9.0, 7),
        // off0 and off1 are disabled but keep ids 8 and 9.
        ("z", 4.0, 10),
    ]
    .iter()
    .map(|&(n, w, id)| (n.to_owned(), Some(w), Some(id)))
    .collect();
    assert_eq!(ids(&imported), want);
    assert_eq!(imported.member_lines, [5, 6, 6, 6, 7, 7, 9]);
    let notes = imported.notes.join("\n");
    assert!(
        notes.contains("line 8: `server-template off 0-1` is the servers off0 to off1, weight 4, all left out: disabled"),
        "{notes}"
    );
}

#[test]
fn server_templates_haproxy_places_by_dns_are_refused_by_line() {
    let backend = |line: &str, defaults: &str| {
        format!(
            "backend t\n    balance hdr(X-Key)\n    hash-type consistent\n{defaults}    {line}\n"
        )
    };
    for (text, words) in [
        (
            backend("server-template s 3 db.example:80 resolvers dns", ""),
            "resolvers dns",
        ),
        (
            backend(
                "server-template s 3 db.example:80",
                "    default-server resolvers dns\n",
            ),
            "default-server",
        ),
        (
            backend("server-template s 3 _http._tcp.example", ""),
            "SRV record",
        ),
        (backend("server-template s 0 10.0.0.1:80", ""), "a count"),
        (
            backend("server-template s 4-2 10.0.0.1:80", ""),
            "LOW at most HIGH",
        ),
        (backend("server-template s x 10.0.0.1:80", ""), "a count"),
        (backend("server-template s 3", ""), "needs a prefix"),
        (
            backend("server-template s 1-2000000 10.0.0.1:80", ""),
            "servers ringwise holds",
        ),
        (
            backend("server-template s 3 10.0.0.1$(id):80", ""),
            "HOST:PORT",
        ),
    ] {
        let e = import(Kind::Haproxy, &text, None).expect_err(&text);
        let line = if text.contains("default-server") {
            5
        } else {
            4
        };
        assert_eq!(e.line(), Some(line), "{text}: {e}");
        assert!(e.to_string().contains(words), "{words:?} in {e}");
    }
}
