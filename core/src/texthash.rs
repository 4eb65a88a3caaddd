//! A note's SHA-256 as the index keeps it: its 32 bytes. As a hex `String` it
//! took about 90 bytes a note with its heap block (9 MB at 100k notes, and an
//! allocation each at every open); the store's files and the answers still
//! name it in 64 hex digits (`hex`, `Display`).

use sha2::{Digest, Sha256};
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TextHash([u8; 32]);

/// The lower-case hex digits, by value (also `row_id`'s).
pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";
/// A byte's value as a hex digit, or `NOT_HEX`.
const NOT_HEX: u8 = 0x80;
static DIGIT: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

impl TextHash {
    pub fn of(text: &str) -> TextHash {
        TextHash(Sha256::digest(text.as_bytes()).into())
    }

    /// The hash of 64 hex digits (either case); None for anything else. A
    /// reopen reads 100k of them twice (the notes' cache, what the device
    /// knew): a table and no branch per digit.
    pub fn from_hex(hex: &str) -> Option<TextHash> {
        let hex: &[u8; 64] = hex.as_bytes().try_into().ok()?;
        let mut out = [0u8; 32];
        let mut bad = 0u8;
        for (b, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
            let (hi, lo) = (DIGIT[pair[0] as usize], DIGIT[pair[1] as usize]);
            bad |= hi | lo;
            *b = hi << 4 | (lo & 15);
        }
        (bad & NOT_HEX == 0).then_some(TextHash(out))
    }

    /// Its 64 lower-case hex digits, on the stack.
    pub fn hex(&self) -> Hex {
        let mut out = [0u8; 64];
        for (pair, b) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = HEX[(b >> 4) as usize];
            pair[1] = HEX[(b & 15) as usize];
        }
        Hex(out)
    }
}

/// A hash's hex digits, used as a `&str` without a heap block.
#[derive(Clone, Copy)]
pub struct Hex([u8; 64]);

impl std::ops::Deref for Hex {
    type Target = str;
    fn deref(&self) -> &str {
        // Only hex digits are ever written into it.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for TextHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for TextHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// Compared with a hash the store or a caller wrote in hex: equal when the
/// text names these digits (lower case, as the engine writes them).
impl PartialEq<str> for TextHash {
    fn eq(&self, other: &str) -> bool {
        *self.hex() == *other
    }
}

impl PartialEq<String> for TextHash {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl PartialEq<TextHash> for String {
    fn eq(&self, other: &TextHash) -> bool {
        *other == **self
    }
}

impl PartialEq<TextHash> for str {
    fn eq(&self, other: &TextHash) -> bool {
        *other == *self
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_hash_is_written_in_hex_and_read_back_from_it() {
        let h = TextHash::of("abc");
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(&*h.hex(), hex);
        assert_eq!(h.to_string(), hex);
        assert_eq!(TextHash::from_hex(hex), Some(h));
        assert_eq!(TextHash::from_hex(&hex.to_uppercase()), Some(h));
        let owned: String = hex.into();
        assert_eq!(h, *hex);
        assert_eq!(*hex, h);
        assert_eq!(h, owned);
        assert_eq!(owned, h);
        assert!(h != *"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
        for bad in ["", &hex[1..], &format!("{hex}0"), &hex.replace('b', "g"), &format!("é{}", &hex[2..])] {
            assert_eq!(TextHash::from_hex(bad), None, "{bad}");
        }
        assert_ne!(TextHash::of("abd"), h);
    }
}
