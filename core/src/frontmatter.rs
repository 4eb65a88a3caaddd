//! Front matter: reading it fast and editing it minimally.
//!
//! A note's front matter is the YAML between a first line `---` (at byte 0) and the next
//! line that is exactly `---`. Reading goes through a small hand-written parser for the
//! common subset of YAML (top-level `key: value` lines, plain and quoted scalars, block and
//! single-line flow sequences of scalars, comments); anything it is not sure of falls back to
//! `serde_norway` (through yaml.rs, which bounds what aliases can make of a note), and both
//! give the same result (a test compares them on a large corpus).
//! Editing works on the line structure (top-level key lines and their continuation lines), so
//! it keeps every byte it does not have to change and still works on front matter that does
//! not parse.

use crate::yaml::{flow_text, json_f64, key_text};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::num::ParseIntError;

/// A note's front matter, read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// Top-level keys in the order they appear, YAML converted to JSON: null, bool,
    /// integers as i64 (floats f64), strings, sequences as arrays, mappings as objects
    /// (non-string keys turned into their YAML text). Dates/times stay strings.
    pub values: Map<String, Value>,
    /// For each top-level key whose value is a single-line PLAIN (unquoted) scalar that YAML
    /// typed as a number or a boolean: the scalar's source text, e.g. "9780811858022", "1e3",
    /// "0x1A", "True". (`0811858022` is already a string for serde_norway: a leading zero
    /// followed by digits is not a number in YAML 1.2; `yes` is a string too.)
    pub plain: HashMap<String, String>,
    /// Byte offset in the text where the body starts (just after the closing `---` line and
    /// its line ending; 0 without front matter).
    pub body_start: usize,
    /// Whether the note had a front matter block at all.
    pub has_front_matter: bool,
}

/// Reads the front matter. A note without front matter gives empty values (Ok).
/// Err carries the YAML parser's message with its line and column counted within the front
/// matter (e.g. "mapping values are not allowed in this context at line 3 column 24"; a few
/// serde_norway messages have no position, e.g. "deserializing from YAML containing more than
/// one document is not supported"). Front matter whose top level is not a mapping (a list, a
/// scalar) is an Err too. Never panics.
///
/// Conversions beyond JSON: infinities and NaN (`.inf`, `-.inf`, `.nan`) become the strings
/// ".inf", "-.inf", ".nan"; integers beyond 64 bits become f64 (serde_norway's own Value
/// rejects those up to 128 bits); custom tags are dropped (`!tag x` reads as "x").
pub fn parse(text: &str) -> Result<Parsed, String> {
    let Some(block) = locate(text) else {
        return Ok(Parsed::default());
    };
    let fm = &text[block.content_start..block.content_end];
    let (values, plain) = match fast_parse(fm) {
        Some(result) => result,
        None => slow_parse(fm)?,
    };
    Ok(Parsed { values, plain, body_start: block.body_start, has_front_matter: true })
}

/// The note's body: what follows its front matter (the whole text without one).
pub fn body(text: &str) -> &str {
    locate(text).map_or(text, |b| &text[b.body_start..])
}

/// Returns the note's text with the top-level keys in `set` given these values (replacing the
/// whole entry of an existing key in place, including its continuation lines such as block list
/// items and indented comment lines; a comment at the end of the key line is kept; a key that
/// does not exist is appended at the end of the front matter, before the closing `---`), and
/// the keys in `remove` deleted (with their continuation lines). A `set` whose value is JSON
/// null leaves the key with an empty value (`key:`); a key both set and removed is removed; for a key given twice, the last
/// one wins. Every other byte stays the same. If the note has no front matter, one is created
/// at the top (`---\n...---\n` followed by the old text) unless there is nothing to write.
/// Keeps the note's line ending style (CRLF if the front matter's first line ends with \r\n).
/// If a key in `set` already holds an equal value (as parsed), its bytes are left untouched.
/// Keys are matched as the parser names them (`0x1A:` is the key "26").
///
/// It works on the line structure (top-level key lines), so front matter that does not parse
/// is edited all the same. When the front matter parses, the result is checked; should the
/// lines have misled the edit (exotic multi-line scalars), the front matter is written anew
/// from its values (comments lost, values right) rather than left wrong.
pub fn edit(text: &str, set: &[(&str, &Value)], remove: &[&str]) -> String {
    let ops = edit_ops(set, remove);
    let Some(block) = locate(text) else {
        return with_new_front_matter(text, &ops);
    };
    let nl = if block.crlf { "\r\n" } else { "\n" };
    let parsed = {
        let fm = &text[block.content_start..block.content_end];
        match fast_parse(fm) {
            Some((values, _)) => Some(values),
            None => slow_parse(fm).ok().map(|(values, _)| values),
        }
    };
    let lines = key_lines(text, &block, parsed.as_ref());
    let Some((plan, appended)) = plan_edit(text, &lines, &ops, parsed.as_ref(), nl) else {
        return text.to_string();
    };
    let out = assemble(text, &block, &lines, plan, &appended);
    match parsed {
        Some(values) => checked(out, text, &block, &values, &ops, nl),
        None => out,
    }
}

/// The edit's operations, one per key, the last one winning: a value to set, or
/// None to remove the key.
fn edit_ops<'a>(set: &[(&'a str, &'a Value)], remove: &[&'a str]) -> Vec<(&'a str, Option<&'a Value>)> {
    let mut ops: Vec<(&str, Option<&Value>)> = Vec::new();
    for (key, value) in set {
        let value = Some(*value);
        match ops.iter_mut().find(|(k, _)| k == key) {
            Some(op) => op.1 = value,
            None => ops.push((key, value)),
        }
    }
    for key in remove {
        match ops.iter_mut().find(|(k, _)| k == key) {
            Some(op) => op.1 = None,
            None => ops.push((key, None)),
        }
    }
    ops
}

/// A note without front matter: one created at the top, unless there is nothing to write.
fn with_new_front_matter(text: &str, ops: &[(&str, Option<&Value>)]) -> String {
    if ops.iter().all(|(_, v)| v.is_none()) {
        return text.to_string();
    }
    let nl = match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    let mut out = String::with_capacity(text.len() + 64);
    let (bom, text) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text),
    };
    out.push_str(bom);
    out.push_str("---");
    out.push_str(nl);
    for (key, value) in ops {
        if let Some(value) = value {
            push_entry(&mut out, key, value, nl);
        }
    }
    out.push_str("---");
    out.push_str(nl);
    out.push_str(text);
    out
}

/// The front matter's lines. In valid YAML, a key line that is not a top-level
/// key of the document (or repeats one) is the continuation of a multi-line
/// scalar: `a: 'x` / `y: z'`.
fn key_lines(text: &str, block: &Block, parsed: Option<&Map<String, Value>>) -> Vec<Line> {
    let mut lines = scan_lines(text, block.content_start, block.content_end, parsed.is_some());
    if let Some(values) = parsed {
        let mut seen: Vec<&str> = Vec::new();
        for line in &mut lines {
            if let Some(key) = line.key.as_deref() {
                if !values.contains_key(key) || seen.contains(&key) {
                    line.kind = LineKind::Cont;
                    line.key = None;
                    continue;
                }
                seen.push(values.get_key_value(key).map(|(k, _)| k.as_str()).unwrap_or(""));
            }
        }
    }
    lines
}

/// What becomes of each line of the front matter.
#[derive(Clone)]
enum Plan {
    Keep,
    Drop,
    Replace(String),
}

/// Each line's fate and the entries to append; None when nothing changes (every
/// key set already holds its value, every key removed is absent).
fn plan_edit(
    text: &str,
    lines: &[Line],
    ops: &[(&str, Option<&Value>)],
    parsed: Option<&Map<String, Value>>,
    nl: &str,
) -> Option<(Vec<Plan>, String)> {
    let entries = entries(lines);
    let mut plan = vec![Plan::Keep; lines.len()];
    let mut appended = String::new();
    let mut changed = false;
    for (key, value) in ops {
        let matching: Vec<&(usize, usize)> =
            entries.iter().filter(|(first, _)| lines[*first].key.as_deref() == Some(*key)).collect();
        if let Some(value) = value {
            if parsed.is_some_and(|values| values.get(*key) == Some(*value)) {
                continue;
            }
            changed = true;
            if matching.is_empty() {
                push_entry(&mut appended, key, value, nl);
                continue;
            }
        }
        for (n, &&(first, last)) in matching.iter().enumerate() {
            changed = true;
            for p in plan.iter_mut().take(last + 1).skip(first) {
                *p = Plan::Drop;
            }
            if let (0, Some(value)) = (n, value) {
                plan[first] = Plan::Replace(replaced_line(text, &lines[first], value, nl));
            }
        }
    }
    changed.then_some((plan, appended))
}

/// A key's line with its new value, the comment at its end kept.
fn replaced_line(text: &str, line: &Line, value: &Value, nl: &str) -> String {
    let line_text = &text[line.start..line.end];
    let prefix = &line_text[..line.colon_end];
    let comment = comment_suffix(line_text, line.colon_end).unwrap_or("");
    let rendered = yaml_value(value, nl);
    let mut s = String::with_capacity(prefix.len() + rendered.len() + comment.len() + 2);
    s.push_str(prefix);
    if rendered.is_empty() || rendered.starts_with(' ') {
        s.push_str(&rendered);
        s.push_str(comment);
    } else {
        s.push_str(comment);
        s.push_str(&rendered);
    }
    s.push_str(nl);
    s
}

/// The note with its front matter's lines as planned.
fn assemble(text: &str, block: &Block, lines: &[Line], plan: Vec<Plan>, appended: &str) -> String {
    let mut out = String::with_capacity(text.len() + appended.len() + 64);
    out.push_str(&text[..block.content_start]);
    // New keys go at the end of the front matter, before the closing line (or before a
    // document marker `...` / `--- ` that would leave them outside the YAML document).
    let insert_at = lines.iter().position(|l| is_document_marker(&text[l.start..l.end])).unwrap_or(lines.len());
    for (i, (line, p)) in lines.iter().zip(plan).enumerate() {
        if i == insert_at {
            out.push_str(appended);
        }
        match p {
            Plan::Keep => out.push_str(&text[line.start..line.next]),
            Plan::Drop => {}
            Plan::Replace(s) => out.push_str(&s),
        }
    }
    if insert_at == lines.len() {
        out.push_str(appended);
    }
    out.push_str(&text[block.content_end..]);
    out
}

/// When the front matter was valid YAML, the edited note checked to read as
/// intended; if the line structure misled the edit (exotic multi-line
/// constructs), the front matter written anew from the values rather than left wrong.
fn checked(
    out: String,
    text: &str,
    block: &Block,
    values: &Map<String, Value>,
    ops: &[(&str, Option<&Value>)],
    nl: &str,
) -> String {
    let mut expected: Vec<(&str, &Value)> = Vec::with_capacity(values.len() + ops.len());
    for (key, value) in values {
        match ops.iter().find(|(k, _)| k == key) {
            Some((_, None)) => {}
            Some((_, Some(new))) => expected.push((key, new)),
            None => expected.push((key, value)),
        }
    }
    for (key, value) in ops {
        if let Some(value) = value {
            if !values.contains_key(*key) {
                expected.push((key, value));
            }
        }
    }
    let ok = match parse(&out) {
        Ok(p) => p.values.len() == expected.len() && expected.iter().all(|(k, v)| p.values.get(*k) == Some(*v)),
        Err(_) => false,
    };
    if ok {
        return out;
    }
    let mut fresh = String::with_capacity(text.len() + 64);
    fresh.push_str(&text[..block.content_start]);
    for (key, value) in expected {
        push_entry(&mut fresh, key, value, nl);
    }
    fresh.push_str(&text[block.content_end..]);
    fresh
}

fn is_document_marker(line: &str) -> bool {
    (line.starts_with("...") || line.starts_with("---")) && matches!(line.as_bytes().get(3), None | Some(b' ' | b'\t'))
}

/// Renames a top-level key in place, keeping its value's bytes and its place among
/// the keys. A key written in quotes, or absent, is moved with `edit` instead.
pub fn rename_key(text: &str, old: &str, new: &str) -> String {
    if let Some(block) = locate(text) {
        let mut at = block.content_start;
        for line in text[block.content_start..block.content_end].split_inclusive('\n') {
            if let Some(rest) = line.strip_prefix(old) {
                if rest.starts_with(':') {
                    let mut out = String::with_capacity(text.len() + new.len());
                    out.push_str(&text[..at]);
                    out.push_str(new);
                    out.push_str(&text[at + old.len()..]);
                    if parse(&out).is_ok_and(|p| p.values.contains_key(new) && !p.values.contains_key(old)) {
                        return out;
                    }
                    break;
                }
            }
            at += line.len();
        }
    }
    match parse(text).ok().and_then(|p| p.values.get(old).cloned()) {
        Some(v) => edit(text, &[(new, &v)], &[old]),
        None => text.to_string(),
    }
}

/// Replaces the body (everything after the front matter) and keeps the front matter bytes.
pub fn set_body(text: &str, body: &str) -> String {
    match locate(text) {
        None if text.starts_with(BOM) => format!("{BOM}{body}"),
        None => body.to_string(),
        Some(block) => {
            let head = &text[..block.body_start];
            let mut out = String::with_capacity(head.len() + body.len() + 2);
            out.push_str(head);
            if !body.is_empty() && !head.ends_with('\n') {
                // The closing `---` was the last line, without a line ending.
                out.push_str(if block.crlf { "\r\n" } else { "\n" });
            }
            out.push_str(body);
            out
        }
    }
}

/// A new note: front matter with these keys in this order, then the body. Uses "\n".
/// A null value is written as an empty value (`key:`), which reads back as null.
pub fn render(values: &[(&str, &Value)], body: &str) -> String {
    let mut out = String::from("---\n");
    let mut seen: Vec<&str> = Vec::with_capacity(values.len());
    for (i, (key, _)) in values.iter().enumerate() {
        if seen.contains(key) {
            continue;
        }
        seen.push(key);
        // A later duplicate wins.
        let value = values[i..].iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v).unwrap_or(&Value::Null);
        push_entry(&mut out, key, value, "\n");
    }
    out.push_str("---\n");
    out.push_str(body);
    out
}

/// A JSON value written as the YAML of one top-level entry's value, as it follows `key:`.
/// Scalars on the same line: ` 1927`, ` true`, ` Metropolis`, ` "[[Charade]]"`; strings are
/// double-quoted whenever plain would be misread or is risky: empty, leading/trailing
/// whitespace, starts with an indicator character (- ? : , [ ] { } # & * ! | > ' " % @ `),
/// contains ": " or " #" or "[[" or a newline, tab or other control character, ends with ":",
/// looks like a number, bool, null (null ~ true false yes no on off y n, any case), date or
/// time. Escapes are JSON-style (`\"`, `\\`, `\n`, `\t`, `\r`, `\uXXXX`), valid in YAML.
/// Arrays are block lists, one item per line, indented two spaces ("\n  - a\n  - \"[[B]]\"");
/// an empty array is ` []`. Objects are block mappings indented two spaces; an empty one ` {}`.
/// Nested collections go on their own lines under a bare `-` or `key:`. Null is written as
/// nothing (`key:` and `-` read back as null).
pub fn yaml_value(v: &Value, newline: &str) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0, newline);
    out
}

// ---------------------------------------------------------------------------------------------
// Locating the block
// ---------------------------------------------------------------------------------------------

struct Block {
    /// Start of the first line after the opening `---` line.
    content_start: usize,
    /// Start of the closing `---` line.
    content_end: usize,
    /// Just after the closing line and its line ending.
    body_start: usize,
    /// Whether the opening line ends with `\r\n`.
    crlf: bool,
}

/// A byte order mark some Windows editors put first: the front matter follows it,
/// and it stays where it is.
const BOM: &str = "\u{feff}";

fn locate(text: &str) -> Option<Block> {
    let b = text.as_bytes();
    let bom = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let crlf = b[bom..].starts_with(b"---\r\n");
    let content_start = if b[bom..].starts_with(b"---\n") {
        bom + 4
    } else if crlf {
        bom + 5
    } else {
        return None;
    };
    let mut p = content_start;
    loop {
        let nl = b[p..].iter().position(|&c| c == b'\n').map(|i| p + i);
        let line_end = nl.unwrap_or(b.len());
        let mut line = &b[p..line_end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        if line == b"---" {
            return Some(Block { content_start, content_end: p, body_start: nl.map_or(b.len(), |i| i + 1), crlf });
        }
        match nl {
            Some(i) => p = i + 1,
            None => return None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar resolution, exactly as serde_norway does it (YAML 1.2 core schema as it implements it)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str,
}

fn resolve(s: &str) -> Kind {
    let Some(&first) = s.as_bytes().first() else {
        return Kind::Null;
    };
    match first {
        b'n' | b'N' | b'~' => {
            if matches!(s, "null" | "Null" | "NULL" | "~") {
                return Kind::Null;
            }
            return Kind::Str;
        }
        b't' | b'T' => {
            if matches!(s, "true" | "True" | "TRUE") {
                return Kind::Bool(true);
            }
            return Kind::Str;
        }
        b'f' | b'F' => {
            if matches!(s, "false" | "False" | "FALSE") {
                return Kind::Bool(false);
            }
            return Kind::Str;
        }
        b'0'..=b'9' | b'+' | b'-' | b'.' => {}
        _ => return Kind::Str,
    }
    if let Some(u) = parse_unsigned_int(s, u64::from_str_radix) {
        return Kind::U64(u);
    }
    if let Some(i) = parse_negative_int(s, i64::from_str_radix) {
        return Kind::I64(i);
    }
    // serde_norway hands these to the visitor as u128/i128 (and its own Value rejects them);
    // the slow path here turns them into f64, like integers too large even for 128 bits.
    if let Some(u) = parse_unsigned_int(s, u128::from_str_radix) {
        return Kind::F64(u as f64);
    }
    if let Some(i) = parse_negative_int(s, i128::from_str_radix) {
        return Kind::F64(i as f64);
    }
    if !digits_but_not_number(s) {
        if let Some(f) = parse_f64(s) {
            return Kind::F64(f);
        }
    }
    Kind::Str
}

fn kind_is_typed(k: Kind) -> bool {
    matches!(k, Kind::Bool(_) | Kind::U64(_) | Kind::I64(_) | Kind::F64(_))
}

fn kind_to_json(k: Kind, s: &str) -> Value {
    match k {
        Kind::Null => Value::Null,
        Kind::Bool(b) => Value::Bool(b),
        Kind::U64(u) => Value::from(u),
        Kind::I64(i) => Value::from(i),
        Kind::F64(f) => json_f64(f),
        Kind::Str => Value::String(s.to_string()),
    }
}

fn parse_unsigned_int<T>(scalar: &str, from_str_radix: fn(&str, u32) -> Result<T, ParseIntError>) -> Option<T> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(int);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) {
        return None;
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative_int<T>(scalar: &str, from_str_radix: fn(&str, u32) -> Result<T, ParseIntError>) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = scalar.strip_prefix(prefix) {
            let negative = format!("-{}", rest);
            if let Ok(int) = from_str_radix(&negative, radix) {
                return Some(int);
            }
        }
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(scalar, 10).ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = if let Some(unpositive) = scalar.strip_prefix('+') {
        if unpositive.starts_with(['+', '-']) {
            return None;
        }
        unpositive
    } else {
        scalar
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = scalar {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = scalar {
        return Some(f64::NAN);
    }
    if let Ok(float) = unpositive.parse::<f64>() {
        if float.is_finite() {
            return Some(float);
        }
    }
    None
}

fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}

// ---------------------------------------------------------------------------------------------
// Fast path
// ---------------------------------------------------------------------------------------------

/// Characters that cannot start a plain scalar (or are not worth the trouble for the fast path).
const INDICATORS: &[u8] = b"-?:,[]{}#&*!|>'\"%@`";

/// Whether the fast path may look at this front matter at all: no tabs, no control
/// characters, no lone `\r`, no characters libyaml treats as line breaks or rejects.
fn fast_charset_ok(fm: &[u8]) -> bool {
    let n = fm.len();
    let mut i = 0;
    while i < n {
        let b = fm[i];
        if b < 0x20 {
            if b == b'\n' || (b == b'\r' && i + 1 < n && fm[i + 1] == b'\n') {
                i += 1;
                continue;
            }
            return false;
        }
        if b == 0x7f {
            return false;
        }
        if b >= 0x80 {
            let b1 = fm.get(i + 1).copied().unwrap_or(0);
            let b2 = fm.get(i + 2).copied().unwrap_or(0);
            // C1 controls and NEL (C2 80..9F), LS/PS (E2 80 A8/A9), BOM (EF BB BF),
            // U+FFFE/U+FFFF (EF BF BE/BF).
            if (b == 0xc2 && (0x80..=0x9f).contains(&b1))
                || (b == 0xe2 && b1 == 0x80 && (b2 == 0xa8 || b2 == 0xa9))
                || (b == 0xef && ((b1 == 0xbb && b2 == 0xbf) || (b1 == 0xbf && (b2 == 0xbe || b2 == 0xbf))))
            {
                return false;
            }
        }
        i += 1;
    }
    true
}

/// Top-level values and the source text of typed plain scalars.
type ValuesAndPlain = (Map<String, Value>, HashMap<String, String>);

enum FastState {
    Start,
    Scalar,
    /// The last key has an empty value so far (null, or a block sequence follows).
    Empty,
    /// The last key's block sequence: its indentation and items.
    Seq(usize, Vec<Value>),
}

/// Completes the last key's value: with serde_json's `preserve_order` feature (which the crate
/// turns on) the map keeps insertion order, so it is the last entry.
fn fast_finish(state: FastState, map: &mut Map<String, Value>) {
    if let FastState::Seq(_, mut items) = state {
        if let Some(last) = map.values_mut().next_back() {
            // A vault holds every row's lists at once: grown by pushes, a list
            // of one tag kept room for four (72 bytes each).
            items.shrink_to_fit();
            *last = Value::Array(items);
        }
    }
}

/// The hand-written parser for the common subset. None when it is not sure (the caller then
/// asks serde_norway, which also produces the error messages).
fn fast_parse(fm: &str) -> Option<ValuesAndPlain> {
    if !fast_charset_ok(fm.as_bytes()) {
        return None;
    }
    let lines = fm.bytes().filter(|&b| b == b'\n').count();
    let mut map = Map::with_capacity(lines);
    let mut plain = HashMap::new();
    let mut state = FastState::Start;
    for raw in fm.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        if indent == bytes.len() {
            continue; // blank
        }
        let rest = &line[indent..];
        if rest.starts_with('#') {
            continue; // comment
        }
        if rest == "-" || rest.starts_with("- ") {
            if matches!(state, FastState::Empty) {
                state = FastState::Seq(indent, Vec::new());
            }
            let items = match &mut state {
                FastState::Seq(seq_indent, items) if *seq_indent == indent => items,
                _ => return None,
            };
            let item = rest[1..].trim_start_matches(' ');
            if item.is_empty() || item.starts_with('#') {
                items.push(Value::Null);
            } else {
                let (value, _) = fast_inline(item)?;
                items.push(value);
            }
            continue;
        }
        if indent > 0 || rest.starts_with("---") || rest.starts_with("...") {
            return None;
        }
        fast_finish(std::mem::replace(&mut state, FastState::Start), &mut map);
        let (key, colon_end) = parse_key(line, true)?;
        let value = line[colon_end..].trim_start_matches(' ');
        let v = if value.is_empty() || value.starts_with('#') {
            state = FastState::Empty;
            Value::Null
        } else {
            let (v, source) = fast_inline(value)?;
            if let Some(source) = source {
                plain.insert(key.to_string(), source.to_string());
            }
            state = FastState::Scalar;
            v
        };
        match map.entry(key.into_owned()) {
            serde_json::map::Entry::Vacant(entry) => {
                entry.insert(v);
            }
            // A duplicate key: serde_norway reports it.
            serde_json::map::Entry::Occupied(_) => return None,
        }
    }
    fast_finish(state, &mut map);
    Some((map, plain))
}

/// A value on one line in block context: `s` starts with a non-space character. Returns the
/// value and, for a plain scalar typed as number or bool, its source text.
fn fast_inline(s: &str) -> Option<(Value, Option<&str>)> {
    let b = s.as_bytes();
    match b[0] {
        b'"' => {
            let (string, end) = scan_double(s)?;
            trailer_ok(&s[end..]).then_some((Value::String(string), None))
        }
        b'\'' => {
            let (string, end) = scan_single(s)?;
            trailer_ok(&s[end..]).then_some((Value::String(string), None))
        }
        b'[' => {
            let (array, end) = scan_flow_seq(s)?;
            trailer_ok(&s[end..]).then_some((array, None))
        }
        b'-' if b.len() > 1 && b[1] != b' ' => plain_value(s),
        c if INDICATORS.contains(&c) => None,
        _ => plain_value(s),
    }
}

fn plain_value(s: &str) -> Option<(Value, Option<&str>)> {
    let end = plain_block_end(s.as_bytes())?;
    let text = s[..end].trim_end_matches(' ');
    let kind = resolve(text);
    let source = kind_is_typed(kind).then_some(text);
    Some((kind_to_json(kind, text), source))
}

/// End of a plain scalar in block context on one line (before a ` #` comment); None if it
/// holds a `: ` or ends with `:` (a mapping where the fast path does not expect one).
fn plain_block_end(s: &[u8]) -> Option<usize> {
    let n = s.len();
    for i in 0..n {
        match s[i] {
            b':' if i + 1 == n || s[i + 1] == b' ' => return None,
            b' ' if i + 1 < n && s[i + 1] == b'#' => return Some(i),
            _ => {}
        }
    }
    Some(n)
}

/// What may follow a quoted scalar or flow sequence on its line: spaces, then maybe a comment.
fn trailer_ok(rest: &str) -> bool {
    let trimmed = rest.trim_start_matches(' ');
    trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())
}

/// A double-quoted scalar closed on this line; returns it and the index after the closing quote.
fn scan_double(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 1;
    let mut chunk = 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                out.push_str(&s[chunk..i]);
                return Some((out, i + 1));
            }
            b'\\' => {
                out.push_str(&s[chunk..i]);
                let e = *b.get(i + 1)?;
                i += 2;
                let c = match e {
                    b'0' => '\0',
                    b'a' => '\u{7}',
                    b'b' => '\u{8}',
                    b't' => '\t',
                    b'n' => '\n',
                    b'v' => '\u{b}',
                    b'f' => '\u{c}',
                    b'r' => '\r',
                    b'e' => '\u{1b}',
                    b' ' => ' ',
                    b'"' => '"',
                    b'/' => '/',
                    b'\\' => '\\',
                    b'N' => '\u{85}',
                    b'_' => '\u{a0}',
                    b'L' => '\u{2028}',
                    b'P' => '\u{2029}',
                    b'x' | b'u' | b'U' => {
                        let len = match e {
                            b'x' => 2,
                            b'u' => 4,
                            _ => 8,
                        };
                        let hex = b.get(i..i + len)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                        i += len;
                        char::from_u32(code)?
                    }
                    _ => return None,
                };
                out.push(c);
                chunk = i;
            }
            _ => i += 1,
        }
    }
    None
}

/// A single-quoted scalar closed on this line; returns it and the index after the closing quote.
fn scan_single(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 1;
    let mut chunk = 1;
    while i < b.len() {
        if b[i] == b'\'' {
            out.push_str(&s[chunk..i]);
            if b.get(i + 1) == Some(&b'\'') {
                out.push('\'');
                i += 2;
                chunk = i;
                continue;
            }
            return Some((out, i + 1));
        }
        i += 1;
    }
    None
}

/// A flow sequence of scalars closed on this line: `[a, "b", 'c', 1]`.
fn scan_flow_seq(s: &str) -> Option<(Value, usize)> {
    let b = s.as_bytes();
    let n = b.len();
    let mut items = Vec::new();
    let mut i = 1;
    let mut may_close = true; // right after `[` or after a comma
    loop {
        while i < n && b[i] == b' ' {
            i += 1;
        }
        if i >= n {
            return None;
        }
        if b[i] == b']' {
            if !may_close {
                return None;
            }
            items.shrink_to_fit();
            return Some((Value::Array(items), i + 1));
        }
        if !may_close {
            return None;
        }
        // An item.
        match b[i] {
            b'"' => {
                let (string, len) = scan_double(&s[i..])?;
                items.push(Value::String(string));
                i += len;
            }
            b'\'' => {
                let (string, len) = scan_single(&s[i..])?;
                items.push(Value::String(string));
                i += len;
            }
            c => {
                if c == b'-' {
                    match b.get(i + 1) {
                        Some(b' ' | b',' | b']' | b'[' | b'{' | b'}') | None => return None,
                        _ => {}
                    }
                } else if INDICATORS.contains(&c) {
                    return None;
                }
                let start = i;
                while i < n && b[i] != b',' && b[i] != b']' {
                    match b[i] {
                        b'[' | b'{' | b'}' => return None,
                        // `a:b` is one scalar; `a: b` or `a:]` is a mapping.
                        b':' if matches!(b.get(i + 1), None | Some(b' ' | b',' | b']' | b'[' | b'{' | b'}')) => {
                            return None
                        }
                        b'#' if b[i - 1] == b' ' => return None,
                        _ => i += 1,
                    }
                }
                if i >= n {
                    return None;
                }
                let text = s[start..i].trim_end_matches(' ');
                items.push(kind_to_json(resolve(text), text));
            }
        }
        while i < n && b[i] == b' ' {
            i += 1;
        }
        match b.get(i) {
            Some(b',') => {
                i += 1;
                may_close = true;
            }
            Some(b']') => {
                items.shrink_to_fit();
                return Some((Value::Array(items), i + 1));
            }
            _ => return None,
        }
    }
}

/// Splits a top-level `key: value` line: the key (quotes decoded) and the index just after the
/// colon. `strict` (fast path) refuses keys the fast path is not sure about; the lenient form
/// (line structure for edits) accepts any `text: ` line.
fn parse_key(line: &str, strict: bool) -> Option<(Cow<'_, str>, usize)> {
    let b = line.as_bytes();
    let first = *b.first()?;
    let is_sep = |c: u8| c == b' ' || (!strict && c == b'\t');
    if first == b'"' || first == b'\'' {
        let (key, mut i) = if first == b'"' { scan_double(line)? } else { scan_single(line)? };
        while i < b.len() && is_sep(b[i]) {
            i += 1;
        }
        if b.get(i) != Some(&b':') {
            return None;
        }
        if i + 1 < b.len() && !is_sep(b[i + 1]) {
            return None;
        }
        return Some((Cow::Owned(key), i + 1));
    }
    if strict {
        if INDICATORS.contains(&first) {
            return None;
        }
    } else if first == b' ' || first == b'\t' || first == b'#' {
        return None;
    }
    let n = b.len();
    let mut i = 0;
    while i < n {
        match b[i] {
            b':' if i + 1 == n || is_sep(b[i + 1]) => break,
            b'#' if i > 0 && is_sep(b[i - 1]) => return None,
            b'[' | b']' | b'{' | b'}' | b',' if strict => return None,
            _ => {}
        }
        i += 1;
    }
    if i >= n {
        return None;
    }
    let key = line[..i].trim_end_matches([' ', '\t']);
    if key.is_empty() {
        return None;
    }
    if strict && (key.len() > 1000 || resolve(key) != Kind::Str) {
        return None;
    }
    Some((Cow::Borrowed(key), i + 1))
}

// ---------------------------------------------------------------------------------------------
// Slow path: serde_norway (yaml.rs), straight into serde_json values
// ---------------------------------------------------------------------------------------------

fn slow_parse(fm: &str) -> Result<ValuesAndPlain, String> {
    let value = crate::yaml::parse(fm)?;
    let values = match value {
        Value::Null => Map::new(),
        Value::Object(map) => map,
        Value::Array(_) => return Err("front matter is a list, not a mapping of properties (key: value lines)".into()),
        other => {
            return Err(format!(
                "front matter is a single value ({}), not a mapping of properties (key: value lines)",
                flow_text(&other)
            ))
        }
    };
    // The source text of single-line plain scalars typed as number or bool, from the lines.
    let mut plain = HashMap::new();
    let lines = scan_lines(fm, 0, fm.len(), true);
    for (first, last) in entries(&lines) {
        let only_comments = lines[first + 1..=last].iter().all(|l| {
            let s = fm[l.start..l.end].trim_start_matches(' ');
            s.is_empty() || s.starts_with('#')
        });
        if !only_comments {
            continue;
        }
        let line = &lines[first];
        let Some(key) = line.key.as_deref() else {
            continue;
        };
        let Some(current) = values.get(key) else {
            continue;
        };
        if !matches!(current, Value::Number(_) | Value::Bool(_) | Value::String(_)) {
            continue;
        }
        let s = fm[line.start..line.end][line.colon_end..].trim_start_matches(' ');
        let Some(&c) = s.as_bytes().first() else {
            continue;
        };
        if c == b'-' && s.as_bytes().get(1).is_none_or(|&d| d == b' ') {
            continue;
        }
        if c != b'-' && INDICATORS.contains(&c) {
            continue;
        }
        let Some(end) = plain_block_end(s.as_bytes()) else {
            continue;
        };
        let text = s[..end].trim_end_matches(' ');
        let kind = resolve(text);
        if kind_is_typed(kind) && kind_to_json(kind, text) == *current {
            plain.insert(key.to_string(), text.to_string());
        }
    }
    Ok((values, plain))
}

// ---------------------------------------------------------------------------------------------
// Line structure, for edits
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum LineKind {
    /// A top-level `key:` line.
    Key,
    /// Part of the entry above: indented lines (including indented comments), `- ` items at
    /// column 0, and any other line that is not a key.
    Cont,
    /// Blank lines and comments at column 0: between entries unless inside one.
    Gap,
}

#[derive(Debug)]
struct Line {
    start: usize,
    /// End of the line's content (before `\r\n` / `\n`).
    end: usize,
    /// Start of the next line.
    next: usize,
    kind: LineKind,
    key: Option<String>,
    /// For key lines: index just after the colon, relative to `start`.
    colon_end: usize,
}

/// The lines of the front matter `text[from..to]`. `other_is_cont`: whether a column-0 line
/// that is not a key (a continuation of a quoted scalar or flow collection in valid YAML, or
/// garbage) belongs to the entry above; when the YAML does not parse, such lines are kept.
fn scan_lines(text: &str, from: usize, to: usize, other_is_cont: bool) -> Vec<Line> {
    let mut lines = Vec::new();
    let b = text.as_bytes();
    let mut p = from;
    while p < to {
        let next = b[p..to].iter().position(|&c| c == b'\n').map_or(to, |i| p + i + 1);
        let mut end = next;
        if end > p && b[end - 1] == b'\n' {
            end -= 1;
        }
        if end > p && b[end - 1] == b'\r' {
            end -= 1;
        }
        let s = &text[p..end];
        let (kind, key, colon_end) =
            if s.trim_matches([' ', '\t', '\r']).is_empty() || s.starts_with('#') || is_document_marker(s) {
                (LineKind::Gap, None, 0)
            } else if s.starts_with([' ', '\t']) || s == "-" || s.starts_with("- ") || s.starts_with("-\t") {
                (LineKind::Cont, None, 0)
            } else {
                match parse_key(s, false) {
                    Some((key, colon_end)) => {
                        // The key as the parser names it (`0x1A` is "26", `~` is "null").
                        let key = if s.starts_with(['"', '\'']) {
                            key.into_owned()
                        } else {
                            key_text(kind_to_json(resolve(&key), &key))
                        };
                        (LineKind::Key, Some(key), colon_end)
                    }
                    None if other_is_cont => (LineKind::Cont, None, 0),
                    None => (LineKind::Gap, None, 0),
                }
            };
        lines.push(Line { start: p, end, next, kind, key, colon_end });
        p = next;
    }
    lines
}

/// Each top-level entry as (key line, last line): the key line and the continuation lines after
/// it; blank lines and column-0 comments after its last continuation line are not part of it.
fn entries(lines: &[Line]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind != LineKind::Key {
            i += 1;
            continue;
        }
        let mut last = i;
        let mut j = i + 1;
        while j < lines.len() && lines[j].kind != LineKind::Key {
            if lines[j].kind == LineKind::Cont {
                last = j;
            }
            j += 1;
        }
        out.push((i, last));
        i = j;
    }
    out
}

/// The comment at the end of a key line (with the blanks before it), to keep when the value is
/// replaced: `rating: 3 # out of 5` keeps ` # out of 5`.
fn comment_suffix(line: &str, colon_end: usize) -> Option<&str> {
    let after = &line[colon_end..];
    let t = after.trim_start_matches([' ', '\t']);
    if t.is_empty() {
        return None;
    }
    if t.starts_with('#') {
        return Some(after);
    }
    let tb = t.as_bytes();
    let value_end = match tb[0] {
        b'"' => scan_double(t).map(|(_, end)| end)?,
        b'\'' => scan_single(t).map(|(_, end)| end)?,
        b'[' | b'{' => flow_end(t)?,
        b'|' | b'>' => return None,
        _ => {
            let hash = (1..tb.len()).find(|&i| tb[i] == b'#' && (tb[i - 1] == b' ' || tb[i - 1] == b'\t'))?;
            t[..hash].trim_end_matches([' ', '\t']).len()
        }
    };
    let rest = &t[value_end..];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    (trimmed.starts_with('#') && trimmed.len() < rest.len()).then_some(rest)
}

/// The end of a flow collection closed on this line (quotes respected).
fn flow_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => i += scan_double(&s[i..])?.1 - 1,
            b'\'' => i += scan_single(&s[i..])?.1 - 1,
            b'#' if i > 0 && b[i - 1] == b' ' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Writing YAML
// ---------------------------------------------------------------------------------------------

fn push_entry(out: &mut String, key: &str, value: &Value, nl: &str) {
    write_str(out, key);
    out.push(':');
    write_value(out, value, 0, nl);
    out.push_str(nl);
}

fn write_value(out: &mut String, v: &Value, indent: usize, nl: &str) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { " true" } else { " false" }),
        Value::Number(n) => {
            out.push(' ');
            out.push_str(&n.to_string());
        }
        Value::String(s) => {
            out.push(' ');
            write_str(out, s);
        }
        Value::Array(items) if items.is_empty() => out.push_str(" []"),
        Value::Object(map) if map.is_empty() => out.push_str(" {}"),
        Value::Array(items) => {
            for item in items {
                out.push_str(nl);
                push_spaces(out, indent + 2);
                out.push('-');
                write_value(out, item, indent + 2, nl);
            }
        }
        Value::Object(map) => {
            for (key, value) in map {
                out.push_str(nl);
                push_spaces(out, indent + 2);
                write_str(out, key);
                out.push(':');
                write_value(out, value, indent + 2, nl);
            }
        }
    }
}

fn push_spaces(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push(' ');
    }
}

/// A string as a YAML scalar: plain when that is safe, else double-quoted.
fn write_str(out: &mut String, s: &str) {
    if !needs_quotes(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Characters YAML rejects or reads as line breaks: written as escapes inside double quotes.
fn needs_escape(c: char) -> bool {
    (c as u32) < 0x20
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn needs_quotes(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    if INDICATORS.contains(&first)
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || s.ends_with(':')
        || s.contains(": ")
        || s.contains(" #")
        || s.contains("[[")
        || s.chars().any(needs_escape)
    {
        return true;
    }
    if resolve(s) != Kind::Str {
        return true;
    }
    if s.len() <= 5 {
        let lower = s.to_ascii_lowercase();
        if matches!(lower.as_str(), "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n") {
            return true;
        }
    }
    // Dates, date-times and UUIDs read back as strings (YAML 1.2) and are written
    // plain, as people and Obsidian write them.
    if crate::time::is_date(s) || crate::time::is_datetime(s) || is_uuid(s) {
        return false;
    }
    // Number-like (0123, 1_000, 1.2.3, .5, .inf), other date-like text and times (12:30).
    let t = s.trim_start_matches(['+', '-']).as_bytes();
    let numeric_start = match t.first() {
        Some(c) if c.is_ascii_digit() => true,
        Some(b'.') => t.len() > 1,
        _ => false,
    };
    if numeric_start && b.iter().all(|&c| c.is_ascii_alphanumeric() || b"_.:+-/".contains(&c)) {
        return true;
    }
    b.len() >= 5 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    // -- helpers ---------------------------------------------------------------------------

    /// Runs the fast path and serde_norway on `doc`; when the fast path answers, both must be
    /// equal. Returns whether the fast path answered.
    fn same(doc: &str) -> bool {
        let slow = slow_parse(doc);
        match fast_parse(doc) {
            Some(fast) => {
                assert_eq!(Ok(fast), slow, "fast path and serde_norway differ on {:?}", doc);
                true
            }
            None => false,
        }
    }

    fn values(text: &str) -> Map<String, Value> {
        parse(text).unwrap_or_else(|e| panic!("{} in {:?}", e, text)).values
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<T: Copy>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())]
        }
    }

    // -- locating the front matter ---------------------------------------------------------

    #[test]
    fn locate_front_matter() {
        let p = parse("---\na: 1\n---\nbody\n").unwrap();
        assert!(p.has_front_matter);
        assert_eq!(p.body_start, 13);
        assert_eq!(p.values, json!({"a": 1}).as_object().unwrap().clone());

        let p = parse("---\r\na: 1\r\n---\r\nbody").unwrap();
        assert_eq!(p.body_start, 16);
        assert_eq!(p.values["a"], json!(1));

        let p = parse("---\na: 1\n---").unwrap();
        assert!(p.has_front_matter);
        assert_eq!(p.body_start, 12);

        let p = parse("---\n---\nbody").unwrap();
        assert!(p.has_front_matter);
        assert!(p.values.is_empty());
        assert_eq!(p.body_start, 8);

        for text in [
            "",
            "---",
            "---\n",
            "---\na: 1\n",
            "body\n---\na: 1\n---\n",
            " ---\na: 1\n---\n",
            "----\n---\n",
            "--- \na: 1\n---\n",
        ] {
            let p = parse(text).unwrap();
            assert!(!p.has_front_matter, "{:?}", text);
            assert_eq!(p.body_start, 0);
            assert!(p.values.is_empty());
        }
        // The closing line must be exactly `---` (`--- ` starts a second YAML document).
        let p = parse("---\na: x\n--- \nb: y\n----\n---\nbody\n").unwrap_err();
        assert_eq!(p, "deserializing from YAML containing more than one document is not supported");
        let p = parse("---\na: 1\n...\n---\nbody\n").unwrap();
        assert_eq!(p.body_start, 17);
    }

    /// A vault holds every row's lists at once: a list read by the fast parser
    /// keeps no room beyond its items.
    #[test]
    fn lists_keep_no_room_beyond_their_items() {
        let p = parse("---\ntags:\n  - a\nmore:\n  - 1\n  - 2\n  - 3\n  - 4\n  - 5\nflow: [x, y]\n---\n").unwrap();
        for (key, len) in [("tags", 1), ("more", 5), ("flow", 2)] {
            let list = p.values[key].as_array().unwrap();
            assert_eq!((list.len(), list.capacity()), (len, len), "{key}");
        }
    }

    // -- scalar resolution -----------------------------------------------------------------

    /// What serde_norway does with plain scalars (checked on serde_norway itself through the
    /// slow path, and on the fast path).
    #[test]
    fn plain_scalars_resolve_like_serde_norway() {
        let big = 18446744073709551616f64;
        let table: Vec<(&str, Value)> = vec![
            ("null", json!(null)),
            ("Null", json!(null)),
            ("NULL", json!(null)),
            ("~", json!(null)),
            ("nUll", json!("nUll")),
            ("true", json!(true)),
            ("True", json!(true)),
            ("TRUE", json!(true)),
            ("tRUE", json!("tRUE")),
            ("false", json!(false)),
            ("yes", json!("yes")),
            ("no", json!("no")),
            ("on", json!("on")),
            ("off", json!("off")),
            ("y", json!("y")),
            ("0x1A", json!(26)),
            ("-0x1A", json!(-26)),
            ("0X1A", json!("0X1A")),
            ("0o17", json!(15)),
            ("0b101", json!(5)),
            ("017", json!("017")),
            ("0811858022", json!("0811858022")),
            ("9780811858022", json!(9780811858022u64)),
            ("00", json!("00")),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("+1", json!(1)),
            ("-1", json!(-1)),
            ("+017", json!("+017")),
            ("1_000", json!("1_000")),
            ("1,000", json!("1,000")),
            (".5", json!(0.5)),
            ("5.", json!(5.0)),
            ("01.5", json!(1.5)),
            ("1e3", json!(1000.0)),
            ("1E3", json!(1000.0)),
            ("+1e3", json!(1000.0)),
            ("1e400", json!("1e400")),
            (".inf", json!(".inf")),
            (".Inf", json!(".inf")),
            ("-.Inf", json!("-.inf")),
            ("+.inf", json!(".inf")),
            ("inf", json!("inf")),
            ("Infinity", json!("Infinity")),
            (".nan", json!(".nan")),
            (".NaN", json!(".nan")),
            ("NaN", json!("NaN")),
            ("-.nan", json!("-.nan")),
            ("2026-10-03", json!("2026-10-03")),
            ("2026-10-03T21:30", json!("2026-10-03T21:30")),
            ("2026-10-03 21:30:00", json!("2026-10-03 21:30:00")),
            ("12:30", json!("12:30")),
            ("190:20:30", json!("190:20:30")),
            ("1.2.3", json!("1.2.3")),
            ("9223372036854775807", json!(9223372036854775807i64)),
            ("9223372036854775808", json!(9223372036854775808u64)),
            ("18446744073709551615", json!(18446744073709551615u64)),
            ("-9223372036854775808", json!(-9223372036854775808i64)),
            // serde_norway's own Value rejects 65..128-bit integers; here they are f64.
            ("18446744073709551616", json!(big)),
            ("-9223372036854775809", json!(-9223372036854775809f64)),
            ("123456789012345678901234567890123456789012", json!(1.2345678901234568e41)),
            ("+", json!("+")),
            (".", json!(".")),
            ("--1", json!("--1")),
            ("-a", json!("-a")),
            ("Metropolis", json!("Metropolis")),
        ];
        for (scalar, expected) in &table {
            let mut docs = vec![format!("k: {}\n", scalar), format!("k:\n  - {}\n", scalar)];
            if !scalar.contains(',') {
                docs.push(format!("k: [{}]\n", scalar));
            }
            for doc in docs {
                let (slow, slow_plain) = slow_parse(&doc).unwrap_or_else(|e| panic!("{}: {}", doc, e));
                let got = if doc.contains('[') || doc.contains('-') && doc.contains("\n  -") {
                    match &slow["k"] {
                        Value::Array(items) => items[0].clone(),
                        other => panic!("{:?}", other),
                    }
                } else {
                    slow["k"].clone()
                };
                assert_eq!(&got, expected, "serde_norway on {:?}", doc);
                assert!(same(&doc), "fast path should handle {:?}", doc);
                if doc.starts_with("k: ") && !doc.contains('[') {
                    let typed = matches!(expected, Value::Number(_) | Value::Bool(_))
                        || [".inf", ".Inf", "-.Inf", "+.inf", ".nan", ".NaN"].contains(scalar);
                    assert_eq!(slow_plain.get("k").map(String::as_str), typed.then_some(*scalar), "{:?}", doc);
                }
            }
        }
    }

    #[test]
    fn plain_source_text() {
        let text = "---\nisbn: 9780811858022\nold_isbn: 0811858022\nq: \"5\"\ndone: True\nbig: 1e3 # comment\nhex: 0x1A\nt: [1]\nn: null\ns: text\nneg: -5\ninf: .Inf\n---\n";
        let p = parse(text).unwrap();
        let mut expected: HashMap<String, String> = HashMap::new();
        for (k, v) in [
            ("isbn", "9780811858022"),
            ("done", "True"),
            ("big", "1e3"),
            ("hex", "0x1A"),
            ("neg", "-5"),
            ("inf", ".Inf"),
        ] {
            expected.insert(k.into(), v.into());
        }
        assert_eq!(p.plain, expected);
        assert_eq!(p.values["old_isbn"], json!("0811858022"));
        // The same through serde_norway (a `{{date}}` sends the note to the slow path).
        let slow_text = text.replace("s: text", "s: {{date}}");
        assert!(fast_parse(&slow_text[4..slow_text.len() - 4]).is_none());
        let p2 = parse(&slow_text).unwrap();
        assert_eq!(p2.plain, expected);
        assert_eq!(p2.values["s"], json!({"{date}": null}));
    }

    // -- fast path against serde_norway ----------------------------------------------------

    const CORPUS: &[&str] = &[
        "",
        "\n",
        "# only a comment\n",
        "title: Metropolis\nyear: 1927\n",
        "title: Metropolis\r\nyear: 1927\r\ntags:\r\n  - film\r\n  - \"[[Fritz Lang]]\"\r\n",
        "title: \"Der Process\" # original\nauthor: Kafka, Franz\nisbn: 0811858022\nrating: 4 # out of 5\n",
        "tags:\n  - a\n  -\n  - \n  - # c\n  - 'b'\n",
        "tags:\n- a\n- b\nnext: 1\n",
        "tags:\n- a\n# col-0 comment\n- b\n",
        "tags:\n  - a\n    # deeper comment\n  - b\n",
        "tags:\n\n  - a\n\n  - b\n\n",
        "tags: # comment\n  - a\n",
        "tags: []\nempty: \nnull_key: ~\nalso:\n",
        "aliases: [Der Prozess, 'The Trial', \"Le Procès\", 1, 0x10, yes, ~]\n",
        "a: [a, b,]\nb: [ ]\nc: [ a ,b ]\nd: [\"x\" , 'y' ]\n",
        "a: [a, , b]\n",
        "a: [a: b]\n",
        "a: [a:b]\n",
        "a: [-1, -a, ?x]\n",
        "a: [a #c\n]\n",
        "a: [a] trailing\n",
        "a: [a] # comment\n",
        "created: {{date}}\n",
        "created: \"{{date}}\"\n",
        "{{date}}: x\n",
        "title: Metropolis: the movie\n",
        "title: a #b: c\n",
        "title: a#b\ncsharp: C#\nurl: http://x.com/#frag\n",
        "title: a: b\n",
        "title: a:\n",
        "title: a:b\n",
        "title: trailing spaces   \n",
        "title:    many spaces\n",
        "key : value\n",
        "\"quoted key\": 1\n'single key' : 2\n",
        "\"esc\": \"\\t\\x41\\u00e9\\U0001F600\\N\\_\\L\\P\\/\\ \\e\\a\\v\\0\\b\\f\\\\\\\"\"\n",
        "e: \"\\ud83d\"\n",
        "e: \"\\q\"\n",
        "e: \"a\" # c\n",
        "e: \"a\"#c\n",
        "e: 'a'b\n",
        "e: 'it''s'\n",
        "e: ''\nf: \"\"\n",
        "e: \"unterminated\n",
        "e: 'unterminated\n",
        "e: \"multi\n  line\"\n",
        "e: plain\n  continued\n",
        "e: plain\n\n  continued after blank\n",
        "e: a\n  # c\nb: 1\n",
        "e: a # c\n  d\n",
        "e: a\n    # c\n    d\n",
        "e: &x a\nf: *x\n",
        "e: !!str 123\n",
        "e: !custom x\n",
        "e: |\n  block\n  text\n",
        "e: >-\n  folded\n",
        "nested:\n  a: 1\n  b: [x]\n",
        "list_of_maps:\n  - a: 1\n    b: 2\n",
        "nested_list:\n  - - a\n    - b\n",
        "nested_flow:\n  - [a, b]\n",
        "a: 1\na: 2\n",
        "1: one\n2.5: two\ntrue: three\n",
        "null: x\n",
        "a,b: 1\na[b]: 2\n",
        "<<: {a: 1}\nb: 2\n",
        "C#: lang\nit's: fine\n",
        "- a\n- b\n",
        "just a scalar\n",
        "42\n",
        "  indented: 1\n",
        "a: 1\n  b: 2\n",
        "a:\n  - x\n - y\n",
        "a:\n- x\n  - y\n",
        "a: - x\n",
        "a: -\n",
        "a:\tb\n",
        "a: x\tb\n",
        "\ta: 1\n",
        "a: x\ry: z\n",
        "a: \u{feff}x\n",
        "\u{feff}a: x\n",
        "a: x\u{85}y\n",
        "a: x\u{2028}y\n",
        "a: \u{7f}\n",
        "a: é ü 中文 😀\nключ: значение\n",
        "a: x\n...\n",
        "a: x\n... more\n",
        "a: x\n--- b\n",
        "%YAML 1.2\n",
        "a: @x\n",
        "a: `x`\n",
        "a: %x\n",
        "a: ?x\n",
        "a: :x\n",
        "a: a]\nb: a [b] {c}\nc: x,y\n",
        "? complex\n: value\n",
        "a: 1\n\n\n# trailing comment\n",
        "a: 1 # c\nb: 'x' # c\nc: [1] # c\nd: # c\n",
        "a:#x\n",
        "a:x\n",
        ":\n",
        "\"\": empty key\n",
        "a: \"\\x7f\"\n",
        "a: x\n-\n",
        "a:\n  -\n  -\n",
        "a:\n  - -1\n  - .5\n  - 0811858022\n  - \"q\"\n  - 'r'\n  - [x]\n  - x # c\n",
        "a:\n  - k: v\n",
        "a:\n  - x:\n",
        "a:\n  - x: \n",
        "a:\n  b\n",
        "a:\n  # only comment\nb: 1\n",
        "a:\n# only comment\nb: 1\n",
        "a: [a\"b, c'd, a#b, a?b, a&b, a*b, a!b]\n",
        "a: [ a b ]\n",
        "a: [a]#c\n",
        "a: \"a\"  \n",
        "a:   # c\n  - x\n",
        "\"a\"b: c\n",
        "a: [\"a\":b]\n",
        "a: [a, 'b' , \"c\" ,d]\n",
        "a: --- x\nb: ... y\n",
        "a: - \n",
        "a: [-]\n",
        "a: [a, -b, --c, -1.5]\n",
        "a: x:y:z\n",
        "a: 'x' y\n",
        "a: \"\\x7f\\u0085\"\n",
        "a: \"tab\\\tinside\"\n",
    ];

    #[test]
    fn fast_path_equals_serde_norway_on_corpus() {
        let mut handled = 0;
        for doc in CORPUS {
            if same(doc) {
                handled += 1;
            }
            let crlf = doc.replace('\n', "\r\n");
            same(&crlf);
        }
        assert!(handled > 40, "fast path handled only {}", handled);
    }

    #[test]
    fn fast_path_handles_the_common_subset() {
        for doc in [
            "",
            "title: Metropolis\nyear: 1927\n",
            "title: \"Der Process\" # original\nauthor: Kafka, Franz\nisbn: 0811858022\nrating: 4 # out of 5\n",
            "tags:\n  - a\n  -\n  - \n  - # c\n  - 'b'\n",
            "tags:\n- a\n# col-0 comment\n- b\n",
            "aliases: [Der Prozess, 'The Trial', \"Le Procès\", 1, 0x10, yes, ~]\n",
            "a: 1 # c\nb: 'x' # c\nc: [1] # c\nd: # c\n",
            "a: é ü 中文 😀\nключ: значение\n",
            "title: Metropolis\r\nyear: 1927\r\ntags:\r\n  - film\r\n  - \"[[Fritz Lang]]\"\r\n",
            "created: 2026-10-03\ntime: 12:30\ndone: false\nrating: 4.5\nempty:\n",
        ] {
            assert!(same(doc), "fast path should handle {:?}", doc);
        }
    }

    const KEYS: &[&str] = &[
        "title",
        "author",
        "tags",
        "isbn",
        "\"quoted key\"",
        "'single'",
        "date",
        "C#",
        "a,b",
        "1",
        "true",
        "key with spaces",
        "ключ",
        "k:x",
        "~",
        "-dash",
        "x y ",
        "title",
    ];
    const INLINE: &[&str] = &[
        "",
        " ",
        "Metropolis",
        "Fritz Lang: Metropolis",
        "a #comment",
        "a#b",
        "0811858022",
        "9780811858022",
        "1927",
        "-5",
        "3.14",
        "1e3",
        ".inf",
        "-.Inf",
        ".nan",
        "yes",
        "True",
        "null",
        "~",
        "\"quoted \\\"x\\\" \\u00e9\"",
        "'it''s'",
        "\"[[Link|alias]]\"",
        "[[Link]]",
        "[a, b, 'c']",
        "[]",
        "[ 1 , \"2\" ]",
        "{{date}}",
        "\"{{date}}\"",
        "2026-10-03",
        "12:30",
        "http://x.com/#a",
        "a: b",
        "-x",
        "- x",
        "\"unterminated",
        "'a'b",
        "&anchor x",
        "*alias",
        "!tag x",
        "|",
        ">",
        "@x",
        "`x`",
        "%x",
        "😀 emoji",
        "a]",
        "a [b] {c}",
        "x # c",
        "\"a\" # c",
        "\"a\"#c",
        "[a, b] # c",
        "[a,]",
        "[a,,b]",
        "[a: b]",
        "[-1, -a]",
        "''",
        "\"\"",
        "\"\\t\"",
        "\"\\x41\"",
        "\"\\ud800\"",
        "\"\\q\"",
        "a\tb",
        "# comment",
        "x:",
        "x:y",
        "0x1F",
        "0o9",
        "+.5",
        "18446744073709551616",
        "a  b  ",
        "[\"a\", 'b''c', d e]",
        "[a #c]",
        "[a, [b]]",
        "{a: 1}",
        "'multi",
        "?",
        ":",
        "-",
        "1_000",
        "[[a]]",
        "\u{e9}t\u{e9}",
    ];
    const BLOCKS: &[&str] = &[
        "\n  - a\n  - b",
        "\n- a\n-\n- ",
        "\n  - \n  - x # c\n  # comment\n  - 'y'",
        "\n  - a\n    b",
        "\n  - a\n - b",
        "\n  - k: v",
        "\n  - [a, b]",
        "\n  key: nested",
        "\n- 1\n- -2\n- 0811858022",
        "\n\n  - after blank",
        "\n# c0\n  - after comment",
        "\n  - \"q\"\n  - '[[L]]'",
        "\n  - - x",
        "\n  |\n  x",
        "\n   - three\n   - spaces",
    ];
    const EXTRA: &[&str] = &["# comment", "", "   ", "  # indented comment", "...", "- stray", "  stray", "\t", "---x"];

    fn random_doc(rng: &mut Rng) -> String {
        let nl = if rng.below(4) == 0 { "\r\n" } else { "\n" };
        let mut doc = String::new();
        for _ in 0..1 + rng.below(8) {
            match rng.below(10) {
                0 => {
                    doc.push_str(rng.pick(EXTRA));
                    doc.push_str(nl);
                }
                1 | 2 => {
                    doc.push_str(rng.pick(KEYS));
                    doc.push(':');
                    doc.push_str(&rng.pick(BLOCKS).replace('\n', nl));
                    doc.push_str(nl);
                }
                _ => {
                    doc.push_str(rng.pick(KEYS));
                    doc.push(':');
                    let v = rng.pick(INLINE);
                    if !v.is_empty() {
                        doc.push(' ');
                    }
                    doc.push_str(v);
                    doc.push_str(nl);
                }
            }
        }
        doc
    }

    const GOOD_KEYS: &[&str] = &[
        "title",
        "author",
        "tags",
        "\"quoted key\"",
        "'single'",
        "date",
        "C#",
        "key with spaces",
        "ключ",
        "k:x",
        "x y ",
        "\"a: b\"",
        "'1'",
        "\"\"",
        "2026-10-03",
        "a.b",
        "a-b",
        "it's",
        "\"esc\\u00e9\"",
        "key  ",
    ];
    const GOOD_INLINE: &[&str] = &[
        "Metropolis",
        "a #comment",
        "a#b",
        "0811858022",
        "9780811858022",
        "1927",
        "-5",
        "3.14",
        "1e3",
        ".inf",
        "-.Inf",
        ".nan",
        "yes",
        "True",
        "null",
        "~",
        "\"quoted \\\"x\\\" \\u00e9\"",
        "'it''s'",
        "\"[[Link|alias]]\"",
        "[a, b, 'c']",
        "[]",
        "[ 1 , \"2\" ]",
        "2026-10-03",
        "12:30",
        "http://x.com/#a",
        "-x",
        "😀 emoji",
        "a]",
        "a [b] {c}",
        "x # c",
        "\"a\" # c",
        "[a, b] # c",
        "[a,]",
        "[-1, -a]",
        "''",
        "\"\"",
        "\"\\t\"",
        "\"\\x41\"",
        "0x1F",
        "+.5",
        "18446744073709551616",
        "a  b  ",
        "[\"a\", 'b''c', d e]",
        "[a:b, 12:30]",
        "1_000",
        "\u{e9}t\u{e9}",
        "x:y",
        "a,b",
        "[a , b ,]",
        "[ ]",
        "'a # b'",
        "\"a: b\"",
        "[\"a, b\", 'c]']",
        "-1.5e-3",
        "0o17",
        "-0x1A",
        "0b11",
        "+017",
        "-0",
        "~x",
        "nUll",
        "FALSE",
        "# only comment",
        "\"\\U0001F600\\N\\_\"",
        "a'b\"c",
        "[[L]]x",
        "x [[L]]",
        "[1, [2]]",
        "a:b:c",
        "a - b",
        "-.5",
        "+",
        ".",
    ];
    const GOOD_BLOCKS: &[&str] = &[
        "\n  - a\n  - b",
        "\n- a\n-\n- ",
        "\n  - \n  - x # c\n  # comment\n  - 'y'",
        "\n- 1\n- -2\n- 0811858022",
        "\n\n  - after blank",
        "\n# c0\n  - after comment",
        "\n  - \"q\"\n  - '[[L]]'",
        "\n   - three\n   - spaces",
        "\n  - [a, b]",
        "\n  - [a, b] # c",
        " # c\n  - x",
        "\n  - yes\n  - 1e3\n  - .inf\n  - ~",
        "",
    ];

    fn random_good_doc(rng: &mut Rng) -> String {
        let nl = if rng.below(4) == 0 { "\r\n" } else { "\n" };
        let mut doc = String::new();
        for _ in 0..1 + rng.below(8) {
            match rng.below(10) {
                0 => doc.push_str(rng.pick(&["# comment", "", "   ", "  # indented comment"])),
                1 | 2 => {
                    doc.push_str(rng.pick(GOOD_KEYS));
                    doc.push(':');
                    doc.push_str(&rng.pick(GOOD_BLOCKS).replace('\n', nl));
                }
                _ => {
                    doc.push_str(rng.pick(GOOD_KEYS));
                    doc.push_str(": ");
                    doc.push_str(rng.pick(GOOD_INLINE));
                }
            }
            doc.push_str(nl);
        }
        doc
    }

    #[test]
    fn fast_path_equals_serde_norway_on_random_common_documents() {
        let mut rng = Rng(0xdeadbeef);
        let (mut handled, total) = (0, 20000);
        for _ in 0..total {
            if same(&random_good_doc(&mut rng)) {
                handled += 1;
            }
        }
        eprintln!("STATS fast path handled {} of {} common documents", handled, total);
        assert!(handled > total / 3, "fast path handled {} of {}", handled, total);
    }

    #[test]
    fn fast_path_equals_serde_norway_on_random_documents() {
        let mut rng = Rng(0x9e3779b97f4a7c15);
        let (mut handled, mut total) = (0, 0);
        for _ in 0..20000 {
            let doc = random_doc(&mut rng);
            total += 1;
            if same(&doc) {
                handled += 1;
            }
        }
        eprintln!("STATS fast path handled {} of {}", handled, total);
        assert!(handled > total / 20, "fast path handled {} of {}", handled, total);
    }

    // -- errors ------------------------------------------------------------------------------

    #[test]
    fn parse_errors_have_line_and_column() {
        let e = parse("---\nyear: 1927\nauthor: Fritz Lang\ntitle: Metropolis: the movie\n---\nbody\n").unwrap_err();
        assert_eq!(e, "mapping values are not allowed in this context at line 3 column 18");
        let e = parse("---\na: 1\nb: \"unterminated\nc: 2\n---\n").unwrap_err();
        assert!(e.contains("while scanning a quoted scalar at line 2 column 4"), "{}", e);
        let e = parse("---\na: 1\na: 2\n---\n").unwrap_err();
        assert!(e.contains("duplicate entry with key \"a\""), "{}", e);
        let e = parse("---\n\ttitle: x\n---\n").unwrap_err();
        assert!(e.contains("line 1 column 1"), "{}", e);
        let e = parse("---\n- a\n- b\n---\n").unwrap_err();
        assert!(e.contains("list"), "{}", e);
        let e = parse("---\njust text\n---\n").unwrap_err();
        assert!(e.contains("not a mapping"), "{}", e);
        let e = parse("---\nx: *nothing\n---\n").unwrap_err();
        assert!(e.contains("line 1 column 4"), "{}", e);
        let e = parse("---\nx: [a, b\n---\n").unwrap_err();
        assert!(e.contains("line 2 column 1"), "{}", e);
    }

    #[test]
    fn garbage_never_panics_and_edits_keep_the_body() {
        let alphabet: Vec<&str> = vec![
            "-", ":", " ", "#", "'", "\"", "[", "]", "{", "}", "\n", "\r\n", "\r", "\t", "|", ">", "!", "&", "*", "?",
            ",", ".", "0", "a", "é", "😀", "\u{85}", "\\", "---\n", "- ", ": ", "key: ", "\n  ", "%", "@", "`", "~",
            "\u{feff}", "\u{0}", "{{date}}", "\"\\u", "1e3",
        ];
        // Deep nesting and long lines end in errors, not crashes.
        for text in [
            format!("---\na: {}{}\n---\n", "[".repeat(5000), "]".repeat(5000)),
            format!("---\na: {}\n---\n", "{a: ".repeat(3000)),
            format!("---\n{}\n---\n", "- ".repeat(3000)),
            format!("---\na: {}\n---\n", "x".repeat(1 << 20)),
            format!("---\n{}: x\n---\n", "k".repeat(5000)),
            "---\na: &a [*a]\n---\n".to_string(),
            "---\na: &a x\nb: [*a, *a, *a]\n---\n".to_string(),
        ] {
            let _ = parse(&text);
            let _ = edit(&text, &[("a", &json!(1))], &[]);
        }
        let mut rng = Rng(12345);
        let v = json!("new value");
        for _ in 0..20000 {
            let mut fm = String::new();
            for _ in 0..rng.below(40) {
                fm.push_str(rng.pick(&alphabet));
            }
            let body = "body\n---\nmore: body\n";
            for text in [format!("---\n{}\n---\n{}", fm, body), fm.clone(), format!("---\n{}", fm)] {
                let _ = parse(&text);
                let edited = edit(&text, &[("key", &v), ("other", &json!(["x", 1]))], &["a", "0"]);
                let _ = parse(&edited);
                // The body is never touched: after the (possibly new) front matter comes the
                // old body, or the whole old text when there was no front matter (a BOM
                // moves before the new block).
                let body_before =
                    locate(&text).map_or(text.strip_prefix(BOM).unwrap_or(&text), |b| &text[b.body_start..]);
                let b = locate(&edited).expect("edit leaves a front matter block");
                assert_eq!(&edited[b.body_start..], body_before, "{:?} -> {:?}", text, edited);
                let removed = edit(&text, &[], &["key", "a"]);
                if let Some(b) = locate(&text) {
                    let b2 = locate(&removed).unwrap();
                    assert_eq!(&removed[b2.body_start..], &text[b.body_start..]);
                } else {
                    assert_eq!(removed, text);
                }
                let _ = set_body(&text, "new body");
            }
        }
    }

    // -- edit: byte for byte ---------------------------------------------------------------

    const NOTE: &str = concat!(
        "---\n",
        "# Book note\n",
        "title: \"Der Process\" # original title\n",
        "author: Kafka, Franz\n",
        "isbn: 0811858022\n",
        "rating: 4 # out of 5\n",
        "tags:\n",
        "  - novel\n",
        "  -\n",
        "  # - removed\n",
        "  - \"[[Prague]]\"\n",
        "\n",
        "created: {{date}}\n",
        "empty:\n",
        "aliases: [Der Prozess, 'The Trial']\n",
        "---\n",
        "Body line\n",
        "---\n",
        "title: not front matter\n",
    );

    #[test]
    fn edit_changes_one_line_only() {
        let out = edit(NOTE, &[("rating", &json!(5))], &[]);
        assert_eq!(out, NOTE.replace("rating: 4 # out of 5", "rating: 5 # out of 5"));
        assert_eq!(values(&out)["rating"], json!(5));

        let out = edit(NOTE, &[("author", &json!("Franz Kafka"))], &[]);
        assert_eq!(out, NOTE.replace("author: Kafka, Franz", "author: Franz Kafka"));

        let out = edit(NOTE, &[("title", &json!("The Trial: a novel"))], &[]);
        assert_eq!(
            out,
            NOTE.replace("title: \"Der Process\" # original title", "title: \"The Trial: a novel\" # original title")
        );
        assert_eq!(values(&out)["title"], json!("The Trial: a novel"));
    }

    #[test]
    fn edit_no_op_keeps_bytes() {
        // Equal values (as parsed) leave the bytes alone, quoting and comments included.
        assert_eq!(edit(NOTE, &[("title", &json!("Der Process"))], &[]), NOTE);
        assert_eq!(edit(NOTE, &[("isbn", &json!("0811858022"))], &[]), NOTE);
        assert_eq!(edit(NOTE, &[("tags", &json!(["novel", null, "[[Prague]]"]))], &[]), NOTE);
        // `empty:` is null already: setting null leaves its bytes.
        assert_eq!(edit(NOTE, &[("empty", &json!(null))], &[]), NOTE);
        assert_eq!(edit(NOTE, &[("aliases", &json!(["Der Prozess", "The Trial"]))], &[]), NOTE);
        assert_eq!(edit(NOTE, &[], &["missing"]), NOTE);
        assert_eq!(edit(NOTE, &[], &[]), NOTE);
        let no_fm = "just a body\n";
        assert_eq!(edit(no_fm, &[], &["y"]), no_fm);
        assert_eq!(edit(no_fm, &[("x", &Value::Null)], &[]), "---\nx:\n---\njust a body\n");
    }

    #[test]
    fn edit_replaces_and_removes_lists() {
        let out = edit(NOTE, &[("tags", &json!(["a", "[[B]]"]))], &[]);
        assert_eq!(
            out,
            NOTE.replace("tags:\n  - novel\n  -\n  # - removed\n  - \"[[Prague]]\"\n", "tags:\n  - a\n  - \"[[B]]\"\n")
        );
        let out = edit(NOTE, &[], &["tags"]);
        assert_eq!(out, NOTE.replace("tags:\n  - novel\n  -\n  # - removed\n  - \"[[Prague]]\"\n", ""));
        // Null empties a key; remove takes it out.
        let out = edit(NOTE, &[("tags", &Value::Null)], &["created", "aliases"]);
        let expected = NOTE
            .replace("tags:\n  - novel\n  -\n  # - removed\n  - \"[[Prague]]\"\n", "tags:\n")
            .replace("created: {{date}}\n", "")
            .replace("aliases: [Der Prozess, 'The Trial']\n", "");
        assert_eq!(out, expected);
        // Column-0 list items, and a column-0 comment after the list stays.
        let text = "---\na: 1\ntags:\n- x\n- y\n# about b\nb: 2\n---\n";
        assert_eq!(edit(text, &[], &["tags"]), "---\na: 1\n# about b\nb: 2\n---\n");
        assert_eq!(edit(text, &[("tags", &json!("one"))], &[]), "---\na: 1\ntags: one\n# about b\nb: 2\n---\n");
        assert_eq!(edit(text, &[("a", &json!([]))], &[]), "---\na: []\ntags:\n- x\n- y\n# about b\nb: 2\n---\n");
        // Scalar -> list keeps the comment on the key line.
        let text = "---\ntags: [a, b] # my tags\n---\n";
        assert_eq!(edit(text, &[("tags", &json!(["a", "c"]))], &[]), "---\ntags: # my tags\n  - a\n  - c\n---\n");
        // Block scalars and nested mappings are continuation lines.
        let text = "---\nabstract: |\n  line one\n\n  line two\nmeta:\n  a: 1\n  b:\n    - x\nlast: z\n---\n";
        assert_eq!(edit(text, &[], &["abstract", "meta"]), "---\nlast: z\n---\n");
        assert_eq!(
            edit(text, &[("meta", &json!({"k": "v"}))], &[]),
            "---\nabstract: |\n  line one\n\n  line two\nmeta:\n  k: v\nlast: z\n---\n"
        );
    }

    #[test]
    fn edit_appends_new_keys() {
        let out = edit(NOTE, &[("year", &json!(1925)), ("read", &json!(true))], &[]);
        assert_eq!(
            out,
            NOTE.replace(
                "aliases: [Der Prozess, 'The Trial']\n---\n",
                "aliases: [Der Prozess, 'The Trial']\nyear: 1925\nread: true\n---\n"
            )
        );
        let text = "---\na: 1\n# trailing comment\n\n---\nbody";
        assert_eq!(edit(text, &[("b", &json!("x y"))], &[]), "---\na: 1\n# trailing comment\n\nb: x y\n---\nbody");
        // Keys that need quoting.
        let out = edit("---\n---\n", &[("key: with colon", &json!(1)), ("1927", &json!("x"))], &[]);
        assert_eq!(out, "---\n\"key: with colon\": 1\n\"1927\": x\n---\n");
        assert_eq!(values(&out)["key: with colon"], json!(1));
        assert_eq!(values(&out)["1927"], json!("x"));
    }

    #[test]
    fn edit_keeps_ugly_front_matter() {
        // Not valid YAML (unquoted ": "): edits still work on the lines.
        let text = "---\ntitle: Metropolis: the movie\nyear: 1926\nisbn: 0811858022\n---\nBody\n";
        assert!(parse(text).is_err());
        let out = edit(text, &[("year", &json!(1927))], &[]);
        assert_eq!(out, "---\ntitle: Metropolis: the movie\nyear: 1927\nisbn: 0811858022\n---\nBody\n");
        let out = edit(text, &[("title", &json!("Metropolis: the movie"))], &[]);
        assert_eq!(out, "---\ntitle: \"Metropolis: the movie\"\nyear: 1926\nisbn: 0811858022\n---\nBody\n");
        assert_eq!(values(&out)["title"], json!("Metropolis: the movie"));
        assert_eq!(values(&out)["isbn"], json!("0811858022"));
        // Duplicated keys: the first entry is replaced, the others removed.
        let text = "---\na: 1\nb: 2\na: 3\n---\n";
        assert_eq!(edit(text, &[("a", &json!(4))], &[]), "---\na: 4\nb: 2\n---\n");
        // Empty list items and placeholders survive.
        let text = "---\ncreated: {{date}}\ntags:\n- \n-\nstatus: draft\n---\n";
        assert_eq!(
            edit(text, &[("status", &json!("done"))], &[]),
            "---\ncreated: {{date}}\ntags:\n- \n-\nstatus: done\n---\n"
        );
    }

    #[test]
    fn edit_multi_line_constructs() {
        // A quoted scalar continued at column 0 with a key-like line.
        let text = "---\na: 'x\ny: z'\nb: 1\n---\n";
        assert_eq!(values(text)["a"], json!("x y: z"));
        assert_eq!(edit(text, &[("a", &json!("new"))], &[]), "---\na: new\nb: 1\n---\n");
        assert_eq!(edit(text, &[("b", &json!(2))], &[]), "---\na: 'x\ny: z'\nb: 2\n---\n");
        assert_eq!(edit(text, &[], &["a"]), "---\nb: 1\n---\n");
        let text = "---\ntags: [a,\nb]\nc: 2\n---\n";
        assert_eq!(edit(text, &[], &["tags"]), "---\nc: 2\n---\n");
        // When the lines mislead (the continuation names a real key), the values still come
        // out right: the front matter is written anew.
        let text = "---\na: 'x\nb: z'\nb: 1\n---\nbody\n";
        let out = edit(text, &[("b", &json!(2))], &[]);
        assert_eq!(out, "---\na: \"x b: z\"\nb: 2\n---\nbody\n");
        assert_eq!(values(&out)["a"], json!("x b: z"));
        // Keys are named as the parser names them.
        let text = "---\n0x1A: x\n~: y\nk: z\n---\n";
        assert_eq!(edit(text, &[("26", &json!("w"))], &["null"]), "---\n0x1A: w\nk: z\n---\n");
        // In front matter that does not parse, unknown column-0 lines are kept.
        let text = "---\ntitle: x\nurl:http://example.com\ntitle: y\n---\n";
        assert_eq!(edit(text, &[], &["title"]), "---\nurl:http://example.com\n---\n");
        // A document end marker stays the end.
        let text = "---\na: 1\n...\n---\n";
        assert_eq!(edit(text, &[("b", &json!(2))], &[]), "---\na: 1\nb: 2\n...\n---\n");
        // (`...` alone does not parse: the front matter is written anew, empty.)
        assert!(parse("---\n...\n---\n").is_err());
        assert_eq!(edit(text, &[], &["a"]), "---\n---\n");
    }

    #[test]
    fn edit_crlf_and_line_endings() {
        let text = "---\r\ntitle: A # c\r\ntags:\r\n  - x\r\nyear: 1\r\n---\r\nBody\r\n";
        let out = edit(text, &[("title", &json!("B")), ("tags", &json!(["w", "z"])), ("new", &json!(2))], &[]);
        assert_eq!(out, "---\r\ntitle: B # c\r\ntags:\r\n  - w\r\n  - z\r\nyear: 1\r\nnew: 2\r\n---\r\nBody\r\n");
        let v = values(&out);
        assert_eq!(v["tags"], json!(["w", "z"]));
        // No trailing newline anywhere.
        let text = "---\na: 1\n---";
        assert_eq!(edit(text, &[("b", &json!(2))], &[]), "---\na: 1\nb: 2\n---");
        let text = "---\na: 1\n---\nbody without newline";
        assert_eq!(edit(text, &[("a", &json!(2))], &[]), "---\na: 2\n---\nbody without newline");
        // No front matter: one is created, in the note's line ending style.
        assert_eq!(edit("Hello\n", &[("k", &json!("v"))], &[]), "---\nk: v\n---\nHello\n");
        assert_eq!(edit("Hello\r\nWorld", &[("k", &json!(1))], &["x"]), "---\r\nk: 1\r\n---\r\nHello\r\nWorld");
        assert_eq!(edit("", &[("k", &json!([1]))], &[]), "---\nk:\n  - 1\n---\n");
        // Not closed: not front matter, a new block goes on top.
        assert_eq!(edit("---\na: 1\n", &[("k", &json!(1))], &[]), "---\nk: 1\n---\n---\na: 1\n");
        // Empty front matter.
        assert_eq!(edit("---\n---\nbody", &[("k", &json!("v"))], &[]), "---\nk: v\n---\nbody");
        assert_eq!(edit("---\r\n---\r\nbody", &[("k", &json!("v"))], &[]), "---\r\nk: v\r\n---\r\nbody");
        // A body with `---` lines and key-like lines is never touched.
        let text = "---\na: 1\n---\n---\na: 2\n---\n";
        assert_eq!(edit(text, &[("a", &json!(3))], &["b"]), "---\na: 3\n---\n---\na: 2\n---\n");
        assert_eq!(edit(text, &[], &["a"]), "---\n---\n---\na: 2\n---\n");
    }

    #[test]
    fn edit_round_trips_values() {
        let strings = [
            "",
            " lead",
            "trail ",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "C:\\path\\",
            "unicode é ü 😀 中文",
            "Fritz Lang: Metropolis",
            "a # b",
            "#tag",
            "-dash",
            "- item",
            "yes",
            "No",
            "ON",
            "off",
            "y",
            "0123",
            "0811858022",
            "2026-10-03",
            "2026-10-03 21:30",
            "12:30",
            "[[Link|alias]]",
            "[[Link]]",
            "{{date}}",
            "null",
            "Null",
            "~",
            "true",
            "1e3",
            ".inf",
            ".nan",
            "0x1A",
            "1_000",
            "1.2.3",
            "+1",
            "multi\nline",
            "tab\there",
            "cr\r\nlf",
            "\u{85}nel",
            "\u{2028}",
            "\u{feff}bom",
            "\u{7f}",
            "\u{0}",
            "\u{1b}[0m",
            "\u{fffe}",
            "trailing colon:",
            "a:b",
            "http://x.com/#frag",
            "100%",
            "@at",
            "`tick`",
            "!bang",
            "&amp",
            "*star",
            "|pipe",
            ">gt",
            "?q",
            ":colon",
            ",comma",
            "]",
            "}",
            "'",
            "\"",
            "...",
            "---",
            "--- x",
            "=",
            "<<",
            "a  b",
            "  ",
            "\t",
            "x\u{a0}",
            "\u{a0}x",
            "a, b",
            "[not a list]",
            "{not: map}",
            "1927",
            "-5",
            "3.14",
            "Metropolis",
            "x #",
            "x#",
            "#",
            "a ' b",
            "\\",
            "\\n",
            "😀",
        ];
        let base = "---\ntitle: old\nkeep: 'quoted' # c\n---\nbody\n";
        for s in strings {
            let v = json!(s);
            for key in ["title", "fresh"] {
                let out = edit(base, &[(key, &v)], &[]);
                let p = parse(&out).unwrap_or_else(|e| panic!("{:?}: {} in {:?}", s, e, out));
                assert_eq!(p.values[key], v, "{:?} -> {:?}", s, out);
                assert_eq!(p.values["keep"], json!("quoted"));
                assert!(out.contains("keep: 'quoted' # c\n"));
                assert!(out.ends_with("---\nbody\n"));
                // Same answer from both parsers.
                let fm = &out[4..p.body_start - 4];
                same(fm);
                // Inside lists and as keys too.
                let out = edit(base, &[("list", &json!([s, s]))], &[]);
                assert_eq!(values(&out)["list"], json!([s, s]), "{:?}", out);
                if !s.is_empty() {
                    let out = edit(base, &[(s, &json!(1))], &[]);
                    assert_eq!(values(&out)[s], json!(1), "{:?}", out);
                    // And the key is found again for edits.
                    let out2 = edit(&out, &[(s, &json!(2))], &[]);
                    assert_eq!(out2, out.replace(": 1\n---", ": 2\n---"), "{:?}", s);
                    assert_eq!(edit(&out, &[], &[s]), base);
                }
            }
        }
        let others = [
            json!(1927),
            json!(-42),
            json!(18446744073709551615u64),
            json!(1.5),
            json!(1e300),
            json!(-0.001),
            json!(1.0),
            json!(true),
            json!(false),
            json!([]),
            json!({}),
            json!(["a", "[[B]]", 1, true, null, 2.5]),
            json!([["nested", "list"], [], {"k": "v", "n": [1, 2]}, {}]),
            json!({"a": 1, "b": [1, "two"], "c": {}, "d": {"e": null}, "key: colon": "v: w"}),
        ];
        for v in &others {
            let out = edit(base, &[("title", v), ("new", v)], &[]);
            let p = values(&out);
            assert_eq!(&p["title"], v, "{}", out);
            assert_eq!(&p["new"], v, "{}", out);
            assert_eq!(edit(&out, &[("title", v), ("new", v)], &[]), out, "no-op on {}", out);
        }
    }

    #[test]
    fn edit_round_trips_on_random_documents() {
        // On random front matters that parse, setting a key gives that value and keeps the others.
        let mut rng = Rng(77);
        let new_values = [json!("x: y"), json!(["a", "b"]), json!(5), json!({"k": [1]}), json!("")];
        let mut checked = 0;
        for _ in 0..5000 {
            let doc = random_doc(&mut rng);
            let text = format!("---\n{}---\nbody\n", doc);
            let Ok(before) = parse(&text) else { continue };
            let v = new_values[rng.below(new_values.len())].clone();
            let key = rng.pick(&["title", "tags", "new key", "author", "-dash"]);
            let out = edit(&text, &[(key, &v)], &[]);
            let after = parse(&out).unwrap_or_else(|e| panic!("{} in {:?} from {:?}", e, out, text));
            assert_eq!(after.values.get(key), Some(&v), "{:?}", out);
            for (k, old) in &before.values {
                if k != key {
                    assert_eq!(after.values.get(k), Some(old), "{:?} -> {:?}", text, out);
                }
            }
            let removed = edit(&text, &[], &[key]);
            let after = parse(&removed).unwrap_or_else(|e| panic!("{} in {:?}", e, removed));
            assert!(!after.values.contains_key(key), "{:?}", removed);
            assert_eq!(after.values.len(), before.values.len() - before.values.contains_key(key) as usize);
            checked += 1;
        }
        eprintln!("STATS edit checked {}", checked);
        assert!(checked > 500, "{}", checked);
    }

    // -- set_body, render, yaml_value ------------------------------------------------------

    #[test]
    fn set_body_keeps_front_matter() {
        assert_eq!(set_body("---\na: 1 # c\n---\nold\n", "new\n"), "---\na: 1 # c\n---\nnew\n");
        assert_eq!(set_body("---\r\na: 1\r\n---\r\nold", "new"), "---\r\na: 1\r\n---\r\nnew");
        assert_eq!(set_body("---\na: 1\n---", "new"), "---\na: 1\n---\nnew");
        assert_eq!(set_body("---\na: 1\n---", ""), "---\na: 1\n---");
        assert_eq!(set_body("no front matter", "new"), "new");
        assert_eq!(set_body("---\n---\n---\nx\n", "y"), "---\n---\ny");
    }

    #[test]
    fn render_new_note() {
        let out = render(
            &[
                ("title", &json!("Metropolis")),
                ("year", &json!(1927)),
                ("tags", &json!(["film", "[[Fritz Lang]]"])),
                ("empty", &json!(null)),
                ("seen", &json!(false)),
            ],
            "# Metropolis\n",
        );
        assert_eq!(out, "---\ntitle: Metropolis\nyear: 1927\ntags:\n  - film\n  - \"[[Fritz Lang]]\"\nempty:\nseen: false\n---\n# Metropolis\n");
        let p = parse(&out).unwrap();
        assert_eq!(p.values["tags"], json!(["film", "[[Fritz Lang]]"]));
        assert_eq!(p.values["empty"], json!(null));
        assert_eq!(&out[p.body_start..], "# Metropolis\n");
        assert_eq!(render(&[], "x"), "---\n---\nx");
    }

    #[test]
    fn rename_key_keeps_place_and_bytes() {
        let t = "---\ntitle: M # the film\nyear: 1931\ntags:\n  - a\n---\nbody\n";
        assert_eq!(
            rename_key(t, "year", "released"),
            "---\ntitle: M # the film\nreleased: 1931\ntags:\n  - a\n---\nbody\n"
        );
        assert_eq!(
            rename_key(t, "tags", "labels"),
            "---\ntitle: M # the film\nyear: 1931\nlabels:\n  - a\n---\nbody\n"
        );
        assert_eq!(rename_key(t, "missing", "x"), t);
        let q = "---\n\"year\": 1931\n---\n";
        assert_eq!(parse(&rename_key(q, "year", "released")).unwrap().values["released"], json!(1931));
    }

    #[test]
    fn yaml_value_format() {
        assert_eq!(yaml_value(&json!(1927), "\n"), " 1927");
        assert_eq!(yaml_value(&json!(true), "\n"), " true");
        assert_eq!(yaml_value(&json!(2.5), "\n"), " 2.5");
        assert_eq!(yaml_value(&json!(null), "\n"), "");
        assert_eq!(yaml_value(&json!("Metropolis"), "\n"), " Metropolis");
        assert_eq!(yaml_value(&json!("[[Charade]]"), "\n"), " \"[[Charade]]\"");
        assert_eq!(yaml_value(&json!(["a", "[[B]]"]), "\n"), "\n  - a\n  - \"[[B]]\"");
        assert_eq!(yaml_value(&json!(["a"]), "\r\n"), "\r\n  - a");
        assert_eq!(yaml_value(&json!([]), "\n"), " []");
        assert_eq!(yaml_value(&json!({}), "\n"), " {}");
        assert_eq!(yaml_value(&json!({"a": 1, "b": ["x"]}), "\n"), "\n  a: 1\n  b:\n    - x");
        assert_eq!(yaml_value(&json!([["x"], {"k": "v"}]), "\n"), "\n  -\n    - x\n  -\n    k: v");
        for (s, quoted) in [
            ("", true),
            (" a", true),
            ("a ", true),
            ("-a", true),
            ("?", true),
            (":a", true),
            (",", true),
            ("[x", true),
            ("]", true),
            ("{", true),
            ("}", true),
            ("#a", true),
            ("&a", true),
            ("*a", true),
            ("!a", true),
            ("|", true),
            (">", true),
            ("'a", true),
            ("\"a", true),
            ("%a", true),
            ("@a", true),
            ("`a", true),
            ("a: b", true),
            ("a #b", true),
            ("a\nb", true),
            ("a\tb", true),
            ("1927", true),
            ("0123", true),
            ("1e3", true),
            ("1_000", true),
            ("yes", true),
            ("No", true),
            ("ON", true),
            ("off", true),
            ("NULL", true),
            ("~", true),
            ("True", true),
            ("2026-10-03", false),
            ("2026-10-03 21:30", false),
            ("2026-10-03T21:30", false),
            ("01a0c048-93f7-79de-9f1d-c81e4d4d5404", false),
            ("2026-13-03", true),
            ("12:30", true),
            ("x [[L]]", true),
            ("a:", true),
            (".inf", true),
            ("-.5", true),
            ("Metropolis", false),
            ("a:b", false),
            ("a#b", false),
            ("it's", false),
            ("Fritz Lang", false),
            ("v1.0", false),
            ("3 apples", false),
            ("é", false),
            ("a, b", false),
            ("a-b", false),
        ] {
            let got = yaml_value(&json!(s), "\n");
            assert_eq!(got.starts_with(" \""), quoted, "{:?} -> {:?}", s, got);
        }
        assert_eq!(yaml_value(&json!("a\"b\\c\nd\u{7f}\u{2028}"), "\n"), " \"a\\\"b\\\\c\\nd\\u007F\\u2028\"");
    }
}
