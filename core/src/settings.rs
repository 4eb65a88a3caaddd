//! The database settings, kept in the store as `settings.json`.

use serde::{Deserialize, Serialize};

pub const FILE: &str = "settings.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    pub version: u32,
    pub auto_recompute: bool,
    pub repair_links_on_hand_move: bool,
    pub journal_retention_days: u32,
    /// Keep an Obsidian Bases file for each table and view (bases.rs).
    pub bases: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: 1,
            auto_recompute: true,
            repair_links_on_hand_move: true,
            journal_retention_days: 90,
            bases: true,
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
}
