//! `varnish`: a VCL file's `directors.shard()` director, as `vcl_init`
//! sets it up.
//!
//! Source: varnish-cache 7.1.1 (commit 7cee1c58)
//! `vmod/vmod_directors_shard.c` (`add_backend`: a weight below 1 is
//! ignored), `vmod/vmod_directors_shard_cfg.c` (`shardcfg_apply_change`,
//! `change_reconfigure`, `shard_change_fini`) and
//! `vmod/vmod_directors.vcc`; syntax: [`crate::vcl`].
//!
//! How Varnish reads it: `new D = directors.shard();` makes the director
//! (`--pool D` chooses one when the file has several); `D.add_backend(B,
//! ident="...", rampup=..., weight=W)` (or positional, in that order),
//! `D.remove_backend(backend=B, ident="...")` and `D.clear()` queue
//! changes, which `D.reconfigure(replicas=N)` applies, or else the end of
//! `vcl_init` with replicas 67. A backend's points are counted when its
//! add is applied (`replicas × weight`), so every backend must have been
//! added under the same replicas: a file that mixes them is refused, as is
//! any `D` statement under an `if` and a change of `D` outside `vcl_init`
//! (Varnish applies it at run time, at the end of that request's task). A `reconfigure` with nothing queued
//! does nothing, not even change the replicas; an ident already on the
//! director is skipped ("already exists"); the last `clear()` of a batch
//! drops everything queued before it. The node name is the ident, or the
//! backend's VCL name.
//!
//! The key hash follows from how the file asks the director
//! (`D.backend(...)` anywhere): `by=KEY` and `by=URL` are `varnish-key`
//! (of `key=D.key(S)`'s `S`, or of `req.url`), `by=HASH` (the default)
//! is `varnish-req-hash` in backend context (`vcl_backend_*`, or
//! `resolve=LAZY`) and `varnish-key` of `req.url` in `vcl_recv`; a note
//! names what to look up. `by=BLOB` is refused (its key is the blob's first
//! bytes, not a hash of a string). `set_warmup`, `set_rampup`, a
//! backend's `rampup`, `alt` and `healthy` are notes: they pick another
//! backend at random or by health, which ringwise does not model.
//!
//! Worked example: `new d = directors.shard(); d.add_backend(b1);
//! d.add_backend(b2, weight=2); d.reconfigure(replicas=100);` is the nodes
//! `b1` and `b2` (weight 2) with `shard_replicas = 100`.
//!
//! Cost: one pass over the tokens, O(length).

use ringwise::{Member, Param, ParamValue, Settings};

use crate::error::syntax;
use crate::vcl::{self, Token, written};
use crate::{ImportError, Imported};

/// One backend on the director: its node name, backend, weight, the
/// replicas of the reconfigure that added it, line.
#[derive(Debug)]
struct Added {
    name: String,
    backend: String,
    weight: f64,
    replicas: u64,
    line: usize,
}

/// A queued change.
#[derive(Debug)]
enum Change {
    Add {
        name: String,
        backend: String,
        weight: f64,
        line: usize,
    },
    Remove {
        backend: Option<String>,
        ident: Option<String>,
    },
    Clear,
}

fn unsupported(line: usize, setting: &[Token], reason: &str) -> ImportError {
    ImportError::Unsupported {
        line,
        setting: written(setting),
        reason: reason.into(),
    }
}

pub(crate) fn read(text: &str, select: Option<&str>) -> Result<Imported, ImportError> {
    let tokens = vcl::tokens(text)?;
    let declarations = vcl::declarations(&tokens)?;
    let backends: Vec<&str> = declarations
        .iter()
        .filter(|d| d.kind == "backend")
        .map(|d| d.name.text.as_str())
        .collect();
    let mut init = Vec::new();
    for d in declarations
        .iter()
        .filter(|d| d.kind == "sub" && d.name.is("vcl_init"))
    {
        init.extend(vcl::statements(d.body)?);
    }
    let shards: Vec<&Token> = init
        .iter()
        .filter_map(|s| match s {
            [new, name, eq, dirs, dot, shard, open, ..]
                if new.is("new")
                    && eq.is("=")
                    && dirs.is("directors")
                    && dot.is(".")
                    && shard.is("shard")
                    && open.is("(") =>
            {
                Some(name)
            }
            _ => None,
        })
        .collect();
    let available = || shards.iter().map(|t| t.text.clone()).collect();
    let chosen: Vec<&&Token> = shards
        .iter()
        .filter(|t| select.is_none_or(|name| t.text == name))
        .collect();
    let director = match chosen.as_slice() {
        [one] if select.is_some() || shards.len() == 1 => one.text.as_str(),
        _ => {
            return Err(ImportError::Select {
                what: "director",
                wanted: select.map(str::to_owned),
                available: available(),
            });
        }
    };
    let mut notes = Vec::new();
    let added = apply(director, &init, &backends, &mut notes)?;
    let Some(first) = added.first() else {
        return Err(ImportError::Missing {
            message: format!("director {director} has no backends after vcl_init"),
        });
    };
    if let Some(other) = added.iter().find(|a| a.replicas != first.replicas) {
        return Err(ImportError::Unsupported {
            line: other.line,
            setting: format!("{director}.add_backend({})", other.backend),
            reason: format!(
                "its points were counted with replicas {}, those of line {} with {}: Varnish \
                 keeps each backend's count from the reconfigure that added it; ringwise has \
                 one replicas for all (reconfigure once, after every add_backend)",
                other.replicas, first.line, first.replicas
            ),
        });
    }
    let mut settings = Settings::default();
    settings.algorithm = Some("varnish-shard".into());
    settings.params = vec![(Param::ShardReplicas, ParamValue::Count(first.replicas))];
    settings.hash = key_hash(director, &declarations, &mut notes)?;
    let mut imported = Imported::new(settings);
    imported.notes = notes;
    imported.selected = Some(director.to_owned());
    for a in &added {
        let mut member = Member::new(a.name.clone());
        member.weight = Some(a.weight);
        imported.push(member, a.line);
    }
    Ok(imported)
}

/// The backends on `director` after `vcl_init`'s statements.
fn apply(
    director: &str,
    init: &[&[Token]],
    backends: &[&str],
    notes: &mut Vec<String>,
) -> Result<Vec<Added>, ImportError> {
    let mut added: Vec<Added> = Vec::new();
    let mut queued: Vec<Change> = Vec::new();
    for statement in init {
        let line = statement[0].line;
        let on_director = |t: &[Token]| t.windows(2).any(|w| w[0].is(director) && w[1].is("."));
        if statement[0].is("if") {
            if on_director(statement) {
                return Err(unsupported(
                    line,
                    &statement[..1],
                    &format!(
                        "{director} is set up under a condition: ringwise reads the statements \
                     vcl_init always runs"
                    ),
                ));
            }
            continue;
        }
        let [d, dot, method, open, ..] = statement else {
            continue;
        };
        if !(d.is(director) && dot.is(".") && open.is("(")) {
            continue;
        }
        let (args, _) = vcl::arguments(statement, 3)?;
        let shown = written(statement);
        match method.text.as_str() {
            "add_backend" => queued.push(add(statement, &args, backends, notes)?),
            "remove_backend" => {
                let mut change = (None, None);
                for (i, arg) in args.iter().enumerate() {
                    match (named(arg), i) {
                        (Some(("backend", v)), _) => change.0 = value(v),
                        (Some(("ident", v)), _) => change.1 = value(v),
                        (None, 0) => change.0 = value(arg),
                        (None, 1) => change.1 = value(arg),
                        _ => return Err(unknown(line, &shown, "backend=, ident=")),
                    }
                }
                queued.push(Change::Remove {
                    backend: change.0,
                    ident: change.1.filter(|i| !i.is_empty()),
                });
            }
            "clear" => queued.push(Change::Clear),
            "reconfigure" => {
                let replicas = match args.as_slice() {
                    [] => 67,
                    [arg] => {
                        let v = named(arg).map_or(*arg, |(_, v)| v);
                        match v {
                            [n] => n.text.parse::<u64>().ok().filter(|n| *n > 0),
                            _ => None,
                        }
                        .ok_or_else(|| {
                            syntax(
                                line,
                                format!("`{shown}`: replicas must be a whole number from 1"),
                            )
                        })?
                    }
                    _ => {
                        return Err(syntax(
                            line,
                            format!("`{shown}`: reconfigure takes replicas"),
                        ));
                    }
                };
                run(&mut added, &mut queued, replicas, notes);
            }
            "set_warmup" | "set_rampup" => notes.push(format!(
                "line {line}: `{shown}`: Varnish sends some requests at random to the next \
                 backend ({}); ringwise answers the backend the circle chooses",
                match method.text.as_str() {
                    "set_warmup" => "a share of every request's alt=0 lookups",
                    _ => "while a backend's health changed recently",
                }
            )),
            "associate" | "debug" | "backend" => {
                notes.push(format!("line {line}: `{shown}` does not change placement"))
            }
            _ => {
                return Err(unknown(
                    line,
                    &shown,
                    "add_backend, remove_backend, clear, reconfigure, set_warmup, set_rampup, \
                     associate, backend",
                ));
            }
        }
    }
    // shard_change_fini: what is still queued at the end of vcl_init.
    run(&mut added, &mut queued, 67, notes);
    Ok(added)
}

/// `change_reconfigure`: applies the queued changes with `replicas`;
/// nothing queued, nothing done.
fn run(added: &mut Vec<Added>, queued: &mut Vec<Change>, replicas: u64, notes: &mut Vec<String>) {
    let from = queued
        .iter()
        .rposition(|c| matches!(c, Change::Clear))
        .map(|clear| {
            added.clear();
            clear + 1
        })
        .unwrap_or(0);
    for change in queued.drain(..).skip(from) {
        match change {
            Change::Add {
                name,
                backend,
                weight,
                line,
            } => {
                if added.iter().any(|a| a.name == name) {
                    notes.push(format!(
                        "line {line}: {name} is on the director already: Varnish skips it"
                    ));
                    continue;
                }
                added.push(Added {
                    name,
                    backend,
                    weight,
                    replicas,
                    line,
                });
            }
            Change::Remove { backend, ident } => added.retain(|a| match (&ident, &backend) {
                (Some(ident), _) => a.name != *ident,
                (None, Some(backend)) => a.backend != *backend,
                (None, None) => true,
            }),
            Change::Clear => {}
        }
    }
}

fn unknown(line: usize, shown: &str, known: &str) -> ImportError {
    ImportError::UnknownSetting {
        line,
        setting: shown.to_owned(),
        known: known.to_owned(),
    }
}

/// `name = value` as (name, value tokens).
fn named(arg: &[Token]) -> Option<(&str, &[Token])> {
    match arg {
        [name, eq, rest @ ..] if !name.string && eq.is("=") => Some((name.text.as_str(), rest)),
        _ => None,
    }
}

/// A one-token value's text.
fn value(tokens: &[Token]) -> Option<String> {
    match tokens {
        [t] => Some(t.text.clone()),
        _ => None,
    }
}

/// One `add_backend(...)`.
fn add(
    statement: &[Token],
    args: &[&[Token]],
    backends: &[&str],
    notes: &mut Vec<String>,
) -> Result<Change, ImportError> {
    let line = statement[0].line;
    let shown = written(statement);
    let (mut backend, mut ident, mut weight) = (None, None, None);
    for (i, arg) in args.iter().enumerate() {
        let (key, v) = named(arg).unwrap_or((
            ["backend", "ident", "rampup", "weight"]
                .get(i)
                .copied()
                .unwrap_or(""),
            arg,
        ));
        match key {
            "backend" => backend = Some(v),
            "ident" => ident = Some(v),
            "rampup" => notes.push(format!(
                "line {line}: `{shown}`: a backend in rampup takes a growing share of its \
                 keys at random after its health changes; ringwise answers the backend the \
                 circle chooses"
            )),
            "weight" => weight = Some(v),
            _ => return Err(unknown(line, &shown, "backend, ident=, rampup=, weight=")),
        }
    }
    let backend = match backend {
        Some([b]) if !b.string && backends.contains(&b.text.as_str()) => b.text.clone(),
        Some(other) => {
            return Err(unsupported(
                line,
                other,
                "add_backend takes a backend declared in this \
                 file (`backend NAME { ... }`): ringwise names the node after it",
            ));
        }
        None => return Err(syntax(line, format!("`{shown}` names no backend"))),
    };
    let name = match ident {
        Some([t]) if t.string && !t.text.is_empty() => t.text.clone(),
        Some([t]) if t.string => backend.clone(),
        Some(other) => {
            return Err(unsupported(
                line,
                other,
                "the ident must be a string literal: ringwise \
                 cannot evaluate an expression",
            ));
        }
        None => backend.clone(),
    };
    let weight = match weight {
        None => 1.0,
        Some(v) => {
            let text = match v {
                [t] => Some(t.text.clone()),
                [minus, t] if minus.is("-") => Some(format!("-{}", t.text)),
                _ => None,
            };
            let w = text
                .and_then(|t| t.parse::<f64>().ok())
                .filter(|w| w.is_finite())
                .ok_or_else(|| syntax(line, format!("`{shown}`: weight must be a number")))?;
            if w < 1.0 {
                notes.push(format!(
                    "line {line}: `{shown}`: Varnish ignores a weight below 1 and uses 1"
                ));
                1.0
            } else {
                w
            }
        }
    };
    Ok(Change::Add {
        name,
        backend,
        weight,
        line,
    })
}

/// Where a lookup runs: client side (`vcl_recv`, where the request hash
/// does not exist yet) or backend side.
fn backend_side(sub: &str) -> bool {
    sub.starts_with("vcl_backend_") || sub == "vcl_init"
}

/// The key hash of how the file asks `director`, with a note for each
/// `director.backend(...)`.
fn key_hash(
    director: &str,
    declarations: &[vcl::Declaration<'_>],
    notes: &mut Vec<String>,
) -> Result<Option<String>, ImportError> {
    let mut hashes: Vec<(&'static str, usize)> = Vec::new();
    for d in declarations.iter().filter(|d| d.kind == "sub") {
        let body = d.body;
        for i in 0..body.len().saturating_sub(3) {
            let call = &body[i..];
            if !(call[0].is(director) && call[1].is(".") && call[3].is("(")) {
                continue;
            }
            const CHANGES: [&str; 4] = ["add_backend", "remove_backend", "clear", "reconfigure"];
            if CHANGES.iter().any(|c| call[2].is(c)) && !d.name.is("vcl_init") {
                return Err(unsupported(
                    call[0].line,
                    &call[..3],
                    &format!(
                        "{} changes the director at run time: ringwise reads the set-up of \
                         vcl_init",
                        d.name.text
                    ),
                ));
            }
            if !call[2].is("backend") {
                continue;
            }
            let (args, end) = vcl::arguments(call, 3)?;
            let line = call[0].line;
            let shown = written(&call[..end]);
            let mut by = "HASH".to_owned();
            let mut lazy = d.name.is("vcl_init");
            let mut key = None;
            for arg in &args {
                match named(arg) {
                    Some(("by", [v])) => by = v.text.clone(),
                    Some(("resolve", [v])) => lazy = v.is("LAZY"),
                    Some(("key", v)) => key = Some(v),
                    _ => {}
                }
            }
            let (hash, what) = match by.as_str() {
                "KEY" => {
                    let of = match key {
                        Some([d2, dot, k, open, inner @ .., close])
                            if d2.is(director)
                                && dot.is(".")
                                && k.is("key")
                                && open.is("(")
                                && close.is(")") =>
                        {
                            written(inner)
                        }
                        _ => {
                            notes.push(format!(
                                "line {line}: `{shown}`: the key is a number given by the VCL; \
                                 ringwise hashes strings as {director}.key(STRING) does"
                            ));
                            "the key".to_owned()
                        }
                    };
                    ("varnish-key", format!("the values of {of}"))
                }
                "URL" => ("varnish-key", "req.url".to_owned()),
                "HASH" if lazy || backend_side(&d.name.text) => (
                    "varnish-req-hash",
                    "the bytes vcl_hash hashes (each hash_data(S) is S then a zero byte; \
                     the last zero is added by the hash)"
                        .to_owned(),
                ),
                "HASH" => (
                    "varnish-key",
                    "req.url (by=HASH in client context)".to_owned(),
                ),
                "BLOB" => {
                    return Err(unsupported(
                        line,
                        &call[..end],
                        "by=BLOB takes the blob's first \
                         four bytes as the key, not a hash of a string: use by=KEY with \
                         key=D.key(STRING)",
                    ));
                }
                other => return Err(syntax(line, format!("`{shown}`: unknown by={other}"))),
            };
            notes.push(format!(
                "line {line}: `{shown}` in {}: look up {what} (hash {hash})",
                d.name.text
            ));
            hashes.push((hash, line));
        }
    }
    match hashes.as_slice() {
        [] => {
            notes.push(format!(
                "{director}.backend() is not called in this file: the hash is varnish-key \
                 (by=KEY, by=URL)"
            ));
            Ok(None)
        }
        [(first, line), rest @ ..] => {
            if let Some((other, at)) = rest.iter().find(|(h, _)| h != first) {
                notes.push(format!(
                    "line {at}: this lookup hashes with {other}, that of line {line} with \
                     {first}: the cluster uses {first}; give --hash {other} for the other"
                ));
            }
            Ok(Some((*first).to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VCL: &str = r#"vcl 4.1;
import directors;
backend b1 { .host = "10.0.0.1"; .port = "80"; }
backend b2 { .host = "10.0.0.2"; .port = "80"; }
backend b3 { .host = "10.0.0.3"; .port = "80"; }
sub vcl_init {
  new rr = directors.round_robin();
  new d = directors.shard();
  d.add_backend(b1);
  d.add_backend(b2, weight=2.5);
  d.add_backend(b3, ident="cache-3", weight=0.5);
  d.set_warmup(0.1);
  d.reconfigure(replicas=100);
}
sub vcl_recv {
  set req.backend_hint = d.backend(by=KEY, key=d.key(req.http.X-Key));
}
"#;

    fn names(imported: &Imported) -> Vec<(String, f64)> {
        imported
            .members
            .iter()
            .map(|m| (m.name.clone(), m.weight.unwrap_or(1.0)))
            .collect()
    }

    #[test]
    fn the_director_as_varnish_sets_it_up() {
        let imported = read(VCL, None).expect("reads");
        assert_eq!(
            names(&imported),
            [
                ("b1".into(), 1.0),
                ("b2".into(), 2.5),
                ("cache-3".into(), 1.0)
            ]
        );
        assert_eq!(imported.member_lines, [9, 10, 11]);
        assert_eq!(
            imported.settings.algorithm.as_deref(),
            Some("varnish-shard")
        );
        assert_eq!(imported.settings.hash.as_deref(), Some("varnish-key"));
        assert_eq!(
            imported.settings.params,
            [(Param::ShardReplicas, ParamValue::Count(100))]
        );
        let notes = imported.notes.join("\n");
        assert!(notes.contains("ignores a weight below 1"), "{notes}");
        assert!(notes.contains("set_warmup"), "{notes}");
        assert!(notes.contains("the values of req.http.X-Key"), "{notes}");
        imported.spec().expect("a valid cluster");
    }

    #[test]
    fn changes_are_applied_as_varnish_applies_them() {
        let vcl = |init: &str| {
            format!(
                "backend a {{ }}\nbackend b {{ }}\nsub vcl_init {{\n new d = directors.shard();\n{init}\n}}\n\
                     sub vcl_backend_fetch {{ set bereq.backend = d.backend(); }}\n"
            )
        };
        // Nothing queued: the second reconfigure changes nothing.
        let i = read(
            &vcl("d.add_backend(a); d.reconfigure(10); d.reconfigure(20);"),
            None,
        )
        .expect("reads");
        assert_eq!(
            i.settings.params,
            [(Param::ShardReplicas, ParamValue::Count(10))]
        );
        assert_eq!(i.settings.hash.as_deref(), Some("varnish-req-hash"));
        // Queued at the end: replicas 67.
        let i = read(&vcl("d.add_backend(a);"), None).expect("reads");
        assert_eq!(
            i.settings.params,
            [(Param::ShardReplicas, ParamValue::Count(67))]
        );
        // The last clear wins; a repeated ident is skipped; removal by backend.
        let i = read(&vcl("d.add_backend(a); d.clear(); d.add_backend(b); d.add_backend(b); \
                           d.add_backend(a, \"x\"); d.add_backend(a, \"y\"); d.remove_backend(a, \"y\");"), None)
            .expect("reads");
        assert_eq!(names(&i), [("b".into(), 1.0), ("x".into(), 1.0)]);
        assert!(i.notes.iter().any(|n| n.contains("Varnish skips it")));
        let i = read(
            &vcl("d.add_backend(a, \"x\"); d.add_backend(b); d.remove_backend(backend=a);"),
            None,
        )
        .expect("reads");
        assert_eq!(names(&i), [("b".into(), 1.0)]);
    }

    #[test]
    fn refusals_name_the_line() {
        let vcl = |init: &str, recv: &str| {
            format!(
                "backend a {{ }}\nsub vcl_init {{\n new d = directors.shard();\n{init}\n}}\nsub vcl_recv {{\n{recv}\n}}\n"
            )
        };
        for (text, line, words) in [
            (vcl("if (true) { d.add_backend(a); }", ""), 4, "condition"),
            (
                vcl(
                    "d.add_backend(a); d.reconfigure(5); d.add_backend(a, \"z\"); d.reconfigure(6);",
                    "",
                ),
                4,
                "replicas 6",
            ),
            (vcl("d.add_backend(nope);", ""), 4, "declared"),
            (
                vcl(
                    "d.add_backend(a);",
                    "set req.backend_hint = d.backend(by=BLOB);",
                ),
                7,
                "BLOB",
            ),
            (vcl("d.frobnicate();", ""), 4, "unknown setting"),
            (vcl("d.reconfigure(0);", ""), 4, "from 1"),
            (vcl("d.add_backend(a);", "d.clear();"), 7, "run time"),
        ] {
            let err = read(&text, None).expect_err(&text);
            assert_eq!(err.line(), Some(line), "{text}: {err}");
            assert!(err.to_string().contains(words), "{text}: {err}");
        }
        let two = "backend a { }\nsub vcl_init { new d = directors.shard(); new e = directors.shard(); \
                   d.add_backend(a); e.add_backend(a); }\n";
        assert!(matches!(read(two, None), Err(ImportError::Select { .. })));
        assert_eq!(
            read(two, Some("e")).expect("reads").selected.as_deref(),
            Some("e")
        );
        assert!(matches!(
            read("sub vcl_init { new d = directors.shard(); }", None),
            Err(ImportError::Missing { .. })
        ));
    }
}
