//! The YAML (and JSON, its subset) of `nutcracker.yml` and Envoy's
//! configurations, read into a small tree that keeps each node's line.
//!
//! Parser: `saphyr-parser`, the YAML 1.2 event parser of the saphyr
//! project (the maintained successor of `yaml-rust`/`yaml-rust2`), chosen
//! because its events carry their position, so every refusal can name its
//! line, and because it is a parser only: no serde, nothing else pulled in
//! (`serde_yaml` is unmaintained, and its forks add the serde machinery
//! without giving positions of values).
//!
//! What is kept: mappings (keys in file order; a key given twice is
//! refused, as twemproxy refuses it and as it is ambiguous to a reader),
//! sequences, and scalars as their text (types are for the reader: a
//! twemproxy `true` and an Envoy `8080` are both text here). Anchors and
//! aliases are resolved (`*name` is a copy of the anchored node); tags
//! other than YAML's core ones are refused. One document per file.
//!
//! Bounds: a hostile file cannot make the tree larger than the text
//! suggests. Aliases are copies, so nested ones multiply ("billion
//! laughs": 600 bytes that expand to billions of nodes); every node built,
//! copies included, is counted (one per node plus its text's bytes)
//! against [`budget`], a few times the text's length, and the nesting
//! (an alias's copy counting its own depth) against [`MAX_DEPTH`]: past
//! either the file is refused at the line that crossed it. Neither peer's
//! real files come near (an Envoy bootstrap nests about 15 deep; a file
//! without aliases costs at most about twice its length).
//!
//! Cost: one pass over the text, O(length); the tree is O(length).

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScanError};

use crate::ImportError;
use crate::error::syntax;

/// A YAML node and the 1-based line it starts on.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) line: usize,
    pub(crate) value: Value,
}

#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// A scalar's text (quoted or not).
    Scalar(String),
    Seq(Vec<Node>),
    /// Keys with their lines, in file order.
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The scalar's text, if this is one.
    pub(crate) fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(text) => Some(text),
            _ => None,
        }
    }

    /// What kind of node this is, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self.value {
            Value::Scalar(_) => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The entries of a mapping, `None` for another node.
    pub(crate) fn entries(&self) -> Option<&[(String, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The value of `key` in a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entries()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, node)| node)
    }
}

/// How deep lists and mappings may nest: far past any real file (an
/// Envoy bootstrap's socket address is about 15 deep), far below what the
/// readers' recursion (and the tree's drop) could overflow.
pub(crate) const MAX_DEPTH: usize = 100;

/// How much tree `text` may build, in units of one node or one byte of a
/// scalar's text: eight times the text's length and 65,536 more. Without
/// aliases a file builds at most about twice its length (a node costs at
/// least one byte of text, an escape such as `\L` at most 1.5 times its
/// length); the rest is room for a real file's anchors: a server list
/// shared by half a dozen pools (`servers: *shared`), any small file.
/// Nested aliases multiply past it within a few levels.
pub(crate) fn budget(text: &str) -> usize {
    text.len().saturating_mul(8).saturating_add(65_536)
}

/// Something being built: a list or a mapping (with its pending key), its
/// anchor, the units built when it opened, and its deepest child's height.
struct Open {
    node: Node,
    anchor: usize,
    pending: Option<(String, usize)>,
    built_at_open: usize,
    height: usize,
}

/// An anchored node, what a copy of it costs, and how deep it nests.
struct Anchored {
    node: Node,
    cost: usize,
    height: usize,
}

/// The refusal of a file whose tree grows past its budget at `line`.
fn too_large(line: usize, budget: usize) -> ImportError {
    syntax(
        line,
        format!(
            "the document expands past {budget} nodes and bytes (eight times the file's \
             length and 65536): aliases (*name) copying aliases multiply it (a \"billion \
             laughs\" file); write the values out or use fewer nested aliases"
        ),
    )
}

/// The refusal of a file nesting past [`MAX_DEPTH`] at `line`.
fn too_deep(line: usize) -> ImportError {
    syntax(
        line,
        format!(
            "lists and mappings nest more than {MAX_DEPTH} deep (an alias counting the \
             depth of what it copies): no configuration read here nests so deep"
        ),
    )
}

/// Parses `text` as one YAML document. An empty document is `Ok(None)`.
pub(crate) fn parse(text: &str) -> Result<Option<Node>, ImportError> {
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Anchored> = HashMap::new();
    let mut root = None;
    let mut documents = 0;
    let budget = budget(text);
    // Units built so far, alias copies included.
    let mut built = 0usize;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(scan_error)?;
        let line = span.start.line();
        let complete = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(syntax(
                        line,
                        "a second YAML document: the file must hold one",
                    ));
                }
                continue;
            }
            Event::Scalar(text, _, anchor, tag) => {
                check_tag(tag.as_deref(), line)?;
                let cost = 1 + text.len();
                built = built.saturating_add(cost);
                if built > budget {
                    return Err(too_large(line, budget));
                }
                let node = Node {
                    line,
                    value: Value::Scalar(text.into_owned()),
                };
                (node, anchor, cost, 0)
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(anchored) => {
                    // Counted before it is copied: the copy is what grows.
                    built = built.saturating_add(anchored.cost);
                    if built > budget {
                        return Err(too_large(line, budget));
                    }
                    if stack.len() + anchored.height > MAX_DEPTH {
                        return Err(too_deep(line));
                    }
                    (anchored.node.clone(), 0, anchored.cost, anchored.height)
                }
                None => return Err(syntax(line, "an alias (*name) of no anchor before it")),
            },
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                check_tag(tag.as_deref(), line)?;
                if stack.len() >= MAX_DEPTH {
                    return Err(too_deep(line));
                }
                built = built.saturating_add(1);
                if built > budget {
                    return Err(too_large(line, budget));
                }
                let value = match event {
                    Event::SequenceStart(..) => Value::Seq(Vec::new()),
                    _ => Value::Map(Vec::new()),
                };
                stack.push(Open {
                    node: Node { line, value },
                    anchor,
                    pending: None,
                    built_at_open: built - 1,
                    height: 0,
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(open) => (
                    open.node,
                    open.anchor,
                    built - open.built_at_open,
                    open.height + 1,
                ),
                None => return Err(syntax(line, "an end of nothing")),
            },
            _ => continue,
        };
        let (node, anchor, cost, height) = complete;
        if anchor > 0 {
            // Keeping the anchored copy costs its size once more.
            built = built.saturating_add(cost);
            if built > budget {
                return Err(too_large(line, budget));
            }
            let node = node.clone();
            anchors.insert(anchor, Anchored { node, cost, height });
        }
        let Some(parent) = stack.last_mut() else {
            root = Some(node);
            continue;
        };
        parent.height = parent.height.max(height);
        match (&mut parent.node.value, parent.pending.take()) {
            (Value::Seq(items), _) => items.push(node),
            (Value::Map(entries), None) => {
                let Value::Scalar(key) = node.value else {
                    return Err(syntax(node.line, "a mapping key must be a plain word"));
                };
                if let Some((_, first)) = entries.iter().find(|(k, _)| *k == key) {
                    return Err(syntax(
                        node.line,
                        format!("`{key}` is given twice (first on line {})", first.line),
                    ));
                }
                parent.pending = Some((key, node.line));
            }
            // A value takes its key's line: that is where the setting is,
            // even when the value starts on the next.
            (Value::Map(entries), Some((key, line))) => entries.push((key, Node { line, ..node })),
            // Only lists and mappings are opened.
            (Value::Scalar(_), _) => {}
        }
    }
    Ok(root)
}

/// Refuses tags other than YAML's core schema (`!!str`, `!!int`, ...):
/// what a custom tag means is the application's, and neither peer has one.
fn check_tag(tag: Option<&saphyr_parser::Tag>, line: usize) -> Result<(), ImportError> {
    match tag {
        Some(tag) if !tag.is_yaml_core_schema() => Err(syntax(
            line,
            format!("the tag {}{} is not read", tag.handle, tag.suffix),
        )),
        _ => Ok(()),
    }
}

fn scan_error(error: ScanError) -> ImportError {
    ImportError::Syntax {
        line: error.marker().line(),
        message: format!(
            "not valid YAML: {} (column {})",
            error.info(),
            error.marker().col() + 1
        ),
    }
}

/// `node`'s scalar text; `what` names it in the error.
pub(crate) fn text<'a>(node: &'a Node, what: &str) -> Result<&'a str, ImportError> {
    node.text().ok_or_else(|| {
        syntax(
            node.line,
            format!("{what} is one value, not {}", node.kind()),
        )
    })
}

/// `node` as a whole number; `what` names it in the error.
pub(crate) fn number(node: &Node, what: &str) -> Result<u64, ImportError> {
    text(node, what)?
        .parse()
        .map_err(|_| syntax(node.line, format!("{what} is not a whole number")))
}
