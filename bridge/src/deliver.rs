//! Webhook deliveries: the engine plans each POST (url, body, signed headers) and
//! keeps each webhook's cursor and back-off; this sender makes the POSTs and
//! reports each answer back with `Engine::delivered`.

use crate::shared::Shared;
use datanotes_core::feed::address;
use datanotes_core::webhook::Delivery;
use std::net::ToSocketAddrs;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long one POST may take in all.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the sender; the engine's deliveries go to it from now on.
pub fn start(shared: &Shared) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Delivery>();
    shared.send_deliveries_to(tx);
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("datanotes/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let shared = shared.clone();
    tokio::spawn(async move {
        while let Some(d) = rx.recv().await {
            let (shared, agent) = (shared.clone(), agent.clone());
            tokio::spawn(async move {
                let (webhook, last) = (d.webhook.clone(), d.last);
                let result = match tokio::task::spawn_blocking(move || post(&agent, &d)).await {
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

/// Whether the URL, and every address its name resolves to now, may receive the
/// database's changes (`datanotes_core::feed::address`): a public name can point
/// at a private or metadata address.
fn allowed(url: &str) -> Result<(), String> {
    let private = crate::allow_private_webhooks();
    let refused = |why: &str, hint: &str| format!("{url}: {why}: not delivered. {hint}");
    address::check_url(url, private).map_err(|r| refused(r.reason(), r.hint()))?;
    let host = address::host_of(url).map_err(|e| refused(&e, ""))?;
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let port = if url.to_ascii_lowercase().starts_with("https") { 443 } else { 80 };
    let addrs = (host.as_str(), port).to_socket_addrs().map_err(|e| format!("{url}: {host} does not resolve ({e})"))?;
    for a in addrs {
        address::check_ip(a.ip(), private)
            .map_err(|r| refused(&format!("{host} resolves to {}", r.reason()), r.hint()))?;
    }
    Ok(())
}

/// One POST: the status that came back, or why none did. Only http and https
/// URLs to allowed addresses are tried.
fn post(agent: &ureq::Agent, d: &Delivery) -> Result<u16, String> {
    allowed(&d.url)?;
    let mut req = agent.post(&d.url);
    let mut typed = false;
    for (k, v) in &d.headers {
        typed |= k.eq_ignore_ascii_case("content-type");
        req = req.header(k, v);
    }
    if !typed {
        req = req.header("Content-Type", "application/json");
    }
    let mut res = req.send(d.body.as_bytes()).map_err(|e| format!("POST {}: {e}", d.url))?;
    // The receiver's answer is not needed; reading a little of it lets the
    // connection be reused.
    let _ = res.body_mut().with_config().limit(64 << 10).read_to_vec();
    Ok(res.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliveries_to_refused_addresses_are_not_tried() {
        // A webhook written into webhooks.json by hand, or made before the rules.
        for url in
            ["http://169.254.169.254/latest/", "http://user:pw@example.com/", "http://127.0.0.1:9/", "ftp://x.example/"]
        {
            assert!(allowed(url).is_err(), "{url}");
        }
        assert!(allowed("http://169.254.169.254/").unwrap_err().contains("not delivered"));
        assert_eq!(allowed("http://93.184.216.34/hook"), Ok(()));
    }
}
