//! Tests of the in-place line splitter against the line-at-a-time reader
//! ([`super::read_line`], the reading of base commit 29cf23d): random
//! inputs through reads of random sizes, lines crossing the buffer, an
//! endless line, read errors, the newline mask and the "plain" flag.

use super::*;

/// A small xorshift: the same "random" input on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A reader that gives at most a few bytes a read, sometimes none with
/// `Interrupted`, as a pipe may.
struct Trickle<'a> {
    data: &'a [u8],
    state: u64,
    most: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if next(&mut self.state) % 7 == 0 {
            return Err(ErrorKind::Interrupted.into());
        }
        let n = (1 + next(&mut self.state) as usize % self.most)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The keys as the line-at-a-time reader (the model) reads them, and
/// its error's line number.
fn model(data: &[u8], max: usize) -> (Vec<Vec<u8>>, Option<u64>) {
    let mut input = io::BufReader::with_capacity(16, data);
    let (mut keys, mut line) = (Vec::new(), Vec::new());
    loop {
        match read_line(&mut input, &mut line, max).expect("reading a slice") {
            Line::End => return (keys, None),
            Line::Read => keys.push(line.clone()),
            Line::TooLong => {
                let number = keys.len() as u64 + 1;
                return (keys, Some(number));
            }
        }
    }
}

/// The keys as the block splitter hands them out, and its error's line
/// number; checks that no block is over [`BLOCK`] and that the last
/// visit flushes.
fn split(reader: impl Read, max: usize) -> (Vec<Vec<u8>>, Option<u64>) {
    let mut keys = Vec::new();
    let mut last_flush = false;
    let result = for_each_line_block(reader, max, false, |block, flush| {
        assert!(block.len() <= BLOCK);
        // "Plain" is never said of a block with a key to escape.
        let escapes = |k: &&[u8]| k.iter().any(|b| matches!(b, b'\\' | b'\t' | b'\r'));
        assert!(
            !block.plain || !block.iter().any(escapes),
            "{:?}",
            block.keys
        );
        keys.extend(block.iter().map(|k| k.to_vec()));
        last_flush = flush;
        Ok::<(), io::Error>(())
    });
    assert!(last_flush, "the last visit before returning flushes");
    let number = result.err().map(|e| {
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        let text = e.to_string();
        let digits = text["stdin line ".len()..]
            .split(':')
            .next()
            .expect("a number");
        digits.parse().expect("a line number")
    });
    (keys, number)
}

/// Random lines of bytes drawn mostly from `\r`, `\n`, `a` and `\\`,
/// so that CRLF, `\r\r\n`, empty lines and a last line without a
/// newline all come up.
fn random_input(state: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| match next(state) % 8 {
            0 => b'\r',
            1 | 2 => b'\n',
            3 => next(state) as u8,
            4 => b'\\',
            _ => b'a',
        })
        .collect()
}

#[test]
fn random_inputs_split_as_the_line_reader_reads_them() {
    let mut state = 0x2545_F491_4F6C_DD1D;
    for round in 0..3_000 {
        let len = (next(&mut state) % 200) as usize;
        let data = random_input(&mut state, len);
        let max = [1, 2, 3, 5, 1 << 20][round % 5];
        let most = 1 + (next(&mut state) % 40) as usize;
        let trickle = Trickle {
            data: &data,
            state: next(&mut state) | 1,
            most,
        };
        assert_eq!(split(trickle, max), model(&data, max), "{data:?} max {max}");
        assert_eq!(
            split(&data[..], max),
            model(&data, max),
            "{data:?} max {max}"
        );
    }
}

#[test]
fn long_lines_cross_the_buffer_and_blocks_end_at_block() {
    // Keys of every length around the buffer's size, and many short
    // keys, so lines cross reads and blocks fill.
    let mut data = Vec::new();
    for len in [
        0,
        1,
        READ_BYTES - 1,
        READ_BYTES,
        READ_BYTES + 1,
        3 * READ_BYTES + 7,
    ] {
        data.extend(std::iter::repeat_n(b'k', len));
        data.extend_from_slice(b"\r\n");
    }
    for i in 0..5_000 {
        data.extend_from_slice(format!("key-{i}\n").as_bytes());
    }
    data.extend_from_slice(b"last\r");
    let max = 1 << 20;
    assert_eq!(split(&data[..], max), model(&data, max));
    let trickle = Trickle {
        data: &data,
        state: 7,
        most: 70_000,
    };
    assert_eq!(split(trickle, max), model(&data, max));
}

#[test]
fn an_endless_line_is_refused_with_bounded_memory() {
    // `/dev/zero`: never a newline.
    let (keys, number) = split(io::repeat(0).take(1 << 40), 1 << 20);
    assert_eq!((keys.len(), number), (0, Some(1)));
    let data = b"ok\nabcdef";
    assert_eq!(split(&data[..], 4), (vec![b"ok".to_vec()], Some(2)));
    // Exactly `max` bytes before a CRLF, or a CR at the end, is a key.
    assert_eq!(split(&b"abcd\r\nabcd\r"[..], 4).1, None);
}

#[test]
fn a_read_error_comes_after_the_keys_before_it() {
    let input = (&b"a\nb\nc"[..]).chain(Failing);
    let mut keys = Vec::new();
    let result = for_each_line_block(input, 10, false, |block, _| {
        keys.extend(block.iter().map(|k| k.to_vec()));
        Ok::<(), io::Error>(())
    });
    assert_eq!(
        result.expect_err("the read fails").kind(),
        ErrorKind::BrokenPipe
    );
    assert_eq!(keys, [b"a".to_vec(), b"b".to_vec()]);
}

struct Failing;

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(ErrorKind::BrokenPipe.into())
    }
}

#[test]
fn blocks_without_a_byte_to_escape_are_plain() {
    let mut plain = Vec::new();
    let data = b"a\nb\n\nc\r\nd\\\ne\tf\ng";
    let _ = for_each_line_block(&data[..], 10, true, |block, _| {
        plain.push(block.plain);
        Ok::<(), io::Error>(())
    });
    // a, b, "", c (its CR is stripped, but the block's bytes hold it:
    // checked key by key), d\, e<TAB>f, and g at the end.
    assert_eq!(plain, [true, true, true, false, false, false, true]);
}

#[test]
fn the_newline_mask_flags_exactly_the_newlines() {
    let mut state = 99;
    for round in 0..200_000 {
        // Bytes near 0x0A (0x0B above a newline fooled `haszero`).
        let word: Vec<u8> = (0..8)
            .map(|_| match next(&mut state) % 4 {
                0 => b'\n',
                1 => 0x0B,
                2 => 0x09,
                _ => next(&mut state) as u8,
            })
            .collect();
        let len = round % 9;
        let mask = newline_mask(&word[..len], 0);
        for (i, &b) in word[..len].iter().enumerate() {
            assert_eq!(mask >> (8 * i + 7) & 1 == 1, b == b'\n', "{word:?}");
        }
        // Past the end: never a newline.
        for i in len..8 {
            assert_eq!(mask >> (8 * i + 7) & 1, 0);
        }
    }
}

#[test]
fn line_buffered_flushes_every_key() {
    let mut seen = Vec::new();
    let _ = for_each_line_block(&b"a\nb\n"[..], 10, true, |block, flush| {
        seen.push((block.len(), flush));
        Ok::<(), io::Error>(())
    });
    assert_eq!(seen, [(1, true), (1, true), (0, true)]);
}
