//! `grpc`: a gRPC channel with the `ring_hash_experimental` policy, as one
//! JSON (or YAML) document: what a program hands `grpc.insecure_channel`.
//!
//! Source: gRFC A42 (the policy and its config), gRFC A76
//! (`requestHashHeader`, endpoint hash keys), grpc/grpc
//! `src/core/load_balancing/ring_hash/ring_hash.cc` (`RingHashLbConfig`:
//! `minRingSize` default 1024, `maxRingSize` default 4096, both 1 to
//! 8388608, min <= max; the channel argument
//! `grpc.lb.ring_hash.ring_size_cap`, default 4096; duplicate endpoints
//! merged with their weights summed) and
//! `src/core/resolver/sockaddr/sockaddr_resolver.cc` (`ipv4:`/`ipv6:`
//! targets: comma-separated `ip:port`, in order). Checked against grpcio
//! 1.85.1 (`crates/cli/tests/compat/grpc.rs`).
//!
//! The document (a ringwise format, since gRPC keeps these three in
//! different places):
//!
//! ```json
//! {
//!   "target": "ipv4:10.0.0.1:50051,10.0.0.2:50051,10.0.0.1:50051",
//!   "serviceConfig": {"loadBalancingConfig": [{"ring_hash_experimental":
//!     {"minRingSize": 1024, "maxRingSize": 4096, "requestHashHeader": "x-user"}}]},
//!   "channelArgs": {"grpc.lb.ring_hash.ring_size_cap": 4096}
//! }
//! ```
//!
//! `serviceConfig` is the service config as gRPC reads it (the JSON of
//! the `grpc.service_config` channel argument, or what the resolver
//! returns); `channelArgs` the channel's options; the endpoints are either
//! the `target` (an `ipv4:` or `ipv6:` list: each address one endpoint of
//! weight 1, an address listed again adds 1 to its weight) or `endpoints`,
//! a list of `{"address": "ip:port", "weight": N, "hashKey": "..."}` as a
//! custom resolver or xDS (EDS `load_balancing_weight` and the `envoy.lb`
//! `hash_key` metadata) gives them. Each endpoint is the ringwise node
//! named by its hash key (the `hashKey` when given and not empty, else
//! its address as gRPC prints it: `10.0.0.1:50051`, `[::1]:50051`), at its
//! first position, weight the sum of its listings. The result is
//! `grpc-ring` (whose key hash is `xxh64`) with `min_ring_size`,
//! `max_ring_size` and `ring_size_cap` always set (gRPC's defaults where
//! absent: a cluster file shows the ones that differ from ringwise's).
//!
//! Refused: a first `loadBalancingConfig` entry other than
//! `ring_hash_experimental` (gRPC uses the first policy it knows), a
//! `requestHashHeader` that gRPC rejects (a `-bin` header) or that no
//! metadata key can match (upper case, empty words), sizes gRPC rejects,
//! a cap below 1, `dns:` and other targets (their addresses and order
//! come from a resolver), unknown fields of the policy or of an endpoint.
//! Notes: other service-config fields and channel args (they do not move
//! keys), a missing `requestHashHeader` (the hash then comes from xDS's
//! route `hash_policy`), merged duplicates.
//!
//! Cost: one pass over the text, O(length + N·D) for the duplicate merge
//! of N listings into D endpoints.

use std::net::{IpAddr, SocketAddr};

use ringwise::{Member, Param, ParamValue, Settings};

use crate::error::syntax;
use crate::yaml::{self, Node, Value, number, text};
use crate::{ImportError, Imported};

const POLICY: &str = "ring_hash_experimental";
const CAP_ARG: &str = "grpc.lb.ring_hash.ring_size_cap";
const LARGEST: u64 = 8_388_608;

fn unknown(node: &Node, what: &str, key: &str, known: &[&str]) -> ImportError {
    ImportError::UnknownSetting {
        line: node.line,
        setting: format!("{what}.{key}"),
        known: known.join(", "),
    }
}

pub(crate) fn read(text_: &str, _select: Option<&str>) -> Result<Imported, ImportError> {
    let root = yaml::parse(text_)?.ok_or_else(|| ImportError::Missing {
        message: "the file is empty".into(),
    })?;
    let Some(entries) = root.entries() else {
        return Err(syntax(
            root.line,
            "a gRPC channel is a mapping of target (or endpoints), serviceConfig and channelArgs",
        ));
    };
    const TOP: &[&str] = &["target", "endpoints", "serviceConfig", "channelArgs"];
    for (key, node) in entries {
        if !TOP.contains(&key.as_str()) {
            return Err(unknown(node, "channel", key, TOP));
        }
    }
    let mut notes = Vec::new();
    let config = root
        .get("serviceConfig")
        .ok_or_else(|| ImportError::Missing {
            message: "no serviceConfig: give the service config whose loadBalancingConfig is \
                  [{\"ring_hash_experimental\": {...}}]"
                .into(),
        })?;
    let (min, max, header) = policy(config, &mut notes)?;
    let cap = channel_args(root.get("channelArgs"), &mut notes)?;
    let mut settings = Settings::default();
    settings.algorithm = Some("grpc-ring".into());
    settings.params = vec![
        (Param::MinRingSize, ParamValue::Count(min)),
        (Param::MaxRingSize, ParamValue::Count(max)),
        (Param::RingSizeCap, ParamValue::Count(cap)),
    ];
    match header {
        Some(header) => notes.push(format!(
            "keys are the value of the `{header}` header, hashed with xxh64 as gRPC does \
             (grpc-core reads requestHashHeader only with \
             GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY=true)"
        )),
        None => notes.push(
            "no requestHashHeader: gRPC takes the request hash from xDS's route hash_policy; \
             ringwise's key is the text that policy hashes with xxh64"
                .into(),
        ),
    }
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    let listed = match (root.get("target"), root.get("endpoints")) {
        (Some(target), None) => target_endpoints(target)?,
        (None, Some(list)) => listed_endpoints(list)?,
        (Some(target), Some(_)) => {
            return Err(syntax(
                target.line,
                "give the endpoints once: a target or an endpoints list, not both",
            ));
        }
        (None, None) => {
            return Err(ImportError::Missing {
                message: "no endpoints: give a target (\"ipv4:10.0.0.1:50051,...\") or an \
                          endpoints list"
                    .into(),
            });
        }
    };
    merge(&mut imported, listed);
    Ok(imported)
}

/// The ring_hash config: its sizes (gRPC's defaults where absent) and the
/// request hash header.
fn policy(
    config: &Node,
    notes: &mut Vec<String>,
) -> Result<(u64, u64, Option<String>), ImportError> {
    let entries = config.entries().ok_or_else(|| {
        syntax(
            config.line,
            format!("serviceConfig is a mapping, not {}", config.kind()),
        )
    })?;
    for (key, node) in entries {
        if key != "loadBalancingConfig" {
            notes.push(format!(
                "line {}: serviceConfig.{key} does not change placement",
                node.line
            ));
        }
    }
    let list = config
        .get("loadBalancingConfig")
        .ok_or_else(|| ImportError::Missing {
            message: format!(
                "the serviceConfig (line {}) has no loadBalancingConfig: gRPC would use pick_first",
                config.line
            ),
        })?;
    let first = match &list.value {
        Value::Seq(items) => items.first(),
        _ => None,
    }
    .ok_or_else(|| {
        syntax(
            list.line,
            "loadBalancingConfig is a non-empty list of policies",
        )
    })?;
    let (name, lb) = match first.entries() {
        Some([(name, lb)]) => (name, lb),
        _ => {
            return Err(syntax(
                first.line,
                "a loadBalancingConfig entry is {\"POLICY\": {...}}",
            ));
        }
    };
    if name != POLICY {
        return Err(ImportError::Unsupported {
            line: first.line,
            setting: format!("loadBalancingConfig: {name}"),
            reason: format!(
                "gRPC uses the first policy of the list it knows: ringwise reproduces {POLICY}; \
                 put it first"
            ),
        });
    }
    const FIELDS: &[&str] = &["minRingSize", "maxRingSize", "requestHashHeader"];
    let fields = lb
        .entries()
        .ok_or_else(|| syntax(lb.line, format!("{POLICY} is a mapping, not {}", lb.kind())))?;
    for (key, node) in fields {
        if !FIELDS.contains(&key.as_str()) {
            return Err(unknown(node, POLICY, key, FIELDS));
        }
    }
    let size = |key: &str, default: u64| -> Result<(u64, usize), ImportError> {
        let Some(node) = lb.get(key) else {
            return Ok((default, lb.line));
        };
        let value = number(node, key)?;
        if !(1..=LARGEST).contains(&value) {
            return Err(syntax(
                node.line,
                format!("{key} must be in the range [1, 8388608] (gRPC)"),
            ));
        }
        Ok((value, node.line))
    };
    let (min, min_line) = size("minRingSize", 1024)?;
    let (max, _) = size("maxRingSize", 4096)?;
    if min > max {
        return Err(syntax(
            min_line,
            format!(
                "maxRingSize cannot be smaller than minRingSize ({max} < {min}; gRPC's \
                 maxRingSize default is 4096)"
            ),
        ));
    }
    let header = match lb.get("requestHashHeader") {
        None => None,
        Some(node) => {
            let header = text(node, "requestHashHeader")?;
            let word = |w: &str| {
                !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.".contains(&b))
            };
            if header.ends_with("-bin") {
                return Err(ImportError::Unsupported {
                    line: node.line,
                    setting: format!("requestHashHeader: {header}"),
                    reason: "gRPC rejects a binary (-bin) request hash header (gRFC A76)".into(),
                });
            }
            if header.is_empty() {
                None
            } else if !header.split('-').all(word) {
                return Err(syntax(
                    node.line,
                    format!(
                        "requestHashHeader {header:?} is not a gRPC metadata key: lower-case \
                         letters, digits, '-', '_' and '.'"
                    ),
                ));
            } else {
                Some(header.to_owned())
            }
        }
    };
    Ok((min, max, header))
}

/// The channel's ring-size cap; the other args are notes.
fn channel_args(args: Option<&Node>, notes: &mut Vec<String>) -> Result<u64, ImportError> {
    let Some(args) = args else {
        return Ok(4096);
    };
    let entries = args.entries().ok_or_else(|| {
        syntax(
            args.line,
            format!("channelArgs is a mapping, not {}", args.kind()),
        )
    })?;
    let mut cap = 4096;
    for (key, node) in entries {
        if key == CAP_ARG {
            cap = number(node, CAP_ARG)?;
            if cap == 0 || cap > i32::MAX as u64 {
                return Err(syntax(
                    node.line,
                    format!(
                        "{CAP_ARG} is from 1 to 2147483647 (a channel argument is an int; \
                              0 leaves gRPC an empty ring)"
                    ),
                ));
            }
        } else {
            notes.push(format!(
                "line {}: channel argument {key} does not change placement",
                node.line
            ));
        }
    }
    Ok(cap)
}

/// One endpoint as listed: address, hash key (None: the address),
/// weight (None: gRPC's 1), line.
type Listed = (String, Option<String>, Option<u64>, usize);

/// An address as gRPC prints it (`grpc_sockaddr_to_string`).
fn address(node: &Node, text_: &str) -> Result<String, ImportError> {
    let printed = match text_.parse::<SocketAddr>() {
        Ok(SocketAddr::V4(a)) => a.to_string(),
        Ok(SocketAddr::V6(a)) if a.scope_id() == 0 && a.flowinfo() == 0 => {
            format!("[{}]:{}", a.ip(), a.port())
        }
        _ => match text_.parse::<IpAddr>() {
            Ok(_) => Err(syntax(
                node.line,
                format!("{text_:?} has no port: write ip:port"),
            )),
            Err(_) => Err(syntax(
                node.line,
                format!(
                    "{text_:?} is not ip:port ([ip6]:port for IPv6, no scope): gRPC's \
                     ipv4:/ipv6: targets list addresses, not names"
                ),
            )),
        }?,
    };
    // Port 0 parses as an address; the one check refuses it as every
    // kind does.
    crate::address::host_port(&printed, node.line, "the address")?;
    Ok(printed)
}

/// `ipv4:a:p,b:q` or `ipv6:[a]:p,...` (`ipv4:///...` too).
fn target_endpoints(target: &Node) -> Result<Vec<Listed>, ImportError> {
    let uri = text(target, "target")?;
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Err(syntax(
            target.line,
            "the target is ipv4:ADDR:PORT,... or ipv6:[ADDR]:PORT,...",
        ));
    };
    if !matches!(scheme, "ipv4" | "ipv6") {
        return Err(ImportError::Unsupported {
            line: target.line,
            setting: format!("target: {uri}"),
            reason: "a resolver's target (dns:, xds:, ...) gets its addresses and their order \
                     at run time: write the addresses as an ipv4:/ipv6: target or an endpoints list"
                .into(),
        });
    }
    let path = rest.strip_prefix("///").unwrap_or(rest);
    let mut listed = Vec::new();
    for part in path.split(',') {
        let key = address(target, part)?;
        let v6 = key.starts_with('[');
        if v6 != (scheme == "ipv6") {
            return Err(syntax(
                target.line,
                format!("{part:?} is not an {scheme} address"),
            ));
        }
        listed.push((key, None, None, target.line));
    }
    Ok(listed)
}

/// `[{"address": ..., "weight": N, "hashKey": ...}, ...]`.
fn listed_endpoints(list: &Node) -> Result<Vec<Listed>, ImportError> {
    let Value::Seq(items) = &list.value else {
        return Err(syntax(
            list.line,
            "endpoints is a list of {\"address\": \"ip:port\", ...}",
        ));
    };
    const FIELDS: &[&str] = &["address", "weight", "hashKey"];
    let mut listed = Vec::new();
    for item in items {
        let fields = item.entries().ok_or_else(|| {
            syntax(
                item.line,
                format!("an endpoint is a mapping, not {}", item.kind()),
            )
        })?;
        for (key, node) in fields {
            if !FIELDS.contains(&key.as_str()) {
                return Err(unknown(node, "endpoints[]", key, FIELDS));
            }
        }
        let at = item
            .get("address")
            .ok_or_else(|| syntax(item.line, "an endpoint without an address"))?;
        let at_text = address(at, text(at, "address")?)?;
        let hash_key = match item.get("hashKey") {
            Some(node) => Some(text(node, "hashKey")?).filter(|k| !k.is_empty()),
            None => None,
        };
        let weight = match item.get("weight") {
            None => None,
            Some(node) => {
                let weight = number(node, "weight")?;
                if weight == 0 || weight > u64::from(u32::MAX) {
                    return Err(syntax(node.line, "weight is from 1 to 4294967295"));
                }
                Some(weight)
            }
        };
        listed.push((at_text, hash_key.map(str::to_owned), weight, item.line));
    }
    Ok(listed)
}

/// gRPC's duplicate merge: one endpoint per address at its first
/// position (with that listing's hash key), weights summed (an unweighted
/// listing counts 1).
fn merge(imported: &mut Imported, listed: Vec<Listed>) {
    struct Endpoint {
        address: String,
        key: Option<String>,
        weight: u64,
        line: usize,
        times: usize,
    }
    let mut merged: Vec<Endpoint> = Vec::new();
    for (address, key, weight, line) in listed {
        let weight = weight.unwrap_or(1);
        match merged.iter_mut().find(|e| e.address == address) {
            Some(endpoint) => {
                endpoint.weight += weight;
                endpoint.times += 1;
            }
            None => merged.push(Endpoint {
                address,
                key,
                weight,
                line,
                times: 1,
            }),
        }
    }
    for e in merged {
        if e.times > 1 {
            imported.notes.push(format!(
                "line {}: {} is listed {} times: gRPC merges them into one endpoint of weight {}",
                e.line, e.address, e.times, e.weight
            ));
        }
        let mut member = Member::new(e.key.unwrap_or(e.address));
        member.weight = Some(e.weight as f64);
        imported.push(member, e.line);
    }
}
