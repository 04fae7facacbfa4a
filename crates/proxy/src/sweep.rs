//! Sweeps: a server emptied of the keys it does not own, so that a change
//! can be settled ([`crate::pool`]).
//!
//! Why: after a change a server keeps its copies of the keys that moved
//! away. While the change is kept, every write of such a key deletes it
//! there ([`crate::routing`]'s losers); once dropped, nothing would, and
//! if the key came back to that server (a member leaving and returning,
//! an ejection ending) its old copy would be read. A sweep deletes them
//! first.
//!
//! How: `lru_crawler metadump all` (memcached 1.5 and later) on a
//! connection of its own lists every key the server holds, one line
//! each (`key=<URL-encoded key> exp=... la=... cas=... fetch=... cls=...
//! size=...`), then `END`; each key that the server neither owns nor
//! serves as a fallback in an open window, under the routing at that
//! moment, is deleted (`delete <key> noreply`) on a second connection of
//! its own, with a `mn` every [`PACE`] deletes whose answer is awaited,
//! so the deletes never run ahead of the server. A deleted key that the
//! server owns meanwhile is only a miss. A server that answers `BUSY`
//! (another crawl runs) is asked again; one that cannot crawl is flushed
//! instead (`flush_all`).
//!
//! Cost: O(keys held) lines read and one lookup each, one delete per key
//! it does not own; memory one line (a key is at most 250 bytes, 750
//! URL-encoded).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::pool::Pool;
use crate::server::Server;

/// Deletes between two awaited no-ops.
pub const PACE: usize = 512;

/// The longest metadump line read (a URL-encoded 250-byte key and the
/// other fields).
const MAX_LINE: u64 = 4096;

/// Why a sweep did not finish.
#[derive(Debug)]
pub enum Failed {
    /// The server cannot be reached or stopped answering.
    Io(std::io::Error),
    /// The server does not crawl (`lru_crawler` disabled, or too old).
    Unsupported(String),
}

impl From<std::io::Error> for Failed {
    fn from(err: std::io::Error) -> Self {
        Failed::Io(err)
    }
}

/// Sweeps every server [`Pool::to_sweep`] names, one at a time, every
/// 100 ms, until the process ends.
pub async fn follow(pool: Arc<Pool>) {
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        for server in pool.to_sweep().await {
            let started = Instant::now();
            match sweep(&pool, &server).await {
                Ok(deleted) => {
                    let counters = &server.counters;
                    counters.sweeps.fetch_add(1, Ordering::Relaxed);
                    counters.swept.fetch_add(deleted, Ordering::Relaxed);
                    pool.swept(&server, started).await;
                    crate::note!(
                        "server {} swept: {deleted} keys it does not own deleted",
                        server.address()
                    );
                }
                Err(Failed::Unsupported(why)) => {
                    crate::note!(
                        "{} cannot list its keys ({why}); flushing it instead",
                        server.address()
                    );
                    if pool.flush(&server).await {
                        pool.swept(&server, started).await;
                    }
                }
                // Unreachable: tried again; if it is ejected or leaves
                // the pool meanwhile it no longer needs it.
                Err(Failed::Io(_)) => {}
            }
        }
    }
}

/// Deletes from `server` every key it neither owns nor serves as a
/// fallback; how many it deleted.
pub async fn sweep(pool: &Pool, server: &Arc<Server>) -> Result<u64, Failed> {
    let timeout = pool.options().timeout * 10;
    let within = |d| async move { tokio::time::timeout(timeout, d).await };
    let dump = within(TcpStream::connect(server.address()))
        .await
        .map_err(|_| timed_out())??;
    let mut deletes = within(TcpStream::connect(server.address()))
        .await
        .map_err(|_| timed_out())??;
    let (read, mut write) = dump.into_split();
    let mut lines = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        write.write_all(b"lru_crawler metadump all\r\n").await?;
        read_line(&mut lines, &mut line, timeout).await?;
        if line.starts_with(b"BUSY") {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        break;
    }
    let (mut deleted, mut unpaced) = (0u64, 0usize);
    let mut out = Vec::new();
    loop {
        let text = trim(&line);
        if text == b"END" {
            break;
        }
        let Some(key) = text.strip_prefix(b"key=") else {
            return Err(Failed::Unsupported(
                String::from_utf8_lossy(&text[..text.len().min(120)]).into_owned(),
            ));
        };
        let key = key.split(|&b| b == b' ').next().unwrap_or_default();
        if let Some(key) = url_decode(key) {
            if !owns(pool, server, &key) {
                out.extend_from_slice(b"delete ");
                out.extend_from_slice(&key);
                out.extend_from_slice(b" noreply\r\n");
                deleted += 1;
                unpaced += 1;
                if unpaced == PACE {
                    pace(&mut deletes, &mut out, timeout).await?;
                    unpaced = 0;
                }
            }
        }
        read_line(&mut lines, &mut line, timeout).await?;
    }
    pace(&mut deletes, &mut out, timeout).await?;
    Ok(deleted)
}

/// Whether `server` owns `key` now, or is read for it on a miss.
fn owns(pool: &Pool, server: &Arc<Server>, key: &[u8]) -> bool {
    let routing = pool.routing();
    let Some((owner, unsettled)) = routing.route(key) else {
        return false;
    };
    Arc::ptr_eq(owner, server)
        || (unsettled && (routing.fallbacks(key, owner).iter()).any(|s| Arc::ptr_eq(s, server)))
}

/// Writes the deletes queued in `out`, then a `mn`, and waits for its
/// `MN`: every delete before it is done.
async fn pace(stream: &mut TcpStream, out: &mut Vec<u8>, timeout: Duration) -> Result<(), Failed> {
    out.extend_from_slice(b"mn\r\n");
    stream.write_all(out).await?;
    out.clear();
    // noreply deletes answer nothing, unless memcached refuses the line
    // (then its error comes before MN).
    let mut answer = [0u8; 64];
    let mut seen = Vec::new();
    while !seen.ends_with(b"MN\r\n") {
        let n = tokio::time::timeout(timeout, stream.read(&mut answer))
            .await
            .map_err(|_| timed_out())??;
        if n == 0 {
            return Err(Failed::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        seen.extend_from_slice(&answer[..n]);
        if seen.len() > 256 {
            seen.drain(..seen.len() - 8);
        }
    }
    Ok(())
}

async fn read_line(
    lines: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    line: &mut Vec<u8>,
    timeout: Duration,
) -> Result<(), Failed> {
    line.clear();
    let mut limited = lines.take(MAX_LINE);
    let n = tokio::time::timeout(timeout, limited.read_until(b'\n', line))
        .await
        .map_err(|_| timed_out())??;
    if n == 0 || !line.ends_with(b"\n") {
        return Err(Failed::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(())
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn timed_out() -> Failed {
    Failed::Io(std::io::ErrorKind::TimedOut.into())
}

/// memcached's `uriencode` undone: `%XX` to its byte; `None` for a
/// malformed escape.
fn url_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' {
            let hex = std::str::from_utf8(text.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_decoded_as_memcached_encodes_them() {
        assert_eq!(url_decode(b"user%3A1").as_deref(), Some(&b"user:1"[..]));
        assert_eq!(url_decode(b"a%20b%09").as_deref(), Some(&b"a b\t"[..]));
        assert_eq!(url_decode(b"bad%2"), None);
        assert_eq!(url_decode(b"bad%zz"), None);
    }
}
