//! Requests a web page could make. A page the person opens can send requests to
//! a loopback port (its `Origin` names the page), and with DNS rebinding a name
//! it controls can resolve to 127.0.0.1 (its `Host` names that name). Every route
//! refuses both with 403, as the MCP spec asks for the Origin and Jupyter Server
//! does for the Host: only this machine's origins, and a Host that is an IP
//! literal or localhost (a name, unless serve runs with --allow-remote). The
//! unspecified address (0.0.0.0, [::]) is no such literal: a page that asks for
//! http://0.0.0.0:8765 reaches a loopback port on Linux and macOS without any
//! rebinding, and serve listens there only with --allow-remote.

use std::net::IpAddr;

/// The host part of a Host header or an origin's authority, without its port.
fn bare(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

fn is_localhost(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.to_ascii_lowercase().ends_with(".localhost")
}

/// A Host that no rebinding can produce: an IP literal or localhost, but not
/// the unspecified address, which a web page can name (see the top).
pub fn host_ok(host: &str) -> bool {
    let h = bare(host.trim());
    is_localhost(h) || h.parse::<IpAddr>().is_ok_and(|ip| !ip.to_canonical().is_unspecified())
}

/// An origin of this machine: http or https, localhost or a loopback address.
/// `null` (sandboxed frames, files) is not one.
pub fn origin_ok(origin: &str) -> bool {
    let o = origin.trim();
    let Some(rest) = o.strip_prefix("http://").or_else(|| o.strip_prefix("https://")) else { return false };
    if rest.contains(['/', '@', '?', '#']) {
        return false;
    }
    let h = bare(rest);
    is_localhost(h) || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Why a request is refused, if it is: its Origin, then its Host (`remote`
/// lifts the Host check, for a serve reached by name on a network).
pub fn refusal(origin: Option<&str>, host: Option<&str>, remote: bool) -> Option<String> {
    if let Some(o) = origin.filter(|o| !origin_ok(o)) {
        return Some(format!("requests from the web origin {o} are refused: only this machine's pages (http://localhost, http://127.0.0.1) may call the engine. Call it from a program, which sends no Origin"));
    }
    if let Some(h) = host.filter(|h| !remote && !host_ok(h)) {
        return Some(format!("the Host {h} is refused (it may be a DNS rebinding, or a web page reaching this machine through 0.0.0.0): reach the engine as 127.0.0.1 or localhost, or serve with --allow-remote"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_of_this_machine_only() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8765",
            "http://[::1]:80",
            "http://app.localhost",
        ] {
            assert!(origin_ok(ok), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "",
            "http://10.0.0.1",
            "http://127.0.0.1.evil.example",
            "http://localhost@evil.example",
            "file://",
            "app://obsidian.md",
        ] {
            assert!(!origin_ok(bad), "{bad}");
        }
    }

    #[test]
    fn hosts_that_rebinding_cannot_produce() {
        for ok in ["127.0.0.1:8765", "localhost", "LOCALHOST:1", "[::1]:8765", "10.0.0.2:8765"] {
            assert!(host_ok(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8765",
            "127.0.0.1.nip.io:8765",
            "localhost.evil.example",
            "0.0.0.0",
            "0.0.0.0:8765",
            "[::]:8765",
            "[::ffff:0.0.0.0]:8765",
            "0:8765",
        ] {
            assert!(!host_ok(bad), "{bad}");
        }
        assert!(refusal(None, Some("evil.example"), true).is_none(), "--allow-remote lifts the Host check");
        assert!(refusal(None, Some("0.0.0.0:8765"), true).is_none(), "as serve may listen on 0.0.0.0 then");
        assert!(refusal(Some("null"), Some("127.0.0.1"), true).is_some(), "but never the Origin check");
        assert!(refusal(None, None, false).is_none(), "a program sends neither");
    }
}
