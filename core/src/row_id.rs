//! A row's id, as its front matter names it. The engine's own ids are UUIDs
//! (lower-case, hyphenated: 36 characters), kept here as their 16 bytes: as a
//! string of its own each took 40 bytes more of every row (100k rows: 4 MB
//! natively, a tenth of what their notes weigh). Any other id (typed by a
//! person, an upper-case UUID) is kept as written.

use crate::texthash::HEX;
use serde::{Serialize, Serializer};
use std::fmt;
use std::ops::Deref;

#[derive(Clone, PartialEq, Eq, Hash)]
pub enum RowId {
    /// A UUID in its canonical form: its text is exactly `IdStr::Uuid`'s.
    Uuid([u8; 16]),
    Text(Box<str>),
}

/// A row id's text: made from its bytes for a UUID, borrowed otherwise.
pub enum IdStr<'a> {
    Uuid([u8; 36]),
    Text(&'a str),
}

/// Where the hyphens of a UUID's canonical text are.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];

impl RowId {
    pub fn new(text: &str) -> RowId {
        match uuid_bytes(text) {
            Some(b) => RowId::Uuid(b),
            None => RowId::Text(text.into()),
        }
    }

    pub fn as_str(&self) -> IdStr<'_> {
        match self {
            RowId::Uuid(b) => {
                let mut out = [b'-'; 36];
                let digits = (0..36).filter(|i| !HYPHENS.contains(i));
                for (i, n) in digits.zip(b.iter().flat_map(|byte| [byte >> 4, byte & 15])) {
                    out[i] = HEX[usize::from(n)];
                }
                IdStr::Uuid(out)
            }
            RowId::Text(t) => IdStr::Text(t),
        }
    }

    /// The length of its text in bytes.
    pub fn len(&self) -> usize {
        match self {
            RowId::Uuid(_) => 36,
            RowId::Text(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The 16 bytes of a UUID written as the engine writes them (lower-case hex,
/// hyphens at their places); None for any other text, which stays as written.
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let t = text.as_bytes();
    if t.len() != 36 || HYPHENS.iter().any(|&h| t[h] != b'-') {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut digits = t.iter().enumerate().filter(|(i, _)| !HYPHENS.contains(i)).map(|(_, &c)| nibble(c));
    let mut out = [0u8; 16];
    for byte in &mut out {
        *byte = (digits.next()?? << 4) | digits.next()??;
    }
    Some(out)
}

impl Deref for IdStr<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            // Only hex digits and hyphens: ASCII.
            IdStr::Uuid(b) => std::str::from_utf8(b).unwrap_or_default(),
            IdStr::Text(t) => t,
        }
    }
}

impl From<&str> for RowId {
    fn from(text: &str) -> RowId {
        RowId::new(text)
    }
}

impl From<String> for RowId {
    fn from(text: String) -> RowId {
        match uuid_bytes(&text) {
            Some(b) => RowId::Uuid(b),
            None => RowId::Text(text.into_boxed_str()),
        }
    }
}

impl fmt::Display for RowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl fmt::Debug for RowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_str(), f)
    }
}

impl Serialize for RowId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_canonical_uuid_is_kept_as_its_bytes_and_any_other_id_as_written() {
        let id = "01a0c049-0000-7000-9000-00000000002a";
        let r = RowId::new(id);
        assert!(matches!(r, RowId::Uuid(_)), "{r:?}");
        assert_eq!(&*r.as_str(), id);
        assert_eq!(r.len(), 36);
        assert_eq!(RowId::from(id.to_string()), r);
        assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{id}\""));
        assert_eq!(format!("{r} {r:?}"), format!("{id} \"{id}\""));
        // Kept byte for byte: upper case, no hyphens, braces, a hyphen out of
        // place, a non-hex digit, one character more or less, a person's id.
        for other in [
            "01A0C049-0000-7000-9000-00000000002A",
            "01a0c04900007000900000000000002a",
            "{01a0c049-0000-7000-9000-00000000002a}",
            "01a0c0490-000-7000-9000-00000000002a",
            "01a0c049-0000-7000-9000-00000000002g",
            "01a0c049-0000-7000-9000-00000000002",
            "01a0c049-0000-7000-9000-00000000002aa",
            "ISBN 0811858022",
            "",
            "é0a0c049-0000-7000-9000-00000000002",
        ] {
            let r = RowId::new(other);
            assert!(matches!(r, RowId::Text(_)), "{other}");
            assert_eq!(&*r.as_str(), other);
            assert_eq!(r.len(), other.len());
        }
        // Every byte's two digits come back in place.
        let all = "00112233-4455-6677-8899-aabbccddeeff";
        assert_eq!(&*RowId::new(all).as_str(), all);
        assert_ne!(RowId::new(all), RowId::new("00112233-4455-6677-8899-aabbccddeefe"));
    }
}
