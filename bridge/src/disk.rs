//! The vault on disk: reading it for the engine, applying the edits it plans,
//! writing the store.

use crate::durable;
use crate::queue;
use crate::spare;
use datanotes_core::driver::Host;
use datanotes_core::edits::StoreWrite;
use datanotes_core::{NoteFile, NoteStat};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::time::UNIX_EPOCH;

pub const STORE: &str = ".datanotes";

/// A file's identity, change time (seconds, nanoseconds) and size: any change
/// to it, its bytes or its name's target gives another stamp (a change time
/// cannot be set back, as a modification time can).
pub type Stamp = (u64, i64, i64, u64);

pub fn stamp(m: &fs::Metadata) -> Stamp {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (m.ino(), m.ctime(), m.ctime_nsec(), m.len())
    }
    #[cfg(not(unix))]
    {
        let t = m.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).unwrap_or_default();
        (0, t.as_secs() as i64, i64::from(t.subsec_nanos()), m.len())
    }
}

/// A folder's device and inode.
pub type Identity = (u64, u64);

/// A folder's identity: the same folder, whatever its path's spelling.
pub fn identity(m: &fs::Metadata) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// A vault path from the engine, made safe: relative, inside the vault.
pub fn inside(vault: &Path, rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if rel.is_empty()
        || rel.contains('\0')
        || p.is_absolute()
        || p.components().any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(format!("\"{rel}\" is not a path inside the vault"));
    }
    Ok(vault.join(p))
}

/// The first part of `rel` under `root` (a folder, or the file itself) that is a
/// symbolic link, if any. Links are never followed: one can lead anywhere, and a
/// vault shared by git or a sync tool can carry one planted by someone else.
pub fn link_in(root: &Path, rel: &Path) -> Option<PathBuf> {
    let mut at = root.to_path_buf();
    let mut part = PathBuf::new();
    for c in rel.components() {
        at.push(c);
        part.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Some(part),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Why a path under a link is refused, and the way out.
pub fn through_link(rel: &str, link: &Path) -> String {
    let link = link.to_string_lossy().replace('\\', "/");
    let whose = if link == rel { String::new() } else { format!(" (it is under {link})") };
    format!(
        "{rel} goes through a symbolic link{whose}: the engine never reads or writes through links, so that nothing outside the vault is touched; put the folder or file itself in the link's place"
    )
}

/// The warning for a link found in the vault (at open, or by the watcher): left
/// out, with where it leads.
pub fn left_out(rel: &str, full: &Path) -> String {
    let to = fs::read_link(full).map(|t| t.display().to_string()).unwrap_or_default();
    format!("{rel} is a symbolic link (to {to}): left out; the engine reads and writes only the vault's own files and folders, never through links")
}

/// Removes a file; one already gone is no failure (a deletion done again).
pub fn remove_if_there(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Refuses a store that is a symbolic link: the engine would write its journal,
/// its log and its lock wherever the link leads.
pub fn store_not_a_link(vault: &Path) -> Result<(), String> {
    match link_in(vault, Path::new(STORE)) {
        Some(link) => Err(through_link(STORE, &link)),
        None => Ok(()),
    }
}

/// A store file's path, its folders checked free of links (see `Folders`) and,
/// with `create`, made; refused when the store is no longer the folder this
/// process locked (`lock::still_ours`). Checked at every call, never
/// remembered for the process: anyone who can write to the vault can put a
/// link in a store folder's place while the engine runs.
pub fn store_file(vault: &Path, rel: &str, create: bool) -> Result<PathBuf, String> {
    StoreFiles::default().file(vault, rel, create)
}

/// Store files' paths as `store_file` checks them, for one call or one batch
/// of writes: each check made once in it (a few `lstat`s).
#[derive(Default)]
pub struct StoreFiles {
    folders: Folders,
    ours: bool,
}

impl StoreFiles {
    pub fn file(&mut self, vault: &Path, rel: &str, create: bool) -> Result<PathBuf, String> {
        let store = vault.join(STORE);
        let full = inside(&store, rel)?;
        if !self.ours {
            crate::lock::still_ours(&store)?;
            self.ours = true;
        }
        self.folders.check(vault, &full, create)?;
        Ok(full)
    }
}

/// Reads a file, refusing a symbolic link in its place (O_NOFOLLOW, so that a
/// link planted between a check and the read is refused too).
pub fn read_no_follow(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NOFOLLOW);
    #[cfg(not(unix))]
    if fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(std::io::Error::other("a symbolic link"));
    }
    let mut f = opts.open(path)?;
    let mut out = vec![];
    std::io::Read::read_to_end(&mut f, &mut out)?;
    Ok(out)
}

/// Whether an error is the disk's being full (or the user's quota).
pub fn is_full(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT));
    #[cfg(not(unix))]
    return e.kind() == std::io::ErrorKind::StorageFull;
}

/// Whether an error is that of opening a symbolic link with O_NOFOLLOW.
fn is_link_error(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(not(unix))]
    return e.to_string() == "a symbolic link";
}

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

fn mtime_of(meta: Option<fs::Metadata>) -> i64 {
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

/// The end of a temporary file's name: `.<name>.datanotes-tmp` beside the file.
pub const TMP_SUFFIX: &str = ".datanotes-tmp";

/// The temporary file beside `path` that a write fills before its rename.
pub fn temp_of(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    path.with_file_name(format!(".{name}{TMP_SUFFIX}"))
}

/// Writes a file whole or not at all: a temporary file beside it, then a rename.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    write_whole(path, text, false)
}

/// As `write_atomic`; `owner_only` makes the file readable by its owner alone
/// (mode 600 on Unix) from its first byte, for files that hold secrets. The
/// temporary file goes whatever fails (a full disk included).
pub fn write_whole(path: &Path, text: impl AsRef<[u8]>, owner_only: bool) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = temp_of(path);
    let written = fill_temp(&tmp, text.as_ref(), owner_only).and_then(|f| {
        if durable::must_sync() {
            f.sync_all()?;
        }
        fs::rename(&tmp, path)
    });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Writes a temporary file whole, unsynced (see `write_whole`); on failure it
/// goes.
pub fn write_whole_unsynced(tmp: &Path, text: &str, owner_only: bool) -> std::io::Result<()> {
    let written = fill_temp(tmp, text.as_bytes(), owner_only).map(drop);
    if written.is_err() {
        let _ = fs::remove_file(tmp);
    }
    written
}

fn fill_temp(tmp: &Path, text: &[u8], owner_only: bool) -> std::io::Result<fs::File> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if owner_only {
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    }
    let mut f = opts.open(tmp)?;
    #[cfg(unix)]
    if owner_only {
        // A file left by an earlier write keeps its mode: set it.
        f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    }
    f.write_all(text)?;
    Ok(f)
}

/// The vault on disk as the driver's host: notes written whole (a temporary file,
/// then a rename), trashed into the vault's `.trash/`, the store synced. Many
/// notes or store files written at once share their flushes (see `durable`).
pub struct Disk<'a> {
    vault: &'a Path,
    /// Notes staged for `put`: their temporary files (or spares) by vault path.
    staged: HashMap<String, Staged>,
    folders: Folders,
    store: StoreFiles,
    /// A note was written, moved or removed in this call: its store writes
    /// from now on are its records, which the queue carries out whole or not
    /// at all (see `write_stores`).
    touched: bool,
    /// The note last read and its bytes: under group commit, what its queued
    /// write expects to replace (see `queue::swap_note`).
    last_read: Option<(String, Vec<u8>)>,
}

impl<'a> Disk<'a> {
    pub fn new(vault: &'a Path) -> Disk<'a> {
        Disk {
            vault,
            staged: HashMap::new(),
            folders: Folders::default(),
            store: StoreFiles::default(),
            touched: false,
            last_read: None,
        }
    }

    /// Carries out the queued writes (group commit): before a write that is
    /// not queued, so that the disk sees every write in the engine's order.
    fn queued_first(&self) -> Result<(), String> {
        if queue::on() {
            queue::run()?;
            queue::direct();
        }
        Ok(())
    }

    /// Under group commit, queues a note's new text in a spare (see `queue`);
    /// false when the note is new or spares cannot be had here.
    fn queue_note(&mut self, path: &str, full: &Path, text: &str) -> bool {
        if !queue::on() || !fs::symlink_metadata(full).is_ok_and(|m| m.is_file()) {
            return false;
        }
        let Some(spare) = spare::fill(&self.vault.join(STORE), text) else { return false };
        let was = match self.last_read.take() {
            Some((p, bytes)) if p == path => bytes,
            _ => fs::read(full).unwrap_or_default(),
        };
        queue::note(self.vault, spare, full.to_path_buf(), was);
        true
    }

    /// A note's path on disk, its folders free of links and, with `create`, made.
    fn real(&mut self, rel: &str, create: bool) -> Result<PathBuf, String> {
        let full = inside(self.vault, rel)?;
        self.folders.check(self.vault, &full, create)?;
        Ok(full)
    }
}

/// Folders known to exist under the vault with no link on their way, so that a
/// batch checks each once.
#[derive(Default)]
pub struct Folders(HashSet<PathBuf>);

impl Folders {
    /// Checks that no part of `full`'s folder under `vault` is a link and, with
    /// `create`, makes the folder.
    pub fn check(&mut self, vault: &Path, full: &Path, create: bool) -> Result<(), String> {
        let Some(dir) = full.parent().filter(|d| !self.0.contains(*d)) else { return Ok(()) };
        if let Some(link) = link_in(vault, dir.strip_prefix(vault).unwrap_or(dir)) {
            let rel = full.strip_prefix(vault).unwrap_or(full).to_string_lossy().replace('\\', "/");
            return Err(through_link(&rel, &link));
        }
        if create {
            fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        } else if !dir.is_dir() {
            return Ok(());
        }
        self.0.insert(dir.to_path_buf());
        Ok(())
    }
}

/// A note's text staged beside it, or in a spare (see `spare`).
enum Staged {
    Temp(PathBuf),
    Spare(PathBuf),
}

impl Staged {
    fn file(&self) -> &PathBuf {
        match self {
            Staged::Temp(p) | Staged::Spare(p) => p,
        }
    }
}

impl Drop for Disk<'_> {
    /// Staged texts never put (a call cut short) leave no temporary file behind;
    /// spares stay for the next batch.
    fn drop(&mut self) {
        for s in self.staged.values() {
            if let Staged::Temp(tmp) = s {
                let _ = fs::remove_file(tmp);
            }
        }
    }
}

impl Host for Disk<'_> {
    fn read(&mut self, path: &str) -> Result<Option<String>, String> {
        let full = self.real(path, false)?;
        if queue::on() && queue::holds(&full) {
            queue::run()?;
        }
        match read_no_follow(&full) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if queue::on() {
                    self.last_read = Some((path.to_string(), bytes));
                }
                Ok(Some(text))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) if is_link_error(&e) => Err(through_link(path, Path::new(path))),
            Err(e) => Err(e.to_string()),
        }
    }

    // A rename onto a link replaces the link itself: only folders can lead out.
    fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        let full = self.real(path, true)?;
        self.touched = true;
        if self.queue_note(path, &full, text) {
            return Ok(());
        }
        self.queued_first()?;
        match spare::replace(&self.vault.join(STORE), &full, text) {
            Some(done) => done,
            None => write_atomic(&full, text),
        }
        .map_err(|e| e.to_string())
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        let (f, t) = (self.real(from, false)?, self.real(to, true)?);
        fs::rename(&f, &t).map_err(|e| e.to_string())
    }

    fn trash(&mut self, path: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        let f = self.real(path, false)?;
        let mut to = format!(".trash/{path}");
        let mut i = 2;
        while self.vault.join(&to).exists() {
            to = format!(".trash/{path} {i}");
            i += 1;
        }
        let t = self.real(&to, true)?;
        fs::rename(&f, &t).map_err(|e| e.to_string())
    }

    fn remove(&mut self, path: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        fs::remove_file(self.real(path, false)?).map_err(|e| e.to_string())
    }

    fn read_store(&mut self, path: &str) -> Option<String> {
        let f = self.store.file(self.vault, path, false).ok()?;
        if queue::on() && queue::holds(&f) {
            queue::run().ok()?;
        }
        String::from_utf8(read_no_follow(&f).ok()?).ok()
    }

    fn write_store(&mut self, w: &StoreWrite) -> Result<(), String> {
        self.write_stores(&[w]).map_err(|(_, e)| e)
    }

    fn write_stores(&mut self, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
        if queue::on() {
            // Before any note is touched (a write's journal entry), checked as
            // they are queued, under the engine's lock: a store folder that
            // cannot take them (a link put there, the store replaced) refuses
            // the write with nothing touched, as without the queue. After,
            // the queue checks them again and gives up the call whole.
            for (i, w) in files.iter().enumerate() {
                if !self.touched {
                    let checked = self.store.file(self.vault, &w.path, false);
                    checked.map_err(|e| (i, format!("{STORE}/{}: {e}", w.path)))?;
                }
                queue::store(self.vault, (*w).clone());
            }
            return Ok(());
        }
        durable::write_store_files(self.vault, files)
    }

    fn stages(&self) -> bool {
        true
    }

    fn stage(&mut self, path: &str, text: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        let full = self.real(path, true)?;
        if let Some(spare) = spare::fill(&self.vault.join(STORE), text) {
            self.staged.insert(path.to_string(), Staged::Spare(spare));
            return Ok(());
        }
        let tmp = temp_of(&full);
        self.staged.insert(path.to_string(), Staged::Temp(tmp.clone()));
        durable::write_unsynced(&tmp, text).map_err(|e| e.to_string())
    }

    fn sync(&mut self) -> Result<(), String> {
        // Never deferred: the swaps that follow must find the texts on disk (see
        // spare::replace).
        durable::flush_now(self.vault, self.staged.values().map(Staged::file)).map_err(|e| e.to_string())
    }

    fn put(&mut self, path: &str) -> Result<(), String> {
        let staged = self.staged.remove(path).ok_or_else(|| format!("{path} was not staged"))?;
        let full = self.real(path, false)?;
        match staged {
            Staged::Temp(tmp) => fs::rename(&tmp, full).map_err(|e| {
                let _ = fs::remove_file(&tmp);
                e.to_string()
            }),
            Staged::Spare(spare) => spare::put(&self.vault.join(STORE), spare, &full).map_err(|e| e.to_string()),
        }
    }

    fn unstage(&mut self, path: &str) {
        match self.staged.remove(path) {
            Some(Staged::Temp(tmp)) => drop(fs::remove_file(tmp)),
            Some(Staged::Spare(spare)) => spare::give_back(&self.vault.join(STORE), spare),
            None => {}
        }
    }
}

/// Writes one store file durably: deleted, appended to, or written whole.
pub fn write_store_file(vault: &Path, f: &StoreWrite) -> Result<(), String> {
    let full = store_file(vault, &f.path, !f.delete)?;
    if f.delete {
        remove_if_there(&full).map_err(|e| format!("{STORE}/{}: {e}", f.path))?;
    } else if f.append {
        append(&full, &f.text).map_err(|e| format!("{STORE}/{}: {e}", f.path))?;
    } else {
        // Webhooks hold their signing secrets.
        let secret = datanotes_core::webhook::is_file(&f.path);
        let done = if secret { None } else { spare::replace(&vault.join(STORE), &full, &f.text) };
        done.unwrap_or_else(|| write_whole(&full, &f.text, secret)).map_err(|e| format!("{STORE}/{}: {e}", f.path))?;
    }
    Ok(())
}

/// Opens a file to append to, made if missing, never through a link.
fn open_append(path: &Path) -> std::io::Result<fs::File> {
    let mut opts = fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NOFOLLOW);
    // The folder is made only when missing: every write appends twice (the
    // feed, what this device knows), and a mkdir that finds the folder costs
    // two system calls each time.
    match opts.open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
            opts.open(path)
        }
        other => other,
    }
}

/// Takes the room for `len` more bytes at the end of the file at `path` (made
/// if missing) now, its size unchanged (Linux: fallocate, FALLOC_FL_KEEP_SIZE):
/// appends into it later cannot find the disk full. A file system that cannot
/// reserve room reserves none; only a full disk is an error.
pub fn reserve(path: &Path, len: u64) -> std::io::Result<()> {
    let f = open_append(path)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let at = f.metadata()?.len();
        let (Ok(at), Ok(len)) = (libc::off_t::try_from(at), libc::off_t::try_from(len)) else { return Ok(()) };
        // SAFETY: fallocate only reads the descriptor, which `f` keeps open.
        if unsafe { libc::fallocate(f.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, at, len) } != 0 {
            let e = std::io::Error::last_os_error();
            if is_full(&e) {
                return Err(e);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (f, len);
    Ok(())
}

/// Appends to a file (the feed's segments), synced before the answer goes out.
pub fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = open_append(path)?;
    let before = f.metadata()?.len();
    let written = f.write_all(text.as_bytes()).and_then(|()| if durable::must_sync() { f.sync_data() } else { Ok(()) });
    if written.is_err() {
        // A full disk can take half a line: cut it off, so that the line is written
        // whole when the engine tries again, and nothing reads a torn one.
        let _ = f.set_len(before);
    }
    written
}
