//! Tests of the answers' buffer and escaping against the byte-by-byte
//! escaping the text output has always had: every byte at every place of
//! keys up to three words, and random keys through the buffer.

use super::*;

/// The escaping as it has always been written: the model to match.
fn model(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    out
}

/// A small xorshift: the same "random" keys on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn every_byte_at_every_place_of_keys_up_to_three_words() {
    for len in 1..=24 {
        for at in 0..len {
            for special in 0..=255u8 {
                let mut key = vec![b'k'; len];
                key[at] = special;
                let needs = matches!(special, b'\\' | b'\t' | b'\n' | b'\r');
                // Never "nothing to escape" for a key that needs it.
                assert!(!needs || may_need_escaping(&key), "{key:?}");
                let mut out = Out::new(Vec::new());
                out.push_escaped(&key);
                assert_eq!(out.buf[..out.at], model(&key), "{key:?}");
            }
        }
    }
}

#[test]
fn plain_keys_take_the_copy() {
    assert!(!may_need_escaping(b""));
    assert!(!may_need_escaping(b"user:12345678901"));
    assert!(!may_need_escaping("ключ-é\u{7f}".as_bytes()));
    assert!(may_need_escaping(b"a\\b"));
}

#[test]
fn random_keys_match_the_model_through_the_buffer() {
    let mut state = 0x9E37_79B9_7F4A_7C15;
    let mut out = Out::new(Vec::new());
    let mut expected = Vec::new();
    for _ in 0..20_000 {
        let len = (next(&mut state) % 40) as usize;
        // Mostly printable, sometimes any byte.
        let key: Vec<u8> = (0..len)
            .map(|_| match next(&mut state) % 16 {
                0 => next(&mut state) as u8,
                _ => b' ' + (next(&mut state) % 95) as u8,
            })
            .collect();
        out.push_escaped(&key);
        out.push_byte(b'\t');
        out.push(b"node");
        out.end_line().expect("a Vec takes every write");
        expected.extend(model(&key));
        expected.extend_from_slice(b"\tnode\n");
        let mut written = Vec::new();
        write_escaped(&mut written, &key).expect("a Vec takes every write");
        assert_eq!(written, model(&key));
    }
    out.flush().expect("a Vec takes every write");
    assert_eq!(out.sink, expected);
}
