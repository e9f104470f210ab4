//! Dates: commit times as RFC 3339 text for notes and corrections.

/// `when` (seconds since the epoch) as RFC 3339 in UTC, e.g.
/// `2024-01-01T00:00:00Z`.
pub(super) fn rfc3339(when: i64) -> String {
    let days = when.div_euclid(86_400);
    let secs = when.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard
/// Hinnant's algorithm).
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EPOCH;

    #[test]
    fn rfc3339_of_the_epoch_and_a_leap_day() {
        assert_eq!(rfc3339(EPOCH), "2024-01-01T00:00:00Z");
        assert_eq!(rfc3339(EPOCH + 59 * 86_400 + 3_661), "2024-02-29T01:01:01Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    }
}
