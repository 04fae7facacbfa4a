//! The proxy's log: one line per event on standard error, stamped with
//! the UTC time to the millisecond, so that an operator can lay it next to
//! their servers' logs (an ejection, a re-admission, a change of the
//! routing and when it settled).
//!
//! `note!("server {address} ejected")` prints
//! `2026-12-04T22:50:01.123Z ringwise-proxy: server 10.0.0.1:11211 ejected`.
//!
//! Cost: one formatted line per event; events are rare (none per request).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Prints one stamped line to standard error.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::log::line(format_args!($($arg)*))
    };
}

/// What [`note!`] prints.
pub fn line(args: fmt::Arguments<'_>) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    eprintln!("{} ringwise-proxy: {args}", stamp(now));
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a time since the Unix epoch.
pub fn stamp(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let ms = since_epoch.subsec_millis();
    let (year, month, day) = civil((secs / 86_400) as i64);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`: days shifted to eras of 400 years that
/// begin on March 1st, so that February's leap day ends a year).
/// Example: day 11016 is 2000-02-29; day 11017 is 2000-03-01.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_dates() {
        assert_eq!(stamp(Duration::ZERO), "1970-01-01T00:00:00.000Z");
        let leap = Duration::from_millis(951_782_400_007);
        assert_eq!(stamp(leap), "2000-02-29T00:00:00.007Z");
        let later = Duration::from_secs(1_796_424_282);
        assert_eq!(stamp(later), "2026-12-04T22:44:42.000Z");
        assert_eq!(civil(-1), (1969, 12, 31));
        assert_eq!(civil(11_017), (2000, 3, 1));
    }
}
