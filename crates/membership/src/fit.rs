//! Which members are left out when the settings cannot build them with
//! the others: a member valid in itself whose points the ring cannot hold.
//!
//! A build can fail without naming a member: the ring would pass its point
//! budget (`max_points`, 2^24 unless raised), the process cannot reserve
//! the memory of its peak, or the algorithm refuses the members as a whole
//! (`slots` takes no weights). Such a failure used to be charged to the
//! config, so one member registered with a legal but huge weight (10^6,
//! 160 points per unit: 1.6 x 10^8 points) froze every watcher on the ring
//! it held and made every new client fail. The fault is the member's, and
//! the rule that finds it looks only at what the source holds, so every
//! client at one version leaves out the same members:
//!
//! 1. The members in order of weight, heaviest first, ties by name; each
//!    is built alone under the settings (without `removed`, which numbers
//!    the buckets of the whole list). One that fails alone (its own points
//!    pass the budget; `slots` and a weight) is left out. On a budget
//!    failure the walk skips the members lighter than the first that
//!    makes its points and builds alone (they build too), but not those
//!    whose points are given by hand (their count is not their weight);
//!    on another failure of the members as a whole it builds only the
//!    members with a weight other than 1 (the rest are alike).
//! 2. None failed alone and the failure is the budget's: together they
//!    pass it. The fewest heaviest members (same order) are left out that
//!    let the rest fit: the smallest `k` such that the members without the
//!    `k` first of the order build.
//!
//! 3. None failed alone and the failure is not the budget's: an algorithm
//!    that takes one weight for all (`multiprobe`). The members whose
//!    weight differs from most members' (ties: the lighter) are left out,
//!    if the rest then builds.
//!
//! Anything else (a hash the algorithm cannot use, a parameter out of
//! range) stays the config's fault: nothing is left out here.
//!
//! The memory of a build is the one part that depends on the process: a
//! client under a lower memory limit may leave out more members than its
//! peers (it could not hold the ring at all otherwise).
//!
//! Cost, only when the whole build failed: one build alone per member
//! walked (a failure of the budget is refused before anything is
//! allocated, so the cost is the points of the one member that builds),
//! then a galloping search over `k`: O(log k) failures, each refused
//! before it allocates, and O(log k) builds that fit.

use ringwise::{AnyPlacement, ClusterSpec, Keyed, Part, Rejected, Settings};

/// A validated description and the placement it builds.
pub type Described = (ClusterSpec, Keyed<AnyPlacement>);

/// `parts` under `settings`, described and built; or the part at fault
/// with the error. One from_parts and one build.
pub(crate) fn build(
    settings: &Settings,
    parts: &[ringwise::Member],
) -> Result<Described, (Part, ringwise::Error)> {
    match ClusterSpec::from_parts(settings, parts) {
        Ok(spec) => match spec.build() {
            Ok(keyed) => Ok((spec, keyed)),
            Err(error) => Err((spec.part_of(&error), error)),
        },
        Err(Rejected { part, error }) => Err((part, error)),
    }
}

/// The members (indices into `parts`) to leave out, each with why, when
/// the build of all of them failed with `error`, blamed on `part`; empty
/// when the fault is not the members' (the config's). The rule is the
/// module's.
pub(crate) fn left_out(
    settings: &Settings,
    parts: &[ringwise::Member],
    part: Part,
    error: &ringwise::Error,
) -> Vec<(usize, String)> {
    // A budget error blames the members as a whole; one that blames a
    // setting (a table too small for them) is the config's.
    if part != Part::Members {
        return Vec::new();
    }
    let budget = over_budget(error);
    let order = heaviest_first(parts);
    let mut alone_settings = settings.clone();
    alone_settings.removed = None;
    let mut out = Vec::new();
    // Past the budget, a member that makes its points and builds alone
    // means every lighter one that makes them does too; points given by
    // hand count whatever the weight, so each is built.
    let mut lighter_fit = false;
    for &index in &order {
        let generated = field(&parts[index]) == "weight";
        // Past the budget, lighter members than one that fits fit; for
        // another refusal of the members as a whole, only a weight the
        // algorithm may not take is a member's own (the others are
        // alike): the walk costs one build per weighted member at most.
        let weighted = parts[index].weight.is_some_and(|w| w != 1.0);
        let skip = if budget {
            lighter_fit && generated
        } else {
            !(generated && weighted)
        };
        if skip {
            continue;
        }
        let alone = build(&alone_settings, std::slice::from_ref(&parts[index]));
        match alone {
            Ok(_) => lighter_fit = budget && generated,
            Err((part, e)) if over_budget(&e) || matches!(part, Part::Members) => {
                let why = format!(
                    "field `{}`: this member alone cannot be built under the cluster's \
                     settings: {}; it is left out: lower its weight, or raise `max_points` in \
                     the config",
                    field(&parts[index]),
                    message(&e)
                );
                out.push((index, why));
            }
            Err(_) => {}
        }
    }
    if out.is_empty() && !budget {
        return one_weight(settings, parts);
    }
    if !out.is_empty() || !budget {
        return out;
    }
    let heaviest = fewest_heaviest(settings, parts, &order);
    order[..heaviest]
        .iter()
        .map(|&index| {
            let why = format!(
                "field `{}`: with the other members the ring would pass its budget ({}); \
                 the heaviest members are left out first (ties by name) until the rest fits: \
                 lower its weight, or raise `max_points` in the config",
                field(&parts[index]),
                message(error)
            );
            (index, why)
        })
        .collect()
}

/// Members that each build alone but not together, for another reason
/// than the budget: an algorithm that takes one weight for every member
/// (`multiprobe`). The members whose weight differs from most members'
/// (ties: the lighter weight) are left out, if the rest then builds;
/// else nothing is (the config's fault). O(N log N) and one build.
fn one_weight(settings: &Settings, parts: &[ringwise::Member]) -> Vec<(usize, String)> {
    let weight = |i: usize| parts[i].weight.unwrap_or(1.0);
    let mut weights: Vec<f64> = (0..parts.len()).map(weight).collect();
    weights.sort_by(f64::total_cmp);
    // The most common weight; runs in ascending order, so the first of the
    // longest is the lighter on a tie.
    let (mut common, mut most, mut at) = (None, 0, 0);
    while at < weights.len() {
        let run = weights[at..]
            .iter()
            .take_while(|&&w| w == weights[at])
            .count();
        if run > most {
            (common, most) = (Some(weights[at]), run);
        }
        at += run;
    }
    let Some(common) = common.filter(|_| most < parts.len()) else {
        return Vec::new();
    };
    let rest: Vec<ringwise::Member> = (0..parts.len())
        .filter(|&i| weight(i) == common)
        .map(|i| parts[i].clone())
        .collect();
    if build(settings, &rest).is_err() {
        return Vec::new();
    }
    (0..parts.len())
        .filter(|&i| weight(i) != common)
        .map(|i| {
            let why = format!(
                "field `weight`: the algorithm takes one weight for every member, and most \
                 members have {common} (this one {}); it is left out: give it weight {common}, \
                 or use the ring or maglev",
                weight(i)
            );
            (i, why)
        })
        .collect()
}

/// The field that gives a member its points: the points, tokens or
/// slots it fixes by hand, else its weight.
fn field(part: &ringwise::Member) -> &'static str {
    if part.tokens.is_some() {
        "tokens"
    } else if part.slots.is_some() {
        "slots"
    } else if part.points.is_some() {
        "points"
    } else {
        "weight"
    }
}

/// Whether `error` is the point or memory budget's.
fn over_budget(error: &ringwise::Error) -> bool {
    matches!(
        error,
        ringwise::Error::TooManyPoints { .. } | ringwise::Error::OutOfMemory { .. }
    )
}

/// The indices of `parts`, heaviest first, ties by name: the order in
/// which members are left out. Weights were checked (finite, above 0).
fn heaviest_first(parts: &[ringwise::Member]) -> Vec<usize> {
    let weight = |i: usize| parts[i].weight.unwrap_or(1.0);
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| {
        weight(b)
            .total_cmp(&weight(a))
            .then_with(|| parts[a].name.cmp(&parts[b].name))
    });
    order
}

/// The smallest `k` such that `parts` without the `k` first of `order`
/// fit the budget (build, or fail for another reason, which the caller's
/// next build reports). `k = len` always fits (no member); `k = 0` did
/// not (the caller's build). Galloping, then halving.
fn fewest_heaviest(settings: &Settings, parts: &[ringwise::Member], order: &[usize]) -> usize {
    let fits = |k: usize| {
        let mut without = vec![false; parts.len()];
        for &index in &order[..k] {
            without[index] = true;
        }
        let rest: Vec<ringwise::Member> = (0..parts.len())
            .filter(|&i| !without[i])
            .map(|i| parts[i].clone())
            .collect();
        rest.is_empty() || !matches!(build(settings, &rest), Err((_, e)) if over_budget(&e))
    };
    let (mut low, mut high) = (0, 1);
    while high < order.len() && !fits(high) {
        low = high;
        high = (high * 2).min(order.len());
    }
    // `low` does not fit, `high` does (or is every member).
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fits(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    high
}

/// An error's words, without a cluster file's prefix (no file here).
pub(crate) fn message(error: &ringwise::Error) -> String {
    match error {
        ringwise::Error::ClusterFile { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
