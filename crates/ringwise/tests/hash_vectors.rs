//! Published test vectors for every built-in hash (compatibility notes §9,
//! the SipHash paper's appendix, the xxHash and SMHasher sanity values).

use ringwise::{KeyHasher, StableHash};

fn check(hash: StableHash, cases: &[(&[u8], u64)]) {
    for &(input, expected) in cases {
        let got = hash.hash(input);
        assert_eq!(
            got,
            expected,
            "{hash} of {:?}: got {got:#018x}, expected {expected:#018x}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn md5_is_the_big_endian_digest_prefix() {
    check(
        StableHash::Md5,
        &[
            (b"", 0xd41d_8cd9_8f00_b204),
            (b"abc", 0x9001_5098_3cd2_4fb0),
            // The seed article's key: digest 56dadf1868c3ba34...
            (b"user:42", 6_258_559_928_114_592_308),
        ],
    );
}

#[test]
fn xxh3_seed_0() {
    check(
        StableHash::Xxh3,
        &[
            (b"", 0x2D06_8005_38D3_94C2),
            (b"\0", 0xC44B_DFF4_074E_ECDB),
            (b"a", 0xE6C6_32B6_1E96_4E1F),
            (b"abc", 0x78AF_5F94_892F_3950),
        ],
    );
}

#[test]
fn xxh64_seed_0() {
    check(
        StableHash::Xxh64,
        &[
            (b"", 0xEF46_DB37_51D8_E999),
            (b"a", 0xD24E_C4F1_A98C_6E5B),
            (b"abc", 0x44BC_2CF5_AD77_0999),
            (
                b"Nobody inspects the spammish repetition",
                0xFBCE_A83C_8A37_8BF1,
            ),
        ],
    );
}

#[test]
fn murmur3_x64_128_h1() {
    check(
        StableHash::Murmur3,
        &[
            (b"", 0),
            // digest 029bbd41b3a7d8cb 191dae486a901e5b: h1 is the first half, LE.
            (b"hello", 0xcbd8_a7b3_41bd_9b02),
            // digest 6c1b07bc7bbc4be3 47939ac4a93c437a (also in Guava's tests).
            (
                b"The quick brown fox jumps over the lazy dog",
                0xe34b_bc7b_bc07_1b6c,
            ),
        ],
    );
}

#[test]
fn fnv1a_64() {
    check(
        StableHash::Fnv1a64,
        &[
            (b"", 0xcbf2_9ce4_8422_2325),
            (b"a", 0xaf63_dc4c_8601_ec8c),
            (b"foobar", 0x8594_4171_f739_67e8),
        ],
    );
}

#[test]
fn siphash_2_4_reference_vectors() {
    // The SipHash paper's vectors: key 00 01 .. 0f, message 00 01 .. (len-1).
    let secret = "000102030405060708090a0b0c0d0e0f";
    let hash = StableHash::from_name("siphash", Some(secret)).expect("valid secret");
    let message: Vec<u8> = (0u8..15).collect();
    check(
        hash,
        &[
            (&message[..0], 0x726f_db47_dd0e_0e31),
            (&message[..1], 0x74f8_39c5_93dc_67fd),
            (&message[..15], 0xa129_ca61_49be_45e5),
        ],
    );
}

#[test]
fn siphash_depends_on_the_secret() {
    let a = StableHash::from_name("siphash", Some("000102030405060708090a0b0c0d0e0f"));
    let b = StableHash::from_name("siphash", Some("000102030405060708090a0b0c0d0e0e"));
    let (a, b) = (a.expect("valid"), b.expect("valid"));
    assert_ne!(a.hash(b"user:42"), b.hash(b"user:42"));
}

/// HAProxy's key hashes (`src/hash.c` at v2.6.0) and `full_hash`
/// (`include/haproxy/intops.h`): values of those C functions compiled with
/// gcc; the real haproxy agrees on every key of `compat::haproxy`.
#[test]
fn haproxy_sdbm_djb2_wt6_and_full_hash() {
    let keys: [&[u8]; 5] = [
        b"",
        b"a",
        b"user:42",
        b"The quick brown fox jumps over the lazy dog",
        b"\xff\x80\x01",
    ];
    let sdbm = [0, 97, 2_023_534_829, 2_359_783_795, 2_115_080_448];
    let djb2 = [5381, 177_670, 1_170_328_996, 885_799_134, 193_658_917];
    let wt6 = [
        4_187_620_192,
        1_900_802_597,
        778_624_079,
        3_840_389_189,
        879_659_207,
    ];
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(ringwise::sdbm(key), sdbm[i], "sdbm {i}");
        assert_eq!(ringwise::djb2(key), djb2[i], "djb2 {i}");
        assert_eq!(ringwise::wt6(key), wt6[i], "wt6 {i}");
        let cell = |v: u32| u64::from(v) << 32 | 0x8000_0000;
        check(StableHash::Sdbm, &[(key, cell(sdbm[i]))]);
        check(StableHash::Djb2, &[(key, cell(djb2[i]))]);
        check(StableHash::Wt6, &[(key, cell(wt6[i]))]);
    }
    let full = [
        (0, 2_874_071_335),
        (1, 881_230_262),
        (4096, 1_237_450_891),
        (8192, 1_079_705_203),
        (4097, 2_761_370_759),
        (u32::MAX, 2_120_532_354),
    ];
    for (a, want) in full {
        assert_eq!(ringwise::full_hash(a), want, "full_hash({a})");
    }
}
