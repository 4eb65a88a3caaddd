//! Which store files this device wrote. A file's name says which device it
//! claims to be from, but anyone who can write to the vault can name a file
//! after this device. So the files whose word is acted on (journal entries,
//! which undo writes from; the webhooks file, which delivers from) carry a
//! seal: an HMAC-SHA256 of their content under a key the host keeps outside
//! the vault, where no sync tool carries it. A file without a valid seal is
//! treated as another device's claim.

use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

/// The key, as the host gives it: at least 16 bytes, or no key (files are
/// then trusted by their names, as before devices had keys).
#[derive(Clone, Default)]
pub struct Key(Option<Vec<u8>>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Key(set)" } else { "Key(none)" })
    }
}

impl Key {
    pub fn new(bytes: &[u8]) -> Result<Key, String> {
        if bytes.len() < 16 {
            return Err(format!("a device key of {} bytes: give 16 or more random bytes", bytes.len()));
        }
        Ok(Key(Some(bytes.to_vec())))
    }

    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// The seal of a value serialised as JSON (None without a key).
    pub fn seal<T: Serialize>(&self, value: &T) -> Option<String> {
        let key = self.0.as_ref()?;
        let text = serde_json::to_string(value).ok()?;
        let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
        mac.update(text.as_bytes());
        Some(crate::texthash::hex(&mac.finalize().into_bytes()))
    }

    /// Whether `seal` is the seal of `value` under this key (compared in
    /// constant time: a seal is a secret's proof).
    pub fn verifies<T: Serialize>(&self, value: &T, seal: Option<&str>) -> bool {
        match (self.seal(value), seal) {
            (Some(want), Some(got)) => crate::proof::same(&want, got),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_seal_verifies_its_value_under_its_key_only() {
        let k = Key::new(&[1u8; 32]).unwrap();
        let other = Key::new(&[2u8; 32]).unwrap();
        let v = serde_json::json!({"a": 1});
        let s = k.seal(&v);
        assert!(k.verifies(&v, s.as_deref()));
        assert!(!other.verifies(&v, s.as_deref()));
        assert!(!k.verifies(&serde_json::json!({"a": 2}), s.as_deref()));
        assert!(!k.verifies(&v, None));
        assert!(Key::default().seal(&v).is_none() && !Key::default().verifies(&v, s.as_deref()));
        assert!(Key::new(&[0u8; 8]).is_err());
    }
}
