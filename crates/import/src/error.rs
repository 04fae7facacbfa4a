//! [`ImportError`]: what is wrong with a peer's file, where, and what
//! ringwise reads instead.
//!
//! Every variant that comes from the text carries its 1-based line; the
//! caller adds the file's name (`in nutcracker.yml: line 7: ...`). The
//! messages name the setting as the file writes it and what ringwise
//! supports, so the fix is in the message.

use std::fmt;

/// A peer's file that cannot be imported.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ImportError {
    /// `--cluster-format`/`ringwise import` was given a name no kind has.
    UnknownKind {
        /// The name given.
        name: String,
        /// The kinds there are, comma separated.
        known: String,
    },
    /// `--pool NAME` was given for a kind whose files hold one cluster.
    NothingToSelect {
        /// The kind.
        kind: &'static str,
        /// The name given.
        name: String,
    },
    /// The file holds several pools (upstreams, clusters) and none was
    /// chosen, or none has the name given.
    Select {
        /// What the kind holds several of: "pool", "upstream", "cluster".
        what: &'static str,
        /// The name given, if any.
        wanted: Option<String>,
        /// The names the file has, in file order.
        available: Vec<String>,
    },
    /// The text is not what the peer's own parser accepts.
    Syntax {
        /// Where.
        line: usize,
        /// What is wrong, and what the peer expects.
        message: String,
    },
    /// A setting that changes placement in a way ringwise does not
    /// reproduce.
    Unsupported {
        /// Where.
        line: usize,
        /// The setting as written (`distribution: modula`).
        setting: String,
        /// Why, and what ringwise reproduces instead.
        reason: String,
    },
    /// A setting the peer does not know either.
    UnknownSetting {
        /// Where.
        line: usize,
        /// The setting as written.
        setting: String,
        /// The settings the kind knows.
        known: String,
    },
    /// Something the cluster needs is absent (no servers at all).
    Missing {
        /// What is missing and how to give it.
        message: String,
    },
    /// ringwise refused the cluster the file describes (a weight of 0, a
    /// name used twice); `line` is the member's, when one is to blame.
    Rejected {
        /// Where, when a member is to blame.
        line: Option<usize>,
        /// The core's error.
        error: ringwise::Error,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::UnknownKind { name, known } => write!(
                f,
                "unknown configuration kind {name:?}: ringwise reads {known}"
            ),
            ImportError::NothingToSelect { kind, name } => write!(
                f,
                "--pool {name}: a {kind} configuration holds one cluster; drop --pool"
            ),
            ImportError::Select {
                what,
                wanted: None,
                available,
            } if available.is_empty() => write!(f, "the file has no {what}"),
            ImportError::Select {
                what,
                wanted: None,
                available,
            } => write!(
                f,
                "the file has {} {what}s ({}): choose one with --pool NAME",
                available.len(),
                available.join(", ")
            ),
            ImportError::Select {
                what,
                wanted: Some(name),
                available,
            } => write!(
                f,
                "the file has no {what} named {name:?}; it has {}",
                match available.is_empty() {
                    true => "none".to_owned(),
                    false => available.join(", "),
                }
            ),
            ImportError::Syntax { line, message } => write!(f, "line {line}: {message}"),
            ImportError::Unsupported {
                line,
                setting,
                reason,
            } => write!(f, "line {line}: `{setting}` is not reproduced: {reason}"),
            ImportError::UnknownSetting {
                line,
                setting,
                known,
            } => write!(
                f,
                "line {line}: unknown setting `{setting}` (known: {known})"
            ),
            ImportError::Missing { message } => f.write_str(message),
            ImportError::Rejected {
                line: Some(line),
                error,
            } => write!(f, "line {line}: {error}"),
            ImportError::Rejected { line: None, error } => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ImportError {}

/// A syntax error on `line`: every reader's one way to make it.
pub(crate) fn syntax(line: usize, message: impl Into<String>) -> ImportError {
    ImportError::Syntax {
        line,
        message: message.into(),
    }
}

impl ImportError {
    /// The line the error is on, when it is on one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ImportError::Syntax { line, .. }
            | ImportError::Unsupported { line, .. }
            | ImportError::UnknownSetting { line, .. } => Some(*line),
            ImportError::Rejected { line, .. } => *line,
            _ => None,
        }
    }

    /// True when the caller's options (the kind's name, `--pool`) are at
    /// fault rather than the file: a usage error.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ImportError::UnknownKind { .. }
                | ImportError::NothingToSelect { .. }
                | ImportError::Select { .. }
        )
    }
}
