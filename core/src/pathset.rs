//! A set of note paths, sorted. The index holds one per stem, per link target
//! and per unique value, and most hold a single path: a B-tree node or a hash
//! table for it cost ten times its room and most of an open's time, and so did
//! a vector for one path. Sets built at open are filled unsorted and sorted
//! once (`settle`). A path is shared (`Arc<str>`) by the sets that hold it: a
//! note sits in three to six of them.

use std::sync::Arc;

/// A path as the index's sets share it.
pub type Shared = Arc<str>;

#[derive(Debug, Clone)]
pub enum PathSet {
    One(Shared),
    /// Sorted, unless filled while building.
    Many(Vec<Shared>),
}

impl Default for PathSet {
    fn default() -> PathSet {
        PathSet::Many(Vec::new())
    }
}

impl PathSet {
    pub fn insert(&mut self, path: Shared) -> bool {
        match self {
            PathSet::One(p) if *p == path => false,
            PathSet::One(p) => {
                let p = p.clone();
                *self = PathSet::Many(if path < p { vec![path, p] } else { vec![p, path] });
                true
            }
            PathSet::Many(v) if v.is_empty() => {
                *self = PathSet::One(path);
                true
            }
            PathSet::Many(v) => match v.binary_search(&path) {
                Ok(_) => false,
                Err(i) => {
                    v.insert(i, path);
                    true
                }
            },
        }
    }

    pub fn remove(&mut self, path: &str) -> bool {
        match self {
            PathSet::One(p) if &**p == path => {
                *self = PathSet::default();
                true
            }
            PathSet::One(_) => false,
            PathSet::Many(v) => match v.binary_search_by(|p| (**p).cmp(path)) {
                Ok(i) => {
                    v.remove(i);
                    true
                }
                Err(_) => false,
            },
        }
    }

    /// Adds a path: `building`, unsorted (the index is being built, and
    /// `settle` sorts the set before it is read or changed); else in its place.
    pub fn add(&mut self, path: Shared, building: bool) {
        match self {
            PathSet::One(p) if building => *self = PathSet::Many(vec![p.clone(), path]),
            PathSet::Many(v) if building && !v.is_empty() => v.push(path),
            _ => {
                self.insert(path);
            }
        }
    }

    pub fn settle(&mut self) {
        let PathSet::Many(v) = self else { return };
        sort(v);
        v.dedup();
        match v.len() {
            1 => *self = PathSet::One(v[0].clone()),
            _ => v.shrink_to_fit(),
        }
    }

    /// In order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + Clone {
        let all = match self {
            PathSet::One(p) => std::slice::from_ref(p),
            PathSet::Many(v) => v.as_slice(),
        };
        all.iter().map(|p| &**p)
    }

    pub fn len(&self) -> usize {
        match self {
            PathSet::One(_) => 1,
            PathSet::Many(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Sorts paths, compared past the start they all share (the folder of the
/// films linking to a person, of a table's rows), and first by the next eight
/// bytes as a number: in wasm a comparison of bytes is a call and a loop.
pub fn sort(paths: &mut Vec<Shared>) {
    // Notes taken from the cache come in its order, by path: their sets are
    // sorted already, and a look costs a tenth of a sort.
    if paths.is_sorted() {
        return;
    }
    let common = |n: usize, a: &[u8], b: &[u8]| a[..n].iter().zip(b).take_while(|(x, y)| x == y).count();
    let skip = match paths.split_first() {
        Some((first, rest)) => rest.iter().fold(first.len(), |n, p| common(n, first.as_bytes(), p.as_bytes())),
        None => 0,
    };
    fn tail(p: &Shared, skip: usize) -> &[u8] {
        &p.as_bytes()[skip..]
    }
    // Padded with zeros, below any byte: a key orders as its bytes do, and
    // equal keys are told apart by the whole tail.
    let key = |p: &Shared| {
        let (mut k, t) = ([0u8; 8], tail(p, skip));
        k[..t.len().min(8)].copy_from_slice(&t[..t.len().min(8)]);
        u64::from_be_bytes(k)
    };
    let mut keyed: Vec<(u64, Shared)> = paths.drain(..).map(|p| (key(&p), p)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| tail(&a.1, skip).cmp(tail(&b.1, skip))));
    paths.extend(keyed.into_iter().map(|(_, p)| p));
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

    #[test]
    fn a_set_of_one_path_answers_as_one_of_many() {
        // Built: one path, named twice or once.
        for names in [&["a", "a"][..], &["a"]] {
            let mut s = PathSet::default();
            names.iter().for_each(|p| s.add((*p).into(), true));
            s.settle();
            assert!(matches!(s, PathSet::One(_)));
            assert_eq!((s.iter().collect::<Vec<_>>(), s.len()), (vec!["a"], 1));
        }
        // Added one at a time, in place, on either side of the one.
        let mut s = PathSet::default();
        s.add("m".into(), false);
        assert!(!s.insert("m".into()) && !s.remove("x"));
        s.add("z".into(), false);
        assert!(s.insert("a".into()));
        assert_eq!(s.iter().collect::<Vec<_>>(), ["a", "m", "z"]);
        // A one filled further while building.
        // Paths that share their start, one of them all of it.
        let mut s = PathSet::default();
        for p in [
            "dir/b",
            "dir/a",
            "dir/",
            "dir/ab",
            "dir/a",
            "dir/é",
            "dir/e",
            "dir/abcdefgh2",
            "dir/abcdefgh1",
            "dir/abcdefgh",
        ] {
            s.add(p.into(), true);
        }
        s.settle();
        let sorted =
            ["dir/", "dir/a", "dir/ab", "dir/abcdefgh", "dir/abcdefgh1", "dir/abcdefgh2", "dir/b", "dir/e", "dir/é"];
        assert_eq!(s.iter().collect::<Vec<_>>(), sorted);
        let mut shuffled: Vec<Shared> = ["x/\u{0}", "x/", "x/\u{0}\u{0}", "x/a\u{0}", "x/a"].map(Shared::from).to_vec();
        sort(&mut shuffled);
        assert_eq!(
            shuffled.iter().map(|p| &**p).collect::<Vec<_>>(),
            ["x/", "x/\u{0}", "x/\u{0}\u{0}", "x/a", "x/a\u{0}"]
        );
        let mut s = PathSet::default();
        s.add("m".into(), false);
        s.add("b".into(), true);
        s.add("m".into(), true);
        s.settle();
        assert_eq!(s.iter().collect::<Vec<_>>(), ["b", "m"]);
        let mut one = PathSet::default();
        one.add("q".into(), false);
        assert!(one.remove("q") && one.is_empty() && one.iter().next().is_none());
        assert!(one.insert("r".into()) && one.len() == 1);
    }
}
