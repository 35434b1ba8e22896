//! Why a workload could not be built.
//!
//! Workload inputs are user files (CDFs, traces) and scenario values, so every error says which
//! file and which line is wrong, and what was expected, instead of panicking mid-run.

/// An invalid workload file or parameter. Each message is whole, cause included, so no variant
/// also reports it as a `source()` (an error chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The file could not be read at all.
    #[error("{file}: cannot read: {error}")]
    Io { file: String, error: std::io::Error },
    /// One line of a CDF or trace file is wrong. `line` is 1-based.
    #[error("{file}:{line}: {problem}")]
    Line {
        file: String,
        line: u64,
        problem: String,
    },
    /// The file as a whole is wrong (for example, it is empty).
    #[error("{file}: {problem}")]
    File { file: String, problem: String },
    /// An incast request that cannot be satisfied.
    #[error("incast: {0}")]
    Incast(String),
    /// A queries workload that cannot be generated.
    #[error("queries: {0}")]
    Queries(String),
}

impl WorkloadError {
    /// The 1-based line number the error points at, if it points at one.
    pub fn line(&self) -> Option<u64> {
        match self {
            WorkloadError::Line { line, .. } => Some(*line),
            _ => None,
        }
    }

    pub(crate) fn at(file: &str, line: u64, problem: impl Into<String>) -> Self {
        WorkloadError::Line {
            file: file.to_string(),
            line,
            problem: problem.into(),
        }
    }
}
