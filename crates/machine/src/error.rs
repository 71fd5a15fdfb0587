//! The machine crate's errors: each names its input and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("the microarchitecture table is invalid: {0}")]
    Table(String),
    #[error("unknown microarchitecture {name:?}: use one of {known}")]
    UnknownUarch { name: String, known: String },
    #[error("cannot read machine profile {path}: {source}")]
    ReadProfile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a flopscope machine profile: {source} (expected the JSON written by `flopscope bench --save FILE`)")]
    ParseProfile {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path} is a machine profile of schema {found:?}, this flopscope reads {expected:?}: save it again with `flopscope bench --save FILE`")]
    ProfileSchema {
        path: PathBuf,
        found: String,
        expected: &'static str,
    },
    #[error(transparent)]
    Write(#[from] flopscope_model::IoError),
    #[error("cannot create {path} for the machine profile: {source}")]
    WriteProfile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no directory to keep the machine profile in: set HOME, XDG_CONFIG_HOME or FLOPSCOPE_CONFIG_DIR")]
    NoConfigDir,
}
