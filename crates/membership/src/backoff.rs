//! [`backoff`]: the jittered pause before retrying a source, shared by every
//! caller that retries (endpoint failover, a registrar's keep-alive, a
//! watcher's reconnects), of every source.

use std::time::Duration;

/// The pause before retry `attempt` (1, 2, ...): 50 ms doubling up to
/// `max`, then a random 50–100 % of it ("equal jitter"), so clients that
/// lost etcd together do not come back in step.
pub fn backoff(attempt: u32, max: Duration) -> Duration {
    let full = Duration::from_millis(50)
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(max);
    // Jitter from the clock's nanoseconds: retry timing only, never
    // placement.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = u64::from(nanos).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
    let fraction = 0.5 + 0.5 * (mixed as f64 / u32::MAX as f64);
    full.mul_f64(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_with_jitter() {
        let max = Duration::from_secs(1);
        for attempt in 1..40 {
            let pause = backoff(attempt, max);
            let full = Duration::from_millis(50 << (attempt - 1).min(5)).min(max);
            assert!(pause >= full / 2 && pause <= full, "{attempt}: {pause:?}");
        }
        // Jitter: draws for one attempt differ and spread over the range
        // (without it, all 200 would be the full 400 ms).
        let draws: Vec<Duration> = (0..200).map(|_| backoff(4, max)).collect();
        let distinct: std::collections::BTreeSet<Duration> = draws.iter().copied().collect();
        assert!(distinct.len() > 100, "{} distinct of 200", distinct.len());
        let (low, high) = (draws.iter().min(), draws.iter().max());
        let spread = high.zip(low).map(|(h, l)| *h - *l);
        assert!(
            spread > Some(Duration::from_millis(100)),
            "spread {spread:?} of a 200 ms range"
        );
    }
}
