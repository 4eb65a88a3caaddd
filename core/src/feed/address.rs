//! Where a webhook may send the database's changes. An agent that can create a
//! webhook could otherwise aim it at the cloud's metadata service, at the
//! person's router, or at a URL that carries credentials. The rules:
//!
//! - never: credentials in the URL; link-local addresses (169.254.0.0/16, which
//!   holds the cloud metadata services, and fe80::/10); the metadata services'
//!   other addresses and names; unspecified, broadcast and multicast addresses;
//!   numbers that are not a dotted IPv4 address (`2130706433`, `0x7f.1`), which
//!   resolvers read as addresses;
//! - only when the host allows private addresses (serve --allow-private-webhooks):
//!   loopback, private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7)
//!   and names of the local network (localhost, .local, .internal, .lan,
//!   .home.arpa).
//!
//! A name is checked again at delivery, once resolved (`check_ip`), so that a
//! public name pointing at a private address is caught there.

// core::net, not std::net: the address types only, no sockets.
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused: `Never`, or `Private` (allowed by a host setting).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Never(String),
    Private(String),
}

impl Refusal {
    pub fn reason(&self) -> &str {
        match self {
            Refusal::Never(r) | Refusal::Private(r) => r,
        }
    }

    /// The way out, for the refusal's hint.
    pub fn hint(&self) -> &'static str {
        match self {
            Refusal::Never(_) => "Give the receiver's public address, such as https://example.com/hooks/datanotes; authenticate it with the webhook's secret (X-Datanotes-Signature), not with credentials in the URL.",
            Refusal::Private(_) => "To send to your own machine or network, start the engine with datanotes serve --allow-private-webhooks (or DATANOTES_ALLOW_PRIVATE_WEBHOOKS=1).",
        }
    }
}

const METADATA_NAMES: [&str; 4] = ["metadata.google.internal", "metadata", "instance-data", "metadata.azure.com"];
const LOCAL_SUFFIXES: [&str; 5] = [".local", ".internal", ".lan", ".home.arpa", ".localhost"];

/// The host of an http(s) URL, lower case, IPv6 without brackets; or why the URL
/// cannot be a webhook's.
pub fn host_of(url: &str) -> Result<String, String> {
    let lower = url.trim().to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .ok_or_else(|| format!("\"{url}\" is not an http(s) URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(format!("\"{url}\" carries credentials (user:password@): they would be sent with every delivery"));
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        let (h, port) = v6.split_once(']').ok_or_else(|| format!("\"{url}\" has an unclosed [ in its address"))?;
        check_port(url, port.strip_prefix(':'))?;
        h.to_string()
    } else {
        let (h, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        check_port(url, port)?;
        h.trim_end_matches('.').to_string()
    };
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("\"{url}\" names no host"));
    }
    Ok(host)
}

fn check_port(url: &str, port: Option<&str>) -> Result<(), String> {
    match port {
        None => Ok(()),
        Some(p) if p.parse::<u16>().is_ok_and(|n| n > 0) => Ok(()),
        Some(p) => Err(format!("\"{url}\" has no valid port (\"{p}\")")),
    }
}

/// Whether the URL may be a webhook's (`allow_private`: the host's setting).
pub fn check_url(url: &str, allow_private: bool) -> Result<(), Refusal> {
    let host = host_of(url).map_err(Refusal::Never)?;
    let refusal = match host.parse::<IpAddr>() {
        Ok(ip) => classify(ip),
        Err(_) => classify_name(&host),
    };
    match refusal {
        Some(Refusal::Private(_)) if allow_private => Ok(()),
        Some(r) => Err(r),
        None => Ok(()),
    }
}

/// Whether a resolved address may receive a delivery.
pub fn check_ip(ip: IpAddr, allow_private: bool) -> Result<(), Refusal> {
    match classify(ip) {
        Some(Refusal::Private(_)) if allow_private => Ok(()),
        Some(r) => Err(r),
        None => Ok(()),
    }
}

fn classify_name(host: &str) -> Option<Refusal> {
    if METADATA_NAMES.contains(&host) {
        return Some(Refusal::Never(format!("{host} is a cloud metadata service")));
    }
    // Resolvers read 2130706433, 0x7f.1 or 127.1 as addresses: only the dotted
    // four-part form is checked as one, so any other number is refused.
    if host
        .split('.')
        .all(|part| !part.is_empty() && (part.bytes().all(|b| b.is_ascii_digit()) || part.starts_with("0x")))
    {
        return Some(Refusal::Never(format!("{host} is a number but not a dotted IPv4 address")));
    }
    if host == "localhost" || LOCAL_SUFFIXES.iter().any(|s| host.ends_with(s)) {
        return Some(Refusal::Private(format!("{host} names this machine or the local network")));
    }
    None
}

fn classify(ip: IpAddr) -> Option<Refusal> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Refusal> {
    let [a, b, ..] = ip.octets();
    if ip.is_link_local() || ip == Ipv4Addr::new(100, 100, 100, 200) {
        return Some(Refusal::Never(format!("{ip} is a link-local or cloud metadata address")));
    }
    if ip.is_unspecified() || a == 0 || ip.is_broadcast() || ip.is_multicast() {
        return Some(Refusal::Never(format!("{ip} is not an address a receiver can have")));
    }
    if ip.is_loopback() || ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        return Some(Refusal::Private(format!("{ip} is a loopback or private address")));
    }
    None
}

fn classify_v6(ip: Ipv6Addr) -> Option<Refusal> {
    let first = ip.segments()[0];
    let aws_metadata = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
    if (first & 0xffc0) == 0xfe80 || ip == aws_metadata {
        return Some(Refusal::Never(format!("{ip} is a link-local or cloud metadata address")));
    }
    if ip.is_unspecified() || ip.is_multicast() {
        return Some(Refusal::Never(format!("{ip} is not an address a receiver can have")));
    }
    if ip.is_loopback() || (first & 0xfe00) == 0xfc00 {
        return Some(Refusal::Private(format!("{ip} is a loopback or private address")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn never(url: &str) -> bool {
        matches!(check_url(url, true), Err(Refusal::Never(_)))
    }

    fn private(url: &str) -> bool {
        matches!(check_url(url, false), Err(Refusal::Private(_))) && check_url(url, true).is_ok()
    }

    #[test]
    fn refuses_metadata_link_local_credentials_and_odd_numbers_always() {
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "http://[fe80::1]/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "https://user:pass@example.com/hook",
            "https://token@example.com/hook",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://127.1/",
            "http://0.0.0.0:80/",
            "http://[::]/",
            "http://[::ffff:169.254.169.254]/",
            "http://224.0.0.1/",
            "ftp://example.com/",
            "http://example.com:99999/",
        ] {
            assert!(never(url), "{url}: {:?}", check_url(url, true));
        }
    }

    #[test]
    fn private_addresses_and_local_names_need_the_hosts_setting() {
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://localhost/hook",
            "http://[::1]:9/",
            "http://10.1.2.3/",
            "http://172.20.0.1/",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://[fd12::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://nas.local/",
            "http://db.internal:5000/",
            "http://router.home.arpa/",
        ] {
            assert!(private(url), "{url}: {:?}", check_url(url, false));
        }
    }

    #[test]
    fn public_addresses_pass() {
        for url in [
            "https://example.com/hooks/datanotes",
            "http://93.184.216.34:8080/x",
            "https://[2606:4700::1111]/",
            "https://EXAMPLE.com./x",
        ] {
            assert_eq!(check_url(url, false), Ok(()), "{url}");
        }
        assert!(check_ip("10.0.0.1".parse().unwrap(), false).is_err());
        assert!(check_ip("10.0.0.1".parse().unwrap(), true).is_ok());
        assert!(check_ip("169.254.169.254".parse().unwrap(), true).is_err());
        assert!(check_ip("1.1.1.1".parse().unwrap(), false).is_ok());
    }
}
