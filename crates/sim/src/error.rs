//! [`SimError`]: everything that can stop a simulation.

use std::fmt;
use std::path::PathBuf;

use ringwise::Error;

use crate::config::ConfigError;

/// Everything that can stop a simulation.
#[derive(Debug)]
#[non_exhaustive]
pub enum SimError {
    /// A parameter is out of range.
    Config(ConfigError),
    /// The placement library refused a cluster (for example too many points).
    Placement(Error),
    /// A chart or other output file could not be written.
    Output { path: PathBuf, message: String },
    /// An output file could not be written (it is as it was).
    Write(crate::files::WriteError),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(e) => e.fmt(f),
            SimError::Placement(e) => e.fmt(f),
            SimError::Output { path, message } => {
                write!(f, "cannot write {}: {message}", path.display())
            }
            SimError::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {}

impl From<ConfigError> for SimError {
    fn from(e: ConfigError) -> Self {
        SimError::Config(e)
    }
}

impl From<Error> for SimError {
    fn from(e: Error) -> Self {
        SimError::Placement(e)
    }
}
