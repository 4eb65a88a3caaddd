//! Byte comparison for the wasm build. Rust's wasm32 target takes `memcmp`
//! from compiler-builtins, which compares a byte at a time; the engine compares
//! paths that share long folders ("datanotes/main/public/film/…") in every
//! hash map, B-tree and sort, and a reopen of 100k notes spent a tenth of its
//! time there. This one compares eight bytes at a time (wasm loads need no
//! alignment) and is linked in place of the builtin, which is weak.

/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes, as C's memcmp asks.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n, and the caller vouches for n bytes at a and b.
        let (x, y) = unsafe { ((a.add(i) as *const u64).read_unaligned(), (b.add(i) as *const u64).read_unaligned()) };
        if x != y {
            // Little-endian: the lowest differing bits are the first differing byte.
            let k = ((x ^ y).trailing_zeros() / 8) as usize;
            // SAFETY: i + k < i + 8 <= n.
            let (p, q) = unsafe { (*a.add(i + k), *b.add(i + k)) };
            return i32::from(p) - i32::from(q);
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        let (p, q) = unsafe { (*a.add(i), *b.add(i)) };
        if p != q {
            return i32::from(p) - i32::from(q);
        }
        i += 1;
    }
    0
}

/// # Safety
/// As `memcmp`: equality only, which is what `==` on slices asks for.
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's promise is memcmp's.
    unsafe { memcmp(a, b, n) }
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Byte by byte, as C's memcmp is defined.
    fn reference(a: &[u8], b: &[u8]) -> i32 {
        a.iter().zip(b).find(|(x, y)| x != y).map_or(0, |(x, y)| i32::from(*x) - i32::from(*y))
    }

    #[test]
    fn compares_as_bytes_do_whatever_the_length_and_where_they_differ() {
        let base: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37).wrapping_add(1)).collect();
        for n in 0..base.len() {
            for at in 0..n {
                for delta in [1u8, 0x80, 0xff] {
                    let mut other = base.clone();
                    other[at] = other[at].wrapping_add(delta);
                    let (a, b) = (&base[..n], &other[..n]);
                    // SAFETY: both slices hold n bytes.
                    let (ab, ba) =
                        unsafe { (super::memcmp(a.as_ptr(), b.as_ptr(), n), super::memcmp(b.as_ptr(), a.as_ptr(), n)) };
                    assert_eq!((ab, ba), (reference(a, b), reference(b, a)), "{n} bytes, differing at {at} by {delta}");
                }
            }
            // SAFETY: n bytes each.
            assert_eq!(unsafe { super::memcmp(base.as_ptr(), base.clone().as_ptr(), n) }, 0);
            // Slices' own comparisons go through it in wasm.
            assert_eq!(base[..n].cmp(&base[..n]), std::cmp::Ordering::Equal);
        }
        assert!(
            b"datanotes/main/public/film/Film 12.md".as_slice() < b"datanotes/main/public/film/Film 13.md".as_slice()
        );
    }
}
