//! Collective operations (all-reduce, all-gather, reduce-scatter, all-to-all) as dependent flows.
//!
//! AI clusters move data in collectives, whose slowest flow sets the pace: a rank cannot send
//! the next step's chunk before it has the previous step's. A job here is a set of ranks, each
//! on a host, running one operation over a buffer of `size_bytes` with one algorithm, `channels`
//! times in parallel (each channel carries `1/channels` of the data on its own flows, as NCCL's
//! channels do), `iterations` times with a `compute_gap` between.
//!
//! Each algorithm is a list of *lanes* (independent pipelines: one, or two for the double
//! binary tree), each a list of *steps*, each a set of transfers between ranks. The generator
//! turns them into flows and [dependencies](super::dag): a flow a rank sends waits for every
//! flow the rank sent or received since it last sent (on its lane and channel), so each step's
//! flows at a rank start when the step before has finished there. A rank's first flows of
//! iteration `i + 1` wait for all its flows of iteration `i`, on every lane and channel, plus
//! `compute_gap`.
//!
//! `size_bytes` is what nccl-tests calls the size: the buffer each rank reduces (all-reduce),
//! its whole output (all-gather), its whole input (reduce-scatter) or everything it sends
//! (all-to-all). It is split into `ranks` chunks (rounded down to whole bytes).
//!
//! | algorithm | operations | steps per iteration | each rank sends per step |
//! | --- | --- | --- | --- |
//! | ring | all | all-reduce 2(N−1); all-gather, reduce-scatter, all-to-all N−1 | one chunk to the next rank (all-to-all: the N−k chunks still travelling at step k) |
//! | tree | all-reduce | 2 × the tree's height | the whole buffer to its parent (reduce), then to its children (broadcast) |
//! | double-binary-tree | all-reduce | as tree, on two lanes | half the buffer on each of two complementary trees |
//! | halving-doubling | all-reduce, all-gather, reduce-scatter (N a power of 2) | 2 log₂N or log₂N | S/2, S/4, … S/N to the rank N/2, N/4, … 1 away, then back up |
//! | pairwise | all-to-all | N−1 | one chunk to the rank k away at step k |

use std::fmt;

use irn_core::time::{Duration, Time};
use serde::{Deserialize, Serialize};

use super::dag::{Edge, FlowDag};
use super::poisson::MAX_FLOWS;
use super::{FlowClass, FlowSpec};
use crate::ids::HostIdx;

/// A collective operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "all-reduce",
            Op::AllGather => "all-gather",
            Op::ReduceScatter => "reduce-scatter",
            Op::AllToAll => "all-to-all",
        }
    }

    /// nccl-tests' bus-bandwidth factor for `ranks` ranks: busbw = algbw × this. It scales the
    /// algorithm bandwidth to what each rank's link carried, so it reads against line rate
    /// whatever the rank count: 2(N−1)/N for all-reduce, (N−1)/N for the others.
    pub fn bus_factor(self, ranks: u32) -> f64 {
        let n = f64::from(ranks);
        match self {
            Op::AllReduce => 2.0 * (n - 1.0) / n,
            Op::AllGather | Op::ReduceScatter | Op::AllToAll => (n - 1.0) / n,
        }
    }

    /// The algorithm a job of this operation runs when it names none: ring, except pairwise
    /// exchange for all-to-all (a ring all-to-all forwards most chunks several times).
    pub fn default_algorithm(self) -> Algorithm {
        match self {
            Op::AllToAll => Algorithm::Pairwise,
            _ => Algorithm::Ring,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a collective moves its data (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    Ring,
    Tree,
    DoubleBinaryTree,
    HalvingDoubling,
    Pairwise,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::DoubleBinaryTree => "double-binary-tree",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Pairwise => "pairwise",
        }
    }

    /// The operations this algorithm implements, for errors.
    pub fn runs(self) -> &'static str {
        match self {
            Algorithm::Ring => "every operation",
            Algorithm::Tree | Algorithm::DoubleBinaryTree => "all-reduce only",
            Algorithm::HalvingDoubling => "all-reduce, all-gather and reduce-scatter",
            Algorithm::Pairwise => "all-to-all only",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One collective job, its ranks placed.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub op: Op,
    pub algorithm: Algorithm,
    /// Rank `r` runs on `hosts[r]`; distinct hosts, at least two.
    pub hosts: Vec<HostIdx>,
    pub size_bytes: u64,
    pub channels: u32,
    pub iterations: u32,
    pub compute_gap: Duration,
    /// When its first iteration starts.
    pub start: Time,
}

impl Job {
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }
}

/// Which job, iteration and step a collective flow is part of, and which transfer of the
/// step it is (its lane, channel and ranks): the metrics group flows by the first three, and
/// `flows.csv` names each flow by all of them ([`Collectives::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    pub job: u32,
    pub iteration: u32,
    /// The step within its lane, from 0.
    pub step: u32,
    /// The rank that sends and the rank that receives.
    pub from: u32,
    pub to: u32,
    /// The lane (the double binary tree's two trees: 0 and 1; 0 for the other algorithms).
    pub lane: u16,
    pub channel: u16,
}

/// A run's collective jobs and which flow belongs to which: what the metrics need to report
/// each job's times and bandwidths after the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collectives {
    pub jobs: Vec<Job>,
    /// Steps per iteration of each job (its longest lane's).
    pub steps: Vec<u32>,
    /// Per flow (by flow id): its job, iteration and step; `None` for background traffic.
    pub tags: Vec<Option<Tag>>,
}

impl Collectives {
    /// Flow `f`'s name in `flows.csv`: `j{job}/i{iteration}/s{step}/c{channel}/r{from}>r{to}`
    /// (a double binary tree's flows with their tree after the iteration, `/t0` or `/t1`);
    /// `None` for background traffic.
    pub fn name(&self, f: usize) -> Option<String> {
        let t = self.tags.get(f).copied().flatten()?;
        let two_lanes =
            self.jobs.get(t.job as usize).map(|j| j.algorithm) == Some(Algorithm::DoubleBinaryTree);
        let lane = if two_lanes {
            format!("/t{}", t.lane)
        } else {
            String::new()
        };
        Some(format!(
            "j{}/i{}{lane}/s{}/c{}/r{}>r{}",
            t.job, t.iteration, t.step, t.channel, t.from, t.to
        ))
    }
}

/// One transfer of a step: rank `from` sends `bytes` to rank `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Transfer {
    from: u32,
    to: u32,
    bytes: u64,
}

/// A lane: steps, each a set of transfers.
type Lane = Vec<Vec<Transfer>>;

/// `size × num / den`, rounded down (in 128 bits: no overflow).
fn share(size: u64, num: u64, den: u64) -> u64 {
    (u128::from(size) * u128::from(num) / u128::from(den.max(1))) as u64
}

/// The lanes of `op` by `algorithm` over `n` ranks and `size` bytes; why not, if the
/// algorithm does not run this operation or rank count.
fn lanes(op: Op, algorithm: Algorithm, n: u32, size: u64) -> Result<Vec<Lane>, String> {
    let chunk = share(size, 1, u64::from(n));
    let ring = |steps: u32, bytes: &dyn Fn(u32) -> u64| -> Lane {
        (1..=steps)
            .map(|k| {
                (0..n)
                    .map(|r| Transfer {
                        from: r,
                        to: (r + 1) % n,
                        bytes: bytes(k),
                    })
                    .collect()
            })
            .collect()
    };
    let refuse = || {
        Err(format!(
            "algorithm \"{algorithm}\" runs {}, not {op}",
            algorithm.runs()
        ))
    };
    Ok(match (algorithm, op) {
        (Algorithm::Ring, Op::AllReduce) => vec![ring(2 * (n - 1), &|_| chunk)],
        (Algorithm::Ring, Op::AllGather | Op::ReduceScatter) => vec![ring(n - 1, &|_| chunk)],
        (Algorithm::Ring, Op::AllToAll) => {
            vec![ring(n - 1, &|k| {
                share(size, u64::from(n - k), u64::from(n))
            })]
        }
        (Algorithm::Tree, Op::AllReduce) => {
            vec![tree((0..n).collect(), size)]
        }
        (Algorithm::DoubleBinaryTree, Op::AllReduce) => {
            // The second tree numbers the ranks backwards: the first tree's inner nodes are
            // the low half of the ranks and the second's the high half, so each rank forwards
            // in at most one tree (for an even N) and every link carries half the data.
            let half = share(size, 1, 2);
            vec![
                tree((0..n).collect(), half),
                tree((0..n).rev().collect(), size - half),
            ]
        }
        (Algorithm::Tree | Algorithm::DoubleBinaryTree, _) => return refuse(),
        (Algorithm::HalvingDoubling, Op::AllToAll) => return refuse(),
        (Algorithm::HalvingDoubling, _) if !n.is_power_of_two() => {
            return Err(format!(
                "algorithm \"halving-doubling\" needs a power of 2 ranks, not {n}"
            ))
        }
        (Algorithm::HalvingDoubling, op) => {
            let log = n.trailing_zeros();
            let exchange = |distance: u32, bytes: u64| -> Vec<Transfer> {
                (0..n)
                    .map(|r| Transfer {
                        from: r,
                        to: r ^ distance,
                        bytes,
                    })
                    .collect()
            };
            // Reduce-scatter halves the data and the distance each step; all-gather doubles
            // them back.
            let halving = (0..log).map(|k| exchange(n >> (k + 1), share(size, 1, 2 << k)));
            let doubling = (0..log).map(|k| exchange(1 << k, share(size, 1 << k, u64::from(n))));
            let steps: Lane = match op {
                Op::ReduceScatter => halving.collect(),
                Op::AllGather => doubling.collect(),
                _ => halving.chain(doubling).collect(),
            };
            vec![steps]
        }
        (Algorithm::Pairwise, Op::AllToAll) => vec![(1..n)
            .map(|k| {
                (0..n)
                    .map(|r| Transfer {
                        from: r,
                        to: (r + k) % n,
                        bytes: chunk,
                    })
                    .collect()
            })
            .collect()],
        (Algorithm::Pairwise, _) => return refuse(),
    })
}

/// How many transfers one iteration of `op` by `algorithm` over `n` ranks makes, counted
/// without making them: a pairwise all-to-all of 65,536 ranks has 4 billion, which [`lanes`]
/// would hold in about 100 GB before the flow limit could refuse them. Why not, as [`lanes`].
fn transfer_count(op: Op, algorithm: Algorithm, n: u32) -> Result<u64, String> {
    let n64 = u64::from(n);
    let log = u64::from(n.trailing_zeros());
    Ok(match (algorithm, op) {
        (Algorithm::Ring, Op::AllReduce) => 2 * (n64 - 1) * n64,
        (Algorithm::Ring, _) | (Algorithm::Pairwise, Op::AllToAll) => (n64 - 1) * n64,
        // Every rank but the root sends up once and receives down once, per tree.
        (Algorithm::Tree, Op::AllReduce) => 2 * (n64 - 1),
        (Algorithm::DoubleBinaryTree, Op::AllReduce) => 4 * (n64 - 1),
        (Algorithm::HalvingDoubling, Op::AllReduce) if n.is_power_of_two() => 2 * log * n64,
        (Algorithm::HalvingDoubling, Op::AllGather | Op::ReduceScatter) if n.is_power_of_two() => {
            log * n64
        }
        // What the algorithm does not run: `lanes` refuses it before making anything.
        _ => lanes(op, algorithm, n, 0)?
            .iter()
            .flatten()
            .map(|s| s.len() as u64)
            .sum(),
    })
}

/// A binary tree over `order` (a heap: `order[i]`'s parent is `order[(i − 1) / 2]`): the
/// reduce, in which every rank sends `bytes` to its parent once its subtree's data is in (a
/// rank of height h at step h), then the broadcast, in which every rank forwards them to its
/// children (a rank of depth d at step height + d).
fn tree(order: Vec<u32>, bytes: u64) -> Lane {
    let n = order.len();
    let mut height = vec![0u32; n];
    for i in (1..n).rev() {
        let p = (i - 1) / 2;
        height[p] = height[p].max(height[i] + 1);
    }
    let top = height[0];
    let depth = |i: usize| usize::BITS - 1 - (i + 1).leading_zeros();
    let mut steps: Lane = vec![Vec::new(); 2 * top as usize];
    for i in 1..n {
        let p = (i - 1) / 2;
        steps[height[i] as usize].push(Transfer {
            from: order[i],
            to: order[p],
            bytes,
        });
        steps[(top + depth(p)) as usize].push(Transfer {
            from: order[p],
            to: order[i],
            bytes,
        });
    }
    steps
}

/// `bytes` split over `channels`: channel `c`'s share (the remainder to the first ones).
fn channel_share(bytes: u64, channels: u32, c: u32) -> u64 {
    let k = u64::from(channels);
    bytes / k + u64::from(u64::from(c) < bytes % k)
}

/// The flows, dependencies and tags of `jobs`, before any other traffic is added: flows in
/// generation order (not sorted), edges by those indices.
#[derive(Debug, Default)]
pub struct Generated {
    pub flows: Vec<FlowSpec>,
    pub edges: Vec<Edge>,
    pub tags: Vec<Option<Tag>>,
    pub steps: Vec<u32>,
}

/// A flow a rank has sent or received and not yet sent after, with the delay its next sent
/// flow waits after it.
type Pending = (u32, Duration);

/// Why a job's flows cannot be made: which job (from 0), the key of its `[[workload.job]]`
/// entry that decides it (`None` when several do together), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError {
    pub job: usize,
    pub key: Option<&'static str>,
    pub why: String,
}

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.key {
            Some(key) => write!(f, "job {}: {key}: {}", self.job, self.why),
            None => write!(f, "job {}: {}", self.job, self.why),
        }
    }
}

/// Every job's flows and dependencies (see the module doc). Errors name the job and why: an
/// algorithm that does not run the operation or these ranks, a size too small for every flow
/// to carry a byte, or more flows or dependencies than a run takes.
pub fn generate(jobs: &[Job]) -> Result<Generated, JobError> {
    // Every job's transfers and counts first, so that too many flows in all are refused
    // before any job's flows are made (a first job of 8 million flows took 900 MB).
    let mut planned = Vec::with_capacity(jobs.len());
    let mut total = 0.0;
    for (j, job) in jobs.iter().enumerate() {
        let refused = |key, why| JobError { job: j, key, why };
        let per_iteration = transfer_count(job.op, job.algorithm, job.ranks())
            .map_err(|why| refused(Some("algorithm"), why))?;
        let flows = per_iteration as f64 * f64::from(job.channels) * f64::from(job.iterations);
        if flows + total > MAX_FLOWS {
            let earlier = if total > 0.0 {
                format!(
                    ", after the earlier jobs' {total}: {} in all",
                    flows + total
                )
            } else {
                String::new()
            };
            let why = format!(
                "{flows} flows ({per_iteration} transfers per iteration × {} channels × {} \
                 iterations{earlier}); at most {} million flows per run",
                job.channels,
                job.iterations,
                MAX_FLOWS / 1e6
            );
            return Err(refused(None, why));
        }
        total += flows;
        let lanes = lanes(job.op, job.algorithm, job.ranks(), job.size_bytes)
            .map_err(|why| refused(Some("algorithm"), why))?;
        let smallest = lanes.iter().flatten().flatten().map(|t| t.bytes).min();
        if smallest.is_some_and(|b| b < u64::from(job.channels)) {
            let why = format!(
                "{} B gives transfers of {} B, fewer than its {} channels: every flow carries \
                 at least one byte",
                job.size_bytes,
                smallest.unwrap_or(0),
                job.channels
            );
            return Err(refused(Some("size"), why));
        }
        planned.push(lanes);
    }
    let mut out = Generated::default();
    for (j, (job, lanes)) in jobs.iter().zip(&planned).enumerate() {
        out.steps
            .push(lanes.iter().map(Vec::len).max().unwrap_or(0) as u32);
        add_job(&mut out, j as u32, job, lanes, MAX_EDGES).map_err(|why| JobError {
            job: j,
            key: None,
            why,
        })?;
    }
    Ok(out)
}

/// The most dependencies the jobs may make in all (16 bytes each, and as much again in the
/// graph built from them): five per flow at the flow limit, where a ring or a tree makes two
/// or three. A rank's first flow of an iteration on each pipeline (channel × lane) waits for
/// its last flows on every pipeline, so a double binary tree with 64 channels makes about 2N ×
/// 128² of them per iteration: 2 million flows of one took 8.6 GB and 23 s to build.
const MAX_EDGES: usize = 5 * MAX_FLOWS as usize;

/// Appends `job`'s flows, edges and tags to `out`; refuses a job whose dependencies in all pass
/// `max_edges` ([`MAX_EDGES`]) as soon as they do, before they fill memory.
fn add_job(
    out: &mut Generated,
    j: u32,
    job: &Job,
    lanes: &[Lane],
    max_edges: usize,
) -> Result<(), String> {
    let n = job.ranks() as usize;
    let pipelines = lanes.len() * job.channels as usize;
    // Per pipeline (lane × channel) and rank: what its next sent flow waits for.
    let mut pending: Vec<Vec<Vec<Pending>>> = vec![vec![Vec::new(); n]; pipelines];
    let too_many = || {
        format!(
            "its flows wait for more than {} million others in all (at each iteration \
             a rank's first flow on each of its {} channels{} waits for its last flows on all \
             of them); use fewer channels or iterations",
            max_edges as f64 / 1e6,
            job.channels,
            if lanes.len() > 1 { " and trees" } else { "" },
        )
    };
    for iteration in 0..job.iterations {
        if iteration > 0 {
            // Every pipeline of a rank waits for all of the rank's flows of the iteration,
            // then the computation: as many pending entries as the edges they will make,
            // counted before they are copied (the copies alone once took 11 GB).
            let mut copies = out.edges.len();
            for r in 0..n {
                let mut all: Vec<Pending> = (pending.iter())
                    .flat_map(|p| p[r].iter().map(|&(id, _)| (id, job.compute_gap)))
                    .collect();
                all.sort_unstable();
                all.dedup();
                copies += pipelines * all.len();
                if copies > max_edges {
                    return Err(too_many());
                }
                for p in pending.iter_mut() {
                    p[r].clone_from(&all);
                }
            }
        }
        for (l, lane) in lanes.iter().enumerate() {
            for c in 0..job.channels {
                let waiting = &mut pending[l * job.channels as usize + c as usize];
                for (step, transfers) in lane.iter().enumerate() {
                    let tag = Tag {
                        job: j,
                        iteration,
                        step: step as u32,
                        from: 0,
                        to: 0,
                        lane: l as u16,
                        channel: c as u16,
                    };
                    add_step(out, job, transfers, c, tag, waiting);
                    if out.edges.len() > max_edges {
                        return Err(too_many());
                    }
                }
            }
        }
    }
    Ok(())
}

/// Appends one step's flows on channel `c` (`tag`'s, which each flow's tag completes with its
/// ranks): each waits for what its sender has pending; then
/// a rank that sent has only this step's flows pending, and one that only received adds them.
fn add_step(
    out: &mut Generated,
    job: &Job,
    transfers: &[Transfer],
    c: u32,
    tag: Tag,
    waiting: &mut [Vec<Pending>],
) {
    let first = out.flows.len() as u32;
    for t in transfers {
        let id = out.flows.len() as u32;
        for &(parent, delay) in &waiting[t.from as usize] {
            out.edges.push(Edge {
                parent,
                child: id,
                delay,
            });
        }
        out.flows.push(FlowSpec {
            src: job.hosts[t.from as usize],
            dst: job.hosts[t.to as usize],
            size_bytes: channel_share(t.bytes, job.channels, c),
            start: job.start,
            class: FlowClass::Regular,
            verb: None,
        });
        out.tags.push(Some(Tag {
            from: t.from,
            to: t.to,
            ..tag
        }));
    }
    for t in transfers {
        waiting[t.from as usize].clear();
    }
    for (k, t) in transfers.iter().enumerate() {
        let id = first + k as u32;
        waiting[t.from as usize].push((id, Duration::ZERO));
        waiting[t.to as usize].push((id, Duration::ZERO));
    }
}

/// A job's flows and graph alone, sorted as a run takes them (tests and tools).
pub fn job_flows(jobs: &[Job]) -> Result<(Vec<FlowSpec>, FlowDag, Collectives), JobError> {
    let g = generate(jobs)?;
    Ok(finish(g, jobs.to_vec(), Vec::new()))
}

/// The run's flows (the jobs' and `background`'s, which wait for nothing), sorted by earliest
/// start, with their graph and tags.
pub fn finish(
    g: Generated,
    jobs: Vec<Job>,
    background: Vec<FlowSpec>,
) -> (Vec<FlowSpec>, FlowDag, Collectives) {
    let Generated {
        mut flows,
        edges,
        mut tags,
        steps,
    } = g;
    tags.extend(background.iter().map(|_| None));
    flows.extend(background);
    let mut dag = FlowDag::new(flows.len(), &edges);
    dag.set_earliest_starts(&mut flows);
    let order = dag.sort(&mut flows);
    let tags = order.iter().map(|&i| tags[i as usize]).collect();
    (flows, dag, Collectives { jobs, steps, tags })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(op: Op, algorithm: Algorithm, n: u32, size: u64) -> Job {
        Job {
            op,
            algorithm,
            hosts: (0..n).map(HostIdx).collect(),
            size_bytes: size,
            channels: 1,
            iterations: 1,
            compute_gap: Duration::ZERO,
            start: Time::ZERO,
        }
    }

    /// Bytes each rank sends in one iteration, from the lanes.
    fn sent(op: Op, algorithm: Algorithm, n: u32, size: u64) -> Vec<u64> {
        let mut out = vec![0; n as usize];
        for t in lanes(op, algorithm, n, size)
            .unwrap()
            .iter()
            .flatten()
            .flatten()
        {
            out[t.from as usize] += t.bytes;
        }
        out
    }

    /// Each algorithm moves what the operation needs: a ring or halving-doubling all-reduce
    /// sends 2(N−1)/N of the buffer per rank, all-gather and reduce-scatter (N−1)/N, an
    /// all-to-all by pairwise exchange (N−1)/N, a tree the whole buffer up and down.
    #[test]
    fn every_rank_sends_what_the_operation_needs() {
        let (n, s) = (8u32, 8_000u64);
        let all = |v: Vec<u64>, want: u64| assert!(v.iter().all(|&b| b == want), "{v:?} {want}");
        all(sent(Op::AllReduce, Algorithm::Ring, n, s), 2 * 7 * 1000);
        all(
            sent(Op::AllReduce, Algorithm::HalvingDoubling, n, s),
            2 * 7 * 1000,
        );
        all(sent(Op::AllGather, Algorithm::Ring, n, s), 7 * 1000);
        all(
            sent(Op::ReduceScatter, Algorithm::HalvingDoubling, n, s),
            7 * 1000,
        );
        all(sent(Op::AllToAll, Algorithm::Pairwise, n, s), 7 * 1000);
        // Ring all-to-all: 7 + 6 + … + 1 chunks forwarded.
        all(sent(Op::AllToAll, Algorithm::Ring, n, s), 28 * 1000);
        // A tree: every rank but the root sends up once; every inner rank sends down per child.
        let tree = sent(Op::AllReduce, Algorithm::Tree, n, s);
        assert_eq!(tree.iter().sum::<u64>(), 2 * 7 * s);
        // The double binary tree halves it per tree; each rank is inner in at most one tree.
        let dbt = sent(Op::AllReduce, Algorithm::DoubleBinaryTree, n, s);
        assert_eq!(dbt.iter().sum::<u64>(), 2 * 7 * s);
        assert_eq!(tree.iter().max(), Some(&(3 * s)));
        assert_eq!(dbt.iter().max(), Some(&(2 * s)), "{dbt:?}");
    }

    #[test]
    fn algorithms_refuse_what_they_do_not_run() {
        let cases = [
            (
                Op::AllGather,
                Algorithm::Tree,
                4,
                "runs all-reduce only, not all-gather",
            ),
            (
                Op::AllReduce,
                Algorithm::Pairwise,
                4,
                "runs all-to-all only",
            ),
            (
                Op::AllToAll,
                Algorithm::HalvingDoubling,
                4,
                "not all-to-all",
            ),
            (
                Op::AllReduce,
                Algorithm::HalvingDoubling,
                6,
                "a power of 2 ranks, not 6",
            ),
        ];
        for (op, alg, n, want) in cases {
            let err = generate(&[job(op, alg, n, 6000)]).unwrap_err();
            assert_eq!((err.job, err.key), (0, Some("algorithm")));
            assert!(err.why.contains(want), "{err}");
        }
        let mut tiny = job(Op::AllReduce, Algorithm::Ring, 4, 8);
        tiny.channels = 4;
        let err = generate(&[job(Op::AllGather, Algorithm::Ring, 2, 6000), tiny]).unwrap_err();
        assert_eq!((err.job, err.key), (1, Some("size")));
        assert!(err.why.contains("fewer than its 4 channels"), "{err}");
    }

    /// The transfers an iteration makes are counted without making them, and the count is the
    /// lanes' own for every operation, algorithm and rank count.
    #[test]
    fn transfers_are_counted_as_the_lanes_make_them() {
        let ops = [
            Op::AllReduce,
            Op::AllGather,
            Op::ReduceScatter,
            Op::AllToAll,
        ];
        let algorithms = [
            Algorithm::Ring,
            Algorithm::Tree,
            Algorithm::DoubleBinaryTree,
            Algorithm::HalvingDoubling,
            Algorithm::Pairwise,
        ];
        for op in ops {
            for alg in algorithms {
                for n in 2..=17 {
                    let made = lanes(op, alg, n, 1 << 20)
                        .map(|l| l.iter().flatten().map(|s| s.len() as u64).sum::<u64>());
                    assert_eq!(transfer_count(op, alg, n), made, "{op} {alg} {n}");
                }
            }
        }
    }

    /// A pairwise all-to-all over a k = 64 fat-tree's 65,536 hosts has 4 billion transfers:
    /// refused by the flow limit at once, where the transfers were made first (about 100 GB).
    #[test]
    fn a_job_of_billions_of_transfers_is_refused_before_they_are_made() {
        let huge = job(Op::AllToAll, Algorithm::Pairwise, 65_536, 1 << 30);
        let err = generate(&[huge]).unwrap_err().to_string();
        assert!(err.starts_with("job 0: 4294901760 flows"), "{err}");
        assert!(err.contains("at most 10 million flows"), "{err}");
    }

    /// Each rank's first flow of an iteration waits for its last flows on every channel: a
    /// double binary tree of 64 channels makes far more dependencies than flows, and is refused
    /// as they pass the limit, naming the channels, rather than filling memory.
    #[test]
    fn dependencies_past_the_limit_are_refused_as_they_are_made() {
        let mut j = job(Op::AllReduce, Algorithm::DoubleBinaryTree, 64, 1 << 20);
        (j.channels, j.iterations) = (64, 2);
        let lanes = lanes(j.op, j.algorithm, 64, j.size_bytes).unwrap();
        let mut out = Generated::default();
        let err = add_job(&mut out, 0, &j, &lanes, 100_000).unwrap_err();
        assert!(err.contains("more than 0.1 million others"), "{err}");
        assert!(err.contains("its 64 channels and trees"), "{err}");
        assert!(out.edges.len() < 200_000, "{}", out.edges.len());
        // Refused at the second iteration's start, before its waits are copied to every
        // pipeline of every rank: the first iteration's flows are all made, none of the next.
        let once = Job {
            iterations: 1,
            ..j.clone()
        };
        let mut first = Generated::default();
        add_job(&mut first, 0, &once, &lanes, MAX_EDGES).unwrap();
        let mut out = Generated::default();
        let err = add_job(&mut out, 0, &j, &lanes, first.edges.len() + 1).unwrap_err();
        assert!(err.contains("wait for more than"), "{err}");
        assert_eq!(out.flows.len(), first.flows.len());
        // Within the limit the same job is made in full.
        let mut out = Generated::default();
        add_job(&mut out, 0, &j, &lanes, MAX_EDGES).unwrap();
        assert_eq!(out.flows.len(), 2 * 4 * 63 * 64);
        assert!(out.edges.len() > 100_000, "{}", out.edges.len());
    }

    /// A ring all-reduce of 4 ranks: 6 steps of 4 flows; each flow of step k > 0 waits for its
    /// sender's two flows of step k − 1 (the one it sent and the one it received); a second
    /// iteration's first flows wait for the rank's last two after the compute gap.
    #[test]
    fn a_ring_step_waits_for_the_step_before_at_its_rank() {
        let mut j = job(Op::AllReduce, Algorithm::Ring, 4, 4000);
        j.iterations = 2;
        j.compute_gap = Duration::from_us(3);
        let g = generate(&[j]).unwrap();
        assert_eq!(g.flows.len(), 2 * 6 * 4);
        assert_eq!(g.steps, [6]);
        let parents = |f: u32| -> Vec<(u32, Duration)> {
            let mut p: Vec<_> = (g.edges.iter())
                .filter(|e| e.child == f)
                .map(|e| (e.parent, e.delay))
                .collect();
            p.sort_unstable();
            p
        };
        assert!(parents(0).is_empty());
        // Step 1, rank 1 (flow 5) waits for rank 1's send (1) and receive from rank 0 (0).
        assert_eq!(parents(5), [(0, Duration::ZERO), (1, Duration::ZERO)]);
        // Iteration 1, step 0, rank 1 (flow 25): rank 1's last send (21) and receive (20).
        let gap = Duration::from_us(3);
        assert_eq!(parents(25), [(20, gap), (21, gap)]);
        assert!(g.flows.iter().all(|f| f.size_bytes == 1000));
    }
}
