//! The same requests to one memcached and through the proxy: byte for byte
//! the same answers.
//!
//! Three kinds of input, each sent whole (pipelined) and closed by `mn`:
//! a fixed list of every command and of the refusals memcached makes
//! (wrong token counts, long keys, bad numbers, bad data chunks, `noreply`
//! on each), sessions of random requests over a few keys (values binary,
//! up to 600 KB, some past memcached's 1 MB item size; multi-key
//! retrievals with repeats), and the same sessions cut into random pieces
//! sent one by one (a request split anywhere, in its line or its data).
//!
//! To a pool of three servers the answers must equal one memcached's,
//! except the CAS values of `gets`, which each server numbers on its own:
//! `gets` and `cas` are compared through a pool of one server, where they
//! must be equal too.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use crate::rng::Rng;
use crate::servers::{Server, cluster_file, exchange, memcached, proxy};

/// Every command and memcached's refusals, one request per line.
const FIXED: &[&[u8]] = &[
    b"set a 0 0 1\r\n1\r\n",
    b"set b 5 0 2\r\nbb\r\n",
    b"set c 0 0 1 noreply\r\n3\r\n",
    b"get a b c d a\r\n",
    b"get a\r\n",
    // Repeats (asked once, written as often as named) and more distinct
    // keys than one part of a retrieval asks (32).
    b"get a b c a b c a a\r\n",
    b"gat 0 a a b d a\r\n",
    b"set m5 0 0 2\r\nm5\r\nset m35 3 0 3\r\nm35\r\nset m39 0 0 0\r\n\r\n",
    b"get m0 m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12 m13 m14 m15 m16 m17 m18 m19 m20 m21 m22 m23 m24 m25 m26 m27 m28 m29 m30 m31 m32 m33 m34 m35 m36 m37 m38 m39 a m5 m39 b m35 m5\r\n",
    b"get\r\n",
    b"get  a   b \r\n",
    b"bget a\r\n",
    b"gat 0 b c\r\n",
    b"gat x b\r\n",
    b"gat 100000 zz\r\n",
    b"gats 1000\r\n",
    b"set k 0 0 3\r\nabcd\r\n",
    b"set k 0 0\r\n",
    b"set k x 0 1\r\na\r\n",
    b"set k 0 0 -1\r\n",
    b"set k 0 0 1 noreply\r\nxy\r\n",
    b"set k 0 0 noreply\r\n",
    b"set k 4294967297 0 1\r\nq\r\nget k\r\n",
    b"set k 0 0 1 extra\r\nq\r\n",
    b"set k\t 0 0 1\r\nt\r\nget k\t\r\n",
    b"add a 0 0 1\r\nz\r\n",
    b"add new 0 0 1\r\nz\r\n",
    b"replace a 0 0 2\r\nzz\r\n",
    b"replace none 0 0 1\r\nz\r\n",
    b"append a 0 0 1\r\nX\r\n",
    b"prepend a 0 0 1\r\nY\r\n",
    b"append none 0 0 1\r\nX\r\n",
    b"get a\r\n",
    b"set n 0 0 2\r\n10\r\n",
    b"incr n 5\r\n",
    b"decr n 100\r\n",
    b"incr n 18446744073709551615\r\n",
    b"incr n x\r\n",
    b"incr n -1\r\n",
    b"incr a 1\r\n",
    b"incr none 1\r\n",
    b"incr n 1 noreply\r\n",
    b"incr n\r\n",
    b"decr n 1 2 3\r\n",
    b"get n\r\n",
    b"touch a 100000\r\n",
    b"touch none 100\r\n",
    b"touch a x\r\n",
    b"touch a 10 noreply\r\n",
    b"delete b\r\n",
    b"delete b\r\n",
    b"delete a 0\r\n",
    b"delete a 5\r\n",
    b"delete c noreply\r\n",
    b"delete c 0 noreply\r\n",
    b"delete c 1 noreply\r\n",
    b"delete\r\n",
    b"delete c 0 noreply x\r\n",
    b"get c\r\n",
    b"set gone 0 -1 1\r\nx\r\nget gone\r\n",
    b"version\r\n",
    b"\r\n",
    b"\n",
    b"x\r\n",
    b"bogus command\r\n",
    b"GET a\r\n",
    b"sets a\r\n",
    b"get a\x00b\r\n",
    b"get k\r\r\n",
    b"set k 0 0 1\n1\r\n",
];

#[test]
fn fixed_requests_answer_as_memcached() {
    let dir = crate::process::scratch_dir("ringwise-proxy-conformance");
    for servers in [1, 3] {
        let direct = memcached();
        let pool: Vec<Server> = (0..servers).map(|_| memcached()).collect();
        let file = cluster_file(&dir, "ring", &pool);
        let proxied = proxy(&["--cluster", &file]);
        let request: Vec<u8> = FIXED.concat();
        let expected = exchange(direct.port, &request);
        let got = exchange(proxied.port, &request);
        assert_same(
            &expected,
            &got,
            &format!("the fixed requests, {servers} server(s)"),
        );
        // Keys too long, alone and among others, first on a connection:
        // memcached drops the answers it has not written yet when a get
        // names a key too long (the proxy keeps them), so nothing may
        // come before.
        let mut request = Vec::new();
        let long = vec![b'L'; 251];
        for line in [&b"get a "[..], b"set ", b"incr ", b"touch ", b"delete "] {
            request.extend_from_slice(line);
            request.extend_from_slice(&long);
            request.extend_from_slice(match line {
                b"set " => b" 0 0 1\r\nv\r\n",
                b"incr " | b"touch " => b" 1\r\n",
                _ => b"\r\n",
            });
        }
        let cas = servers == 1;
        if cas {
            request
                .extend_from_slice(b"set c1 0 0 1\r\nx\r\ngets c1 a\r\ncas c1 0 0 1 999\r\ny\r\n");
            request.extend_from_slice(
                b"cas c1 0 0 1\r\ny\r\ncas c1 0 0 1 x\r\ny\r\ncas none 0 0 1 1\r\nz\r\n",
            );
            request.extend_from_slice(b"gets c1\r\n");
        }
        let expected = exchange(direct.port, &request);
        let got = exchange(proxied.port, &request);
        assert_same(
            &expected,
            &got,
            &format!("long keys and cas, {servers} server(s)"),
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A random session over `keys` keys: `(requests, whether it uses gets/cas)`.
fn session(rng: &mut Rng, requests: usize, cas: bool) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = (0..12).map(|i| format!("key:{i}").into_bytes()).collect();
    let mut out = Vec::new();
    for _ in 0..requests {
        let key = rng.pick(&keys).clone();
        let noreply = if rng.below(5) == 0 { " noreply" } else { "" };
        let line = |out: &mut Vec<u8>, text: String| out.extend_from_slice(text.as_bytes());
        let k = String::from_utf8_lossy(&key).into_owned();
        match rng.below(if cas { 12 } else { 10 }) {
            0..=2 => {
                let command = *rng.pick(&["set", "add", "replace", "append", "prepend"]);
                let size = match rng.below(20) {
                    0 => rng.between(0, 600_000),
                    1 => rng.between(1_048_000, 1_100_000),
                    _ => rng.between(0, 64),
                };
                let value: Vec<u8> = (0..size)
                    .map(|_| match rng.next() as u8 {
                        b'M' => b'm',
                        b => b,
                    })
                    .collect();
                let flags = rng.below(1 << 20);
                line(
                    &mut out,
                    format!("{command} {k} {flags} 0 {size}{noreply}\r\n"),
                );
                out.extend_from_slice(&value);
                out.extend_from_slice(b"\r\n");
            }
            3..=5 => {
                let count = rng.between(1, 8);
                let many: Vec<String> = (0..count)
                    .map(|_| String::from_utf8_lossy(&rng.pick(&keys)[..]).into_owned())
                    .collect();
                let command = match rng.below(3) {
                    0 => "gat 100000".to_owned(),
                    _ => "get".to_owned(),
                };
                line(&mut out, format!("{command} {}\r\n", many.join(" ")));
            }
            6 => line(&mut out, format!("delete {k}{noreply}\r\n")),
            7 => {
                // A decr that shortens a number is not repeatable:
                // memcached pads it with spaces in place, unless a
                // response not yet written still holds the item (then the
                // new value is shorter), which depends on its timing. The
                // fixed list has such a decr where no response holds it.
                let (command, delta) = match rng.below(2) {
                    0 => ("incr", rng.below(1000)),
                    _ => ("decr", 0),
                };
                line(&mut out, format!("{command} {k} {delta}{noreply}\r\n"));
            }
            8 => line(&mut out, format!("touch {k} 100000{noreply}\r\n")),
            9 => line(
                &mut out,
                format!("set {k} 0 0 2{noreply}\r\n{}\r\n", rng.below(90) + 10),
            ),
            10 => line(&mut out, format!("gets {k}\r\n")),
            _ => line(
                &mut out,
                format!("cas {k} 0 0 1 {}{noreply}\r\nc\r\n", rng.below(40)),
            ),
        }
    }
    out
}

#[test]
fn random_sessions_answer_as_memcached() {
    let dir = crate::process::scratch_dir("ringwise-proxy-sessions");
    for (seed, servers) in [(1u64, 3usize), (2, 3), (3, 1), (4, 4)] {
        let mut rng = Rng(0x5e55_1000 + seed);
        let cas = servers == 1;
        let request = session(&mut rng, 400, cas);
        let direct = memcached();
        let pool: Vec<Server> = (0..servers).map(|_| memcached()).collect();
        let file = cluster_file(&dir, "ketama", &pool);
        let proxied = proxy(&["--cluster", &file]);
        let expected = exchange(direct.port, &request);
        let got = exchange(proxied.port, &request);
        assert_same(
            &expected,
            &got,
            &format!("session {seed}, {servers} server(s), whole"),
        );
        // Again, cut in random pieces: the state now differs from a fresh
        // one the same way on both sides.
        let expected = exchange(direct.port, &request);
        let got = in_pieces(proxied.port, &request, &mut rng);
        assert_same(
            &expected,
            &got,
            &format!("session {seed}, {servers} server(s), in pieces"),
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// [`exchange`] with the request written in random pieces, a short pause
/// between them.
fn in_pieces(port: u16, request: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the proxy");
    stream.set_nodelay(true).expect("nodelay");
    let mut reader = stream.try_clone().expect("clone the stream");
    let reading = std::thread::spawn(move || {
        let mut answer = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        reader
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("set a read timeout");
        while !answer.ends_with(b"MN\r\n") {
            match std::io::Read::read(&mut reader, &mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&chunk[..n]),
            }
        }
        answer
    });
    let mut at = 0;
    while at < request.len() {
        let piece = rng.between(1, 3000).min(request.len() - at);
        stream
            .write_all(&request[at..at + piece])
            .expect("write a piece");
        at += piece;
        if rng.below(4) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    stream.write_all(b"mn\r\n").expect("write mn");
    let mut answer = reading.join().expect("the reader");
    assert!(
        answer.ends_with(b"MN\r\n"),
        "no MN after {} bytes",
        answer.len()
    );
    answer.truncate(answer.len() - 4);
    answer
}

/// Equal answers, or the first difference with its surroundings.
fn assert_same(expected: &[u8], got: &[u8], what: &str) {
    if expected == got {
        return;
    }
    let at = expected
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(got.len()));
    let show = |b: &[u8]| {
        String::from_utf8_lossy(&b[at.saturating_sub(200)..(at + 200).min(b.len())]).into_owned()
    };
    panic!(
        "{what}: the proxy's answers differ from memcached's at byte {at} (memcached {} bytes, proxy {}):\nmemcached: {:?}\nproxy:     {:?}",
        expected.len(),
        got.len(),
        show(expected),
        show(got)
    );
}
