//! How far long setup work has come (the k shortest paths of a large network), for a line on
//! a terminal.
//!
//! Setup runs inside scenario loading, which every command reaches by its own way (a run, each
//! variant of a comparison, a sweep's points on worker threads), so the display is registered
//! once per process ([`set_setup_observer`]) instead of being passed through every loader. It
//! only watches: nothing it is told changes a result, and without one nothing is counted.

use std::sync::OnceLock;

/// How far one piece of setup work has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetupProgress {
    /// The work, e.g. "computing k shortest paths".
    pub what: &'static str,
    /// What it counts, e.g. "pairs" (of edge switches).
    pub unit: &'static str,
    /// Units done: 0 when the work starts, `total` when it ends.
    pub done: u64,
    pub total: u64,
}

/// Told each [`SetupProgress`] as setup work goes. Called from any thread.
pub type SetupObserver = dyn Fn(SetupProgress) + Send + Sync;

static OBSERVER: OnceLock<Box<SetupObserver>> = OnceLock::new();

/// Registers the process's observer of setup work; returns `false` (and drops `observer`) if
/// one was registered already.
pub fn set_setup_observer(observer: Box<SetupObserver>) -> bool {
    OBSERVER.set(observer).is_ok()
}

/// Tells the observer, if any, how far `progress`'s work has come.
pub(crate) fn report(progress: SetupProgress) {
    if let Some(observer) = OBSERVER.get() {
        observer(progress);
    }
}
