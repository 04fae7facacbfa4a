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
//! Cost: one pass over the text, O(length); the tree is O(nodes).

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

/// Something being built: a list or a mapping (with its pending key).
enum Open {
    Seq(Node, usize),
    Map(Node, usize, Option<(String, usize)>),
}

/// Parses `text` as one YAML document. An empty document is `Ok(None)`.
pub(crate) fn parse(text: &str) -> Result<Option<Node>, ImportError> {
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root = None;
    let mut documents = 0;
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
                (
                    Node {
                        line,
                        value: Value::Scalar(text.into_owned()),
                    },
                    anchor,
                )
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(node) => (node.clone(), 0),
                None => return Err(syntax(line, "an alias (*name) of no anchor before it")),
            },
            Event::SequenceStart(anchor, tag) => {
                check_tag(tag.as_deref(), line)?;
                stack.push(Open::Seq(
                    Node {
                        line,
                        value: Value::Seq(Vec::new()),
                    },
                    anchor,
                ));
                continue;
            }
            Event::MappingStart(anchor, tag) => {
                check_tag(tag.as_deref(), line)?;
                stack.push(Open::Map(
                    Node {
                        line,
                        value: Value::Map(Vec::new()),
                    },
                    anchor,
                    None,
                ));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq(node, anchor) | Open::Map(node, anchor, _)) => (node, anchor),
                None => return Err(syntax(line, "an end of nothing")),
            },
            _ => continue,
        };
        let (node, anchor) = complete;
        if anchor > 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq(seq, _)) => {
                if let Value::Seq(items) = &mut seq.value {
                    items.push(node);
                }
            }
            Some(Open::Map(map, _, pending)) => match pending.take() {
                None => {
                    let Value::Scalar(key) = node.value else {
                        return Err(syntax(node.line, "a mapping key must be a plain word"));
                    };
                    let Value::Map(entries) = &map.value else {
                        unreachable!("an open mapping holds a mapping")
                    };
                    if let Some((_, first)) = entries.iter().find(|(k, _)| *k == key) {
                        return Err(syntax(
                            node.line,
                            format!("`{key}` is given twice (first on line {})", first.line),
                        ));
                    }
                    *pending = Some((key, node.line));
                }
                Some((key, key_line)) => {
                    if let Value::Map(entries) = &mut map.value {
                        // A value takes its key's line: that is where the
                        // setting is, even when the value starts on the next.
                        let line = key_line;
                        entries.push((key, Node { line, ..node }));
                    }
                }
            },
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
