//! Templates for generated columns and file names.
//!
//! A template is literal text with fields: `{film.title} ({occurred_at|%d/%m %H:%M}, {where})`.
//! A field holds a dotted path (followed through links like filters do) and an optional `|format`.
//! Literal braces are written `{{` and `}}`.
//!
//! Rendering: an absent value renders as ""; a link renders as its target name (no brackets); a list
//! renders its items joined by ", " (a format applies to each item); numbers as JSON shows them
//! (`1927`, `4.5`); booleans `true` / `false`; an object (rare) as compact JSON.
//!
//! Formats:
//! * `date`: the date part `YYYY-MM-DD` of a date or datetime;
//! * `time`: `HH:MM` of a datetime (`00:00` for a plain date);
//! * `year`: `YYYY` of a date or datetime;
//! * `lower`, `upper`: the rendered text in lower / upper case;
//! * a strftime-like pattern when the format contains `%`: `%Y %m %d %H %M %S %y %e %b %B %a %A %j %%`
//!   (`%e` is the day without padding, `%b`/`%B` English month names, `%a`/`%A` English weekday names,
//!   `%j` the zero-padded day of the year).
//!
//! Dates are `YYYY-MM-DD`; datetimes `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]` (a space may replace the `T`).
//! A date has the time 00:00. The wall-clock time is rendered as written: zones are not converted.
//! A value that is not a date or datetime renders as-is under `date`, `time`, `year` and `%` formats.

use crate::filter::{link_target, Lookup};
use serde_json::Value;
use std::cmp::Ordering;

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Field { path: Vec<String>, format: Option<Format> },
}

#[derive(Debug, Clone, PartialEq)]
enum Format {
    Date,
    Time,
    Year,
    Lower,
    Upper,
    Pattern(Vec<Piece>),
}

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Spec(char),
}

const FORMAT_WORDS: &str = "date, time, year, lower, upper";
const DIRECTIVES: &str = "%Y %m %d %H %M %S %y %e %b %B %a %A %j %%";
const DIRECTIVE_CHARS: &str = "YmdHMSyebBaAj%";

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Monday first.
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

impl Template {
    /// Parses a template. Errors (unbalanced braces, empty path or path segment, unknown format or
    /// `%` directive) say where and what is allowed.
    pub fn parse(src: &str) -> Result<Template, String> {
        let mut parts: Vec<Part> = Vec::new();
        let mut text = String::new();
        let mut chars = src.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' => {
                    if matches!(chars.peek(), Some((_, '{'))) {
                        chars.next();
                        text.push('{');
                        continue;
                    }
                    let mut inner = String::new();
                    let mut closed = false;
                    for (j, d) in chars.by_ref() {
                        match d {
                            '}' => {
                                closed = true;
                                break;
                            }
                            '{' => {
                                return Err(format!(
                                    "unexpected '{{' at position {j} inside the field opened at position {i} in template \"{src}\": fields cannot nest; write '{{{{' for a literal brace"
                                ))
                            }
                            _ => inner.push(d),
                        }
                    }
                    if !closed {
                        return Err(format!(
                            "unclosed '{{' at position {i} in template \"{src}\": close the field with '}}', or write '{{{{' for a literal brace"
                        ));
                    }
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(parse_field(&inner, src)?);
                }
                '}' => {
                    if matches!(chars.peek(), Some((_, '}'))) {
                        chars.next();
                        text.push('}');
                    } else {
                        return Err(format!(
                            "unmatched '}}' at position {i} in template \"{src}\": write '}}}}' for a literal brace"
                        ));
                    }
                }
                _ => text.push(c),
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Template { parts })
    }

    /// Every dotted path the template reads, each once, in order of first appearance.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        for p in &self.parts {
            if let Part::Field { path, .. } = p {
                if !out.contains(path) {
                    out.push(path.clone());
                }
            }
        }
        out
    }

    /// Renders with values from the lookup. Absent values render as "".
    pub fn render<L: Lookup>(&self, lookup: &L, row: L::Row) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Field { path, format } => {
                    if let Some(v) = lookup.get(row, path) {
                        out.push_str(&render_value(&v, format.as_ref()));
                    }
                }
            }
        }
        out
    }

    /// The path when the template is one bare field with no format and no literal text (e.g. "{title}"),
    /// so the value can be kept typed.
    pub fn single_path(&self) -> Option<&[String]> {
        match self.parts.as_slice() {
            [Part::Field { path, format: None }] => Some(path),
            _ => None,
        }
    }

    /// True when the template has no field at all (constant text).
    pub fn is_constant(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }
}

fn parse_field(inner: &str, src: &str) -> Result<Part, String> {
    let (path_src, format_src) = match inner.split_once('|') {
        Some((p, f)) => (p, Some(f)),
        None => (inner, None),
    };
    let path_src = path_src.trim();
    if path_src.is_empty() {
        return Err(format!(
            "empty field {{{inner}}} in template \"{src}\": name a column, e.g. {{title}} or {{film.title}}"
        ));
    }
    let path: Vec<String> = path_src.split('.').map(|s| s.trim().to_string()).collect();
    if path.iter().any(|s| s.is_empty()) {
        return Err(format!(
            "bad path \"{path_src}\" in {{{inner}}} in template \"{src}\": it has an empty segment (paths look like film.title)"
        ));
    }
    let format = match format_src {
        None => None,
        Some(f) => Some(parse_format(f, inner, src)?),
    };
    Ok(Part::Field { path, format })
}

fn parse_format(f: &str, inner: &str, src: &str) -> Result<Format, String> {
    if f.contains('%') {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = f.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                text.push(c);
                continue;
            }
            match chars.next() {
                Some(d) if DIRECTIVE_CHARS.contains(d) => {
                    if d == '%' {
                        text.push('%');
                    } else {
                        if !text.is_empty() {
                            pieces.push(Piece::Text(std::mem::take(&mut text)));
                        }
                        pieces.push(Piece::Spec(d));
                    }
                }
                Some(d) => {
                    return Err(format!(
                        "unknown directive \"%{d}\" in {{{inner}}} in template \"{src}\": use {DIRECTIVES}"
                    ))
                }
                None => {
                    return Err(format!(
                        "a lone '%' ends the format in {{{inner}}} in template \"{src}\": write %% for a percent sign; directives are {DIRECTIVES}"
                    ))
                }
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        return Ok(Format::Pattern(pieces));
    }
    let word = f.trim();
    match word.to_ascii_lowercase().as_str() {
        "date" => Ok(Format::Date),
        "time" => Ok(Format::Time),
        "year" => Ok(Format::Year),
        "lower" => Ok(Format::Lower),
        "upper" => Ok(Format::Upper),
        "" => Err(format!(
            "empty format after '|' in {{{inner}}} in template \"{src}\": use one of {FORMAT_WORDS}, or a pattern with {DIRECTIVES}"
        )),
        _ => Err(format!(
            "unknown format \"{word}\" in {{{inner}}} in template \"{src}\": use one of {FORMAT_WORDS}, or a pattern with {DIRECTIVES} (e.g. {{occurred_at|%d/%m %H:%M}})"
        )),
    }
}

fn render_value(v: &Value, format: Option<&Format>) -> String {
    match v {
        Value::Array(items) => {
            items.iter().filter(|i| !i.is_null()).map(|i| render_value(i, format)).collect::<Vec<_>>().join(", ")
        }
        _ => {
            let text = plain_text(v);
            match format {
                None => text,
                Some(Format::Lower) => text.to_lowercase(),
                Some(Format::Upper) => text.to_uppercase(),
                Some(f) => match DateTime::parse(&text) {
                    None => text,
                    Some(dt) => match f {
                        Format::Date => {
                            format!("{:04}-{:02}-{:02}", dt.year, dt.month, dt.day)
                        }
                        Format::Time => format!("{:02}:{:02}", dt.hour, dt.minute),
                        Format::Year => format!("{:04}", dt.year),
                        Format::Pattern(pieces) => dt.format(pieces),
                        Format::Lower | Format::Upper => unreachable!(),
                    },
                },
            }
        }
    }
}

/// The text of one non-array value: a link's target, a string, a number as JSON shows it, true/false.
fn plain_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => link_target(s).to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// A date or datetime read from text: `YYYY-MM-DD` or `YYYY-MM-DD(T| )HH:MM[:SS[.fff]][Z|±HH:MM|±HHMM|±HH]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanos: u32,
    /// False for a plain date (then the time fields are 0).
    pub has_time: bool,
    /// The zone offset east of UTC in minutes, when written (`Z` is 0).
    pub offset_minutes: Option<i32>,
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let s = b.get(at..at + n)?;
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The fraction of a second starting at `at` (after its '.' or ','), in
/// nanoseconds (digits past the ninth ignored), and where it ends.
fn fraction(b: &[u8], start: usize) -> Option<(u32, usize)> {
    let mut at = start;
    let mut nanos: u64 = 0;
    while at < b.len() && b[at].is_ascii_digit() {
        if at - start < 9 {
            nanos = nanos * 10 + u64::from(b[at] - b'0');
        }
        at += 1;
    }
    if at == start {
        return None;
    }
    let n = (at - start).min(9);
    Some(((nanos * 10u64.pow((9 - n) as u32)) as u32, at))
}

/// The offset from UTC starting at `at` (none, `Z`, `+hh:mm`, `+hhmm` or
/// `+hh`), in minutes, and where it ends; None when it is not one.
fn offset(b: &[u8], mut at: usize) -> Option<(Option<i32>, usize)> {
    match b.get(at) {
        None => Some((None, at)),
        Some(b'Z') | Some(b'z') => Some((Some(0), at + 1)),
        Some(&sign) if sign == b'+' || sign == b'-' => {
            let h = digits(b, at + 1, 2)?;
            at += 3;
            let m = if b.get(at) == Some(&b':') {
                let m = digits(b, at + 1, 2)?;
                at += 3;
                m
            } else if let Some(m) = digits(b, at, 2) {
                at += 2;
                m
            } else {
                0
            };
            if h > 23 || m > 59 {
                return None;
            }
            let off = (h * 60 + m) as i32;
            Some((Some(if sign == b'-' { -off } else { off }), at))
        }
        Some(_) => None,
    }
}

impl DateTime {
    /// Reads a date or datetime; None for anything else (including impossible dates like 2026-02-30).
    pub fn parse(s: &str) -> Option<DateTime> {
        let b = s.trim().as_bytes();
        let year = digits(b, 0, 4)?;
        if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
            return None;
        }
        let month = digits(b, 5, 2)?;
        let day = digits(b, 8, 2)?;
        let year = year as i32;
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        let mut dt = DateTime {
            year,
            month,
            day,
            hour: 0,
            minute: 0,
            second: 0,
            nanos: 0,
            has_time: false,
            offset_minutes: None,
        };
        if b.len() == 10 {
            return Some(dt);
        }
        if !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        dt.has_time = true;
        dt.hour = digits(b, 11, 2)?;
        if b.get(13) != Some(&b':') {
            return None;
        }
        dt.minute = digits(b, 14, 2)?;
        let mut at = 16;
        if b.get(at) == Some(&b':') {
            dt.second = digits(b, at + 1, 2)?;
            at += 3;
            if matches!(b.get(at), Some(b'.') | Some(b',')) {
                let (nanos, end) = fraction(b, at + 1)?;
                dt.nanos = nanos;
                at = end;
            }
        }
        if dt.hour > 23 || dt.minute > 59 || dt.second > 60 {
            return None;
        }
        let (offset, end) = offset(b, at)?;
        dt.offset_minutes = offset;
        at = end;
        if at != b.len() {
            return None;
        }
        Some(dt)
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days_since_epoch(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// 0 = Monday .. 6 = Sunday.
    pub fn weekday(&self) -> u32 {
        // 1970-01-01 was a Thursday (3 counting from Monday = 0).
        (self.days_since_epoch() + 3).rem_euclid(7) as u32
    }

    /// Day of the year, 1..=366.
    pub fn ordinal(&self) -> u32 {
        (self.days_since_epoch() - days_from_civil(self.year, 1, 1)) as u32 + 1
    }

    /// Orders two values as described in the filter module: a date against a datetime compares the
    /// date parts only; two zoned datetimes compare as instants; otherwise the wall-clock times.
    pub fn compare(&self, other: &DateTime) -> Ordering {
        let date = |d: &DateTime| (d.year, d.month, d.day);
        if !self.has_time || !other.has_time {
            return date(self).cmp(&date(other));
        }
        if let (Some(a), Some(b)) = (self.offset_minutes, other.offset_minutes) {
            let secs = |d: &DateTime, off: i32| {
                d.days_since_epoch() * 86_400
                    + i64::from(d.hour) * 3600
                    + i64::from(d.minute) * 60
                    + i64::from(d.second)
                    - i64::from(off) * 60
            };
            return (secs(self, a), self.nanos).cmp(&(secs(other, b), other.nanos));
        }
        let local = |d: &DateTime| (d.year, d.month, d.day, d.hour, d.minute, d.second, d.nanos);
        local(self).cmp(&local(other))
    }

    fn format(&self, pieces: &[Piece]) -> String {
        let mut out = String::new();
        for p in pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Spec(c) => {
                    let s = match c {
                        'Y' => format!("{:04}", self.year),
                        'm' => format!("{:02}", self.month),
                        'd' => format!("{:02}", self.day),
                        'H' => format!("{:02}", self.hour),
                        'M' => format!("{:02}", self.minute),
                        'S' => format!("{:02}", self.second),
                        'y' => format!("{:02}", self.year.rem_euclid(100)),
                        'e' => self.day.to_string(),
                        'b' => MONTHS[self.month as usize - 1][..3].to_string(),
                        'B' => MONTHS[self.month as usize - 1].to_string(),
                        'a' => WEEKDAYS[self.weekday() as usize][..3].to_string(),
                        'A' => WEEKDAYS[self.weekday() as usize].to_string(),
                        'j' => format!("{:03}", self.ordinal()),
                        _ => "%".to_string(),
                    };
                    out.push_str(&s);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use crate::filter::tests::World;

    fn world() -> World {
        World::new(json!({
            "Charade": {"title": "Charade", "year": 1963, "rating": 4.5, "seen": true,
                        "tags": ["thriller", "[[Paris|the city]]", 3],
                        "released": "1963-12-05"},
            "Film night": {
                "film": "[[Charade]]",
                "occurred_at": "2026-10-03T21:30",
                "where": "[[Home|at home]]",
                "films": ["[[Charade]]", "[[Arabesque]]"],
                "late": "2026-10-03 23:05:09.123+02:00",
                "name": "Film Night",
                "nothing": null
            },
            "Arabesque": {"title": "Arabesque", "year": 1966}
        }))
    }

    fn render(src: &str, row: &str) -> String {
        let w = world();
        Template::parse(src).unwrap_or_else(|e| panic!("{e}")).render(&w, w.id(row))
    }

    fn perr(src: &str) -> String {
        Template::parse(src).unwrap_err()
    }

    #[test]
    fn plain_fields_and_literals() {
        assert_eq!(render("{title}", "Charade"), "Charade");
        assert_eq!(render("{year} {title}", "Charade"), "1963 Charade");
        assert_eq!(render("{rating}/5, seen: {seen}", "Charade"), "4.5/5, seen: true");
        assert_eq!(render("no fields", "Charade"), "no fields");
        assert_eq!(render("", "Charade"), "");
        assert_eq!(render("{ title }", "Charade"), "Charade");
    }

    #[test]
    fn example_templates() {
        assert_eq!(
            render("{film.title} ({occurred_at|%d/%m %H:%M}, {where})", "Film night"),
            "Charade (03/10 21:30, Home)"
        );
        assert_eq!(render("{occurred_at|%Y-%m-%dT%H%M}", "Film night"), "2026-10-03T2130");
        assert_eq!(render("{occurred_at|date}", "Film night"), "2026-10-03");
    }

    #[test]
    fn missing_values_render_empty() {
        assert_eq!(render("[{missing}]", "Charade"), "[]");
        assert_eq!(render("[{nothing|upper}]", "Film night"), "[]");
        assert_eq!(render("[{film.missing}]", "Film night"), "[]");
        assert_eq!(render("[{where.title}]", "Film night"), "[]");
        assert_eq!(render("{missing|%Y}-x", "Charade"), "-x");
    }

    #[test]
    fn links_and_lists() {
        assert_eq!(render("{where}", "Film night"), "Home");
        assert_eq!(render("{film}", "Film night"), "Charade");
        assert_eq!(render("{tags}", "Charade"), "thriller, Paris, 3");
        assert_eq!(render("{films}", "Film night"), "Charade, Arabesque");
        assert_eq!(render("{films.year}", "Film night"), "1963, 1966");
        assert_eq!(render("{films.title|upper}", "Film night"), "CHARADE, ARABESQUE");
        assert_eq!(render("{film.tags}", "Film night"), "thriller, Paris, 3");
    }

    #[test]
    fn word_formats() {
        assert_eq!(render("{occurred_at|date}", "Film night"), "2026-10-03");
        assert_eq!(render("{occurred_at|time}", "Film night"), "21:30");
        assert_eq!(render("{occurred_at|year}", "Film night"), "2026");
        assert_eq!(render("{late|date} {late|time}", "Film night"), "2026-10-03 23:05");
        assert_eq!(render("{film.released|date}", "Film night"), "1963-12-05");
        assert_eq!(render("{film.released|time}", "Film night"), "00:00");
        assert_eq!(render("{film.released|year}", "Film night"), "1963");
        assert_eq!(render("{name|lower}", "Film night"), "film night");
        assert_eq!(render("{name|upper}", "Film night"), "FILM NIGHT");
        assert_eq!(render("{where|upper}", "Film night"), "HOME");
        assert_eq!(render("{name| Date }", "Film night"), "Film Night");
        // not a date: as-is
        assert_eq!(render("{title|date}", "Charade"), "Charade");
        assert_eq!(render("{year|year}", "Charade"), "1963");
    }

    #[test]
    fn strftime_formats() {
        let r = |f: &str| render(&format!("{{occurred_at|{f}}}"), "Film night");
        // 2026-10-03 is a Saturday, day 276 of the year
        assert_eq!(r("%Y %m %d %H %M %S"), "2026 10 03 21 30 00");
        assert_eq!(r("%y|%e|%j"), "26|3|276");
        assert_eq!(r("%a %A"), "Sat Saturday");
        assert_eq!(r("%b %B"), "Oct October");
        assert_eq!(r("100%% at %H:%M"), "100% at 21:30");
        assert_eq!(render("{late|%d.%m.%Y %H:%M:%S}", "Film night"), "03.10.2026 23:05:09");
        // a date has 00:00
        assert_eq!(render("{film.released|%A %e %B %Y, %H:%M}", "Film night"), "Thursday 5 December 1963, 00:00");
        // a list of dates
        let w = World::new(json!({"A": {"days": ["2024-02-29", "2000-01-01", "not a date"]}}));
        let t = Template::parse("{days|%a %j}").unwrap();
        assert_eq!(t.render(&w, 0), "Thu 060, Sat 001, not a date");
        // not a date: as-is
        assert_eq!(render("{title|%Y}", "Charade"), "Charade");
        assert_eq!(render("{year|%Y}", "Charade"), "1963");
    }

    #[test]
    fn literal_braces() {
        assert_eq!(render("{{{title}}}", "Charade"), "{Charade}");
        assert_eq!(render("{{title}}", "Charade"), "{title}");
        assert_eq!(render("a }} b {{", "Charade"), "a } b {");
        assert!(Template::parse("{{title}}").unwrap().single_path().is_none());
    }

    #[test]
    fn paths_and_single_path() {
        let t = Template::parse("{film.title} ({occurred_at|%d/%m}, {where}) {film.title}").unwrap();
        assert_eq!(
            t.paths(),
            vec![
                vec!["film".to_string(), "title".to_string()],
                vec!["occurred_at".to_string()],
                vec!["where".to_string()],
            ]
        );
        assert_eq!(t.single_path(), None);
        let s = Template::parse("{title}").unwrap();
        assert_eq!(s.single_path(), Some(&["title".to_string()][..]));
        let d = Template::parse("{film.year}").unwrap();
        assert_eq!(d.single_path(), Some(&["film".to_string(), "year".to_string()][..]));
        assert_eq!(Template::parse("{title|upper}").unwrap().single_path(), None);
        assert_eq!(Template::parse(" {title}").unwrap().single_path(), None);
        assert_eq!(Template::parse("{year} {title}").unwrap().single_path(), None);
        assert!(Template::parse("plain").unwrap().is_constant());
        assert!(!Template::parse("{a}").unwrap().is_constant());
    }

    #[test]
    fn parse_errors() {
        assert!(perr("{title").contains("unclosed '{'"));
        assert!(perr("title}").contains("unmatched '}'"));
        assert!(perr("{a{b}}").contains("cannot nest"));
        assert!(perr("{}").contains("empty field"));
        assert!(perr("{ |date}").contains("empty field"));
        assert!(perr("{film..title}").contains("empty segment"));
        assert!(perr("{.title}").contains("empty segment"));
        assert!(perr("{title|}").contains("empty format"));
        let e = perr("{occurred_at|dat}");
        assert!(e.contains("unknown format \"dat\""), "{e}");
        assert!(e.contains("date, time, year, lower, upper"), "{e}");
        let e = perr("{occurred_at|%Q}");
        assert!(e.contains("unknown directive \"%Q\""), "{e}");
        assert!(e.contains("%Y %m %d"), "{e}");
        assert!(perr("{occurred_at|%Y%}").contains("lone '%'"));
    }

    #[test]
    fn datetime_parsing() {
        let d = DateTime::parse("2026-10-03").unwrap();
        assert!(!d.has_time);
        assert_eq!((d.year, d.month, d.day, d.weekday(), d.ordinal()), (2026, 10, 3, 5, 276));
        let t = DateTime::parse("2026-10-03T21:30").unwrap();
        assert_eq!((t.hour, t.minute, t.second, t.offset_minutes), (21, 30, 0, None));
        let t = DateTime::parse("2026-10-03 21:30:15.5Z").unwrap();
        assert_eq!((t.second, t.nanos, t.offset_minutes), (15, 500_000_000, Some(0)));
        let t = DateTime::parse("2026-10-03T21:30:15-05:30").unwrap();
        assert_eq!(t.offset_minutes, Some(-330));
        let t = DateTime::parse("2026-10-03T21:30+0200").unwrap();
        assert_eq!(t.offset_minutes, Some(120));
        for bad in [
            "2026-13-01",
            "2026-02-29",
            "2026-10-3",
            "2026-10-03T25:00",
            "2026-10-03T21",
            "2026-10-03T21:30x",
            "2026/10/03",
            "Charade",
            "",
        ] {
            assert!(DateTime::parse(bad).is_none(), "{bad}");
        }
        assert!(DateTime::parse("2024-02-29").is_some());
        assert_eq!(DateTime::parse("1970-01-01").unwrap().days_since_epoch(), 0);
        assert_eq!(DateTime::parse("1969-12-31").unwrap().weekday(), 2);
        assert_eq!(DateTime::parse("2000-12-31").unwrap().ordinal(), 366);
    }
}
