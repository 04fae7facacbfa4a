//! What the proxy did, per server: a JSON document on the stats port
//! (twemproxy's habit: connect, read, the server closes) and the same as
//! one JSON line per interval on standard output (`ringwise watch`'s).
//!
//! The document: `{"epoch": N, "warm_up": bool, "settling": N,
//! "servers": [{"address", "in_ring", "ejected", "requests",
//! "hits", "misses", "fallback_hits", "errors", "ejections", "sweeps",
//! "swept", "flushes"}, ...]}`:
//! `warm_up` while a change's window is open, `settling` the changes not
//! yet settled ([`crate::routing`]); current servers first, then those of
//! the tables kept for those changes; the counters count since the proxy
//! started.
//!
//! Cost: O(servers) per document.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::pool::Pool;

/// The document.
pub fn document(pool: &Pool) -> Value {
    let routing = pool.routing();
    let current: Vec<&str> = routing
        .current
        .servers
        .iter()
        .map(|s| s.address())
        .collect();
    let servers: Vec<Value> = routing
        .servers()
        .into_iter()
        .map(|s| {
            let c = &s.counters;
            let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            json!({
                "address": s.address(),
                "in_ring": current.contains(&s.address()),
                "ejected": s.is_ejected(),
                "requests": n(&c.requests),
                "hits": n(&c.hits),
                "misses": n(&c.misses),
                "fallback_hits": n(&c.fallback_hits),
                "errors": n(&c.errors),
                "ejections": n(&c.ejections),
                "sweeps": n(&c.sweeps),
                "swept": n(&c.swept),
                "flushes": n(&c.flushes),
            })
        })
        .collect();
    let now = Instant::now();
    let warm_up = routing.changes.iter().any(|c| now < c.until);
    json!({
        "epoch": routing.epoch,
        "warm_up": warm_up,
        "settling": routing.changes.len(),
        "servers": servers,
    })
}

/// Answers every connection to `listener` with the document.
pub async fn serve(listener: TcpListener, pool: Arc<Pool>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let mut text = document(&pool).to_string();
        text.push('\n');
        tokio::spawn(async move {
            let _ = stream.write_all(text.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// Prints the document as one line every `interval`.
pub async fn lines(pool: Arc<Pool>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.tick().await;
    loop {
        tick.tick().await;
        println!("{}", document(&pool));
    }
}
