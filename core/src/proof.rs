//! The proof that an engine listening at an address holds a vault. A lock file
//! in the vault names the engine to forward calls to, and the vault may come from
//! git or a sync tool: anybody can plant one. Before a caller sends the owner's
//! token or any argument there, the engine must answer a fresh nonce with a value
//! only the token's holder can compute. The address is part of it, so an engine
//! cannot lend its proofs to a listener elsewhere that relays the challenge.

use crate::feed::webhook::hex;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// HMAC-SHA256(owner token, "datanotes lock proof\n<address>\n<nonce>"), in hex.
pub fn lock_proof(token: &str, address: &str, nonce: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(token.as_bytes()).expect("HMAC takes any key length");
    mac.update(format!("datanotes lock proof\n{address}\n{nonce}").as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// A nonce as callers send it: 32 to 128 hex digits.
pub fn valid_nonce(nonce: &str) -> bool {
    (32..=128).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Compares without an early exit, so the time taken tells nothing of the value.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn proof_is_fixed_by_token_address_and_nonce() {
        let n = "00112233445566778899aabbccddeeff";
        // The plugin computes the same value with Node's crypto (plugin/test/door.test.ts).
        assert_eq!(
            lock_proof("secret-token", "127.0.0.1:8765", n),
            "9aab9e30a645483b502e40a4d355a4b1b5aaef50c2f03d082308010541bfa1bd"
        );
        assert_ne!(lock_proof("secret-token", "127.0.0.1:8765", n), lock_proof("other", "127.0.0.1:8765", n));
        assert_ne!(lock_proof("secret-token", "127.0.0.1:8765", n), lock_proof("secret-token", "127.0.0.1:8766", n));
        assert!(valid_nonce(n));
        assert!(!valid_nonce("xyz"));
        assert!(!valid_nonce(&"a".repeat(129)));
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "abcd"));
    }
}
