//! MD5 of eight messages at once, in safe Rust that the compiler vectorises.
//!
//! What: [`md5_x8`] returns the four MD5 state words (the digest, read as
//! little-endian `u32`s) of eight independent messages; [`md5_prefix_x8`]
//! the seed recipe's point of each, `int.from_bytes(md5(m)[:8], "big")`,
//! the value `StableHash::Md5` gives one message; [`md5_prefix_batch`]
//! fills a slice of such points from any number of messages.
//!
//! How: MD5 (RFC 1321) is a chain of 64 dependent steps per 64-byte block,
//! so one message leaves most of a core idle. Eight messages make eight
//! independent chains: the state is `[[u32; 8]; 4]` (word × lane), every
//! step is the same loop over the eight lanes, and LLVM turns each loop
//! into SIMD additions, boolean ops and shift pairs (two 128-bit registers
//! with SSE2, one with AVX2). The lanes' messages may differ in length:
//! lane `l` needs `blocks(len) = (len + 8) / 64 + 1` blocks (the message,
//! the `0x80` byte, zeros, the 64-bit bit length). Every block index up to
//! the longest lane's is compressed for all eight lanes, and a lane already
//! finished keeps its state (its update is masked off).
//!
//! Worked example of the padding: a 55-byte message is 55 + 1 (0x80) + 8
//! (length) = 64 bytes, one block; a 56-byte one needs 56 + 1 + 8 = 65,
//! so two blocks: (56 + 8) / 64 + 1 = 2. The length is in bits, `len · 8`,
//! little-endian in the block's last 8 bytes.
//!
//! Cost: O(total message bytes) with about eight lanes' work per block
//! slot; each batch of eight costs as much as its longest message, so mixed
//! lengths waste the short lanes' share. On this repository's machine the
//! short keys of `ringwise simulate` hash about 1.5–2× faster than the
//! `md-5` crate one by one (`benches/md5_lanes.rs`). No allocation.
//!
//! Quirks: MD5 is not a secure hash; it is here because the seed article's
//! ring places keys with it. The results are bit for bit the `md-5`
//! crate's (`tests/md5_lanes.rs` checks every length up to several blocks,
//! mixed in one batch).

/// Messages hashed together.
pub const MD5_LANES: usize = 8;

type Lanes = [u32; MD5_LANES];

/// The initial state (RFC 1321, 3.3).
const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// `T[i] = floor(2^32 · |sin(i + 1)|)` (RFC 1321, 3.4).
const T: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

/// Rotation amounts, four per round (RFC 1321, 3.4).
const S: [[u32; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// Blocks of `len` bytes once padded: see the module's worked example.
pub const fn md5_blocks(len: usize) -> usize {
    (len + 8) / 64 + 1
}

/// The four state words of each message's MD5 (the digest is their
/// little-endian bytes, lane by lane). Cost: as eight messages of the
/// longest one's length, vectorised; no allocation.
pub fn md5_x8(messages: [&[u8]; MD5_LANES]) -> [[u32; 4]; MD5_LANES] {
    let blocks = messages.map(|m| md5_blocks(m.len()));
    let most = blocks.iter().copied().max().unwrap_or(1);
    let mut state: [Lanes; 4] = INIT.map(|w| [w; MD5_LANES]);
    let mut words: [Lanes; 16] = [[0; MD5_LANES]; 16];
    for block in 0..most {
        for (lane, message) in messages.iter().enumerate() {
            let bytes = padded_block(message, blocks[lane], block);
            for (i, word) in words.iter_mut().enumerate() {
                let at = 4 * i;
                word[lane] =
                    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
            }
        }
        let live: Lanes = blocks.map(|b| if block < b { u32::MAX } else { 0 });
        compress(&mut state, &words, &live);
    }
    let mut out = [[0u32; 4]; MD5_LANES];
    for (lane, digest) in out.iter_mut().enumerate() {
        *digest = [0, 1, 2, 3].map(|w| state[w][lane]);
    }
    out
}

/// The seed recipe's point of each message: the digest's first 8 bytes,
/// big-endian (`StableHash::Md5`). Cost: one [`md5_x8`].
pub fn md5_prefix_x8(messages: [&[u8]; MD5_LANES]) -> [u64; MD5_LANES] {
    md5_x8(messages).map(|[a, b, _, _]| {
        // Digest bytes 0..4 are `a` little-endian, 4..8 are `b`: as a
        // big-endian u64 that is `swap(a) << 32 | swap(b)`.
        (u64::from(a.swap_bytes()) << 32) | u64::from(b.swap_bytes())
    })
}

/// `out[i]` = the seed recipe's point of `message(i)`, eight at a time;
/// `message` writes message `i` into the buffer it is given and returns
/// it (so messages built from a counter need no allocation). Cost: one
/// [`md5_x8`] per eight outputs (the last batch padded with empty
/// messages), plus `message`'s own.
pub fn md5_prefix_batch<F>(out: &mut [u64], mut message: F)
where
    F: FnMut(usize, &mut Vec<u8>),
{
    let mut bufs: [Vec<u8>; MD5_LANES] = Default::default();
    for (c, chunk) in out.chunks_mut(MD5_LANES).enumerate() {
        for (lane, buf) in bufs.iter_mut().enumerate() {
            buf.clear();
            if lane < chunk.len() {
                message(c * MD5_LANES + lane, buf);
            }
        }
        let points = md5_prefix_x8([0, 1, 2, 3, 4, 5, 6, 7].map(|l| bufs[l].as_slice()));
        chunk.copy_from_slice(&points[..chunk.len()]);
    }
}

/// Block `block` of `message` padded to `blocks` blocks (all zeros past
/// the lane's last block, which `compress` then ignores).
fn padded_block(message: &[u8], blocks: usize, block: usize) -> [u8; 64] {
    let mut bytes = [0u8; 64];
    let start = block * 64;
    if start < message.len() {
        let end = (start + 64).min(message.len());
        bytes[..end - start].copy_from_slice(&message[start..end]);
    }
    if (start..start + 64).contains(&message.len()) {
        bytes[message.len() - start] = 0x80;
    }
    if block + 1 == blocks {
        let bits = (message.len() as u64).wrapping_mul(8);
        bytes[56..].copy_from_slice(&bits.to_le_bytes());
    }
    bytes
}

/// One step, `a = b + ((a + f + x + t) <<< s)`, in every lane.
#[inline(always)]
fn step(a: &mut Lanes, b: &Lanes, f: &Lanes, x: &Lanes, t: u32, s: u32) {
    for l in 0..MD5_LANES {
        let sum = a[l].wrapping_add(f[l]).wrapping_add(x[l]).wrapping_add(t);
        a[l] = b[l].wrapping_add(sum.rotate_left(s));
    }
}

/// Round `R`'s boolean function, lane by lane (`R` is a constant, so the
/// match is resolved at compile time).
#[inline(always)]
fn round_fn<const R: usize>(b: &Lanes, c: &Lanes, d: &Lanes) -> Lanes {
    let mut f = [0u32; MD5_LANES];
    for l in 0..MD5_LANES {
        f[l] = match R {
            0 => (b[l] & c[l]) | (!b[l] & d[l]),
            1 => (b[l] & d[l]) | (c[l] & !d[l]),
            2 => b[l] ^ c[l] ^ d[l],
            _ => c[l] ^ (b[l] | !d[l]),
        };
    }
    f
}

/// The message word of step `i` (RFC 1321: `i`, `5i + 1`, `3i + 5`, `7i`
/// mod 16 in rounds 1 to 4).
const fn word_index(i: usize) -> usize {
    match i / 16 {
        0 => i,
        1 => (5 * i + 1) % 16,
        2 => (3 * i + 5) % 16,
        _ => (7 * i) % 16,
    }
}

/// One block into every live lane's state (`live` is all ones or zero).
#[inline(always)]
fn compress(state: &mut [Lanes; 4], x: &[Lanes; 16], live: &Lanes) {
    let mut v = *state;
    round::<0>(&mut v, x);
    round::<1>(&mut v, x);
    round::<2>(&mut v, x);
    round::<3>(&mut v, x);
    for (w, new) in state.iter_mut().zip(v) {
        for l in 0..MD5_LANES {
            w[l] = w[l].wrapping_add(new[l] & live[l]);
        }
    }
}

/// Round `R`'s 16 steps, four at a time so the roles a, b, c, d rotate by
/// renaming, not by moving lanes: step i updates a, i + 1 d, i + 2 c,
/// i + 3 b.
#[inline(always)]
fn round<const R: usize>(v: &mut [Lanes; 4], x: &[Lanes; 16]) {
    let [a, b, c, d] = v;
    let s = S[R];
    for i in (16 * R..16 * R + 16).step_by(4) {
        let f = round_fn::<R>(b, c, d);
        step(a, b, &f, &x[word_index(i)], T[i], s[0]);
        let f = round_fn::<R>(a, b, c);
        step(d, a, &f, &x[word_index(i + 1)], T[i + 1], s[1]);
        let f = round_fn::<R>(d, a, b);
        step(c, d, &f, &x[word_index(i + 2)], T[i + 2], s[2]);
        let f = round_fn::<R>(c, d, a);
        step(b, c, &f, &x[word_index(i + 3)], T[i + 3], s[3]);
    }
}
