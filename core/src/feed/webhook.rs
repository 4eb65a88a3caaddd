//! Webhooks of the change feed: who wants which events, where each one's cursor
//! stands, and the deliveries the host makes for the engine. Kept in the store as
//! `webhooks.json`, and once devices sync one vault as `webhooks.<device>.json`:
//! the webhooks each device made (it alone delivers them, so it alone moves
//! their cursors) and the other devices' it deleted. Not journaled.

use crate::edits::StoreWrite;
use crate::feed::{address, Event, Feed};
pub use crate::texthash::hex;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::BTreeSet;

pub const FILE: &str = "webhooks.json";
/// Events in one delivery at most.
pub const BATCH: usize = 100;
/// After this long failing without a break, a webhook is disabled.
pub const DISABLE_AFTER_MS: i64 = 24 * 3600 * 1000;

/// One POST the host makes: `body` as is, with `headers`; it reports the answer
/// with `Engine::delivered`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delivery {
    pub webhook: String,
    pub url: String,
    pub body: String,
    pub headers: Vec<(String, String)>,
    /// The last event's seq in the batch: the cursor once a 2xx comes back.
    pub last: u64,
}

/// Which events of the feed a reader wants (list_changes and webhooks share it);
/// its `where` is in the filter language (`crate::filter::Filter`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    #[serde(default)]
    pub tables: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    #[serde(default)]
    pub columns: Option<Vec<String>>,
    #[serde(default)]
    pub exclude_actor: Option<String>,
    #[serde(default, rename = "where")]
    pub where_: Option<Value>,
}

/// How a webhook's deliveries go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookStatus {
    Ok,
    /// Its last delivery failed: it is retried with back-off.
    Failing,
    /// It failed for a day without a break: no more deliveries.
    Disabled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hook {
    pub id: String,
    pub url: String,
    pub filter: Subscription,
    pub secret: String,
    pub cursor: u64,
    pub status: HookStatus,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub last_delivery: Option<String>,
    #[serde(default)]
    pub last_error: Option<String>,
    #[serde(default)]
    pub failures: u32,
    #[serde(default)]
    pub failing_since_ms: Option<i64>,
    #[serde(default)]
    pub next_attempt_ms: i64,
    /// A delivery the host is making now (not kept across restarts: it is made again).
    #[serde(skip)]
    pub in_flight: bool,
    /// The device whose engine delivers it (the one it was created on): devices
    /// syncing one vault share the feed, and each event goes out once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

impl Hook {
    /// Records why its address is refused (disabled for good when no setting can
    /// allow it); whether anything changed.
    fn refuse(&mut self, r: &address::Refusal) -> bool {
        let why = format!("{}: not delivered. {}", r.reason(), r.hint());
        let status = match r {
            address::Refusal::Never(_) => HookStatus::Disabled,
            address::Refusal::Private(_) => self.status,
        };
        let changed = self.last_error.as_deref() != Some(why.as_str()) || self.status != status;
        self.last_error = Some(why);
        self.status = status;
        changed
    }
}

#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pub list: Vec<Hook>,
    /// The host allows webhooks to loopback and private addresses
    /// (`crate::feed::address`); never the engine's own setting, which an agent
    /// could change.
    pub allow_private: bool,
    /// This device (the engine's): its webhooks go to a file of its own.
    pub device: Option<String>,
    /// Webhooks of other devices deleted on any device, by id.
    removed: BTreeSet<String>,
    /// This device's key, which seals its file (seal.rs).
    key: crate::seal::Key,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    webhooks: Vec<Hook>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    removed: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seal: Option<String>,
}

/// The file of the webhooks `device` made.
pub fn device_file(device: &str) -> String {
    format!("webhooks.{device}.json")
}

/// Whether a store file holds webhooks (and so their signing secrets).
pub fn is_file(path: &str) -> bool {
    path == FILE || device_of(path).is_some()
}

/// The device of a file of webhooks, from its path.
pub(crate) fn device_of(path: &str) -> Option<&str> {
    crate::log::order::device_named(path, "webhooks")
}

impl Hooks {
    /// The webhooks of every file: `webhooks.json`'s, then each device's in
    /// turn (one that a device took over is that device's), less the deleted.
    pub fn load(files: &[(String, String)]) -> (Hooks, Vec<String>) {
        let mut hooks = Hooks::default();
        let mut warnings = vec![];
        let mut ours: Vec<&(String, String)> =
            files.iter().filter(|(p, _)| p == FILE || device_of(p).is_some()).collect();
        // webhooks.json sorts after every device's file: read first.
        ours.sort_by(|(a, _), (b, _)| (a != FILE, a).cmp(&(b != FILE, b)));
        for (path, text) in ours {
            if let Err(e) = hooks.read(path, text) {
                warnings.push(format!("{path} cannot be read ({e}): its webhooks are not delivered until it is fixed or a webhook is created anew"));
            }
        }
        (hooks, warnings)
    }

    /// Takes in one file: a device's file is the whole of that device's webhooks.
    fn read(&mut self, path: &str, text: &str) -> Result<(), serde_json::Error> {
        let saved = serde_json::from_str::<Saved>(text)?;
        let owner = device_of(path);
        if let Some(d) = owner {
            self.list.retain(|h| h.device.as_deref() != Some(d));
        }
        for mut h in saved.webhooks {
            // A file holds its owner's webhooks whatever its entries say (and
            // webhooks.json no device's): an entry naming a device would make
            // that device deliver to an address its person never confirmed.
            h.device = owner.map(str::to_string);
            match self.list.iter_mut().find(|x| x.id == h.id) {
                Some(x) => *x = h,
                None => self.list.push(h),
            }
        }
        self.removed.extend(saved.removed);
        let removed = &self.removed;
        self.list.retain(|h| !removed.contains(&h.id));
        Ok(())
    }

    /// Another device's file, brought by a sync while the engine runs (this
    /// device's own, seen again, is left: the engine holds it newer).
    pub fn arrived(&mut self, path: &str, text: &str) -> Option<String> {
        let theirs = device_of(path).is_some_and(|d| Some(d) != self.device.as_deref());
        let e = theirs.then(|| self.read(path, text).err()).flatten()?;
        Some(format!("{path} cannot be read ({e}): left as it was"))
    }

    /// From now on this device's: its file. The webhooks of `webhooks.json`
    /// (made before devices, or put there by anyone who can write to the
    /// vault) are not taken over: they wait until a person confirms one here.
    pub fn set_device(&mut self, device: &str) {
        self.device = Some(device.to_string());
    }

    /// This device's key, and its own file as the store holds it: when the
    /// file's seal is not this key's (someone else wrote a file under this
    /// device's name), its webhooks wait for confirmation like any other's.
    pub fn set_key(&mut self, key: crate::seal::Key, own_file: Option<&str>) {
        let me = self.device.clone();
        let sealed = own_file.and_then(|t| serde_json::from_str::<Saved>(t).ok()).is_some_and(|mut saved| {
            let seal = saved.seal.take();
            key.verifies(&saved, seal.as_deref())
        });
        if key.is_set() && !sealed {
            for h in self.list.iter_mut().filter(|h| h.device.is_some() && h.device == me) {
                h.device = None;
            }
        }
        self.key = key;
    }

    /// Whether a webhook waits for this device's person to confirm it before
    /// anything is delivered to it: it came in a file no device owns.
    pub fn waiting(&self, h: &Hook) -> bool {
        self.device.is_some() && h.device.is_none()
    }

    /// Deletes a webhook; one of another device's is remembered as deleted.
    pub fn remove(&mut self, i: usize) -> Hook {
        let h = self.list.remove(i);
        if self.device.is_some() && h.device != self.device {
            self.removed.insert(h.id.clone());
        }
        h
    }

    /// The file this device keeps its webhooks in, as they are now.
    pub fn save(&self) -> StoreWrite {
        let (path, webhooks) = match &self.device {
            None => (FILE.to_string(), self.list.clone()),
            Some(d) => (device_file(d), self.list.iter().filter(|h| h.device.as_deref() == Some(d)).cloned().collect()),
        };
        let mut saved = Saved { format: 1, webhooks, removed: self.removed.clone(), seal: None };
        if self.device.is_some() {
            saved.seal = self.key.seal(&saved);
        }
        StoreWrite::put(path, serde_json::to_string_pretty(&saved).unwrap_or_default() + "\n")
    }

    /// A webhook as list_webhooks shows it: no secret.
    pub fn shown(h: &Hook) -> Value {
        let mut v = json!({
            "id": h.id, "url": h.url, "filter": h.filter, "cursor": h.cursor, "status": h.status,
            "created_at": h.created_at, "last_delivery": h.last_delivery, "last_error": h.last_error,
        });
        if let Some(d) = &h.device {
            v["device"] = d.clone().into();
        }
        v
    }
}

/// `sha256=<hex of HMAC-SHA256(secret, body)>`
pub fn signature(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body.as_bytes());
    format!("sha256={}", hex(&mac.finalize().into_bytes()))
}

/// A secret from the host's entropy and what makes this one unlike the others.
pub fn secret(entropy: &[u8], salt: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(entropy).expect("HMAC takes any key length");
    mac.update(salt.as_bytes());
    hex(&mac.finalize().into_bytes())
}

impl Hooks {
    /// The deliveries due at `now_ms`, one per webhook at most; cursors that only
    /// skip unwanted events move on without a delivery.
    /// `wants` holds each webhook's filter as compiled (None: it no longer
    /// compiles), `matches` tells an event it wants: both the change feed's
    /// operations' (ops/changes.rs).
    pub(crate) fn plan<W>(
        &mut self,
        feed: &Feed,
        wants: &[Option<W>],
        matches: impl Fn(&W, &Event) -> bool,
        now_ms: i64,
    ) -> (Vec<Delivery>, Vec<StoreWrite>) {
        let mut out = vec![];
        let mut moved = false;
        for i in 0..self.list.len() {
            let h = &self.list[i];
            let elsewhere = h.device.as_deref().is_some_and(|d| Some(d) != self.device.as_deref());
            if h.in_flight
                || elsewhere
                || self.waiting(h)
                || h.status == HookStatus::Disabled
                || now_ms < h.next_attempt_ms
                || h.cursor >= feed.head
            {
                continue;
            }
            // A webhook from before the address rules, written in by hand, or made
            // while the host allowed private addresses: nothing goes there.
            if let Err(r) = address::check_url(&h.url, self.allow_private) {
                moved |= self.list[i].refuse(&r);
                continue;
            }
            let Some(Some(wants)) = wants.get(i) else { continue };
            let mut events: Vec<&Event> = vec![];
            let mut last = h.cursor;
            for ev in feed.after(h.cursor) {
                last = ev.seq;
                if matches(wants, ev) {
                    events.push(ev);
                    if events.len() == BATCH {
                        break;
                    }
                }
            }
            let h = &self.list[i];
            if events.is_empty() {
                let h = &mut self.list[i];
                h.cursor = last;
                moved = true;
                continue;
            }
            let body = json!({"webhook": h.id, "events": events, "last": last}).to_string();
            out.push(Delivery {
                webhook: h.id.clone(),
                url: h.url.clone(),
                headers: vec![
                    ("Content-Type".into(), "application/json".into()),
                    ("X-Datanotes-Signature".into(), signature(&h.secret, &body)),
                    ("X-Datanotes-Webhook".into(), h.id.clone()),
                ],
                body,
                last,
            });
            self.list[i].in_flight = true;
        }
        let store = if moved { vec![self.save()] } else { vec![] };
        (out, store)
    }

    /// The host's report of a delivery: the HTTP status it got, or why it got
    /// none. A 2xx moves the webhook's cursor to `last`; anything else backs off
    /// (1 s, 2 s, 4 s… at most an hour), and a day of failures disables it.
    /// Returns the store files to write (the webhooks' state).
    pub(crate) fn delivered(
        &mut self,
        webhook: &str,
        last: u64,
        result: Result<u16, String>,
        now_ms: i64,
    ) -> Vec<StoreWrite> {
        let Some(h) = self.list.iter_mut().find(|h| h.id == webhook) else { return vec![] };
        h.in_flight = false;
        match result {
            Ok(code) if (200..300).contains(&code) => {
                h.cursor = h.cursor.max(last);
                h.status = HookStatus::Ok;
                h.failures = 0;
                h.failing_since_ms = None;
                h.next_attempt_ms = 0;
                h.last_delivery = Some(crate::time::iso(now_ms));
                h.last_error = None;
            }
            other => {
                h.failures += 1;
                h.last_error = Some(match other {
                    Ok(code) => format!("HTTP {code}"),
                    Err(e) => e,
                });
                let since = *h.failing_since_ms.get_or_insert(now_ms);
                let wait = 1000i64.saturating_mul(1 << h.failures.min(12)).min(3_600_000);
                h.next_attempt_ms = now_ms + wait;
                h.status = if now_ms - since >= DISABLE_AFTER_MS { HookStatus::Disabled } else { HookStatus::Failing };
            }
        }
        vec![self.save()]
    }
}
