//! [`Gossip`] behind `ringwise_membership::Source`: what the commands
//! take as `--membership gossip://...`, every operation a node of its own
//! (register: a member; watch, read, settings, configure: an observer).
//! The registrar is a `Registration`; `kind()` is `gossip`.

use std::time::Duration;

use ringwise_membership::{Cluster, Member, Options, Pending, Registration, Source, Watcher};
use serde_json::{Map, Value};

use crate::gossip::Gossip;
use crate::registrar::Registrar;

impl Gossip {
    /// Registers `name` and returns the registrar itself (its address).
    pub async fn join(&self, name: &str, member: Member) -> Result<Registrar, crate::Error> {
        Registrar::register(self, name, member).await
    }
}

impl Registration for Registrar {
    fn is_registered(&self) -> bool {
        Registrar::is_registered(self)
    }

    fn describe(&self) -> String {
        Registrar::describe(self)
    }

    fn shutdown(self: Box<Self>) -> Pending<'static, ()> {
        Box::pin(async move {
            Registrar::shutdown(*self).await;
            Ok(())
        })
    }
}

impl Source for Gossip {
    fn kind(&self) -> &'static str {
        "gossip"
    }

    fn describe(&self) -> String {
        format!("gossip {} (cluster {})", self.listen, self.cluster)
    }

    fn register<'a>(
        &'a self,
        name: &'a str,
        member: Member,
        ttl: Duration,
    ) -> Pending<'a, Box<dyn Registration>> {
        Box::pin(async move {
            let gossip = Gossip {
                ttl,
                ..self.clone()
            };
            let registrar = Registrar::register(&gossip, name, member).await?;
            Ok(Box::new(registrar) as Box<dyn Registration>)
        })
    }

    fn watch(&self, options: Options) -> Pending<'_, Watcher> {
        Box::pin(async move { Ok(crate::watch(self, options).await?) })
    }

    fn read(&self) -> Pending<'_, (Cluster, u64)> {
        Box::pin(async move { Ok(crate::read(self).await?) })
    }

    fn settings(&self) -> Pending<'_, Map<String, Value>> {
        Box::pin(async move { Ok(crate::settings(self).await?) })
    }

    fn configure<'a>(
        &'a self,
        changes: &'a [(String, Option<Value>)],
    ) -> Pending<'a, Map<String, Value>> {
        Box::pin(async move { Ok(crate::configure(self, changes).await?) })
    }
}
