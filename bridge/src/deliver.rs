//! Webhook deliveries: the engine plans each POST (url, body, signed headers) and
//! keeps each webhook's cursor and back-off; this sender makes the POSTs and
//! reports each answer back with `Engine::delivered`.

use crate::shared::Shared;
use datanotes_core::feed::address;
use datanotes_core::webhook::Delivery;
use std::time::Duration;
use tokio::sync::mpsc;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// How long one POST may take in all.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the sender; the engine's deliveries go to it from now on.
pub fn start(shared: &Shared) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Delivery>();
    shared.send_deliveries_to(tx);
    let private = shared.private_webhooks();
    let agent = agent(Checked { private, lookup: DefaultResolver::default() });
    let shared = shared.clone();
    tokio::spawn(async move {
        while let Some(d) = rx.recv().await {
            let (shared, agent) = (shared.clone(), agent.clone());
            tokio::spawn(async move {
                let (webhook, last) = (d.webhook.clone(), d.last);
                let result = match tokio::task::spawn_blocking(move || post(&agent, private, &d)).await {
                    Ok(r) => r,
                    Err(e) => Err(format!("the delivery stopped unexpectedly: {e}")),
                };
                if let Err(e) = &result {
                    eprintln!("datanotes: webhook {webhook}: {e}");
                }
                shared.delivered(webhook, last, result).await;
            });
        }
    });
}

/// The agent that makes the POSTs: every connection it opens goes to an address
/// `resolver` answered and checked.
fn agent<R: Resolver>(resolver: Checked<R>) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A redirect would send the signed batch to an address no one checked
        // when the webhook was made; the receiver's 3xx is its answer.
        .max_redirects(0)
        // A proxy (HTTP(S)_PROXY) resolves the name itself, where the check
        // cannot follow: a delivery connects to the address that was checked.
        .proxy(None)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("datanotes/", env!("CARGO_PKG_VERSION")))
        .build();
    ureq::Agent::with_parts(config, DefaultConnector::default(), resolver)
}

/// A resolver that refuses what `address::check_ip` refuses. A name's answer can
/// change between two lookups (a rebinding DNS answers a public address, then
/// 127.0.0.1), so the check and the connection use one lookup: ureq connects to
/// the addresses this returns, and looks up nothing else.
#[derive(Debug)]
struct Checked<R> {
    private: bool,
    lookup: R,
}

/// Why the resolver refused an address, carried through ureq's error.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

impl<R: Resolver> Resolver for Checked<R> {
    fn resolve(&self, uri: &Uri, config: &Config, timeout: NextTimeout) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.lookup.resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default();
        for a in addrs.iter() {
            if let Err(r) = address::check_ip(a.ip(), self.private) {
                let (ip, why, hint) = (a.ip(), r.reason(), r.hint());
                let why = format!("{uri}: {host} resolves to {ip}, and {why}: not delivered. {hint}");
                return Err(ureq::Error::Other(Box::new(Refused(why))));
            }
        }
        Ok(addrs)
    }
}

/// One POST: the status that came back, or why none did. Only http and https
/// URLs to allowed names are tried, and only to allowed addresses (`Checked`).
fn post(agent: &ureq::Agent, private: bool, d: &Delivery) -> Result<u16, String> {
    // A webhook written into webhooks.json by hand, or made before the rules.
    address::check_url(&d.url, private)
        .map_err(|r| format!("{}: {}: not delivered. {}", d.url, r.reason(), r.hint()))?;
    let mut req = agent.post(&d.url);
    let mut typed = false;
    for (k, v) in &d.headers {
        typed |= k.eq_ignore_ascii_case("content-type");
        req = req.header(k, v);
    }
    if !typed {
        req = req.header("Content-Type", "application/json");
    }
    let mut res = req.send(d.body.as_bytes()).map_err(|e| match &e {
        ureq::Error::Other(inner) if inner.is::<Refused>() => inner.to_string(),
        _ => format!("POST {}: {e}", d.url),
    })?;
    // The receiver's answer is not needed; reading a little of it lets the
    // connection be reused.
    let _ = res.body_mut().with_config().limit(64 << 10).read_to_vec();
    Ok(res.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// A resolver whose answers the test sets, one a lookup (the last one
    /// repeated), counting the lookups.
    #[derive(Debug, Clone, Default)]
    struct Answers {
        answers: Arc<Mutex<Vec<Vec<SocketAddr>>>>,
        lookups: Arc<AtomicUsize>,
    }

    impl Answers {
        fn new(answers: Vec<Vec<SocketAddr>>) -> Self {
            Answers { answers: Arc::new(Mutex::new(answers)), lookups: Arc::default() }
        }
    }

    impl Resolver for Answers {
        fn resolve(&self, _: &Uri, _: &Config, _: NextTimeout) -> Result<ResolvedSocketAddrs, ureq::Error> {
            let n = self.lookups.fetch_add(1, Ordering::SeqCst);
            let answers = self.answers.lock().unwrap();
            let answer = answers.get(n).or(answers.last()).ok_or(ureq::Error::HostNotFound)?;
            let mut out = self.empty();
            answer.iter().for_each(|a| out.push(*a));
            Ok(out)
        }
    }

    /// A loopback receiver that answers every request with `answer`: its address
    /// and how many requests it got.
    fn receiver(answer: impl Into<String>) -> (SocketAddr, Arc<AtomicUsize>) {
        let answer = answer.into();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (addr, got) = (l.local_addr().unwrap(), Arc::new(AtomicUsize::new(0)));
        let count = got.clone();
        std::thread::spawn(move || {
            for mut s in l.incoming().map_while(Result::ok) {
                count.fetch_add(1, Ordering::SeqCst);
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut len = 0;
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                    let lower = line.to_ascii_lowercase();
                    len = lower.strip_prefix("content-length:").map_or(len, |v| v.trim().parse().unwrap());
                    line.clear();
                }
                let _ = r.read_exact(&mut vec![0; len]);
                let _ = write!(s, "{answer}");
            }
        });
        (addr, got)
    }

    const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

    fn delivery(url: &str) -> Delivery {
        Delivery { webhook: "w".into(), url: url.into(), body: "{}".into(), headers: vec![], last: 1 }
    }

    #[test]
    fn deliveries_to_refused_addresses_are_not_tried() {
        let lookup = Answers::default();
        let agent = agent(Checked { private: false, lookup: lookup.clone() });
        // A webhook written into webhooks.json by hand, or made before the rules.
        for url in
            ["http://169.254.169.254/latest/", "http://user:pw@example.com/", "http://127.0.0.1:9/", "ftp://x.example/"]
        {
            let e = post(&agent, false, &delivery(url)).unwrap_err();
            assert!(e.contains("not delivered"), "{url}: {e}");
        }
        assert_eq!(lookup.lookups.load(Ordering::SeqCst), 0, "nothing was looked up");
    }

    #[test]
    fn a_delivery_connects_to_the_address_its_one_lookup_checked() {
        let (first, to_first) = receiver(OK);
        let (later, to_later) = receiver(OK);
        // Had the name been looked up again, the second answer would be used.
        let lookup = Answers::new(vec![vec![first], vec![later]]);
        let agent = agent(Checked { private: true, lookup: lookup.clone() });
        let url = format!("http://hook.example:{}/hook", first.port());
        assert_eq!(post(&agent, true, &delivery(&url)), Ok(200));
        assert_eq!(lookup.lookups.load(Ordering::SeqCst), 1);
        assert_eq!((to_first.load(Ordering::SeqCst), to_later.load(Ordering::SeqCst)), (1, 0));
    }

    #[test]
    fn a_name_answering_any_refused_address_gets_no_connection() {
        let (addr, got) = receiver(OK);
        let url = format!("http://hook.example:{}/hook", addr.port());
        let public: SocketAddr = format!("93.184.216.34:{}", addr.port()).parse().unwrap();
        let metadata: SocketAddr = format!("169.254.169.254:{}", addr.port()).parse().unwrap();
        // Loopback first: were an answer let through, the receiver would see it,
        // and nothing leaves the machine.
        for (private, answer, why) in [
            (false, vec![addr], "hook.example resolves to 127.0.0.1, and 127.0.0.1 is a loopback address"),
            (false, vec![addr, public], "--allow-private-webhooks"),
            (true, vec![addr, metadata], "169.254.169.254 is a link-local or cloud metadata address"),
        ] {
            let agent = agent(Checked { private, lookup: Answers::new(vec![answer]) });
            let e = post(&agent, private, &delivery(&url)).unwrap_err();
            assert!(e.contains(why) && e.contains("not delivered"), "{e}");
        }
        assert_eq!(got.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn redirects_are_not_followed() {
        let (elsewhere, to_elsewhere) = receiver(OK);
        let moved = format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://{elsewhere}/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let (addr, got) = receiver(moved);
        let agent = agent(Checked { private: true, lookup: DefaultResolver::default() });
        assert_eq!(post(&agent, true, &delivery(&format!("http://{addr}/hook"))), Ok(307));
        assert_eq!((got.load(Ordering::SeqCst), to_elsewhere.load(Ordering::SeqCst)), (1, 0));
    }
}
