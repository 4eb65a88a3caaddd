//! The database settings, kept in the store as `settings.json` and, once devices
//! sync one vault, as each device's changes: `settings.<device>.json` holds
//! every field that device set, with when. A field's value is the newest set
//! on any device (a tie goes to the higher device id), else settings.json's:
//! two devices that change different settings while apart both keep theirs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const FILE: &str = "settings.json";

/// The journal keeps a week at least: a settings file is a store file anyone
/// who can write to the vault can forge, and a retention of 0 days from it
/// would delete every entry, and with them every undo, at each open.
pub const RETENTION_FLOOR_DAYS: u32 = 7;

/// The file of one device's changes.
pub fn device_file(device: &str) -> String {
    format!("settings.{device}.json")
}

/// The device of a file of changes, from its path.
pub(crate) fn device_of(path: &str) -> Option<&str> {
    crate::log::order::device_named(path, "settings")
}

/// One device's changes: field -> {value, at_ms}; and the name its person
/// gave the device, which every device shows in place of its id.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Changes {
    pub format: u32,
    pub fields: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The longest device name, in characters.
pub const MAX_DEVICE_NAME: usize = 64;

/// A device's name as given: one line of plain text, at most MAX_DEVICE_NAME
/// characters, trimmed; why not, otherwise.
pub fn device_name(name: &str) -> Result<String, String> {
    let s = name.trim();
    let n = s.chars().count();
    if n == 0 {
        return Err("deviceName is empty: give a name such as \"Linux laptop\"".into());
    }
    if n > MAX_DEVICE_NAME {
        return Err(format!("deviceName is {n} characters long; keep it to {MAX_DEVICE_NAME} or fewer"));
    }
    if s.chars().any(char::is_control) {
        return Err("deviceName must be one line of plain text (no line breaks or control characters)".into());
    }
    Ok(s.to_string())
}

/// Each device's name, by device id, from the devices' settings files. A
/// name another device wrote is a stranger's text: one that this engine would
/// not take from its own person is left out (that device shows unnamed).
pub fn device_names<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> Map<String, Value> {
    let mut out: Vec<(String, String)> = files
        .filter_map(|(path, text)| {
            let device = device_of(path)?;
            let name = Changes::parse(text)?.name?;
            let name = device_name(&name).ok().filter(|n| *n == name)?;
            Some((device.to_string(), name))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(d, n)| (d, Value::String(n))).collect()
}

impl Changes {
    pub fn parse(text: &str) -> Option<Changes> {
        serde_json::from_str(text).ok()
    }

    /// Records the fields of `now` that differ from `before`, at `at_ms`.
    pub fn record(&mut self, before: &Settings, now: &Settings, at_ms: i64) {
        let (b, n) = (serde_json::to_value(before).unwrap_or_default(), serde_json::to_value(now).unwrap_or_default());
        for (k, v) in n.as_object().into_iter().flatten() {
            if b.get(k) != Some(v) {
                self.fields.insert(k.clone(), serde_json::json!({"value": v, "at_ms": at_ms}));
            }
        }
        self.format = 1;
    }

    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The time of its newest change, as the file claims it.
    pub fn newest_ms(&self) -> Option<i64> {
        self.fields.values().filter_map(|v| v["at_ms"].as_i64()).max()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    pub version: u32,
    pub auto_recompute: bool,
    pub repair_links_on_hand_move: bool,
    pub journal_retention_days: u32,
    /// Keep an Obsidian Bases file for each table and view (bases.rs).
    pub bases: bool,
    /// Keep the stored semantic index up to date as notes change (engine
    /// writes and hand edits), not only when a search or a sync runs.
    pub semantic_index: bool,
    /// Search by meaning: the weight of meaning against words (BM25) for a
    /// query of words, and for one holding a code or number (semantic/search.rs).
    pub semantic_weight: f64,
    pub semantic_code_weight: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: 1,
            auto_recompute: true,
            repair_links_on_hand_move: true,
            journal_retention_days: 90,
            bases: true,
            semantic_index: false,
            semantic_weight: crate::semantic::search::MEANING_WEIGHT,
            semantic_code_weight: crate::semantic::search::NAMES_WEIGHT,
        }
    }
}

impl Settings {
    /// Reads settings.json; a damaged file gives the defaults and the reason.
    pub fn parse(text: &str) -> (Settings, Option<String>) {
        match serde_json::from_str(text) {
            Ok(s) => (s, None),
            Err(e) => (
                Settings::default(),
                Some(format!(
                    "{FILE} cannot be read ({e}): the defaults apply until configure_database writes it again"
                )),
            ),
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The settings from every settings file of the store: settings.json, then
    /// each field's newest change of any device. Damaged files are reported.
    pub fn load<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> (Settings, Vec<String>) {
        let mut base = Settings::default();
        let mut warnings = vec![];
        // field -> ((at_ms, device), value): the newest change of each field.
        let mut newest: std::collections::HashMap<String, ((i64, String), Value)> = std::collections::HashMap::new();
        for (path, text) in files {
            if path == FILE {
                let (s, w) = Settings::parse(text);
                base = s;
                warnings.extend(w);
                continue;
            }
            let Some(device) = device_of(path) else { continue };
            let Some(c) = Changes::parse(text) else {
                warnings.push(format!("{path} cannot be read: this device's setting changes are left out"));
                continue;
            };
            for (k, v) in c.fields {
                let when = (v["at_ms"].as_i64().unwrap_or(0), device.to_string());
                if newest.get(&k).is_none_or(|(w, _)| when > *w) {
                    newest.insert(k, (when, v["value"].clone()));
                }
            }
        }
        let mut merged = serde_json::to_value(&base).unwrap_or_default();
        for (k, (_, v)) in newest {
            merged[k] = v;
        }
        match serde_json::from_value::<Settings>(merged) {
            Ok(mut s) => {
                if s.journal_retention_days < RETENTION_FLOOR_DAYS {
                    warnings.push(format!(
                        "journalRetentionDays {} (from a settings file in .datanotes/) is below a week: the journal keeps {RETENTION_FLOOR_DAYS} days",
                        s.journal_retention_days
                    ));
                    s.journal_retention_days = RETENTION_FLOOR_DAYS;
                }
                (s, warnings)
            }
            Err(e) => {
                warnings.push(format!(
                    "the settings changed on devices cannot be read together ({e}): settings.json's apply"
                ));
                (base, warnings)
            }
        }
    }
}
