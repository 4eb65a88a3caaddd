//! The proof that an engine listening at an address holds a vault. A lock file
//! in the vault names the engine to forward calls to, and the vault may come from
//! git or a sync tool: anybody can plant one. Before a caller sends the owner's
//! token or any argument there, the engine must answer a fresh nonce with a value
//! only the token's holder can compute. The address is part of it, so an engine
//! cannot lend its proofs to a listener elsewhere that relays the challenge; so
//! is the vault (its real path and its store's identity), so that an engine of
//! another vault served with the same token never answers for this one.

use crate::texthash::hex;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The vault an engine holds, as a proof names it: its real path (symbolic links
/// resolved) and its store's identity on this machine (`<device>:<inode>` of
/// `.datanotes/`, empty where the system gives none), which two vaults never
/// share even when a path can be spelled two ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultId {
    pub path: String,
    pub store: String,
}

/// HMAC-SHA256(owner token, "datanotes lock proof\n<address>\n<vault path>\n<store
/// id>\n<nonce>"), in hex.
pub fn lock_proof(token: &str, address: &str, vault: &VaultId, nonce: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(token.as_bytes()).expect("HMAC takes any key length");
    mac.update(format!("datanotes lock proof\n{address}\n{}\n{}\n{nonce}", vault.path, vault.store).as_bytes());
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
    fn proof_is_fixed_by_token_address_vault_and_nonce() {
        let n = "00112233445566778899aabbccddeeff";
        let v = VaultId { path: "/home/ann/films".into(), store: "2049:1234567".into() };
        let proof = |token: &str, address: &str, v: &VaultId| lock_proof(token, address, v, n);
        // The plugin computes the same value with Node's crypto (plugin/test/door.test.ts).
        assert_eq!(
            proof("secret-token", "127.0.0.1:8765", &v),
            "c8f97903ee98fa670dff7c2e361dba4e9a7ac778e9b62ae079c4302649df6b13"
        );
        assert_ne!(proof("secret-token", "127.0.0.1:8765", &v), proof("other", "127.0.0.1:8765", &v));
        assert_ne!(proof("secret-token", "127.0.0.1:8765", &v), proof("secret-token", "127.0.0.1:8766", &v));
        let elsewhere = VaultId { path: "/home/ann/books".into(), ..v.clone() };
        assert_ne!(proof("secret-token", "127.0.0.1:8765", &v), proof("secret-token", "127.0.0.1:8765", &elsewhere));
        let other_store = VaultId { store: "2049:7654321".into(), ..v.clone() };
        assert_ne!(proof("secret-token", "127.0.0.1:8765", &v), proof("secret-token", "127.0.0.1:8765", &other_store));
        assert!(valid_nonce(n));
        assert!(!valid_nonce("xyz"));
        assert!(!valid_nonce(&"a".repeat(129)));
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "abcd"));
    }
}
