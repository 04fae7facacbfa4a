//! `envoy`: an Envoy cluster with `lb_policy: RING_HASH` or `MAGLEV`, or a
//! `load_balancing_policy` whose first policy is the `ring_hash`, `maglev`
//! or `rendezvous_hash` extension, in YAML or JSON: one `Cluster`, a list
//! of them, a `clusters:` list, or a bootstrap's
//! `static_resources.clusters`; `--pool NAME` chooses by `name`.
//!
//! Source: Envoy's `config/cluster/v3/cluster.proto` and
//! `config/endpoint/v3/endpoint_components.proto` (the fields), and
//! `source/extensions/load_balancing_policies/common/thread_aware_lb_impl.cc`
//! (`normalizeWeights`: without `locality_weighted_lb_config` the ring and
//! the table are built from the priority's flat host list, in the order of
//! `load_assignment.endpoints[].lb_endpoints[]`, weighted by each
//! endpoint's `load_balancing_weight`; locality weights are not used),
//! `ring_hash/ring_hash_lb.cc` and `maglev/maglev_lb.cc` (the host key),
//! `rendezvous_hash/rendezvous_hash_lb.cc`, the extensions' protos
//! (`extensions/load_balancing_policies/{ring_hash,maglev,rendezvous_hash,
//! common}/v3/*.proto`) and `source/common/upstream/upstream_impl.cc`
//! (`ClusterInfoImpl::configureLbPolicies`), read at envoyproxy/envoy
//! 5732d3995a5b.
//!
//! The typed policy (`load_balancing_policy.policies[]`): Envoy takes the
//! first policy whose extension it was built with and ignores `lb_policy`
//! (a note here); beside it, it refuses `lb_subset_config` and
//! `common_lb_config`'s `zone_aware_lb_config`,
//! `locality_weighted_lb_config` and `consistent_hashing_lb_config` (so
//! does this reader). The extension is known by its `typed_config`'s
//! `@type`: `...ring_hash.v3.RingHash` is `envoy-ring` (`minimum_ring_size`,
//! `maximum_ring_size`, `hash_function`, and `use_hostname_for_hashing`
//! only without `consistent_hashing_lb_config`, as Envoy reads it),
//! `...maglev.v3.Maglev` is `maglev` (`table_size`), and
//! `...rendezvous_hash.v3.RendezvousHash` is `envoy-rendezvous`; their
//! `consistent_hashing_lb_config` gives `use_hostname_for_hashing` (its
//! `hash_policy`, what a request hashes, is a note). A first policy of
//! another kind is refused: Envoy's own non-hash policies as such, any
//! other extension because whether Envoy has it decides which policy runs.
//!
//! How Envoy reads it: each host is hashed by its key: the endpoint's
//! `metadata.filter_metadata["envoy.lb"].hash_key` when set, else its
//! `hostname` with `common_lb_config.consistent_hashing_lb_config.
//! use_hostname_for_hashing` (for a DNS cluster without one, the DNS
//! name), else its address `ip:port` (`[ip6]:port`). That key is the
//! ringwise node name: `envoy-ring` (`minimum_ring_size`, default 1024;
//! `maximum_ring_size`, default 8388608; `hash_function: XX_HASH`) or
//! `maglev` (`table_size`, default 65537), both with Envoy's request hash
//! `xxh64`. With every host healthy the lowest priority takes all
//! requests: the endpoints of higher priorities are left out, with a note.
//!
//! Refused: other policies, `MURMUR_HASH_2`, `hash_balance_factor`
//! (bounded loads), `locality_weighted_lb_config`, `lb_subset_config`,
//! EDS clusters (their endpoints
//! are the control plane's), a `health_status` other than `HEALTHY` or
//! `UNKNOWN`, a DNS cluster hashed by its resolved address (unknown from
//! the file), pipes. `health_checks` and `outlier_detection` are notes:
//! they take hosts off the ring while unhealthy. Other known fields are
//! notes; an unknown field is refused, as Envoy refuses it. Field names may
//! be `snake_case` or JSON's `lowerCamelCase`.
//!
//! Worked example: `{name: cache, lb_policy: RING_HASH, load_assignment:
//! {endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address:
//! {address: 10.0.3.1, port_value: 8080}}}, load_balancing_weight: 2}]}]}}`
//! is `envoy-ring`, `min_ring_size = 1024`, one node `10.0.3.1:8080` of
//! weight 2.
//!
//! Cost: one pass over the text, O(length).

use std::net::IpAddr;

use ringwise::{Member, Param, ParamValue, Settings};

use crate::error::syntax;
use crate::yaml::{self, Node, Value, number, text};
use crate::{ImportError, Imported};

/// Cluster fields that do not change which host a request hashes to.
const NEUTRAL: &[&str] = &[
    "alt_stat_name",
    "connect_timeout",
    "per_connection_buffer_limit_bytes",
    "max_requests_per_connection",
    "circuit_breakers",
    "upstream_http_protocol_options",
    "common_http_protocol_options",
    "http_protocol_options",
    "http2_protocol_options",
    "typed_extension_protocol_options",
    "dns_refresh_rate",
    "dns_failure_refresh_rate",
    "respect_dns_ttl",
    "dns_lookup_family",
    "dns_resolvers",
    "use_tcp_for_dns_lookups",
    "dns_resolution_config",
    "typed_dns_resolver_config",
    "wait_for_warm_on_init",
    "cleanup_interval",
    "upstream_bind_config",
    "transport_socket",
    "metadata",
    "protocol_selection",
    "upstream_connection_options",
    "close_connections_on_host_health_failure",
    "ignore_health_on_host_removal",
    "filters",
    "lrs_server",
    "track_timeout_budgets",
    "upstream_config",
    "track_cluster_stats",
    "preconnect_policy",
    "connection_pool_per_downstream_connection",
    "transport_socket_matches",
    "dns_jitter",
];
/// Fields read here.
const READ: &[&str] = &[
    "name",
    "type",
    "lb_policy",
    "load_assignment",
    "ring_hash_lb_config",
    "maglev_lb_config",
    "common_lb_config",
    "health_checks",
    "outlier_detection",
    "load_balancing_policy",
];
/// Fields that change placement in ways not reproduced, and why.
const REFUSED: &[(&str, &str)] = &[
    (
        "lb_subset_config",
        "requests are balanced within metadata subsets of the hosts",
    ),
    (
        "eds_cluster_config",
        "the endpoints come from the control plane (EDS), not from the file",
    ),
    (
        "cluster_type",
        "a custom cluster type decides its own hosts",
    ),
    (
        "original_dst_lb_config",
        "ORIGINAL_DST routes to the request's own destination",
    ),
    ("least_request_lb_config", "LEAST_REQUEST is not a hash"),
    ("round_robin_lb_config", "ROUND_ROBIN is not a hash"),
];

/// `snake_case` → protobuf JSON's `lowerCamelCase`.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        match (c, upper) {
            ('_', _) => upper = true,
            (c, true) => (out.push(c.to_ascii_uppercase()), upper = false).1,
            (c, false) => out.push(c),
        }
    }
    out
}

/// The field `snake` of a message, under either of its names.
fn field<'a>(node: &'a Node, snake: &str) -> Option<&'a Node> {
    let camel = camel(snake);
    node.entries()?
        .iter()
        .find(|(k, _)| *k == snake || *k == camel)
        .map(|(_, n)| n)
}

/// A message's fields must be among `known` (snake_case names).
fn check_fields(node: &Node, what: &str, known: &[&str]) -> Result<(), ImportError> {
    let entries = node.entries().ok_or_else(|| {
        syntax(
            node.line,
            format!("{what} is a mapping, not {}", node.kind()),
        )
    })?;
    for (key, value) in entries {
        if !known.iter().any(|k| k == key || camel(k) == *key) {
            return Err(ImportError::UnknownSetting {
                line: value.line,
                setting: format!("{what}.{key}"),
                known: known.join(", "),
            });
        }
    }
    Ok(())
}

fn flag(node: &Node, what: &str) -> Result<bool, ImportError> {
    match text(node, what)? {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(syntax(node.line, format!("{what} is true or false"))),
    }
}

pub(crate) fn read(text_: &str, select: Option<&str>) -> Result<Imported, ImportError> {
    let root = yaml::parse(text_)?.ok_or_else(|| ImportError::Missing {
        message: "the file is empty".into(),
    })?;
    let list = match (
        &root.value,
        field(&root, "static_resources"),
        field(&root, "clusters"),
    ) {
        (Value::Seq(items), ..) => items.clone(),
        (_, Some(resources), _) => match field(resources, "clusters").map(|c| &c.value) {
            Some(Value::Seq(items)) => items.clone(),
            _ => {
                return Err(syntax(
                    resources.line,
                    "static_resources has no clusters: list",
                ));
            }
        },
        (
            _,
            None,
            Some(Node {
                value: Value::Seq(items),
                ..
            }),
        ) => items.clone(),
        _ => vec![root.clone()],
    };
    let mut names = Vec::new();
    for cluster in &list {
        let name = field(cluster, "name")
            .ok_or_else(|| syntax(cluster.line, "a cluster without a name"))?;
        names.push(text(name, "name")?.to_owned());
    }
    let index = match select {
        Some(wanted) => names.iter().position(|n| n == wanted),
        None if list.len() == 1 => Some(0),
        None => None,
    }
    .ok_or_else(|| ImportError::Select {
        what: "cluster",
        wanted: select.map(str::to_owned),
        available: names.clone(),
    })?;
    let mut imported = read_cluster(&list[index])?;
    imported.selected = Some(names[index].clone());
    Ok(imported)
}

fn read_cluster(cluster: &Node) -> Result<Imported, ImportError> {
    let mut known: Vec<&str> = [READ, NEUTRAL].concat();
    known.extend(REFUSED.iter().map(|(k, _)| *k));
    check_fields(cluster, "cluster", &known)?;
    let mut notes = Vec::new();
    for (key, node) in cluster.entries().unwrap_or_default() {
        let snake = known
            .iter()
            .find(|k| **k == key || camel(k) == *key)
            .copied()
            .unwrap_or_default();
        if let Some((_, reason)) = REFUSED.iter().find(|(k, _)| *k == snake) {
            return Err(ImportError::Unsupported {
                line: node.line,
                setting: key.clone(),
                reason: (*reason).into(),
            });
        }
        match snake {
            "health_checks" | "outlier_detection" => notes.push(format!(
                "line {}: {key}: Envoy takes a host off the ring while it is unhealthy or ejected, and its \
                 requests move meanwhile; the placement shown is that of every host healthy",
                node.line
            )),
            s if NEUTRAL.contains(&s) => notes.push(format!("line {}: {key} does not change placement", node.line)),
            _ => {}
        }
    }
    let kind = field(cluster, "type")
        .map(|t| text(t, "type"))
        .transpose()?
        .unwrap_or("STATIC");
    let dns = match kind {
        "STATIC" => false,
        "STRICT_DNS" | "LOGICAL_DNS" => true,
        other => {
            return Err(ImportError::Unsupported {
                line: field(cluster, "type").map_or(cluster.line, |t| t.line),
                setting: format!("type: {other}"),
                reason:
                    "ringwise reads the endpoints a STATIC, STRICT_DNS or LOGICAL_DNS cluster lists"
                        .into(),
            });
        }
    };
    let Policy {
        settings,
        by_hostname,
    } = match field(cluster, "load_balancing_policy") {
        Some(typed) => typed_policy(cluster, typed, &mut notes)?,
        None => legacy_policy(cluster, &mut notes)?,
    };
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    let assignment = field(cluster, "load_assignment").ok_or_else(|| ImportError::Missing {
        message: format!("the cluster (line {}) has no load_assignment", cluster.line),
    })?;
    check_fields(
        assignment,
        "load_assignment",
        &["cluster_name", "endpoints", "policy", "named_endpoints"],
    )?;
    let localities = match field(assignment, "endpoints").map(|e| &e.value) {
        Some(Value::Seq(items)) => items.as_slice(),
        _ => &[],
    };
    let priority = |l: &Node| field(l, "priority").map_or(Ok(0), |p| number(p, "priority"));
    let mut lowest = u64::MAX;
    for locality in localities {
        lowest = lowest.min(priority(locality)?);
    }
    for locality in localities {
        check_fields(
            locality,
            "endpoints[]",
            &[
                "locality",
                "lb_endpoints",
                "load_balancing_weight",
                "priority",
                "proximity",
            ],
        )?;
        let p = priority(locality)?;
        if p != lowest {
            imported.notes.push(format!(
                "line {}: the endpoints of priority {p} are left out: Envoy sends them requests only when \
                 priority {lowest} is not healthy enough",
                locality.line
            ));
            continue;
        }
        if let Some(w) = field(locality, "load_balancing_weight") {
            imported.notes.push(format!(
                "line {}: the locality's load_balancing_weight is not used without locality_weighted_lb_config",
                w.line
            ));
        }
        let Some(Node {
            value: Value::Seq(endpoints),
            ..
        }) = field(locality, "lb_endpoints")
        else {
            continue;
        };
        for endpoint in endpoints {
            let member = host(endpoint, dns, by_hostname)?;
            imported.push(member, endpoint.line);
        }
    }
    if imported.members.is_empty() {
        return Err(ImportError::Missing {
            message: format!("the cluster (line {}) has no endpoints", cluster.line),
        });
    }
    Ok(imported)
}

/// What a cluster's policy asks for: the settings, and whether hosts are
/// hashed by their hostname.
struct Policy {
    settings: Settings,
    by_hostname: bool,
}

/// `lb_policy` (`RING_HASH`, `MAGLEV`) with `ring_hash_lb_config`,
/// `maglev_lb_config` and `common_lb_config`: Envoy's legacy fields, read
/// when there is no `load_balancing_policy`.
fn legacy_policy(cluster: &Node, notes: &mut Vec<String>) -> Result<Policy, ImportError> {
    let policy_node = field(cluster, "lb_policy");
    let policy = policy_node
        .map(|p| text(p, "lb_policy"))
        .transpose()?
        .unwrap_or("ROUND_ROBIN");
    let policy_line = policy_node.map_or(cluster.line, |p| p.line);
    let mut settings = Settings::default();
    match policy {
        "RING_HASH" => {
            settings.algorithm = Some("envoy-ring".into());
            let (mut min, mut max) = (1024, 8_388_608);
            if let Some(config) = field(cluster, "ring_hash_lb_config") {
                check_fields(
                    config,
                    "ring_hash_lb_config",
                    &["minimum_ring_size", "maximum_ring_size", "hash_function"],
                )?;
                if let Some(n) = field(config, "minimum_ring_size") {
                    min = number(n, "minimum_ring_size")?;
                }
                if let Some(n) = field(config, "maximum_ring_size") {
                    max = number(n, "maximum_ring_size")?;
                }
                if let Some(h) = field(config, "hash_function") {
                    match text(h, "hash_function")? {
                        "XX_HASH" => {}
                        other => {
                            return Err(ImportError::Unsupported {
                                line: h.line,
                                setting: format!("hash_function: {other}"),
                                reason: "ringwise's envoy-ring hashes its points with xxHash64 (XX_HASH)".into(),
                            });
                        }
                    }
                }
            }
            settings.params = vec![
                (Param::MinRingSize, ParamValue::Count(min)),
                (Param::MaxRingSize, ParamValue::Count(max)),
            ];
        }
        "MAGLEV" => {
            settings.algorithm = Some("maglev".into());
            // ringwise's maglev hashes keys with xxh3 by default; Envoy's
            // request hash is xxh64 (envoy-ring's default already).
            settings.hash = Some("xxh64".into());
            let mut size = 65537;
            if let Some(config) = field(cluster, "maglev_lb_config") {
                check_fields(config, "maglev_lb_config", &["table_size"])?;
                if let Some(n) = field(config, "table_size") {
                    size = number(n, "table_size")?;
                }
            }
            settings.params = vec![(Param::TableSize, ParamValue::Count(size))];
        }
        other => {
            return Err(ImportError::Unsupported {
                line: policy_line,
                setting: format!("lb_policy: {other}"),
                reason: "not a consistent hash: ringwise reproduces RING_HASH and MAGLEV, and \
                         the ring_hash, maglev and rendezvous_hash policies of \
                         load_balancing_policy"
                    .into(),
            });
        }
    }
    let mut by_hostname = false;
    if let Some(common) = field(cluster, "common_lb_config") {
        for (key, node) in common.entries().unwrap_or_default() {
            match key.as_str() {
                "consistent_hashing_lb_config" | "consistentHashingLbConfig" => {
                    check_fields(
                        node,
                        key,
                        &["use_hostname_for_hashing", "hash_balance_factor"],
                    )?;
                    if let Some(f) = field(node, "use_hostname_for_hashing") {
                        by_hostname = flag(f, "use_hostname_for_hashing")?;
                    }
                    if let Some(f) = field(node, "hash_balance_factor") {
                        return Err(ImportError::Unsupported {
                            line: f.line,
                            setting: "hash_balance_factor".into(),
                            reason:
                                "bounded loads send a request past its host by the hosts' live load"
                                    .into(),
                        });
                    }
                }
                "locality_weighted_lb_config" | "localityWeightedLbConfig" => {
                    return Err(ImportError::Unsupported {
                        line: node.line,
                        setting: key.clone(),
                        reason: "locality-weighted rings are not reproduced".into(),
                    });
                }
                _ => notes.push(format!(
                    "line {}: common_lb_config.{key} does not change placement",
                    node.line
                )),
            }
        }
    }
    Ok(Policy {
        settings,
        by_hostname,
    })
}

/// The `@type` of each typed hash policy Envoy has.
const RING_HASH_TYPE: &str = "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash";
const MAGLEV_TYPE: &str = "envoy.extensions.load_balancing_policies.maglev.v3.Maglev";
const RENDEZVOUS_TYPE: &str =
    "envoy.extensions.load_balancing_policies.rendezvous_hash.v3.RendezvousHash";
/// Envoy's built-in policies that do not hash.
const NOT_HASHES: &[&str] = &[
    "round_robin.v3.RoundRobin",
    "least_request.v3.LeastRequest",
    "random.v3.Random",
    "client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin",
    "wrr_locality.v3.WrrLocality",
    "cluster_provided.v3.ClusterProvided",
    "subset.v3.Subset",
    "override_host.v3.OverrideHost",
    "pick_first.v3.PickFirst",
];

/// `load_balancing_policy`, as Envoy's `ClusterInfoImpl::
/// configureLbPolicies` reads it: `lb_policy` is then ignored; the zone,
/// locality and hashing parts of `common_lb_config` are refused (Envoy
/// refuses them beside it); the first of `policies` whose extension Envoy
/// has is used. Only Envoy's own extensions are known here, so the first
/// policy decides: a hash one is read, another one refused.
fn typed_policy(
    cluster: &Node,
    typed: &Node,
    notes: &mut Vec<String>,
) -> Result<Policy, ImportError> {
    if let Some(legacy) = field(cluster, "lb_policy") {
        notes.push(format!(
            "line {}: lb_policy is ignored: Envoy uses load_balancing_policy when it is set",
            legacy.line
        ));
    }
    if let Some(common) = field(cluster, "common_lb_config") {
        for (key, node) in common.entries().unwrap_or_default() {
            let partial = [
                "zone_aware_lb_config",
                "locality_weighted_lb_config",
                "consistent_hashing_lb_config",
            ];
            if partial.iter().any(|p| *p == key || camel(p) == *key) {
                return Err(ImportError::Unsupported {
                    line: node.line,
                    setting: format!("common_lb_config.{key}"),
                    reason: "Envoy refuses it beside load_balancing_policy: move it into the \
                             policy's typed_config"
                        .into(),
                });
            }
            notes.push(format!(
                "line {}: common_lb_config.{key} does not change placement",
                node.line
            ));
        }
    }
    for legacy in ["ring_hash_lb_config", "maglev_lb_config"] {
        if let Some(node) = field(cluster, legacy) {
            notes.push(format!(
                "line {}: {legacy} is ignored: Envoy reads the policy's typed_config instead",
                node.line
            ));
        }
    }
    check_fields(typed, "load_balancing_policy", &["policies"])?;
    let first = match field(typed, "policies").map(|p| &p.value) {
        Some(Value::Seq(items)) if !items.is_empty() => &items[0],
        _ => {
            return Err(syntax(
                typed.line,
                "load_balancing_policy has no policies: list",
            ));
        }
    };
    check_fields(first, "policies[]", &["typed_extension_config"])?;
    let extension = field(first, "typed_extension_config")
        .ok_or_else(|| syntax(first.line, "a policy without typed_extension_config"))?;
    check_fields(
        extension,
        "typed_extension_config",
        &["name", "typed_config"],
    )?;
    let config = field(extension, "typed_config").ok_or_else(|| {
        syntax(
            extension.line,
            "a typed_extension_config without typed_config",
        )
    })?;
    let url_node = config
        .get("@type")
        .ok_or_else(|| syntax(config.line, "a typed_config without \"@type\""))?;
    let url = text(url_node, "@type")?;
    let message = url.rsplit('/').next().unwrap_or(url);
    let mut settings = Settings::default();
    let mut by_hostname = false;
    let hashing;
    match message {
        RING_HASH_TYPE => {
            check_fields(
                config,
                "RingHash",
                &[
                    "@type",
                    "hash_function",
                    "minimum_ring_size",
                    "maximum_ring_size",
                    "use_hostname_for_hashing",
                    "hash_balance_factor",
                    "consistent_hashing_lb_config",
                    "locality_weighted_lb_config",
                ],
            )?;
            settings.algorithm = Some("envoy-ring".into());
            let size = |name, default| field(config, name).map_or(Ok(default), |n| number(n, name));
            let (min, max) = (
                size("minimum_ring_size", 1024)?,
                size("maximum_ring_size", 8_388_608)?,
            );
            if let Some(h) = field(config, "hash_function") {
                let name = text(h, "hash_function")?;
                if !matches!(name, "DEFAULT_HASH" | "XX_HASH" | "0" | "1") {
                    return Err(ImportError::Unsupported {
                        line: h.line,
                        setting: format!("hash_function: {name}"),
                        reason: "ringwise's envoy-ring hashes its points with xxHash64 (XX_HASH)"
                            .into(),
                    });
                }
            }
            // Deprecated fields, read only without consistent_hashing_lb_config.
            if let Some(f) = field(config, "use_hostname_for_hashing") {
                by_hostname = flag(f, "use_hostname_for_hashing")?;
            }
            if let Some(f) = field(config, "hash_balance_factor") {
                return Err(bounded(f.line));
            }
            settings.params = vec![
                (Param::MinRingSize, ParamValue::Count(min)),
                (Param::MaxRingSize, ParamValue::Count(max)),
            ];
            hashing = field(config, "consistent_hashing_lb_config");
        }
        MAGLEV_TYPE => {
            check_fields(
                config,
                "Maglev",
                &[
                    "@type",
                    "table_size",
                    "consistent_hashing_lb_config",
                    "locality_weighted_lb_config",
                ],
            )?;
            settings.algorithm = Some("maglev".into());
            settings.hash = Some("xxh64".into());
            let size =
                field(config, "table_size").map_or(Ok(65537), |n| number(n, "table_size"))?;
            settings.params = vec![(Param::TableSize, ParamValue::Count(size))];
            hashing = field(config, "consistent_hashing_lb_config");
        }
        RENDEZVOUS_TYPE => {
            check_fields(
                config,
                "RendezvousHash",
                &[
                    "@type",
                    "consistent_hashing_lb_config",
                    "locality_weighted_lb_config",
                ],
            )?;
            settings.algorithm = Some("envoy-rendezvous".into());
            hashing = field(config, "consistent_hashing_lb_config");
        }
        other => {
            let known = other
                .strip_prefix("envoy.extensions.load_balancing_policies.")
                .is_some_and(|m| NOT_HASHES.contains(&m));
            return Err(ImportError::Unsupported {
                line: url_node.line,
                setting: format!("@type: {url}"),
                reason: if known {
                    "not a consistent hash: ringwise reproduces the ring_hash, maglev and \
                     rendezvous_hash policies"
                        .into()
                } else {
                    "not one of Envoy's hash policies (ring_hash, maglev, rendezvous_hash): \
                     Envoy uses the first policy it was built with, which ringwise cannot \
                     know; list the hash policy first"
                        .into()
                },
            });
        }
    }
    if let Some(f) = field(config, "locality_weighted_lb_config") {
        return Err(ImportError::Unsupported {
            line: f.line,
            setting: "locality_weighted_lb_config".into(),
            reason: "locality-weighted hashing is not reproduced".into(),
        });
    }
    if let Some(hashing) = hashing {
        check_fields(
            hashing,
            "consistent_hashing_lb_config",
            &[
                "use_hostname_for_hashing",
                "hash_balance_factor",
                "hash_policy",
            ],
        )?;
        by_hostname = match field(hashing, "use_hostname_for_hashing") {
            Some(f) => flag(f, "use_hostname_for_hashing")?,
            None => false,
        };
        if let Some(f) = field(hashing, "hash_balance_factor") {
            return Err(bounded(f.line));
        }
        if let Some(f) = field(hashing, "hash_policy") {
            notes.push(format!(
                "line {}: hash_policy says what Envoy hashes for a request (ringwise's key); it \
                 does not change where a hash goes",
                f.line
            ));
        }
    }
    Ok(Policy {
        settings,
        by_hostname,
    })
}

/// `hash_balance_factor`, refused wherever it is.
fn bounded(line: usize) -> ImportError {
    ImportError::Unsupported {
        line,
        setting: "hash_balance_factor".into(),
        reason: "bounded loads send a request past its host by the hosts' live load".into(),
    }
}

/// One `lb_endpoints[]` item: its hash key and weight.
fn host(lb: &Node, dns: bool, by_hostname: bool) -> Result<Member, ImportError> {
    check_fields(
        lb,
        "lb_endpoints[]",
        &[
            "endpoint",
            "health_status",
            "metadata",
            "load_balancing_weight",
            "endpoint_name",
        ],
    )?;
    if let Some(status) = field(lb, "health_status") {
        let status_text = text(status, "health_status")?;
        if !matches!(status_text, "HEALTHY" | "UNKNOWN") {
            return Err(ImportError::Unsupported {
                line: status.line,
                setting: format!("health_status: {status_text}"),
                reason: "Envoy takes such a host off the ring, and spills requests by its health rules; \
                         ringwise answers for hosts that are healthy: remove the endpoint"
                    .into(),
            });
        }
    }
    let endpoint = field(lb, "endpoint")
        .ok_or_else(|| syntax(lb.line, "an lb_endpoint without an endpoint"))?;
    let hash_key = field(lb, "metadata")
        .and_then(|m| field(m, "filter_metadata"))
        .and_then(|f| f.get("envoy.lb"))
        .and_then(|e| e.get("hash_key"));
    let socket = field(endpoint, "address").and_then(|a| field(a, "socket_address"));
    let address = socket
        .and_then(|s| field(s, "address"))
        .map(|a| text(a, "address"))
        .transpose()?;
    let hostname = field(endpoint, "hostname")
        .map(|h| text(h, "hostname"))
        .transpose()?;
    let refuse = |reason: &str| ImportError::Unsupported {
        line: lb.line,
        setting: "the endpoint".into(),
        reason: reason.into(),
    };
    let key = match (hash_key, by_hostname) {
        (Some(key), _) => text(key, "hash_key")?.to_owned(),
        (None, true) => match (hostname, dns, address) {
            (Some(h), ..) if !h.is_empty() => {
                crate::address::host(h, lb.line, "hostname")?;
                h.to_owned()
            }
            (_, true, Some(a)) => {
                crate::address::host(a, lb.line, "the socket_address address")?;
                a.to_owned()
            }
            _ => {
                return Err(refuse(
                    "use_hostname_for_hashing with no hostname: Envoy would hash the empty text",
                ));
            }
        },
        (None, false) => {
            let (Some(socket), Some(address)) = (socket, address) else {
                return Err(refuse(
                    "only socket_address endpoints (ip and port_value) are reproduced",
                ));
            };
            if dns {
                return Err(refuse(
                    "a DNS cluster's hosts are hashed by their resolved ip:port, which the file does not say: \
                     set use_hostname_for_hashing (or a hash_key), or list the addresses in a STATIC cluster",
                ));
            }
            let port = field(socket, "port_value")
                .ok_or_else(|| refuse("a socket_address without port_value"))?;
            let port_line = port.line;
            let port = number(port, "port_value")?;
            crate::address::port(&port.to_string(), port_line, "port_value")?;
            match address.parse::<IpAddr>() {
                Ok(IpAddr::V4(ip)) => format!("{ip}:{port}"),
                Ok(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
                Err(_) => {
                    return Err(syntax(
                        lb.line,
                        format!("{address:?} is not an IP address, as a STATIC cluster needs"),
                    ));
                }
            }
        }
    };
    let mut member = Member::new(key);
    if let Some(w) = field(lb, "load_balancing_weight") {
        let weight = number(w, "load_balancing_weight")?;
        if weight == 0 || weight > u64::from(u32::MAX) {
            return Err(syntax(
                w.line,
                "load_balancing_weight is from 1 to 4294967295",
            ));
        }
        member.weight = Some(weight as f64);
    }
    Ok(member)
}
