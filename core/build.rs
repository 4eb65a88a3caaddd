//! Embeds the film diary (`bridge/assets/films`) for the tests: they run in wasm
//! too (under node), where there is no file system to read it from.

use std::path::{Path, PathBuf};

fn files(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push((rel.to_string_lossy().replace('\\', "/"), p.canonicalize().unwrap_or(p)));
        }
    }
}

fn main() {
    // Read when the script runs, not baked in when it is compiled: a build
    // script compiled for one checkout and reused from a shared target folder
    // by another must read the other's diary (or, once the first is gone, none).
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest).join("../bridge/assets/films");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut found = vec![];
    files(&root, &root, &mut found);
    found.sort();
    let mut src =
        String::from("/// The film diary's files: path in the vault, text.\npub const FILMS: &[(&str, &str)] = &[\n");
    for (rel, full) in found {
        src.push_str(&format!("    ({rel:?}, include_str!({:?})),\n", full.display().to_string()));
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("films.rs");
    std::fs::write(out, src).unwrap();
}
