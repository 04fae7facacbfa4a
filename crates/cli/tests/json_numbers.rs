//! Every token, point and ring position in JSON output
//! survives the JSON tools people pipe it through. Each output is read
//! back by a real jq (`jq -r`, installed by scripts/install-test-deps) and
//! by Python's json reading numbers as doubles, as JavaScript does
//! (`parse_int=float`); the digits must be the ones the text output
//! prints. Before version 2 these fields were numbers, and
//! `ringwise token --format json a | jq .token` printed
//! -8839064797231614000 instead of -8839064797231613815.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::support::{TempDir, assert_success, ringwise, stdout};

/// `program args` with `input` as stdin; its stdout.
fn pipe(program: &str, args: &[&str], input: &str) -> String {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}: run scripts/install-test-deps"));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("fed");
    drop(stdin);
    let out = child.wait_with_output().expect("ran");
    assert!(out.status.success(), "{program} {args:?} failed");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The values `jq -r FILTER` prints, one a line.
fn jq(filter: &str, json: &str) -> Vec<String> {
    pipe("jq", &["-r", filter], json)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The values of `expr` (Python, over `doc`) with JSON numbers read as
/// doubles, one a line.
fn as_doubles(expr: &str, json: &str) -> Vec<String> {
    let script = format!(
        "import json,sys\nfor line in sys.stdin:\n    doc = json.loads(line, parse_int=float)\n    \
         for v in ({expr}):\n        print(v if isinstance(v, str) else repr(v))"
    );
    pipe("python3", &["-c", &script], json)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn tokens_survive_jq_and_doubles() {
    let keys = "a\nuser:42\n\u{1F980}\n";
    let text = stdout(&ringwise(&["token"], keys.as_bytes()));
    let want: Vec<String> = text
        .lines()
        .map(|l| l.split_once('\t').expect("KEY<TAB>TOKEN").1.to_owned())
        .collect();
    assert!(want.contains(&"-8839064797231613815".to_owned()));
    let json = stdout(&ringwise(&["token", "--format", "json"], keys.as_bytes()));
    assert_eq!(jq(".token", &json), want);
    assert_eq!(as_doubles("[doc['token']]", &json), want);
}

#[test]
fn points_survive_jq_and_doubles() {
    // 64-bit points (ring), signed tokens (cassandra), 32-bit (ketama).
    for algorithm in ["ring", "cassandra", "ketama"] {
        let args = [
            "inspect", "--nodes", "a,b,c", "--algo", algorithm, "--points",
        ];
        let out = ringwise(&args, b"");
        assert_success(&out);
        let want: Vec<String> = stdout(&out)
            .lines()
            .map(|l| l.split_once('\t').expect("POINT<TAB>NODE").0.to_owned())
            .collect();
        let mut json_args = args.to_vec();
        json_args.extend(["--format", "json"]);
        let json = stdout(&ringwise(&json_args, b""));
        assert_eq!(jq(".ring[][0]", &json), want, "{algorithm}");
        assert_eq!(
            as_doubles("[p[0] for p in doc['ring']]", &json),
            want,
            "{algorithm}"
        );
    }
}

#[test]
fn moved_ranges_survive_jq_and_doubles() {
    let dir = TempDir::create("json-ranges");
    let from = dir.write("from.toml", "algorithm = \"cassandra\"\nnum_tokens = 4\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n");
    let args = ["plan", "--from", &from, "--add", "c", "--ranges"];
    let csv_args = [&args[..], &["--format", "csv"]].concat();
    let csv = stdout(&ringwise(&csv_args, b""));
    // The CSV's range rows: range,START,END,FROM,TO.
    let want: Vec<String> = csv
        .lines()
        .filter(|l| l.starts_with("range,"))
        .flat_map(|l| {
            l.split(',')
                .skip(1)
                .take(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(want.len() >= 2, "{csv}");
    let json_args = [&args[..], &["--format", "json"]].concat();
    let json = stdout(&ringwise(&json_args, b""));
    assert_eq!(jq(".ranges[] | .start, .end", &json), want);
    assert_eq!(
        as_doubles(
            "[v for r in doc['ranges'] for v in (r['start'], r['end'])]",
            &json
        ),
        want
    );
    dir.remove();
}
