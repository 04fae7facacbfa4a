//! CLI lookup speed: stdin keys are split in place and answers
//! written through one buffer, with the output bytes exactly as before.
//! The expected bytes below were written by the binary of base commit
//! 29cf23d (line-at-a-time reading) for the same input; the random tests
//! compare two ways in of the same keys (stdin text, stdin hex, arguments)
//! that take different paths through the reader and the escaping.

use crate::support::{assert_success, ringwise};

/// CRLF, an empty line, `\r\r\n` (one CR is the key's), a tab, a
/// backslash, bytes that are not UTF-8, and a last line ending in a CR
/// without a newline.
const EDGES: &[u8] = b"a\r\n\nb\\c\r\r\nt\tab\n\xff\xfe\nlast\r";

/// `ringwise ARGS` on `stdin`: its stdout, after checking it succeeded.
fn run(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let output = ringwise(args, stdin);
    assert_success(&output);
    output.stdout
}

#[test]
fn lookup_edge_lines_give_the_bytes_they_always_gave() {
    let text = b"a\ty\\\\tz\n\tw\\\\\\\\v\nb\\\\c\\r\ty\\\\tz\nt\\tab\tw\\\\\\\\v\n\xff\xfe\ty\\\\tz\nlast\tw\\\\\\\\v\n";
    assert_eq!(run(&["lookup", "--nodes", "x,y\\tz,w\\\\v"], EDGES), text);
    let json = b"{\"version\":2,\"key\":\"a\",\"node\":\"z\"}\n{\"version\":2,\"key\":\"\",\"node\":\"y\"}\n{\"version\":2,\"key\":\"b\\\\c\\r\",\"node\":\"x\"}\n{\"version\":2,\"key\":\"t\\tab\",\"node\":\"y\"}\n{\"version\":2,\"key_hex\":\"fffe\",\"node\":\"z\"}\n{\"version\":2,\"key\":\"last\",\"node\":\"x\"}\n";
    assert_eq!(
        run(&["lookup", "--nodes", "x,y,z", "--format", "json"], EDGES),
        json
    );
    let replicas = b"a\tz,x\n\ty,z\nb\\\\c\\r\tx,y\nt\\tab\ty,z\n\xff\xfe\tz,x\nlast\tx,z\n";
    assert_eq!(
        run(&["lookup", "--nodes", "x,y,z", "--replicas", "2"], EDGES),
        replicas
    );
}

#[test]
fn token_and_slot_edge_lines_give_the_bytes_they_always_gave() {
    let token = b"a\t-8839064797231613815\n\t-9223372036854775808\nb\\\\c\\r\t6579041326498051221\nt\\tab\t-1771940569626299773\n\xff\xfe\t-2002833339314343643\nlast\t-5302786835037580222\n";
    assert_eq!(run(&["token"], EDGES), token);
    let slot = b"a\t15495\n\t0\nb\\\\c\\r\t4289\nt\\tab\t8938\n\xff\xfe\t3374\nlast\t6562\n";
    assert_eq!(run(&["slot"], EDGES), slot);
    let json = b"{\"version\":2,\"key\":\"a\",\"slot\":15495}\n{\"version\":2,\"key\":\"\",\"slot\":0}\n{\"version\":2,\"key\":\"b\\\\c\\r\",\"slot\":4289}\n{\"version\":2,\"key\":\"t\\tab\",\"slot\":8938}\n{\"version\":2,\"key_hex\":\"fffe\",\"slot\":3374}\n{\"version\":2,\"key\":\"last\",\"slot\":6562}\n";
    assert_eq!(run(&["slot", "--format", "json"], EDGES), json);
}

/// A small xorshift: the same "random" keys on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Random keys without a newline (a key on a line cannot hold one): mostly
/// plain, some with any byte, some of 200 KiB (longer than one read of the
/// reader, so they cross its buffer).
fn random_keys(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut state = seed;
    (0..count)
        .map(|i| {
            let len = match i % 997 {
                0 => 200 << 10,
                _ => (next(&mut state) % 40) as usize,
            };
            let noisy = next(&mut state) % 5 == 0;
            (0..len)
                .map(|_| match noisy {
                    true => next(&mut state) as u8,
                    false => b'a' + (next(&mut state) % 26) as u8,
                })
                .map(|b| if b == b'\n' { b'n' } else { b })
                // A CR at a key's end would be taken for a CRLF's.
                .collect::<Vec<u8>>()
        })
        .map(|mut key| {
            if key.last() == Some(&b'\r') {
                key.push(b'x');
            }
            key
        })
        .collect()
}

/// The keys as text lines (CRLF when `crlf`) and as hex lines.
fn as_lines(keys: &[Vec<u8>], crlf: bool) -> (Vec<u8>, Vec<u8>) {
    let (mut text, mut hex) = (Vec::new(), Vec::new());
    for key in keys {
        text.extend_from_slice(key);
        text.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        hex.extend(key.iter().flat_map(|b| format!("{b:02x}").into_bytes()));
        hex.push(b'\n');
    }
    (text, hex)
}

#[test]
fn lookup_and_token_of_random_text_lines_match_their_hex_lines() {
    // Text lines go through the in-place splitter and the escaping fast
    // path; hex lines are decoded and every key checked for escaping.
    for (seed, crlf) in [(1, false), (2, true)] {
        let keys = random_keys(seed, 20_000);
        let (text, hex) = as_lines(&keys, crlf);
        for command in [
            &["lookup", "--nodes", "a,b,c", "--hash", "xxh3"][..],
            &["token"],
        ] {
            let hexed: Vec<&str> = command
                .iter()
                .copied()
                .chain(["--key-format", "hex"])
                .collect();
            let from_text = run(command, &text);
            assert_eq!(from_text, run(&hexed, &hex), "{command:?} crlf {crlf}");
            assert_eq!(
                from_text.iter().filter(|&&b| b == b'\n').count(),
                keys.len()
            );
        }
    }
}

#[test]
fn slot_and_lookup_of_stdin_lines_match_the_same_keys_as_arguments() {
    // Arguments do not go through the line splitter.
    let keys: Vec<String> = random_keys(3, 3_000)
        .into_iter()
        .filter(|k| k.len() < 100)
        .map(|k| String::from_utf8_lossy(&k).replace('\n', "n"))
        // An argument cannot hold a NUL byte.
        .filter(|k| !k.ends_with('\r') && !k.contains('\0'))
        .collect();
    let stdin: Vec<u8> = keys
        .iter()
        .flat_map(|k| format!("{k}\n").into_bytes())
        .collect();
    for command in [&["slot"][..], &["lookup", "--nodes", "a,b,c,d"]] {
        let mut args: Vec<&str> = command.to_vec();
        args.push("--");
        args.extend(keys.iter().map(String::as_str));
        assert_eq!(run(command, &stdin), run(&args, b""), "{command:?}");
    }
}
