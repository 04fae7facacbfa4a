//! The rule of `fit`, on contents built by hand: which members are left
//! out, named how, and that every order of arrival gives the same ring.

use crate::cluster::Cluster;
use crate::member::{Contents, config_key, node_key};

const PREFIX: &str = "/fit";

/// Contents holding `config` (written first, when given) and `members`
/// as `(name, value)`, each joined at its own version, in the order given.
fn contents(config: Option<&str>, members: &[(&str, &str)]) -> Contents {
    let mut contents = Contents::new(PREFIX);
    let mut version = 1;
    if let Some(config) = config {
        contents.put(&config_key(PREFIX), config.as_bytes(), version, version);
        version += 1;
    }
    for (name, value) in members {
        let key = node_key(PREFIX, name);
        contents.put(&key, value.as_bytes(), version, version);
        version += 1;
    }
    contents
}

fn names(cluster: &Cluster) -> Vec<&str> {
    cluster.members.iter().map(|m| m.name.as_str()).collect()
}

fn why<'a>(cluster: &'a Cluster, name: &str) -> &'a str {
    let key = node_key(PREFIX, name);
    match cluster.skipped.get(&key) {
        Some(why) => why,
        None => panic!("{key} not left out: {:?}", cluster.skipped),
    }
}

/// Weight 10^6 is legal, but at 160 points per unit it is 1.6 x 10^8
/// points alone, past the default budget of 2^24: the member is left out
/// under its key, and the ring of the others is built (it used to be the
/// config's error, and every watcher held its old ring).
#[test]
fn a_member_too_heavy_for_the_point_budget_alone_is_left_out_and_named() {
    let huge = r#"{"weight": 1000000}"#;
    for config in [None, Some(r#"{"algorithm": "ring"}"#)] {
        let mut held = contents(config, &[("a", "{}"), ("huge", huge), ("b", "{}")]);
        let cluster = Cluster::from_contents(&mut held).expect("a ring of a and b");
        assert_eq!(names(&cluster), ["a", "b"], "{:?}", cluster.skipped);
        let why = why(&cluster, "huge");
        assert!(
            why.starts_with("field `weight`: this member alone cannot be built")
                && why.contains("160000000 points")
                && why.contains("max_points"),
            "{why}"
        );
        assert_eq!(cluster.skipped.len(), 1);
    }
}

/// Members that fit one by one but not together: the heaviest are left
/// out first, ties by name, the fewest that let the rest fit; the ring
/// is the same whatever order they arrived in.
#[test]
fn members_over_the_budget_together_leave_out_the_heaviest_first_ties_by_name() {
    let config = r#"{"vnodes": 100, "max_points": 700}"#;
    let members = [
        ("a", "{}"),
        ("d", r#"{"weight": 3}"#),
        ("b", "{}"),
        ("e", r#"{"weight": 2}"#),
        ("c", r#"{"weight": 3}"#),
    ];
    // 1000 points: without c (the first of the two 3s by name), 700.
    let mut rings = Vec::new();
    for turn in 0..members.len() {
        let mut order = members.to_vec();
        order.rotate_left(turn);
        let mut held = contents(Some(config), &order);
        let cluster = Cluster::from_contents(&mut held).expect("a ring");
        let mut kept = names(&cluster);
        kept.sort_unstable();
        assert_eq!(kept, ["a", "b", "d", "e"], "{:?}", cluster.skipped);
        let why = why(&cluster, "c");
        assert!(
            why.starts_with(
                "field `weight`: with the other members the ring would pass its \
                             budget (the ring would hold 1000 points"
            ) && why.contains("heaviest members are left out first (ties by name)"),
            "{why}"
        );
        let owners: Vec<String> = (0..2000)
            .map(|i| {
                cluster
                    .owner(format!("key:{i}"))
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        rings.push(owners);
    }
    // Join order changes the description, not who owns a key on a ring.
    rings.dedup();
    assert_eq!(rings.len(), 1, "one ring whatever the order");
    // Past 400 both 3s go (c, then d), not e and the light ones.
    let config = r#"{"vnodes": 100, "max_points": 400}"#;
    let mut held = contents(Some(config), &members);
    let cluster = Cluster::from_contents(&mut held).expect("a ring");
    assert_eq!(names(&cluster), ["a", "b", "e"], "{:?}", cluster.skipped);
    assert!(why(&cluster, "d").contains("heaviest"));
}

/// A member whose points are given by hand counts them alone as well.
#[test]
fn given_points_past_the_budget_are_left_out_under_their_field() {
    let config = r#"{"max_points": 500}"#;
    let points: Vec<String> = (0..600u64).map(|p| (p * 1_000_003).to_string()).collect();
    let pinned = format!(r#"{{"points": [{}]}}"#, points.join(","));
    let mut held = contents(Some(config), &[("a", "{}"), ("pinned", &pinned)]);
    let cluster = Cluster::from_contents(&mut held).expect("a ring of a");
    assert_eq!(names(&cluster), ["a"], "{:?}", cluster.skipped);
    assert!(why(&cluster, "pinned").starts_with("field `points`: this member alone"));
}

/// A weight on `slots`, which has none, is refused for the members as a
/// whole by the algorithm: the weighted member fails alone and is left out.
#[test]
fn a_weight_the_algorithm_refuses_for_all_members_leaves_out_only_the_weighted() {
    let config = r#"{"algorithm": "slots"}"#;
    let members = [("a", "{}"), ("heavy", r#"{"weight": 2}"#), ("b", "{}")];
    let mut held = contents(Some(config), &members);
    let cluster = Cluster::from_contents(&mut held).expect("a ring of a and b");
    assert_eq!(names(&cluster), ["a", "b"], "{:?}", cluster.skipped);
    assert!(why(&cluster, "heavy").contains("slots cannot weigh"));
}

/// multiprobe takes one weight for every member: one member registered
/// with another weight is left out and named, not charged to the config
/// (it froze every watcher on its old ring).
#[test]
fn a_member_whose_weight_differs_where_one_weight_is_taken_is_left_out() {
    let config = r#"{"algorithm": "multiprobe"}"#;
    let members = [("a", "{}"), ("odd", r#"{"weight": 3}"#), ("b", "{}")];
    let mut held = contents(Some(config), &members);
    let cluster = Cluster::from_contents(&mut held).expect("a ring of a and b");
    assert_eq!(names(&cluster), ["a", "b"], "{:?}", cluster.skipped);
    assert!(
        why(&cluster, "odd").contains("one weight"),
        "{:?}",
        cluster.skipped
    );
}

/// The config is still at fault when it is what pushes members that were
/// there before it past the budget, and a budget no member fits is
/// refused by `config --set` before it is written.
#[test]
fn a_config_that_pushes_earlier_members_past_the_budget_stays_the_config_error() {
    let mut held = contents(None, &[("a", "{}"), ("b", r#"{"weight": 2}"#)]);
    held.put(&config_key(PREFIX), br#"{"max_points": 200}"#, 9, 9);
    let error = Cluster::from_contents(&mut held).expect_err("the config drops b");
    assert!(error.to_string().contains("/fit/nodes/b"), "{error}");
    let mut held = contents(None, &[("a", "{}"), ("b", "{}")]);
    let change = [("max_points".to_owned(), Some(serde_json::json!(100)))];
    let error = crate::change_settings(&mut held, None, &change).expect_err("refused");
    assert!(
        error
            .to_string()
            .starts_with("config: it cannot build member"),
        "{error}"
    );
}

/// A setting the algorithm cannot use is not a member's fault: the build
/// refuses it for every member alike, and it stays the config's error.
#[test]
fn a_bad_setting_found_by_the_build_is_not_charged_to_members() {
    let config = r#"{"algorithm": "ring", "hash": "redis-crc16"}"#;
    let mut held = contents(Some(config), &[("a", "{}"), ("b", "{}")]);
    let error = Cluster::from_contents(&mut held).expect_err("the config's fault");
    assert!(error.to_string().starts_with("config: `hash`: "), "{error}");
    assert!(held.skipped.is_empty(), "{:?}", held.skipped);
}

/// `check_member`, what `join` asks before it registers: the weight past
/// the budget under the settings held is refused as the weight's, a
/// weight the settings take passes, and so does the weight under fewer
/// points per unit.
#[test]
fn a_joining_weight_past_the_budget_is_refused_under_the_settings_held() {
    let member = |weight: f64| crate::Member {
        weight: Some(weight),
        ..crate::Member::default()
    };
    let defaults = serde_json::Map::new();
    let error = crate::check_member(&defaults, "huge", &member(1e6)).expect_err("past 2^24");
    let text = error.to_string();
    assert!(
        text.starts_with("weight: member \"huge\" cannot be built under the cluster's settings")
            && text.contains("160000000 points, more than its budget of 16777216"),
        "{text}"
    );
    crate::check_member(&defaults, "fine", &member(2.0)).expect("weight 2 fits");
    let few = serde_json::json!({"vnodes": 1});
    let few = few.as_object().expect("an object");
    crate::check_member(few, "huge", &member(1e6)).expect("10^6 points fit");
    let low = serde_json::json!({"max_points": 1000});
    let low = low.as_object().expect("an object");
    crate::check_member(low, "ten", &member(10.0)).expect_err("1600 points do not");
    let slots = serde_json::json!({"algorithm": "slots"});
    let error = crate::check_member(slots.as_object().expect("object"), "w", &member(2.0));
    assert!(
        error
            .expect_err("slots take no weight")
            .to_string()
            .starts_with("weight: ")
    );
}
