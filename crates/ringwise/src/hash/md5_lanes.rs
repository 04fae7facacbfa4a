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
//! independent chains: the state is `[[u32; 8]; 4]` (word × lane) and
//! [`compress`]'s lane loop is the *outer* loop around the 64 steps
//! written out as straight scalar code, so LLVM's loop vectoriser runs four
//! or eight lanes per instruction (SIMD additions, boolean ops and shift
//! pairs for the rotations, in two 128-bit registers with SSE2). Why not
//! the other way round (each step a loop over the lanes): the lanes then
//! stay in scalar registers, no store seeds LLVM's SLP vectoriser, and the
//! result ran scalar and slower than the `md-5` crate (measured).
//!
//! The lanes' messages may differ in length: lane `l` needs `blocks(len) = (len + 8) / 64 + 1` blocks (the message,
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
//! lengths waste the short lanes' share. On this repository's machine
//! (SSE2 code, the default target) one- and two-block messages hash
//! 2.5–3.4× faster than with the `md-5` crate one by one
//! (`benches/md5_lanes.rs`, same run). No allocation.
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

/// `out[i]` = the seed recipe's point of message `i`, eight at a time;
/// `message(i, buf)` appends message `i` to the cleared `buf`, and is
/// called once per `i` in increasing order (so messages built from a
/// counter need no allocation). Cost: one
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

/// One step of one lane, `a = b + ((a + F(b, c, d) + x + t) <<< s)`;
/// `t = floor(2^32 · |sin(step + 1)|)` (RFC 1321, 3.4) and the rotations
/// are written into each of the 64 steps as literals.
macro_rules! step {
    ($f:ident, $a:ident, $b:ident, $c:ident, $d:ident, $x:expr, $t:expr, $s:expr) => {
        let sum = $a
            .wrapping_add($f($b, $c, $d))
            .wrapping_add($x)
            .wrapping_add($t);
        $a = $b.wrapping_add(sum.rotate_left($s));
    };
}

/// One block into every live lane's state (`live` is all ones or zero).
/// The steps rotate the roles a, b, c, d by renaming (step 0 updates a,
/// step 1 d, step 2 c, step 3 b), so no lane is moved.
#[inline(always)]
fn compress(state: &mut [Lanes; 4], x: &[Lanes; 16], live: &Lanes) {
    for l in 0..MD5_LANES {
        let [mut a, mut b, mut c, mut d] = [0, 1, 2, 3].map(|w| state[w][l]);
        // Round 1.
        step!(f, a, b, c, d, x[0][l], 0xd76a_a478, 7);
        step!(f, d, a, b, c, x[1][l], 0xe8c7_b756, 12);
        step!(f, c, d, a, b, x[2][l], 0x2420_70db, 17);
        step!(f, b, c, d, a, x[3][l], 0xc1bd_ceee, 22);
        step!(f, a, b, c, d, x[4][l], 0xf57c_0faf, 7);
        step!(f, d, a, b, c, x[5][l], 0x4787_c62a, 12);
        step!(f, c, d, a, b, x[6][l], 0xa830_4613, 17);
        step!(f, b, c, d, a, x[7][l], 0xfd46_9501, 22);
        step!(f, a, b, c, d, x[8][l], 0x6980_98d8, 7);
        step!(f, d, a, b, c, x[9][l], 0x8b44_f7af, 12);
        step!(f, c, d, a, b, x[10][l], 0xffff_5bb1, 17);
        step!(f, b, c, d, a, x[11][l], 0x895c_d7be, 22);
        step!(f, a, b, c, d, x[12][l], 0x6b90_1122, 7);
        step!(f, d, a, b, c, x[13][l], 0xfd98_7193, 12);
        step!(f, c, d, a, b, x[14][l], 0xa679_438e, 17);
        step!(f, b, c, d, a, x[15][l], 0x49b4_0821, 22);
        // Round 2.
        step!(g, a, b, c, d, x[1][l], 0xf61e_2562, 5);
        step!(g, d, a, b, c, x[6][l], 0xc040_b340, 9);
        step!(g, c, d, a, b, x[11][l], 0x265e_5a51, 14);
        step!(g, b, c, d, a, x[0][l], 0xe9b6_c7aa, 20);
        step!(g, a, b, c, d, x[5][l], 0xd62f_105d, 5);
        step!(g, d, a, b, c, x[10][l], 0x0244_1453, 9);
        step!(g, c, d, a, b, x[15][l], 0xd8a1_e681, 14);
        step!(g, b, c, d, a, x[4][l], 0xe7d3_fbc8, 20);
        step!(g, a, b, c, d, x[9][l], 0x21e1_cde6, 5);
        step!(g, d, a, b, c, x[14][l], 0xc337_07d6, 9);
        step!(g, c, d, a, b, x[3][l], 0xf4d5_0d87, 14);
        step!(g, b, c, d, a, x[8][l], 0x455a_14ed, 20);
        step!(g, a, b, c, d, x[13][l], 0xa9e3_e905, 5);
        step!(g, d, a, b, c, x[2][l], 0xfcef_a3f8, 9);
        step!(g, c, d, a, b, x[7][l], 0x676f_02d9, 14);
        step!(g, b, c, d, a, x[12][l], 0x8d2a_4c8a, 20);
        // Round 3.
        step!(h, a, b, c, d, x[5][l], 0xfffa_3942, 4);
        step!(h, d, a, b, c, x[8][l], 0x8771_f681, 11);
        step!(h, c, d, a, b, x[11][l], 0x6d9d_6122, 16);
        step!(h, b, c, d, a, x[14][l], 0xfde5_380c, 23);
        step!(h, a, b, c, d, x[1][l], 0xa4be_ea44, 4);
        step!(h, d, a, b, c, x[4][l], 0x4bde_cfa9, 11);
        step!(h, c, d, a, b, x[7][l], 0xf6bb_4b60, 16);
        step!(h, b, c, d, a, x[10][l], 0xbebf_bc70, 23);
        step!(h, a, b, c, d, x[13][l], 0x289b_7ec6, 4);
        step!(h, d, a, b, c, x[0][l], 0xeaa1_27fa, 11);
        step!(h, c, d, a, b, x[3][l], 0xd4ef_3085, 16);
        step!(h, b, c, d, a, x[6][l], 0x0488_1d05, 23);
        step!(h, a, b, c, d, x[9][l], 0xd9d4_d039, 4);
        step!(h, d, a, b, c, x[12][l], 0xe6db_99e5, 11);
        step!(h, c, d, a, b, x[15][l], 0x1fa2_7cf8, 16);
        step!(h, b, c, d, a, x[2][l], 0xc4ac_5665, 23);
        // Round 4.
        step!(i, a, b, c, d, x[0][l], 0xf429_2244, 6);
        step!(i, d, a, b, c, x[7][l], 0x432a_ff97, 10);
        step!(i, c, d, a, b, x[14][l], 0xab94_23a7, 15);
        step!(i, b, c, d, a, x[5][l], 0xfc93_a039, 21);
        step!(i, a, b, c, d, x[12][l], 0x655b_59c3, 6);
        step!(i, d, a, b, c, x[3][l], 0x8f0c_cc92, 10);
        step!(i, c, d, a, b, x[10][l], 0xffef_f47d, 15);
        step!(i, b, c, d, a, x[1][l], 0x8584_5dd1, 21);
        step!(i, a, b, c, d, x[8][l], 0x6fa8_7e4f, 6);
        step!(i, d, a, b, c, x[15][l], 0xfe2c_e6e0, 10);
        step!(i, c, d, a, b, x[6][l], 0xa301_4314, 15);
        step!(i, b, c, d, a, x[13][l], 0x4e08_11a1, 21);
        step!(i, a, b, c, d, x[4][l], 0xf753_7e82, 6);
        step!(i, d, a, b, c, x[11][l], 0xbd3a_f235, 10);
        step!(i, c, d, a, b, x[2][l], 0x2ad7_d2bb, 15);
        step!(i, b, c, d, a, x[9][l], 0xeb86_d391, 21);
        for (w, new) in state.iter_mut().zip([a, b, c, d]) {
            w[l] = w[l].wrapping_add(new & live[l]);
        }
    }
}

/// The four rounds' boolean functions (RFC 1321, 3.4).
#[inline(always)]
fn f(b: u32, c: u32, d: u32) -> u32 {
    (b & c) | (!b & d)
}

#[inline(always)]
fn g(b: u32, c: u32, d: u32) -> u32 {
    (b & d) | (c & !d)
}

#[inline(always)]
fn h(b: u32, c: u32, d: u32) -> u32 {
    b ^ c ^ d
}

#[inline(always)]
fn i(b: u32, c: u32, d: u32) -> u32 {
    c ^ (b | !d)
}
