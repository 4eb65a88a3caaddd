//! The vault read for the engine: its notes (every one, those under a folder,
//! those at given paths, or only their sizes and times), and the store's files.
//! Links and dot folders are left out; a temporary file a write cut short left
//! behind is removed.

use crate::files::{left_out, read_no_follow, STORE, TMP_SUFFIX};
use datanotes_core::{NoteFile, NoteStat};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Prints "read N notes…" on stderr every this many files.
const PROGRESS_EVERY: usize = 10_000;

/// Whether a vault path is one the engine reads: a note (`.md`), the schema or
/// a Bases file it keeps (`datanotes/bases/*.base`), outside dot folders.
pub fn wanted(rel: &str) -> bool {
    (rel.ends_with(".md") || rel == METASTORE || datanotes_core::bases::is_base(rel))
        && !rel.split('/').any(|c| c.starts_with('.'))
}

pub const METASTORE: &str = "datanotes/metastore.yaml";

/// Every note of the vault (and metastore.yaml), skipping dot folders such as
/// `.datanotes`, `.obsidian`, `.trash` and `.git`. Files that are not UTF-8 are
/// reported and left out. With `progress`, a line on stderr every 10,000 files.
pub fn read_vault(vault: &Path, progress: bool) -> Result<(Vec<NoteFile>, Vec<String>), String> {
    read_under(vault, PathBuf::new(), progress)
}

/// As `read_vault`, for the folder `rel` of the vault only.
pub fn read_under(vault: &Path, rel: PathBuf, progress: bool) -> Result<(Vec<NoteFile>, Vec<String>), String> {
    let mut files = vec![];
    let warnings = walk(vault, rel, |rs, entry, warnings| {
        if let Some(f) = read_note(vault, rs, mtime_of(entry.metadata().ok()), warnings) {
            files.push(f);
            if progress && files.len() % PROGRESS_EVERY == 0 {
                eprintln!("datanotes: read {} notes…", files.len());
            }
        }
    })?;
    Ok((files, warnings))
}

/// Every file `read_vault` would read, with its size and mtime, unread: an open
/// through the notes' cache reads only those that changed.
pub fn list_vault(vault: &Path) -> Result<(Vec<NoteStat>, Vec<String>), String> {
    let mut entries = vec![];
    let warnings = walk(vault, PathBuf::new(), |rs, entry, _| entries.push((rs.to_string(), entry)))?;
    // A stat per file is most of the time: the cores share them.
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(8);
    let chunk = entries.len().div_ceil(threads).max(1);
    let stats = std::thread::scope(|s| {
        let parts: Vec<_> = entries
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(rs, entry)| {
                            let meta = entry.metadata().ok();
                            let size = meta.as_ref().map_or(0, fs::Metadata::len);
                            NoteStat { path: rs.clone(), size, mtime: mtime_of(meta) }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    Ok((stats, warnings))
}

/// The notes at `paths` as `read_vault` reads them (a note gone is left out).
pub fn read_notes(vault: &Path, paths: &[String]) -> (Vec<NoteFile>, Vec<String>) {
    let mut warnings = vec![];
    let files = paths
        .iter()
        .filter_map(|p| {
            let mtime = mtime_of(fs::symlink_metadata(vault.join(p)).ok());
            read_note(vault, p, mtime, &mut warnings)
        })
        .collect();
    (files, warnings)
}

pub(crate) fn mtime_of(meta: Option<fs::Metadata>) -> i64 {
    meta.and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

fn read_note(vault: &Path, rs: &str, mtime: i64, warnings: &mut Vec<String>) -> Option<NoteFile> {
    match read_no_follow(&vault.join(rs)) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(NoteFile { path: rs.to_string(), text, mtime }),
            Err(_) => {
                warnings.push(format!("{rs} is not UTF-8 text: left out"));
                None
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            warnings.push(format!("{rs} cannot be read ({e}): left out"));
            None
        }
    }
}

/// Walks the vault's folder `rel`, skipping dot folders and symbolic links
/// (each said in a warning), calling `each` with every file the engine reads.
fn walk(
    vault: &Path,
    rel: PathBuf,
    mut each: impl FnMut(&str, fs::DirEntry, &mut Vec<String>),
) -> Result<Vec<String>, String> {
    let mut warnings = vec![];
    let mut stack = vec![rel];
    while let Some(rel) = stack.pop() {
        let dir = vault.join(&rel);
        let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                // A write killed between its temporary file and the rename leaves the
                // temporary file: the note itself was never touched.
                if name.ends_with(TMP_SUFFIX) && entry.file_type().is_ok_and(|t| t.is_file()) {
                    match fs::remove_file(entry.path()) {
                        Ok(()) => warnings
                            .push(format!("{} was left by a write cut short: removed", rel.join(&name).display())),
                        Err(e) => warnings.push(format!(
                            "{} was left by a write cut short and cannot be removed: {e}",
                            rel.join(&name).display()
                        )),
                    }
                }
                continue;
            }
            let r = rel.join(&name);
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_symlink() {
                warnings.push(left_out(&r.to_string_lossy().replace('\\', "/"), &entry.path()));
                continue;
            }
            if ft.is_dir() {
                stack.push(r);
                continue;
            }
            let rs = r.to_string_lossy().replace('\\', "/");
            if wanted(&rs) {
                each(&rs, entry, &mut warnings);
            }
        }
    }
    Ok(warnings)
}

/// The store's files (path relative to `.datanotes/`): the text of its JSON
/// files (settings, journal), and only the names of the log's files and blobs,
/// which the engine asks for when it needs them.
pub fn read_store(vault: &Path) -> Vec<(String, Option<String>)> {
    let root = vault.join(STORE);
    let mut out = vec![];
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = fs::read_dir(root.join(&rel)) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let r = rel.join(&name);
            if name.ends_with(TMP_SUFFIX) {
                // Left by a store write cut short: its file was never replaced.
                let _ = fs::remove_file(e.path());
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(r);
            } else {
                let rel = r.to_string_lossy().replace('\\', "/");
                if ["log/", "blobs/", "semantic/", datanotes_core::notecache::DIR].iter().any(|d| rel.starts_with(d)) {
                    out.push((rel, None));
                } else if name.ends_with(".json") || name.ends_with(".jsonl") || rel == datanotes_core::secrets::FILE {
                    if let Ok(text) = fs::read_to_string(e.path()) {
                        out.push((rel, Some(text)));
                    }
                }
            }
        }
    }
    out.sort();
    out
}
