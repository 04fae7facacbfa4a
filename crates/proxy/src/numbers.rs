//! memcached's number parsing (`util.c`: `safe_strtoul`, `safe_strtol`,
//! `safe_strtoull`), reproduced so that the proxy refuses exactly the
//! request lines memcached refuses, and forwards the others with each
//! number as memcached read it (`request/canonical.rs`).
//!
//! Source: memcached 1.6.18 `util.c`, on a 64-bit Linux (`long` is 64 bits),
//! as Debian builds it. Each is C's `strtoul`/`strtol`/`strtoull` in base
//! 10 (leading white space skipped, an optional sign, digits), accepted
//! when a digit was read, the value did not overflow the 64-bit type
//! (`ERANGE`), and the number ends the token or is followed by white
//! space. Quirks kept on purpose:
//!
//! - `safe_strtoul` stores into a `uint32_t`: the 64-bit result is cut to
//!   its low 32 bits, so flags `4294967297` are flags 1;
//! - `safe_strtol` stores into an `int32_t` the same way: exptime
//!   `4294967297` is 1, and a length of `4294967299` is 3;
//! - the unsigned ones refuse a negative number only when the result,
//!   read as signed, is negative: `-5` is refused, but `-0` is 0 and
//!   `-18446744073709551615` is 1 (C negates the magnitude modulo 2^64).
//!
//! Cost: O(token length), no allocation.

/// C's `isspace` in the "C" locale.
fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strto*` in base 10 over `token`: `(negative, magnitude)` when a digit
/// was read, the magnitude fits 64 bits and the number is followed by
/// nothing or white space; `None` otherwise. The magnitude saturates to
/// `None` on overflow, like `ERANGE` (the signed ones narrow further).
fn digits(token: &[u8]) -> Option<(bool, u128)> {
    let mut at = token.iter().take_while(|&&b| is_c_space(b)).count();
    let negative = match token.get(at) {
        Some(b'-') => {
            at += 1;
            true
        }
        Some(b'+') => {
            at += 1;
            false
        }
        _ => false,
    };
    let run = token[at.min(token.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if run == 0 {
        return None;
    }
    let mut magnitude: u128 = 0;
    for &b in &token[at..at + run] {
        // Past 2^64 the value is out of range for every caller; stop
        // growing so that a long run of digits cannot overflow u128.
        magnitude = (magnitude * 10 + u128::from(b - b'0')).min(u128::from(u64::MAX) + 1);
    }
    match token.get(at + run) {
        None => Some((negative, magnitude)),
        Some(&b) if is_c_space(b) => Some((negative, magnitude)),
        Some(_) => None,
    }
}

/// `strtoull` as `safe_strtoull` accepts it.
pub fn safe_strtoull(token: &[u8]) -> Option<u64> {
    let (negative, magnitude) = digits(token)?;
    let magnitude = u64::try_from(magnitude).ok()?;
    let value = if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    };
    // "-5" reads as 2^64 - 5, negative as a signed number: refused.
    if (value as i64) < 0 && token.contains(&b'-') {
        return None;
    }
    Some(value)
}

/// `safe_strtoul` into a `uint32_t`: [`safe_strtoull`] cut to 32 bits.
pub fn safe_strtoul(token: &[u8]) -> Option<u32> {
    safe_strtoull(token).map(|v| v as u32)
}

/// `safe_strtol` into an `int32_t`: a 64-bit `strtol`, cut to 32 bits.
pub fn safe_strtol(token: &[u8]) -> Option<i32> {
    let (negative, magnitude) = digits(token)?;
    let value: i64 = if negative {
        // Down to -2^63.
        if magnitude > 1 << 63 {
            return None;
        }
        (magnitude as u64).wrapping_neg() as i64
    } else {
        i64::try_from(magnitude).ok()?
    };
    Some(value as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quirks_of_the_module_doc() {
        assert_eq!(safe_strtoul(b"4294967297"), Some(1));
        assert_eq!(safe_strtol(b"4294967297"), Some(1));
        assert_eq!(safe_strtol(b"4294967299"), Some(3));
        assert_eq!(safe_strtoul(b"-5"), None);
        assert_eq!(safe_strtoul(b"-0"), Some(0));
        assert_eq!(safe_strtoull(b"-18446744073709551615"), Some(1));
        assert_eq!(safe_strtol(b"-18446744073709551615"), None);
        assert_eq!(safe_strtol(b"-9223372036854775808"), Some(0));
        assert_eq!(safe_strtol(b"9223372036854775808"), None);
        assert_eq!(safe_strtoull(b"18446744073709551616"), None);
        assert_eq!(safe_strtoull(b"18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn white_space_and_signs_as_c_reads_them() {
        assert_eq!(safe_strtol(b"\t5"), Some(5));
        assert_eq!(safe_strtol(b"5\r"), Some(5));
        assert_eq!(safe_strtol(b"+5"), Some(5));
        assert_eq!(safe_strtol(b"-1"), Some(-1));
        assert_eq!(safe_strtol(b"5x"), None);
        assert_eq!(safe_strtol(b""), None);
        assert_eq!(safe_strtol(b"-"), None);
        assert_eq!(safe_strtol(b"0x10"), None);
        assert_eq!(safe_strtoull(&[b'9'; 400]), None);
    }
}
