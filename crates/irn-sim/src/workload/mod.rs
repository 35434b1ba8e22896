//! Workloads: the flows a run simulates, each one message from one host to another.
//!
//! A workload is generated up front, as a sorted `Vec<FlowSpec>`, before the simulation starts
//! (with a [`FlowDag`] when flows wait for others: their start is then decided as the run goes).
//! Keeping generation apart from the event loop means the same traffic can be inspected, saved as
//! a trace and replayed against every transport being compared, and the simulator's hot path never
//! touches a random number generator for traffic.
//!
//! | module | what it generates |
//! | --- | --- |
//! | [`cdf`] | flow sizes drawn from an empirical CDF file (HPCC percent or TLT fraction format) |
//! | [`sizes`] | the [`SizeDist`] choice: a CDF, uniform, or fixed sizes |
//! | [`poisson`](mod@poisson) | Poisson arrivals at every host at a target load (MODEL §4) |
//! | [`incast`](mod@incast) | many senders to one receiver at once (IRN §4.4.3) |
//! | [`queries`](mod@queries) | incasts arriving as a Poisson process, each a query (Eunomia §5.5) |
//! | [`trace`] | flows read from (and written to) a CSV file, for exact replay |
//! | [`verbs`](mod@verbs) | which RDMA operation each flow is, drawn from a mix (IRN §5) |
//! | [`dag`] | dependencies between flows: a flow starts when the flows it waits for finish |
//! | [`collective`] | collective jobs (all-reduce, all-gather, …) as flows and dependencies |
//!
//! Every random choice comes from [`crate::rng::stream`], one stream per purpose and host, so a
//! workload is a pure function of its parameters and the scenario seed.

pub mod cdf;
pub mod collective;
pub mod dag;
pub mod error;
pub mod incast;
pub mod ns3;
pub mod poisson;
pub mod queries;
pub mod sizes;
pub mod trace;
pub mod verbs;

pub use cdf::{BuiltinCdf, Cdf, CdfFormat};
pub use collective::Collectives;
pub use dag::FlowDag;
pub use error::WorkloadError;
pub use incast::{incast, split};
pub use poisson::poisson;
pub use queries::{queries, QueryLoad};
pub use sizes::SizeDist;
pub use trace::{trace_csv, trace_text, write_trace_csv};
pub use verbs::{Verb, VerbMix};

use crate::ids::HostIdx;
use irn_core::time::Time;

/// A flow file's `size_bytes` field read as a size: what is wrong with it, if anything (not a
/// whole number, zero, or above [`cdf::MAX_FLOW_BYTES`]).
pub(crate) fn flow_size(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("size_bytes is 0: every flow carries at least one byte".into()),
        Ok(b) if b > cdf::MAX_FLOW_BYTES => Err(format!(
            "size_bytes {b} is above the flow-size limit ({} B, 2 GiB, the RDMA message \
             limit); split the message into several flows",
            cdf::MAX_FLOW_BYTES
        )),
        Ok(b) => Ok(b),
        Err(_) => Err(format!(
            "size_bytes `{text}` is not a whole number of bytes"
        )),
    }
}

/// One flow to simulate: a single message from host `src` to host `dst` (HostIdx positions among hosts).
///
/// Flows are plain values so that a workload can be compared, sorted and written out as a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// The sending host.
    pub src: HostIdx,
    /// The receiving host; never equal to `src`.
    pub dst: HostIdx,
    /// Message length in bytes; at least 1.
    pub size_bytes: u64,
    /// When the message is posted at the sender.
    pub start: Time,
    /// What the flow is part of: metrics report incast flows (their request completion time)
    /// and queries (their query completion times) apart from the regular traffic around them.
    pub class: FlowClass,
    /// The RDMA operation, when the workload has a verbs mix; `None` runs the message on the
    /// transport alone.
    pub verb: Option<Verb>,
}

/// The part of a workload a flow belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FlowClass {
    /// Poisson arrivals, trace replay: the traffic whose FCTs and slowdowns are reported.
    #[default]
    Regular,
    /// One of an incast's senders (IRN §4.4.3).
    Incast,
    /// One sender's flow of query number `.0` of a queries workload (Eunomia §5.5), numbered
    /// from 0 in arrival order. The id travels with the flow, through sorting and into its
    /// record, so the query completion time is found after the run from the flows' records
    /// alone: the simulator itself never looks at it.
    Query(u32),
}
