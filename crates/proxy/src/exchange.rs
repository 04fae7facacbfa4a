//! Sending one request to one server: queued on the connection, which is
//! woken to write it now, or queued in a [`Batch`], whose connections are
//! woken once the client's burst is parsed ([`crate::backend`]); with or
//! without an answer awaited, the answer counted for the server's health
//! ([`Server::answered`], [`Server::failed`]).
//!
//! Cost: one append to the connection's output buffer; at most one wake
//! of its task per burst (per request outside a batch); the answer's one
//! copy.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::backend::{Answer, Backend, Delivery, Failure, Waiter};
use crate::response::Expect;
use crate::server::Server;

/// The answer to come to a request, and when the request was sent: its
/// timeout counts from then, so the requests of a pipeline to a stopped
/// server all time out one timeout after they were sent, not one after
/// another.
#[derive(Debug)]
pub struct Reply {
    answer: oneshot::Receiver<Delivery>,
    sent: Instant,
    /// What [`Reply::poll_answer`] took from `answer`: the delivery, or
    /// none when the connection dropped the request.
    got: Option<Option<Delivery>>,
}

impl Reply {
    fn new(expect: Expect) -> (Reply, Waiter) {
        let (tx, answer) = oneshot::channel();
        let sent = Instant::now();
        (
            Reply {
                answer,
                sent,
                got: None,
            },
            (expect, tx),
        )
    }

    /// Ready once the answer (or the request's failure) is there, which
    /// [`wait`] then returns at once; the client's connection polls it
    /// beside its socket, so an answer wakes it to be written.
    pub fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.got.is_none() {
            let delivery = ready!(Pin::new(&mut self.answer).poll(cx));
            self.got = Some(delivery.ok());
        }
        Poll::Ready(())
    }

    /// When the answer is late: `timeout` after the request was sent.
    pub fn deadline(&self, timeout: Duration) -> Instant {
        self.sent + timeout
    }
}

/// Sends `bytes` to `server` on `client`'s connection; its answer to
/// come.
pub fn send(server: &Server, client: usize, bytes: &[u8], expect: Expect) -> Reply {
    let (reply, waiter) = Reply::new(expect);
    if let Some(connection) = queue(server, client, bytes, Some(waiter)) {
        connection.flush();
    }
    reply
}

/// Sends `bytes` to `server` on `client`'s connection and waits for an
/// answer of kind `expect` (`None` on failure or timeout, counted
/// against the server).
pub async fn ask(
    server: &Server,
    client: usize,
    bytes: &[u8],
    expect: Expect,
    timeout: Duration,
) -> Option<Vec<u8>> {
    let answer = send(server, client, bytes, expect);
    wait(server, answer, timeout).await.ok()
}

/// Sends `bytes` to `server` without waiting (a `noreply` request).
pub fn tell(server: &Server, client: usize, bytes: &[u8]) {
    if let Some(connection) = queue(server, client, bytes, None) {
        connection.flush();
    }
}

/// Queues `bytes` on `client`'s connection to `server`; the connection
/// when it is to be flushed.
fn queue<'a>(
    server: &'a Server,
    client: usize,
    bytes: &[u8],
    reply: Option<Waiter>,
) -> Option<&'a Backend> {
    let connection = server.connection(client);
    connection.queue(client, bytes, reply).then_some(connection)
}

/// A client's burst: requests queued on their servers' connections, each
/// connection woken once by [`Batch::flush`]. The client flushes when it
/// has parsed all it read and before anything it awaits (an answer to a
/// queued request may be what it waits for).
#[derive(Debug, Default)]
pub struct Batch {
    owed: Vec<Backend>,
}

impl Batch {
    /// Queues `bytes` for `server`; its answer to come.
    pub fn send(&mut self, server: &Server, client: usize, bytes: &[u8], expect: Expect) -> Reply {
        let (reply, waiter) = Reply::new(expect);
        if let Some(connection) = queue(server, client, bytes, Some(waiter)) {
            self.owe(connection);
        }
        reply
    }

    /// Queues `bytes` for `server`, no answer awaited.
    pub fn tell(&mut self, server: &Server, client: usize, bytes: &[u8]) {
        if let Some(connection) = queue(server, client, bytes, None) {
            self.owe(connection);
        }
    }

    fn owe(&mut self, connection: &Backend) {
        if !self.owed.iter().any(|owed| owed.same(connection)) {
            self.owed.push(connection.clone());
        }
    }

    /// Wakes every connection this burst queued on.
    pub fn flush(&mut self) {
        for connection in self.owed.drain(..) {
            connection.flush();
        }
    }
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

/// An answer within the timeout, counted for the server's health: an
/// answer (any, an error line included: a `CLIENT_ERROR` or `SERVER_ERROR
/// object too large` is the client's doing) counts for it, a failure of
/// the server (a timeout, a broken connection, garbled answers) against
/// it, a refusal of the proxy's own (too much waits for the connection)
/// neither.
///
/// An answer that came in time counts as such however late it is read:
/// a client that reads slowly has its connection come here after the
/// deadline, for answers that are long there.
pub async fn wait(server: &Server, mut reply: Reply, timeout: Duration) -> Answer {
    let deadline = reply.sent + timeout;
    let failure = |line: String| Failure {
        line: line.into_bytes(),
        server: true,
    };
    let dropped = || failure("SERVER_ERROR ringwise-proxy: the request was dropped\r\n".into());
    // An answer already taken (the common case: the client waited for it
    // beside its socket) needs no timer.
    let delivery = match reply.got.take() {
        Some(got) => got.unwrap_or_else(|| Err(dropped())),
        None => match tokio::time::timeout_at(deadline, &mut reply.answer).await {
            Ok(Ok(delivery)) => delivery,
            Ok(Err(_)) => Err(dropped()),
            // An answer that is there is an answer, however late it is read.
            Err(_) => reply.answer.try_recv().unwrap_or_else(|_| {
                Err(failure(format!(
                    "SERVER_ERROR ringwise-proxy: server {} timed out\r\n",
                    server.address()
                )))
            }),
        },
    };
    match delivery {
        Ok(answer) => {
            server.answered();
            Ok(answer)
        }
        Err(Failure { line, server: own }) => {
            if own {
                server.failed();
            }
            Err(line)
        }
    }
}
