//! Times the host hands in (milliseconds since the Unix epoch), written as ISO
//! 8601 in UTC. No clock is read here.

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's civil_from_days).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

struct Parts {
    y: i64,
    mo: u32,
    d: u32,
    h: i64,
    mi: i64,
    s: i64,
    ms: i64,
}

fn parts(ms: i64) -> Parts {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, mo, d) = civil(days);
    Parts { y, mo, d, h: rem / 3_600_000, mi: rem / 60_000 % 60, s: rem / 1000 % 60, ms: rem % 1000 }
}

/// `2026-10-12T16:52:23.376Z`
pub fn iso(ms: i64) -> String {
    let p = parts(ms);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", p.y, p.mo, p.d, p.h, p.mi, p.s, p.ms)
}

/// `20261012T165223`, the start of a migration id.
pub fn compact(ms: i64) -> String {
    let p = parts(ms);
    format!("{:04}{:02}{:02}T{:02}{:02}{:02}", p.y, p.mo, p.d, p.h, p.mi, p.s)
}

/// Milliseconds of an ISO date (`2026-10-12`) or date-time (`2026-10-12T16:52`,
/// with seconds, fraction, `Z` or an offset); None when it is neither.
pub fn parse(s: &str) -> Option<i64> {
    let s = s.trim();
    // Byte offsets below: only ASCII can be a date.
    if s.len() < 10 || !s.is_ascii() || !is_date(&s[..10]) {
        return None;
    }
    let (y, mo, d) = (s[..4].parse().ok()?, s[5..7].parse().ok()?, s[8..10].parse().ok()?);
    let day_ms = days_from_civil(y, mo, d) * 86_400_000;
    if s.len() == 10 {
        return Some(day_ms);
    }
    if !is_datetime(s) {
        return None;
    }
    let rest = &s[11..];
    let (clock, zone) = match rest.find(['Z', '+', '-']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut it = clock.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let mi: i64 = it.next()?.parse().ok()?;
    let sec: f64 = it.next().map_or(Some(0.0), |x| x.parse().ok())?;
    let offset_min: i64 = match zone {
        "" | "Z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            sign * (z[1..3].parse::<i64>().ok()? * 60 + z[4..6].parse::<i64>().ok()?)
        }
    };
    Some(day_ms + (h * 60 + mi - offset_min) * 60_000 + (sec * 1000.0).round() as i64)
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(&s[0..4]) || !digits(&s[5..7]) || !digits(&s[8..10]) {
        return false;
    }
    let (y, m, d): (u32, u32, u32) =
        (s[0..4].parse().unwrap_or(0), s[5..7].parse().unwrap_or(0), s[8..10].parse().unwrap_or(0));
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

pub fn is_datetime(s: &str) -> bool {
    if s.len() < 16 || !s.is_char_boundary(10) || !is_date(&s[..10]) {
        return false;
    }
    let sep = s.as_bytes()[10];
    if sep != b'T' && sep != b' ' {
        return false;
    }
    let rest = &s[11..];
    let (time, _zone) = match rest.find(['Z', '+', '-']) {
        Some(i) => {
            let z = &rest[i..];
            let zone_ok = z == "Z" || (z.len() == 6 && digits(&z[1..3]) && &z[3..4] == ":" && digits(&z[4..6]));
            if !zone_ok {
                return false;
            }
            (&rest[..i], z)
        }
        None => (rest, ""),
    };
    let parts: Vec<&str> = time.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return false;
    }
    let h = parts[0].len() == 2 && digits(parts[0]) && parts[0] < "24";
    let m = parts[1].len() == 2 && digits(parts[1]) && parts[1] < "60";
    let sec = parts.get(2).is_none_or(|p| {
        let (whole, frac) = p.split_once('.').unwrap_or((p, "0"));
        whole.len() == 2 && digits(whole) && whole < "61" && digits(frac)
    });
    h && m && sec
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn text_that_is_not_a_date_is_none_whatever_its_characters() {
        // Found by the fuzzer: a `since` of "fƸl-mƭfƸlm" cut a character in two.
        for s in ["fƸl-mƭfƸlm", "2026-10-1é", "2026-10-12Té", "ééééééééééé"] {
            assert_eq!(parse(s), None, "{s}");
        }
    }

    #[test]
    fn formats_and_parses() {
        let ms = 1_791_823_943_376; // 2026-10-12T16:52:23.376Z
        assert_eq!(iso(ms), "2026-10-12T16:52:23.376Z");
        assert_eq!(compact(ms), "20261012T165223");
        assert_eq!(parse("2026-10-12T16:52:23.376Z"), Some(ms));
        assert_eq!(parse("2026-10-12T18:52:23.376+02:00"), Some(ms));
        assert_eq!(parse("2026-10-12"), Some(ms - (16 * 3600 + 52 * 60 + 23) * 1000 - 376));
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(parse("yesterday"), None);
        assert_eq!(parse("2026-02-30"), None);
    }
}
