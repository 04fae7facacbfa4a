//! The parameter list (`for_each_param!` in `src/param.rs`) against what
//! follows from it outside the code: the constants its numbers stand for,
//! the Python stub's keyword arguments of `Placement(...)` and the
//! reference table in `docs/cluster-file.md`. The stub and the table are
//! generated here; `RINGWISE_BLESS=1 cargo test -p ringwise param_list`
//! rewrites them after a change to the list.

use ringwise::{
    Algorithm, MAX_CAPACITY, MAX_POINTS, MAX_POINTS_CEILING, MAX_VNODES, Maglev, MultiProbe, Param,
    ParamValue, Params, VarnishShard,
};

/// Every entry's name, Rust type, Python type and Python default, as
/// written in the list.
macro_rules! entries {
    ([] $($(#[doc = $doc:literal])* $variant:ident($field:ident: $ty:ty) {
        default: $default:expr,
        range: $range:expr,
        flag: $flag:literal, $value_name:literal, $help:literal,
        simulate: $simulate:ident,
        python: $pyty:ty = $pydefault:tt,
    })+) => {
        fn entries() -> Vec<(Param, &'static str, &'static str, &'static str)> {
            vec![$((
                Param::$variant,
                stringify!($ty),
                stringify!($pyty),
                stringify!($pydefault),
            ),)+]
        }
    };
}

ringwise::for_each_param!(entries);

/// The Python annotation of a keyword argument's Rust type.
fn python_type(rust: &str) -> &'static str {
    match rust.replace(' ', "").as_str() {
        "u32" | "u64" => "int",
        "Option<u64>" => "int | None",
        "Option<&str>" => "str | None",
        "Option<bool>" => "bool | None",
        other => panic!("the list has a Python type the stub cannot spell: {other}"),
    }
}

/// Replaces what lies between `begin` and `end` in the file at `path`
/// (relative to the workspace) by `generated` when blessing, else asserts
/// they are equal.
fn check_section(path: &str, begin: &str, end: &str, generated: &str) {
    let path = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("readable");
    let start = text.find(begin).expect("begin marker") + begin.len();
    let stop = start + text[start..].find(end).expect("end marker");
    if std::env::var_os("RINGWISE_BLESS").is_some() {
        let blessed = format!("{}{generated}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, blessed).expect("writable");
        return;
    }
    assert_eq!(
        &text[start..stop],
        generated,
        "{path} does not follow the parameter list: run RINGWISE_BLESS=1 cargo test -p \
         ringwise param_list"
    );
}

#[test]
fn the_numbers_of_the_list_are_the_constants() {
    let end = |p: Param| p.range().map(|r| *r.end());
    assert_eq!(Param::Vnodes.range(), Some(1..=u64::from(MAX_VNODES)));
    assert_eq!(end(Param::Probes), Some(u64::from(MultiProbe::MAX_PROBES)));
    assert_eq!(end(Param::MaxPoints), Some(MAX_POINTS_CEILING));
    assert_eq!(end(Param::NumTokens), Some(u64::from(MAX_VNODES)));
    assert_eq!(end(Param::Capacity), Some(u64::from(MAX_CAPACITY)));
    assert_eq!(end(Param::MaxRingSize), Some(Params::DEFAULT.max_ring_size));
    assert_eq!(end(Param::MinRingSize), Some(Params::DEFAULT.max_ring_size));
    assert_eq!(Params::DEFAULT.max_points, MAX_POINTS);
    assert_eq!(Params::DEFAULT.table_size, Maglev::DEFAULT_TABLE_SIZE);
    assert_eq!(Params::DEFAULT.probes, MultiProbe::DEFAULT_PROBES);
    assert_eq!(
        Params::DEFAULT.shard_replicas,
        VarnishShard::DEFAULT_REPLICAS
    );
}

#[test]
fn python_defaults_are_the_defaults() {
    for (param, _, _, default) in entries() {
        if default == "None" {
            continue;
        }
        let value = param
            .parse(default)
            .expect("a default of the parameter's type");
        assert_eq!(value, Params::DEFAULT.get(param), "{param}");
    }
}

#[test]
fn every_parameter_is_read_by_some_algorithm() {
    for &param in Param::ALL {
        let readers = Algorithm::ALL.iter().filter(|a| a.reads().contains(&param));
        assert!(readers.count() > 0, "{param} is read by no algorithm");
    }
}

#[test]
fn the_python_stub_follows_the_list() {
    let lines: String = entries()
        .into_iter()
        .map(|(param, _, python, default)| {
            format!("        {param}: {} = {default},\n", python_type(python))
        })
        .collect();
    check_section(
        "crates/py/python/ringwise/_ringwise.pyi",
        "        hash: str | None = None,\n",
        "        secret: str | None = None,\n",
        &lines,
    );
}

#[test]
fn the_reference_table_follows_the_list() {
    let mut table = String::from(
        "\n| key | type | default | option | read by | meaning |\n\
         |---|---|---|---|---|---|\n",
    );
    for (param, rust, _, _) in entries() {
        let kind = match rust {
            "u32" | "u64" => match param.range() {
                Some(r) => format!("whole number, {} to {}", r.start(), r.end()),
                None => "whole number".to_owned(),
            },
            "bool" => "true or false".to_owned(),
            _ => "text".to_owned(),
        };
        let default = match Params::DEFAULT.get(param) {
            ParamValue::Flavor(flavor) => format!("`\"{flavor}\"`"),
            ParamValue::SlotLayout(layout) => format!("`\"{layout}\"`"),
            value => format!("`{value}`"),
        };
        let readers: Vec<&str> = Algorithm::ALL
            .iter()
            .filter(|a| a.reads().contains(&param))
            .map(|a| a.name())
            .collect();
        let meaning: Vec<&str> = param.meaning().lines().map(str::trim).collect();
        table += &format!(
            "| `{param}` | {kind} | {default} | `--{}` | {} | {} |\n",
            param.flag(),
            readers.join(", "),
            meaning.join(" ")
        );
    }
    table.push('\n');
    check_section(
        "docs/cluster-file.md",
        "<!-- parameters: generated from the list in crates/ringwise/src/param.rs -->\n",
        "<!-- parameters: end -->",
        &table,
    );
}
