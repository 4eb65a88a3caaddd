//! A set of note paths as a sorted vector. The index holds one per stem, per
//! link target and per unique value, and most hold a single path: a B-tree
//! node or a hash table for it cost ten times its room and most of an open's
//! time. Sets built at open are filled unsorted and sorted once (`settle`).

#[derive(Debug, Clone, Default)]
pub struct PathSet(Vec<String>);

impl PathSet {
    pub fn insert(&mut self, path: String) -> bool {
        match self.0.binary_search(&path) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, path);
                true
            }
        }
    }

    pub fn remove(&mut self, path: &str) -> bool {
        match self.0.binary_search_by(|p| p.as_str().cmp(path)) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Adds a path: `building`, unsorted (the index is being built, and
    /// `settle` sorts the set before it is read or changed); else in its place.
    pub fn add(&mut self, path: String, building: bool) {
        match building {
            true => self.0.push(path),
            false => {
                self.insert(path);
            }
        }
    }

    pub fn settle(&mut self) {
        self.0.sort_unstable();
        self.0.dedup();
        self.0.shrink_to_fit();
    }

    /// In order.
    pub fn iter(&self) -> std::slice::Iter<'_, String> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_path_set_keeps_each_path_once_in_order_however_it_was_filled() {
        let mut s = PathSet::default();
        for p in ["b", "a", "c", "a"] {
            s.add(p.into(), true);
        }
        s.settle();
        assert_eq!(s.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert!(!s.insert("b".into()));
        assert!(s.insert("ab".into()));
        assert!(s.remove("a") && !s.remove("a"));
        assert_eq!(s.iter().collect::<Vec<_>>(), ["ab", "b", "c"]);
        assert_eq!(s.len(), 3);
        assert!(s.remove("ab") && s.remove("b") && s.remove("c") && s.is_empty());
    }
}
