//! One pipelined connection to one memcached server.
//!
//! How it works: clients append their requests to the connection's output
//! buffer, and with each request that gets an answer, under the same lock
//! and so in the same order, what the answer looks like and who waits for
//! it. A client that has queued a burst (what it parsed from one read,
//! [`crate::exchange::Batch`]) wakes the connection's task unless it is
//! awake already; the task writes the buffer, which by then holds what
//! every client queued meanwhile: one write for the requests of all the
//! clients served in one turn of the runtime (measured against a client
//! writing its own burst at once: as fast with one client, fewer writes
//! and less CPU with eight: BENCHMARKS.md, "The proxy beside
//! nutcracker"). The task also frames the server's answers in order ([`crate::response::frame`]) and hands
//! each to its waiter: memcached answers a connection's requests in
//! order, so the n-th answer is the n-th expected one. A `noreply` request
//! queues no waiter (memcached answers nothing to it, errors included;
//! the requests it would still answer, those of a wrong token count, the
//! proxy answers itself, see [`crate::request`]).
//!
//! The connection is made on the first request and made again on the next
//! one after it breaks; every request queued or in flight then fails with
//! a `SERVER_ERROR` naming the server (a request already written may or
//! may not have been applied, as with any client).
//!
//! Bounds: at most [`QUEUE`] answers awaited and [`BACKLOG`] bytes not yet
//! written, of which one client's requests at most [`SHARE`]; a request
//! beyond any of them fails at once with a `SERVER_ERROR` (a stopped
//! server would otherwise hold every client's requests, and the proxy's
//! memory, until it wakes). So one client pipelining large values fills
//! a quarter of the connection, not all of it: it takes four such
//! clients before another's request is refused. (The answers a client
//! awaits are bounded by its own budget, [`crate::client`].)
//!
//! Cost: per request one lock and one copy into the output buffer; per
//! burst at most one wake of the task; per turn one write; per answer one
//! copy out of the read buffer (one lock for all the answers of a read).
//! One task per connection.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{Notify, oneshot};

use crate::response::{Expect, frame};
use crate::share::Shares;

/// An answer, or why there is none (a `SERVER_ERROR` line to send).
pub type Answer = Result<Vec<u8>, Vec<u8>>;

/// Why a request got no answer: the `SERVER_ERROR` line to send, and
/// whether the server is to blame (its health counts only those: a
/// request refused because too much waits for the connection may be one
/// client's flood, and the requests already waiting time out if the
/// server is what stopped).
#[derive(Debug)]
pub struct Failure {
    /// The line for the client.
    pub line: Vec<u8>,
    /// The server failed (no connection, a broken one, garbled answers).
    pub server: bool,
}

/// What the connection hands a waiter.
pub type Delivery = Result<Vec<u8>, Failure>;

/// What an answer looks like, and who waits for it.
pub type Waiter = (Expect, oneshot::Sender<Delivery>);

/// How many answers one connection may await.
pub const QUEUE: usize = 4096;

/// How many bytes may wait for one connection's socket (a request is
/// always taken into an empty buffer, however large).
pub const BACKLOG: usize = 16 << 20;

/// How many of those bytes may be one client's (a request is always taken
/// when the client has none waiting, however large).
pub const SHARE: usize = BACKLOG / 4;

/// A connection: clients queue on it; its task connects, writes and
/// reads the answers.
#[derive(Debug, Clone)]
pub struct Backend {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    address: String,
    state: Mutex<State>,
    /// Wakes the task: to connect, or to write.
    wake: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Requests not yet written, in the order queued.
    out: Vec<u8>,
    /// Whose bytes `out` holds.
    shares: Shares,
    /// The answers awaited, oldest first.
    waiters: VecDeque<Waiter>,
    /// The socket's writing half while connected.
    socket: Option<Arc<OwnedWriteHalf>>,
    /// The task is to write `out` (woken by a client, or connected with
    /// requests queued): clients only append.
    task_writes: bool,
    /// A connection is being made, or is to be.
    connecting: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent at every unlock: a panic elsewhere
        // while holding it (none is known) must not stop the connection.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Backend {
    /// Starts the connection's task (it connects on the first request).
    pub fn start(address: String, connect_timeout: Duration) -> Backend {
        let shared = Arc::new(Shared {
            address,
            state: Mutex::default(),
            wake: Notify::new(),
        });
        tokio::spawn(run(shared.clone(), connect_timeout));
        Backend { shared }
    }

    /// Whether both are the same connection.
    pub fn same(&self, other: &Backend) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Queues `bytes` of `client`, and `reply` when an answer comes;
    /// fails `reply` at once when the connection, or the client's share of
    /// it, holds too much already. True when the caller is to
    /// [`Backend::flush`] it (connected, and the task is not woken yet).
    pub fn queue(&self, client: usize, bytes: &[u8], reply: Option<Waiter>) -> bool {
        let shared = &*self.shared;
        let mut state = shared.lock();
        let own = state.shares.of(client);
        let full = (!state.out.is_empty() && state.out.len() + bytes.len() > BACKLOG)
            || (own > 0 && own + bytes.len() > SHARE);
        if full || (reply.is_some() && state.waiters.len() >= QUEUE) {
            drop(state);
            if let Some((_, waiter)) = reply {
                let why = "too many requests wait for it (is it stopped?)";
                let line = failure(&shared.address, why);
                let _ = waiter.send(Err(Failure {
                    line,
                    server: false,
                }));
            }
            return false;
        }
        state.out.extend_from_slice(bytes);
        state.shares.queued(client, bytes.len());
        if let Some(reply) = reply {
            state.waiters.push_back(reply);
        }
        if state.socket.is_some() {
            return !state.task_writes;
        }
        if !state.connecting {
            state.connecting = true;
            drop(state);
            shared.wake.notify_one();
        }
        false
    }

    /// Has the task write what is queued (unless it is to already).
    pub fn flush(&self) {
        let shared = &*self.shared;
        let mut state = shared.lock();
        if state.task_writes || state.out.is_empty() || state.socket.is_none() {
            return;
        }
        state.task_writes = true;
        drop(state);
        shared.wake.notify_one();
    }
}

/// The answer to a request when the pool has no server to ask: none at
/// all, or every one ejected.
pub const NO_SERVER: &[u8] =
    b"SERVER_ERROR ringwise-proxy: no server available (the pool has none, or all are ejected)\r\n";

/// The `SERVER_ERROR` line of a failed request.
pub fn failure(address: &str, why: &str) -> Vec<u8> {
    format!("SERVER_ERROR ringwise-proxy: server {address}: {why}\r\n").into_bytes()
}

/// Writes `out` until it is empty (true) or the socket is full (false).
/// The lock is held meanwhile: the writes do not block, and a client
/// appending now would only be written next turn.
fn write_out(state: &mut State) -> io::Result<bool> {
    let State {
        out,
        socket,
        shares,
        ..
    } = state;
    let Some(socket) = socket else {
        return Ok(false);
    };
    let mut written = 0;
    let result = loop {
        if written == out.len() {
            break Ok(true);
        }
        match socket.try_write(&out[written..]) {
            Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => break Ok(false),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => break Err(err),
        }
    };
    out.drain(..written);
    shares.written(written);
    // A burst of large values does not stay allocated.
    if out.is_empty() && out.capacity() > 1 << 20 {
        *out = Vec::new();
    }
    result
}

async fn run(shared: Arc<Shared>, connect_timeout: Duration) {
    loop {
        // Connect when there is something to send, and again after a break.
        loop {
            let connecting = shared.lock().connecting;
            if connecting {
                break;
            }
            shared.wake.notified().await;
        }
        let connect = TcpStream::connect(&shared.address);
        let why = match tokio::time::timeout(connect_timeout, connect).await {
            Ok(Ok(stream)) => serve(&shared, stream).await,
            Ok(Err(err)) => format!("cannot connect: {err}"),
            Err(_) => "connect timed out".to_string(),
        };
        // Whatever is queued or in flight fails; the next request connects.
        let waiters = {
            let mut state = shared.lock();
            state.socket = None;
            state.connecting = false;
            state.task_writes = false;
            state.out = Vec::new();
            state.shares = Shares::default();
            std::mem::take(&mut state.waiters)
        };
        for (_, waiter) in waiters {
            let line = failure(&shared.address, &why);
            let _ = waiter.send(Err(Failure { line, server: true }));
        }
    }
}

/// Runs a connection until it breaks; why it did.
async fn serve(shared: &Shared, stream: TcpStream) -> String {
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let socket = Arc::new(write);
    {
        let mut state = shared.lock();
        state.socket = Some(socket.clone());
        // What was queued while connecting.
        state.task_writes = true;
    }
    tokio::select! {
        why = read_answers(shared, read) => why,
        why = write_backlog(shared, &socket) => why,
    }
}

/// Writes `out` whenever a client asks, and waits for room when the
/// socket is full.
async fn write_backlog(shared: &Shared, socket: &OwnedWriteHalf) -> String {
    loop {
        let step = {
            let mut state = shared.lock();
            match state.task_writes {
                true => {
                    let step = write_out(&mut state);
                    if matches!(step, Ok(true)) {
                        state.task_writes = false;
                    }
                    Some(step)
                }
                false => None,
            }
        };
        match step {
            None | Some(Ok(true)) => shared.wake.notified().await,
            Some(Ok(false)) => {
                if let Err(err) = socket.writable().await {
                    return format!("write failed: {err}");
                }
            }
            Some(Err(err)) => return format!("write failed: {err}"),
        }
    }
}

/// Hands each answer to its waiter, in order, until the connection
/// breaks or the server answers out of step; why it ended.
async fn read_answers(shared: &Shared, mut read: OwnedReadHalf) -> String {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let mut start = 0;
        {
            let mut state = shared.lock();
            while start < buf.len() {
                // A waiter is queued before its request is written, so
                // bytes with none are no answer to anything.
                let Some(&(expect, _)) = state.waiters.front() else {
                    return "it sent an answer nobody asked for".to_string();
                };
                let framed = frame(&buf[start..], expect);
                let Ok(Some(len)) = framed else {
                    if let Err(garbled) = framed {
                        if let Some((_, waiter)) = state.waiters.pop_front() {
                            let line = failure(&shared.address, &garbled.0);
                            let _ = waiter.send(Err(Failure { line, server: true }));
                        }
                        return "it sent an answer out of step".to_string();
                    }
                    break;
                };
                if let Some((_, waiter)) = state.waiters.pop_front() {
                    let _ = waiter.send(Ok(buf[start..start + len].to_vec()));
                }
                start += len;
            }
        }
        buf.drain(..start);
        if buf.capacity() - buf.len() < 16 * 1024 {
            buf.reserve(64 * 1024);
        }
        match read.read_buf(&mut buf).await {
            Ok(0) => return "the server closed the connection".to_string(),
            Ok(_) => {}
            Err(err) => return format!("read failed: {err}"),
        }
    }
}
