//! Files on disk, the primitives every write and read of the host is made of:
//! paths made safe and checked free of links, files written whole (a temporary
//! file, then a rename) or appended to, room reserved ahead. Nothing here holds
//! state: whether a write waits for the disk is the caller's `Syncs`.

use crate::durable::Syncs;
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
#[cfg(not(unix))]
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
pub fn is_link_error(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(not(unix))]
    return e.to_string() == "a symbolic link";
}

/// The end of a temporary file's name: `.<name>.datanotes-tmp` beside the file.
pub const TMP_SUFFIX: &str = ".datanotes-tmp";

/// The temporary file beside `path` that a write fills before its rename.
pub fn temp_of(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    path.with_file_name(format!(".{name}{TMP_SUFFIX}"))
}

/// Writes a file whole or not at all: a temporary file beside it, then a
/// rename; synced before the rename (a command's own files, the lock file: no
/// group commit defers them).
pub fn write_atomic(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    write_whole(path, text, false, &Syncs::default())
}

/// As `write_atomic`; `owner_only` makes the file readable by its owner alone
/// (mode 600 on Unix) from its first byte, for files that hold secrets. The
/// temporary file goes whatever fails (a full disk included). Synced unless
/// `syncs` defers it.
pub fn write_whole(path: &Path, text: impl AsRef<[u8]>, owner_only: bool, syncs: &Syncs) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = temp_of(path);
    let written = fill_temp(&tmp, text.as_ref(), owner_only).and_then(|f| {
        if syncs.must_sync() {
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

/// Appends to a file (the feed's segments), synced before the answer goes out
/// (at once, or by the group sync `syncs` defers it to).
pub fn append(path: &Path, text: &str, syncs: &Syncs) -> std::io::Result<()> {
    let mut f = open_append(path)?;
    let before = f.metadata()?.len();
    let written = f.write_all(text.as_bytes()).and_then(|()| if syncs.must_sync() { f.sync_data() } else { Ok(()) });
    if written.is_err() {
        // A full disk can take half a line: cut it off, so that the line is written
        // whole when the engine tries again, and nothing reads a torn one.
        let _ = f.set_len(before);
    }
    written
}
