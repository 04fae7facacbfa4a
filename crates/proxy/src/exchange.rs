//! Sending one request to one server: queued with or without an answer
//! awaited, the answer counted for the server's health
//! ([`Server::answered`], [`Server::failed`]).
//!
//! Cost: one channel send; the answer's one copy.

use std::time::Duration;

use tokio::sync::oneshot;

use crate::backend::{Answer, Job};
use crate::response::Expect;
use crate::server::Server;

/// Queues `bytes` for `server`; the receiver of its answer.
pub async fn send(
    server: &Server,
    client: usize,
    bytes: Vec<u8>,
    expect: Expect,
) -> oneshot::Receiver<Answer> {
    let (tx, rx) = oneshot::channel();
    let reply = Some((expect, tx));
    server.connection(client).send(Job { bytes, reply }).await;
    rx
}

/// Sends `bytes` to `server` on `client`'s connection and waits for an
/// answer of kind `expect` (`None` on failure or timeout, counted
/// against the server).
pub async fn ask(
    server: &Server,
    client: usize,
    bytes: Vec<u8>,
    expect: Expect,
    timeout: Duration,
) -> Option<Vec<u8>> {
    let answer = send(server, client, bytes, expect).await;
    wait(server, answer, timeout).await.ok()
}

/// Sends `bytes` to `server` without waiting (a `noreply` request).
pub async fn tell(server: &Server, client: usize, bytes: Vec<u8>) {
    server
        .connection(client)
        .send(Job { bytes, reply: None })
        .await;
}

/// `<command> <key><tail>`.
pub fn line(command: &[u8], key: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(command.len() + key.len() + tail.len() + 1);
    out.extend_from_slice(command);
    out.push(b' ');
    out.extend_from_slice(key);
    out.extend_from_slice(tail);
    out
}

/// An answer within the timeout, counted for the server's health.
pub async fn wait(server: &Server, answer: oneshot::Receiver<Answer>, timeout: Duration) -> Answer {
    let result = match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(b"SERVER_ERROR ringwise-proxy: the request was dropped\r\n".to_vec()),
        Err(_) => Err(format!(
            "SERVER_ERROR ringwise-proxy: server {} timed out\r\n",
            server.address()
        )
        .into_bytes()),
    };
    match result {
        Ok(_) => server.answered(),
        Err(_) => server.failed(),
    }
    result
}
