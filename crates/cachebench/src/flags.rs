//! The options' value parsers: each refuses a value outside its range by
//! saying the range, and clap adds the option and the value (`invalid
//! value '0' for '--memory <MB>': give a whole number from 2 to 65,536
//! (megabytes)`) and exits 2, as for every other bad command line.

/// A whole number from `lo` to `hi` (`unit` follows the range, in
/// parentheses, when not empty), as the option's type `T`.
pub fn whole<T: TryFrom<u64>>(
    lo: u64,
    hi: u64,
    unit: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        text.trim()
            .parse::<u64>()
            .ok()
            .filter(|v| (lo..=hi).contains(v))
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| {
                let unit = match unit {
                    "" => String::new(),
                    unit => format!(" ({unit})"),
                };
                format!(
                    "give a whole number from {} to {}{unit}",
                    thousands(lo),
                    thousands(hi)
                )
            })
    }
}

/// A number for which `fits` holds (NaN never does: every bound is a
/// comparison); `range` says which.
pub fn number(
    fits: fn(f64) -> bool,
    range: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|&x| fits(x))
            .ok_or_else(|| range.to_owned())
    }
}

/// Seconds above 0 and below 1,000,000 (the durations of the run).
pub fn seconds() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    number(
        |x| x > 0.0 && x < 1e6,
        "give a number of seconds above 0 and below 1,000,000",
    )
}

/// One server of `--servers`: HOST:PORT, the port from 1 to 65,535 (a
/// name that does not resolve, or where nothing listens, is found out
/// when the run checks it: exit 69).
pub fn host_port(text: &str) -> Result<String, String> {
    let fits = text
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0));
    match fits {
        true => Ok(text.to_owned()),
        false => Err("give HOST:PORT, the port a whole number from 1 to 65,535".to_owned()),
    }
}

/// `n` with a comma every three digits (65,536).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_by_three() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(65_536), "65,536");
        assert_eq!(super::thousands(50_000_000), "50,000,000");
    }
}
