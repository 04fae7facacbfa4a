//! [`Task`]: a background task that stops when told or dropped, the one
//! shape of what a registrar (its liveness: a lease keep-alive, a
//! session, a heartbeat) and a watcher (its follow loop) run on tokio.

/// A background task that stops when told (or when dropped): what a
/// registrar and a watcher run.
#[derive(Debug)]
pub struct Task {
    stop: tokio::sync::watch::Sender<bool>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

impl Task {
    /// Spawns `run`, which must return soon after its receiver changes.
    pub fn spawn<F>(run: impl FnOnce(tokio::sync::watch::Receiver<bool>) -> F) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        Task {
            stop,
            handle: Some(tokio::spawn(run(stopped))),
        }
    }

    /// Tells the task to stop and waits until it has.
    pub async fn stop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(handle) = self.handle.take() {
            let _ = handle.await;
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(handle) = self.handle.take() {
            handle.abort();
        }
    }
}
