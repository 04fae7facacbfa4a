//! What every membership source's benchmarks share (each source crate's
//! `benches/propagation.rs` and `benches/scale.rs` include this file by
//! path, as the tests share their process helpers): the numeric
//! arguments, the runtime they run on, the process's resident memory, and
//! the percentiles line, so the figures of etcd and ZooKeeper are read
//! and printed alike.

use std::time::Duration;

/// The numeric command-line arguments in order (`-- 20 10000`), past
/// whatever cargo's harness adds (`--bench`).
pub fn numbers() -> Vec<usize> {
    std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect()
}

/// The runtime a benchmark's clients run on: two workers, one per core of
/// the machine BENCHMARKS.md records.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// This process's resident memory in KiB (`VmRSS` of /proc/self/status;
/// 0 where it cannot be read).
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Milliseconds, as the tables print them.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The quantiles `qs` of `latencies` in milliseconds (sorted here;
/// nearest rank); `None` without samples.
fn quantiles<const N: usize>(latencies: &mut [Duration], qs: [f64; N]) -> Option<[f64; N]> {
    let last = latencies.len().checked_sub(1)?;
    latencies.sort();
    Some(qs.map(|q| ms(latencies[(last as f64 * q).round() as usize])))
}

/// `p50 … ms  p90 … ms  p99 … ms  max … ms` of `latencies`. Empty: `no
/// samples`.
pub fn percentiles(latencies: &mut [Duration]) -> String {
    match quantiles(latencies, [0.5, 0.9, 0.99, 1.0]) {
        Some([p50, p90, p99, max]) => {
            format!("p50 {p50:.2} ms  p90 {p90:.2} ms  p99 {p99:.2} ms  max {max:.2} ms")
        }
        None => "no samples".into(),
    }
}

/// `median … ms  max … ms` of `latencies`. Empty: `no samples`.
pub fn median_max(latencies: &mut [Duration]) -> String {
    match quantiles(latencies, [0.5, 1.0]) {
        Some([median, max]) => format!("median {median:.1} ms  max {max:.1} ms"),
        None => "no samples".into(),
    }
}
