//! Where a webhook may send the database's changes. An agent that can create a
//! webhook could otherwise aim it at the cloud's metadata service, at the
//! person's router, or at a URL that carries credentials. The rules, by the
//! categories of IANA's IPv4 and IPv6 special-purpose address registries:
//!
//! - never: credentials in the URL; link-local addresses (169.254.0.0/16, which
//!   holds the cloud metadata services, and fe80::/10); the metadata services'
//!   other addresses and names; addresses no receiver has (unspecified, "this
//!   network", broadcast, multicast, documentation, discard, reserved, IETF
//!   protocol assignments, Teredo); numbers that are not a dotted IPv4 address
//!   (`2130706433`, `0x7f.1`, `017700000001`), which resolvers read as
//!   addresses;
//! - only when the host allows private addresses (serve --allow-private-webhooks):
//!   loopback, private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, 198.18/15,
//!   fc00::/7, fec0::/10) and names of the local network (localhost, .local,
//!   .internal, .lan, .home.arpa).
//!
//! IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64,
//! 6to4) are judged by the IPv4 address they carry. A name is checked again at
//! delivery, once resolved (`check_ip`), and the host connects to the address
//! it checked, so that a public name pointing at a private address is caught.

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
    // Resolvers read 2130706433, 0x7f.1, 017700000001 or 127.1 as addresses:
    // only the dotted four-part form is checked as one, so any other number is
    // refused.
    if host
        .split('.')
        .all(|part| !part.is_empty() && (part.bytes().all(|b| b.is_ascii_digit()) || part.starts_with("0x")))
    {
        return Some(Refusal::Never(format!("{host} is a number but not a dotted IPv4 address")));
    }
    // What parses as neither an address nor a host name (an IPv6 address with a
    // zone, %-escapes) means what some resolver makes of it: nothing is sent.
    if host.bytes().any(|b| b.is_ascii() && !(b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')) {
        return Some(Refusal::Never(format!("{host} is neither an address nor a host name")));
    }
    if host == "localhost" || LOCAL_SUFFIXES.iter().any(|s| host.ends_with(s)) {
        return Some(Refusal::Private(format!("{host} names this machine or the local network")));
    }
    None
}

/// Whether a delivery may go to a range: never, or only where the host allows
/// private addresses.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Never,
    Private,
}

impl Kind {
    fn refusal(self, why: String) -> Refusal {
        match self {
            Kind::Never => Refusal::Never(why),
            Kind::Private => Refusal::Private(why),
        }
    }
}

const LINK_LOCAL: &str = "a link-local or cloud metadata address";
const DOCUMENTATION: &str = "a documentation address, which no receiver has";

/// The IPv4 ranges of IANA's special-purpose address registry, and the metadata
/// addresses inside them; the first range holding an address decides. Ranges
/// of a network the person runs (their machine, their LAN, their carrier's or
/// tailnet's shared range, a test bench) are `Private`, for them to open; the
/// rest reach no receiver, or something other than the one the URL names.
const V4: [(Ipv4Addr, u8, Kind, &str); 17] = [
    // Alibaba Cloud's metadata service, inside the carrier range below.
    (Ipv4Addr::new(100, 100, 100, 200), 32, Kind::Never, LINK_LOCAL),
    (Ipv4Addr::new(169, 254, 0, 0), 16, Kind::Never, LINK_LOCAL),
    // Linux connects 0.0.0.0 to this machine: loopback in disguise, and no one
    // opening private addresses means that.
    (Ipv4Addr::new(0, 0, 0, 0), 8, Kind::Never, "in 0.0.0.0/8 (\"this network\"), which no receiver has"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, Kind::Private, "a loopback address"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, Kind::Private, "a private address"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, Kind::Private, "a private address"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, Kind::Private, "a private address"),
    // Carrier-grade NAT; Tailscale gives the person's own machines these too.
    (Ipv4Addr::new(100, 64, 0, 0), 10, Kind::Private, "a shared address of a carrier's or tailnet's network"),
    // Benchmarking: lab networks, and the made-up answers of proxies' fake-IP
    // DNS, which lead to a proxy on the person's machine.
    (Ipv4Addr::new(198, 18, 0, 0), 15, Kind::Private, "a benchmarking address, of a local test network"),
    // Protocol assignments (Oracle Cloud's metadata service is 192.0.0.192);
    // the two anycast services in it take no webhooks.
    (Ipv4Addr::new(192, 0, 0, 0), 24, Kind::Never, "reserved for IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, Kind::Never, DOCUMENTATION),
    (Ipv4Addr::new(198, 51, 100, 0), 24, Kind::Never, DOCUMENTATION),
    (Ipv4Addr::new(203, 0, 113, 0), 24, Kind::Never, DOCUMENTATION),
    (Ipv4Addr::new(192, 88, 99, 0), 24, Kind::Never, "the retired 6to4 relay range, which no receiver has"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, Kind::Never, "a multicast address, which no receiver has"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, Kind::Never, "the broadcast address, which no receiver has"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, Kind::Never, "reserved (240.0.0.0/4), which no receiver has"),
];

/// The IPv6 ranges of IANA's special-purpose registry that carry no IPv4
/// address, as `V4`; the forms that carry one are read in `carried_v4`.
const V6: [(Ipv6Addr, u8, Kind, &str); 11] = [
    (Ipv6Addr::UNSPECIFIED, 128, Kind::Never, "the unspecified address, which no receiver has"),
    (Ipv6Addr::LOCALHOST, 128, Kind::Private, "the loopback address"),
    // AWS's metadata service, inside the unique local range below.
    (Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254), 128, Kind::Never, LINK_LOCAL),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, Kind::Never, LINK_LOCAL),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, Kind::Private, "a unique local (private) address"),
    // Site-local: the private range before fc00::/7, retired but still a LAN's.
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, Kind::Private, "a site-local (private) address"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, Kind::Never, "a multicast address, which no receiver has"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, Kind::Never, DOCUMENTATION),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, Kind::Never, DOCUMENTATION),
    // Teredo (2001::/32) is in here: its IPv4 address is stored inverted, and
    // a tunnel would take the delivery to it unchecked.
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, Kind::Never, "reserved for IETF protocol assignments"),
    (Ipv6Addr::new(0x0100, 0, 0, 0, 0, 0, 0, 0), 64, Kind::Never, "a discard-only address, which no receiver has"),
];

fn v4_range(ip: Ipv4Addr) -> Option<(Kind, &'static str)> {
    let n = u32::from(ip);
    V4.iter()
        .find(|(net, len, ..)| (n ^ u32::from(*net)).checked_shr(32 - u32::from(*len)).unwrap_or(0) == 0)
        .map(|&(_, _, kind, what)| (kind, what))
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    (u128::from(ip) ^ u128::from(net)).checked_shr(128 - u32::from(len)).unwrap_or(0) == 0
}

fn classify(ip: IpAddr) -> Option<Refusal> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4).map(|(kind, what)| kind.refusal(format!("{v4} is {what}"))),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// The IPv4 address an IPv6 address stands for, where its range says it carries
/// one (a connection to it reaches that IPv4 host, through the system, a NAT64
/// or a 6to4 relay), with the range's name and whether a public one may
/// receive. Err: the range carries one that cannot be read.
fn carried_v4(ip: Ipv6Addr) -> Result<Option<(Ipv4Addr, &'static str, bool)>, &'static str> {
    let n = u128::from(ip);
    let low = Ipv4Addr::from(n as u32);
    let net = |a, b, c| Ipv6Addr::new(a, b, c, 0, 0, 0, 0, 0);
    Ok(if in_v6(ip, Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96) {
        Some((low, "IPv4-mapped", true))
    } else if n > 1 && in_v6(ip, Ipv6Addr::UNSPECIFIED, 96) {
        // Retired, routed by no system now: refused in any case, by its IPv4
        // address's category where that has one (the more telling reason).
        Some((low, "IPv4-compatible", false))
    } else if in_v6(ip, net(0x64, 0xff9b, 0), 96) {
        Some((low, "NAT64", true))
    } else if in_v6(ip, net(0x64, 0xff9b, 1), 48) {
        // A local NAT64 may embed the address after any prefix length from 48
        // to 96; only the /96 layout (bits 48-95 zero) can be read for sure.
        if (n >> 32) & ((1 << 48) - 1) != 0 {
            return Err("a local NAT64 address whose IPv4 address cannot be read");
        }
        Some((low, "NAT64", true))
    } else if in_v6(ip, net(0x2002, 0, 0), 16) {
        Some((Ipv4Addr::from((n >> 80) as u32), "6to4", true))
    } else {
        None
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<Refusal> {
    if let Some(&(_, _, kind, what)) = V6.iter().find(|(net, len, ..)| *len == 128 && ip == *net) {
        return Some(kind.refusal(format!("{ip} is {what}")));
    }
    match carried_v4(ip) {
        Err(what) => return Some(Refusal::Never(format!("{ip} is {what}"))),
        Ok(Some((v4, form, public_ok))) => {
            return match v4_range(v4) {
                Some((kind, what)) => Some(kind.refusal(format!("{ip} is the {form} form of {v4}, {what}"))),
                None if public_ok => None,
                None => Some(Refusal::Never(format!("{ip} is a retired {form} address, which no receiver has"))),
            }
        }
        Ok(None) => {}
    }
    if let Some(&(_, _, kind, what)) = V6.iter().find(|(net, len, ..)| in_v6(ip, *net, *len)) {
        return Some(kind.refusal(format!("{ip} is {what}")));
    }
    // Outside 2000::/3 IANA has allocated nothing for hosts: the rest is
    // reserved, and a future special range there is refused before it exists.
    if !in_v6(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Some(Refusal::Never(format!("{ip} is reserved by the IETF, which no receiver has")));
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

    /// The refusal of an address as a resolver would answer it.
    fn ip(text: &str) -> Option<Refusal> {
        check_ip(text.parse().unwrap_or_else(|e| panic!("{text}: {e}")), false).err()
    }

    /// Asserts each address of each category is refused as `refused` says
    /// (None: not at all).
    fn judged(refused: Option<Kind>, categories: &[(&str, &[&str])]) {
        for (category, addresses) in categories {
            for a in *addresses {
                let got = ip(a);
                let ok = match refused {
                    Some(Kind::Never) => matches!(got, Some(Refusal::Never(_))),
                    Some(Kind::Private) => matches!(got, Some(Refusal::Private(_))),
                    None => got.is_none(),
                };
                assert!(ok, "{a} ({category}): {got:?}");
            }
        }
    }

    #[test]
    fn every_ipv4_special_purpose_range_is_refused_by_its_category() {
        // Each range at its first and last address, or one inside.
        judged(
            Some(Kind::Never),
            &[
                ("this network", &["0.0.0.0", "0.1.2.3", "0.255.255.255"]),
                ("link-local, metadata", &["169.254.0.0", "169.254.169.254", "169.254.255.255"]),
                ("Alibaba's metadata, inside 100.64/10", &["100.100.100.200"]),
                ("IETF protocol assignments", &["192.0.0.0", "192.0.0.192", "192.0.0.255"]),
                ("documentation", &["192.0.2.0", "192.0.2.255", "198.51.100.7", "203.0.113.255"]),
                ("6to4 relay anycast", &["192.88.99.1"]),
                ("multicast", &["224.0.0.1", "239.255.255.255"]),
                ("reserved, broadcast", &["240.0.0.0", "250.1.2.3", "255.255.255.254", "255.255.255.255"]),
            ],
        );
        judged(
            Some(Kind::Private),
            &[
                ("loopback", &["127.0.0.1", "127.255.255.255"]),
                ("private", &["10.0.0.0", "10.255.255.255", "172.16.0.0", "172.31.255.255", "192.168.255.255"]),
                ("CGNAT, tailnets", &["100.64.0.0", "100.127.255.255"]),
                ("benchmarking", &["198.18.0.0", "198.19.255.255"]),
            ],
        );
        let neighbours: &[&str] = &[
            "1.0.0.0",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.0",
            "192.0.3.0",
            "192.88.98.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "198.51.99.1",
            "203.0.112.1",
            "223.255.255.255",
        ];
        judged(None, &[("the ranges' neighbours", neighbours), ("public", &["93.184.216.34", "1.1.1.1"])]);
    }

    #[test]
    fn every_ipv6_special_purpose_range_is_refused_by_its_category() {
        judged(
            Some(Kind::Never),
            &[
                ("unspecified", &["::"]),
                ("link-local", &["fe80::", "febf:ffff::1"]),
                ("AWS metadata, inside fc00::/7", &["fd00:ec2::254"]),
                ("multicast", &["ff02::1", "ff0e::1"]),
                ("discard-only", &["100::", "100::ffff:ffff:ffff:ffff"]),
                ("Teredo: its IPv4 address hidden", &["2001::", "2001:0:4136:e378:8000:63bf:3fff:fdd2"]),
                ("the rest of 2001::/23", &["2001:1::1", "2001:1ff:ffff::"]),
                ("documentation", &["2001:db8::", "2001:db8:ffff::1", "3fff::", "3fff:fff::1"]),
                ("reserved, outside 2000::/3", &["5f00::1", "4000::1", "::ffff:0:7f00:1", "e000::1"]),
            ],
        );
        judged(
            Some(Kind::Private),
            &[
                ("loopback", &["::1"]),
                ("unique local", &["fc00::", "fd12:3456::1", "fdff:ffff::1"]),
                ("site-local", &["fec0::1", "feff::1"]),
            ],
        );
        let public: &[&str] = &["2606:4700::1111", "2001:200::1", "2001:dc0::1", "3fff:1000::1", "2a00:1450::1"];
        judged(None, &[("public", public), ("the 6bone's, returned", &["3ffe::1"])]);
    }

    #[test]
    fn ipv6_forms_carrying_an_ipv4_address_are_judged_by_it() {
        judged(
            Some(Kind::Never),
            &[
                ("IPv4-mapped", &["::ffff:169.254.169.254", "::ffff:0.0.0.0", "::ffff:224.0.0.1"]),
                ("IPv4-compatible, retired", &["::169.254.169.254", "::0.0.0.2", "::93.184.216.34"]),
                ("NAT64", &["64:ff9b::169.254.169.254", "64:ff9b::a9fe:a9fe", "64:ff9b::192.0.2.1"]),
                ("local NAT64", &["64:ff9b:1::169.254.169.254"]),
                ("local NAT64, /48 layout unreadable", &["64:ff9b:1:a9fe:a9:fea9::"]),
                ("6to4", &["2002:a9fe:a9fe::", "2002:0:0::1", "2002:c000:0201::"]),
            ],
        );
        judged(
            Some(Kind::Private),
            &[
                ("IPv4-mapped", &["::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1"]),
                ("IPv4-compatible", &["::127.0.0.1", "::10.1.2.3"]),
                ("NAT64", &["64:ff9b::127.0.0.1", "64:ff9b::10.0.0.1", "64:ff9b:1::192.168.1.1"]),
                ("6to4", &["2002:7f00:1::", "2002:c0a8:101::1"]),
            ],
        );
        judged(
            None,
            &[
                ("IPv4-mapped", &["::ffff:93.184.216.34"]),
                ("NAT64", &["64:ff9b::93.184.216.34", "64:ff9b:1::93.184.216.34"]),
                ("6to4", &["2002:5db8:d822::1"]),
            ],
        );
        let why = ip("64:ff9b::127.0.0.1").unwrap();
        assert!(why.reason().contains("127.0.0.1, a loopback address"), "{why:?}");
    }

    #[test]
    fn numbers_and_local_names_are_judged_by_what_they_mean() {
        for url in [
            "http://017700000001/",
            "http://0x7f.1/",
            "http://0x7f.0.0.1/",
            "http://0177.0.0.1/",
            "http://127.0.0.01/",
            "http://2130706433./",
            "http://[fe80::1%25eth0]/",
            "http://%31%32%37.0.0.1/",
            "http://fe80::1/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://METADATA.GOOGLE.INTERNAL./",
        ] {
            assert!(never(url), "{url}: {:?}", check_url(url, true));
        }
        for url in ["http://localhost./", "http://localhost../", "http://api.localhost/", "http://a.b.localhost./x"] {
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
        // Unicode names go to the resolver, whose answer is checked.
        assert_eq!(check_url("https://bücher.example/hook", false), Ok(()));
    }
}
