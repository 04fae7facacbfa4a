//! Membership from a file: read again on SIGHUP and whenever its contents
//! change (checked every `interval`), and the routing changed when it
//! places keys differently ([`Pool::change`]). A file that is refused
//! (unreadable, invalid) changes nothing and is reported on standard
//! error; the proxy goes on with the routing it has.
//!
//! The file is read through a cap ([`MAX_FILE`], the cluster file's) and
//! built on a blocking thread ([`Pool::change`]): a huge or endless file
//! (a device, a stream of zeroes) is refused, and clients never wait for
//! a build.
//!
//! Cost: one read of the file per interval; a build per change.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};

use crate::pool::{Pool, Source};

/// Which file, and how it becomes a [`Source`].
#[derive(Debug, Clone)]
pub struct Watched {
    /// The file.
    pub path: PathBuf,
    /// `Some(pool)` for a `nutcracker.yml` (the pool to take), `None` for
    /// a cluster file.
    pub nutcracker: Option<Option<String>>,
}

impl Watched {
    fn source(&self, text: String) -> Source {
        match &self.nutcracker {
            None => Source::Cluster(text),
            Some(pool) => Source::Nutcracker {
                text,
                pool: pool.clone(),
            },
        }
    }
}

/// The largest membership file read, as the cluster file's cap.
pub const MAX_FILE: u64 = 64 << 20;

/// `path`'s text, refused past [`MAX_FILE`] bytes.
pub fn read_capped(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_FILE + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other(format!(
            "over {} MiB: not a membership file",
            MAX_FILE >> 20
        )));
    }
    Ok(text)
}

/// Follows `watched` until the process ends; `last` is the text in force.
pub async fn follow(pool: Arc<Pool>, watched: Watched, mut last: String, interval: Duration) {
    let mut hangup = match signal(SignalKind::hangup()) {
        Ok(hangup) => Some(hangup),
        Err(err) => {
            eprintln!("ringwise-proxy: no SIGHUP reload ({err}); the file is still polled");
            None
        }
    };
    let mut tick = tokio::time::interval(interval);
    loop {
        let forced = tokio::select! {
            _ = tick.tick() => false,
            _ = async { match hangup.as_mut() { Some(h) => { h.recv().await; } None => std::future::pending().await } } => true,
        };
        let text = match read_capped(&watched.path) {
            Ok(text) => text,
            Err(err) => {
                if forced || err.kind() == std::io::ErrorKind::Other {
                    eprintln!(
                        "ringwise-proxy: cannot read {}: {err}; routing unchanged",
                        watched.path.display()
                    );
                }
                continue;
            }
        };
        if text == last && !forced {
            continue;
        }
        match pool.change(watched.source(text.clone())).await {
            Ok(true) => eprintln!(
                "ringwise-proxy: {} changed the routing (epoch {})",
                watched.path.display(),
                pool.routing().epoch
            ),
            Ok(false) => {}
            Err(err) => eprintln!(
                "ringwise-proxy: {} refused, routing unchanged: {err:#}",
                watched.path.display()
            ),
        }
        last = text;
    }
}
