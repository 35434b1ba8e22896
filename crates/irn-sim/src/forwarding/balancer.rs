//! Load balancing: which of a switch's equal-cost next hops a packet takes.
//!
//! Routing (`topology::routing`) gives each (switch, destination host) its candidate egress
//! ports, all on shortest paths; a [`Balancer`] picks one per packet. ECMP keeps a flow on one
//! path (a hash of the flow), the others move packets of one flow over several paths and so
//! reorder them, which is what Eunomia's ordering layer exists to absorb.
//!
//! Every choice is a few array reads and, for the random ones, one step of a per-switch
//! generator: no allocation and no hashing on the packet path. The per-destination state
//! (round-robin turns, DRILL's memory) is a flat table of switches × hosts entries, allocated
//! only for the balancers that use it.

use irn_core::time::{Duration, Time};

use super::conweave::ConWeaveParams;
use crate::ids::{FlowId, HostIdx, NodeId, PortId};
use crate::rng::{stream_seed, Purpose, SplitMix};

/// How switches spread packets over equal-cost next hops (`switch.load_balancing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalancing {
    /// Per flow: a seeded hash of the flow id, re-mixed at every switch (MODEL §1).
    #[default]
    Ecmp,
    /// Per packet, round-robin over the candidates, one turn per (switch, destination host):
    /// Eunomia's "PS", a round-robin version of random packet spraying.
    Spray,
    /// Per packet, a uniformly random candidate (Dixit et al., INFOCOM'13).
    RandomSpray,
    /// DRILL(d, m) (Ghorbani et al., SIGCOMM'17): per packet, `d` random candidates and the `m`
    /// least loaded remembered from the last choice; the one with the fewest bytes queued for
    /// it wins, a tie as `ties` says.
    Drill { d: u8, m: u8, ties: DrillTies },
    /// Power of two choices: two distinct random candidates, the less loaded wins; no memory.
    PowerOfTwo,
    /// LetFlow (Vanini et al., NSDI'17): a flow keeps its candidate while its packets are less
    /// than `gap` apart at this switch; after a longer gap (a new flowlet) it draws a random one.
    LetFlow { gap: Duration },
    /// ConWeave (Song et al., SIGCOMM'23): the source ToR names each data packet's path among
    /// every shortest path to the destination ToR, rerouting a flow when its RTT probe is late,
    /// and the destination ToR puts the flow's packets back in order (`super::conweave`; the
    /// simulation's side in `sim/conweaving.rs`). Other packets and switches hash as ECMP does.
    ConWeave(ConWeaveParams),
}

impl LoadBalancing {
    /// DRILL's defaults, (2, 1), as its paper evaluates it.
    pub const DRILL: LoadBalancing = LoadBalancing::Drill {
        d: Self::DRILL_SAMPLES,
        m: Self::DRILL_MEMORY,
        ties: DrillTies::Memory,
    };
    /// DRILL's paper's d.
    pub const DRILL_SAMPLES: u8 = 2;
    /// DRILL's paper's m.
    pub const DRILL_MEMORY: u8 = 1;
    /// LetFlow's flowlet timeout in its paper and in ConWeave's ns-3 comparison: 100 µs.
    pub const LETFLOW: LoadBalancing = LoadBalancing::LetFlow {
        gap: Duration::from_us(100),
    };

    /// The scenario name (`switch.load_balancing`).
    pub fn name(self) -> &'static str {
        match self {
            LoadBalancing::Ecmp => "ecmp",
            LoadBalancing::Spray => "spray",
            LoadBalancing::RandomSpray => "random-spray",
            LoadBalancing::Drill { .. } => "drill",
            LoadBalancing::PowerOfTwo => "power-of-two",
            LoadBalancing::LetFlow { .. } => "letflow",
            LoadBalancing::ConWeave(_) => "conweave",
        }
    }

    /// Whether one flow's packets may take different paths (and so arrive out of order).
    pub fn per_packet(self) -> bool {
        !matches!(self, LoadBalancing::Ecmp)
    }
}

/// Which of DRILL's candidates wins when a remembered one and a sampled one have as many bytes
/// queued (`load_balancing.ties`). DRILL's paper does not say; the choice matters wherever the
/// switch's own queues are mostly empty, since a remembered candidate that keeps every tie
/// sends all the packets to one destination the same way until its own queue grows, while
/// queues can build further on, where the switch cannot see them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DrillTies {
    /// The remembered candidate keeps the tie, so a destination's packets stay on one path
    /// while the queues tie: ConWeave's ns-3 (`SwitchNode::DoLbDrill` replaces the previous
    /// best only with a strictly shorter sample), which Eunomia's simulations ran.
    #[default]
    Memory,
    /// A sampled candidate wins the tie (the first drawn, if several tie), so packets spread
    /// over the tying candidates at random, as power of two choices spreads them; the memory
    /// still wins when it is strictly shorter.
    Sample,
}

/// How a per-packet balancer routes ACKs, NACKs and CNPs (`load_balancing.control`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ControlBalancing {
    /// As data packets: each control packet is balanced on its own (and DRILL's memory is
    /// shared with the data packets to the same host).
    #[default]
    Balanced,
    /// By ECMP's per-flow hash, whatever the data does: ConWeave's ns-3 (`SwitchNode::GetOutDev`
    /// sends every ACK, NACK, CNP and PAUSE through `DoLbFlowECMP`), so a flow's ACKs keep
    /// their order and DRILL samples and remembers for data packets only.
    Ecmp,
}

/// Slots in each switch's flowlet table. A flow's entry is `flow % FLOWLET_SLOTS`, tagged with
/// the flow: a flow that finds another flow's entry starts a new flowlet, as a collision in a
/// hardware flowlet table does. Far more than the flows a switch carries at once in the
/// scenarios here; 16 B each.
const FLOWLET_SLOTS: usize = 4096;

/// One flowlet table entry: which flow, when its last packet passed, where it went.
#[derive(Clone, Copy, Debug)]
struct Flowlet {
    flow: u32,
    candidate: u32,
    last: Time,
}

const NO_FLOW: u32 = u32::MAX;

/// The state every switch's load balancer keeps, for all switches at once.
#[derive(Debug)]
pub struct Balancer {
    kind: LoadBalancing,
    /// ECMP over next hops, chosen inline on the packet path ([`per_flow`](Self::per_flow)).
    /// False for the others and for ECMP over source routes, whose first switch hashes the
    /// flow over paths instead (FKSP).
    hashes_hops: bool,
    /// Control packets hash as ECMP's do while data packets are balanced per packet
    /// ([`ControlBalancing::Ecmp`], next hops only).
    hashes_control: bool,
    /// ECMP's hash salt, common to all switches (each switch mixes in its node id).
    salt: u32,
    /// Hosts: the row length of the per-destination tables.
    hosts: usize,
    /// Spray: the next turn per (switch, destination); DRILL: the `m` remembered candidate
    /// indices per (switch, destination). Empty for the others.
    per_destination: Vec<u16>,
    /// One generator per switch, so one switch's draws never shift another's.
    rngs: Vec<SplitMix>,
    /// LetFlow: `FLOWLET_SLOTS` entries per switch.
    flowlets: Vec<Flowlet>,
}

impl Balancer {
    /// The balancers of `switches` switches routing to `hosts` hosts; `salt` is ECMP's, drawn
    /// by the caller from its own stream so ECMP runs keep their paths. Under source routing
    /// (`source_routed`) the balancer picks among paths at a packet's first switch, through
    /// [`choose_index`](Self::choose_index) only.
    pub fn new(
        kind: LoadBalancing,
        (switches, hosts): (usize, usize),
        source_routed: bool,
        seed: u64,
        salt: u32,
    ) -> Self {
        let per_destination = match kind {
            LoadBalancing::Spray => 0,
            _ => NOT_REMEMBERED,
        };
        let per_destination =
            vec![per_destination; Self::per_destination_len(kind, switches, hosts)];
        let random = !matches!(kind, LoadBalancing::Ecmp | LoadBalancing::Spray);
        let rngs = if random {
            (0..switches)
                .map(|s| SplitMix::new(stream_seed(seed, Purpose::LoadBalancing, s as u64)))
                .collect()
        } else {
            Vec::new()
        };
        let empty = Flowlet {
            flow: NO_FLOW,
            candidate: 0,
            last: Time::ZERO,
        };
        let flowlets = match kind {
            LoadBalancing::LetFlow { .. } => vec![empty; switches * FLOWLET_SLOTS],
            _ => Vec::new(),
        };
        Balancer {
            kind,
            hashes_hops: kind == LoadBalancing::Ecmp && !source_routed,
            hashes_control: false,
            salt,
            hosts,
            per_destination,
            rngs,
            flowlets,
        }
    }

    /// Entries of `per_destination` for `switches` switches routing to `hosts` hosts: one per
    /// (switch, destination) for spray, `m` for DRILL, none for the others.
    fn per_destination_len(kind: LoadBalancing, switches: usize, hosts: usize) -> usize {
        match kind {
            LoadBalancing::Spray => switches * hosts,
            LoadBalancing::Drill { m, .. } => switches * hosts * usize::from(m),
            _ => 0,
        }
    }

    /// Bytes [`new`](Self::new) allocates: spray's and DRILL's tables grow with switches ×
    /// hosts, LetFlow's with the switches.
    pub fn footprint(kind: LoadBalancing, (switches, hosts): (usize, usize)) -> u64 {
        let tables = Self::per_destination_len(kind, switches, hosts) * size_of::<u16>();
        let rngs = switches * size_of::<SplitMix>();
        let flowlets = match kind {
            LoadBalancing::LetFlow { .. } => switches * FLOWLET_SLOTS * size_of::<Flowlet>(),
            _ => 0,
        };
        (tables + rngs + flowlets) as u64
    }

    /// The balancer routing control packets as `control` says (a per-packet kind over next
    /// hops only: ECMP hashes them anyway, and source routes pick paths at the first switch).
    pub fn with_control(mut self, control: ControlBalancing, source_routed: bool) -> Self {
        self.hashes_control =
            control == ControlBalancing::Ecmp && self.kind.per_packet() && !source_routed;
        self
    }

    /// A uniformly random index below `n` from switch `s`'s generator (ConWeave's path draws).
    pub fn draw(&mut self, s: usize, n: usize) -> usize {
        self.rngs[s].below(n)
    }

    pub fn kind(&self) -> LoadBalancing {
        self.kind
    }

    /// ECMP's egress port for a packet of `flow` at switch node `node` among `hops` (more than
    /// one), or `None` when the balancer chooses per packet (then ask [`choose`](Self::choose));
    /// `data` is false for ACKs, NACKs and CNPs, which [`ControlBalancing::Ecmp`] hashes.
    ///
    /// The switch's packet path asks this first: ECMP, the default, stays a hash inlined there,
    /// and the per-packet balancers are a call away, so their code never crowds the event loop
    /// of a run that does not use them.
    #[inline(always)]
    pub fn per_flow(
        &self,
        flow: FlowId,
        node: NodeId,
        hops: &[PortId],
        data: bool,
    ) -> Option<PortId> {
        (self.hashes_hops || (self.hashes_control && !data))
            .then(|| hops[self.ecmp(flow, node, hops.len())])
    }

    /// ECMP's choice among `n` hops: a seeded hash of the flow, re-mixed with the switch's node
    /// id so that the switches along a path do not all make the same choice.
    #[inline(always)]
    fn ecmp(&self, flow: FlowId, node: NodeId, n: usize) -> usize {
        let hash = mix32(flow.0 ^ self.salt);
        mix32(hash ^ node.0.wrapping_mul(0x9E37_79B9)) as usize % n
    }

    /// The egress port for a packet of `flow` to `dst` at switch `s` (node `node`) at `now`,
    /// among `hops` (non-empty); `queued(port)` is the bytes waiting for that output there.
    #[inline]
    pub fn choose(
        &mut self,
        s: usize,
        node: NodeId,
        packet: (FlowId, HostIdx),
        now: Time,
        hops: &[PortId],
        queued: impl Fn(PortId) -> u64,
    ) -> PortId {
        hops[self.choose_index(s, node, packet, now, hops, queued)]
    }

    /// [`choose`](Self::choose)'s index into `hops`. Under source routing `hops` are the
    /// first egress ports of a packet's paths (several may share one), and the index is the
    /// path's: ECMP's hash keeps a flow on one path (FKSP), power of two compares two paths'
    /// first-hop queues, spray turns over paths.
    #[inline]
    pub fn choose_index(
        &mut self,
        s: usize,
        node: NodeId,
        (flow, dst): (FlowId, HostIdx),
        now: Time,
        hops: &[PortId],
        queued: impl Fn(PortId) -> u64,
    ) -> usize {
        let n = hops.len();
        if n == 1 {
            return 0;
        }
        match self.kind {
            LoadBalancing::Ecmp | LoadBalancing::ConWeave(_) => self.ecmp(flow, node, n),
            LoadBalancing::Spray => {
                let turn = &mut self.per_destination[s * self.hosts + dst.index()];
                let i = usize::from(*turn) % n;
                *turn = ((i + 1) % n) as u16;
                i
            }
            LoadBalancing::RandomSpray => self.rngs[s].below(n),
            LoadBalancing::PowerOfTwo => {
                let (a, b) = self.rngs[s].two_distinct(n);
                if queued(hops[b]) < queued(hops[a]) {
                    b
                } else {
                    a
                }
            }
            LoadBalancing::Drill { d, m, ties } => self.drill(s, dst, hops, (d, m, ties), queued),
            LoadBalancing::LetFlow { gap } => self.letflow(s, flow, now, n, gap),
        }
    }

    /// DRILL(d, m): candidates offered earlier win ties, so the remembered ones are offered
    /// first when they keep ties ([`DrillTies::Memory`]: a sample replaces one only when its
    /// queue is strictly shorter) and after the samples otherwise; then the `m` best of what
    /// was compared are remembered for the next packet to the same destination. The memory starts empty, so a destination's first packet takes its best
    /// sample (as in DRILL's paper and ConWeave's ns-3): a memory that started at the first
    /// next hop would send every destination there while queues are empty and tie. The `d`
    /// samples are distinct (with replacement beyond 64 candidates, where a candidate drawn
    /// twice is compared once).
    fn drill(
        &mut self,
        s: usize,
        dst: HostIdx,
        hops: &[PortId],
        (d, m, ties): (u8, u8, DrillTies),
        queued: impl Fn(PortId) -> u64,
    ) -> usize {
        let n = hops.len();
        let m = usize::from(m);
        let row = (s * self.hosts + dst.index()) * m;
        // Without memory (m = 0) the best sample still wins.
        let mut best = Best::new(m.max(1));
        let remembered = |best: &mut Best, memory: &[u16]| {
            for &i in memory {
                if i != NOT_REMEMBERED {
                    best.offer(usize::from(i) % n, |i| queued(hops[i]));
                }
            }
        };
        let memory = &self.per_destination[row..row + m];
        if ties == DrillTies::Memory {
            remembered(&mut best, memory);
        }
        let rng = &mut self.rngs[s];
        let d = usize::from(d).min(n);
        if n <= 64 {
            // `d` distinct candidates drawn one after another, each uniform among those not
            // drawn yet, so that the first drawn, which wins a tie, is any of them alike.
            let mut drawn = 0u64;
            for k in 0..d {
                let pick = nth_zero_bit(drawn, rng.below(n - k));
                drawn |= 1 << pick;
                best.offer(pick, |i| queued(hops[i]));
            }
        } else {
            for _ in 0..d {
                best.offer(rng.below(n), |i| queued(hops[i]));
            }
        }
        if ties == DrillTies::Sample {
            remembered(&mut best, memory);
        }
        for k in 0..m {
            self.per_destination[row + k] = best.candidate(k.min(best.len - 1)) as u16;
        }
        best.candidate(0)
    }

    fn letflow(&mut self, s: usize, flow: FlowId, now: Time, n: usize, gap: Duration) -> usize {
        let e = &mut self.flowlets[s * FLOWLET_SLOTS + flow.index() % FLOWLET_SLOTS];
        let continues = e.flow == flow.0 && now.saturating_since(e.last) < gap;
        if !continues {
            e.flow = flow.0;
            e.candidate = self.rngs[s].below(n) as u32;
        }
        e.last = now;
        e.candidate as usize % n
    }
}

/// The position of the `t`-th (from 0) clear bit of `bits`, which has more than `t` of them.
#[inline]
fn nth_zero_bit(bits: u64, t: usize) -> usize {
    let mut free = !bits;
    for _ in 0..t {
        free &= free - 1;
    }
    free.trailing_zeros() as usize
}

/// A DRILL memory slot that holds no candidate yet.
const NOT_REMEMBERED: u16 = u16::MAX;

/// DRILL's memory is at most this many candidates (its paper uses m = 1 and finds larger m
/// unhelpful).
pub const MAX_DRILL_MEMORY: u8 = 4;

/// The (queued bytes, candidate) pairs of the least loaded distinct candidates compared so far,
/// least loaded first, at most `cap` of them.
struct Best {
    slots: [(u64, usize); MAX_DRILL_MEMORY as usize],
    len: usize,
    cap: usize,
}

impl Best {
    fn new(cap: usize) -> Self {
        Best {
            slots: [(u64::MAX, 0); MAX_DRILL_MEMORY as usize],
            len: 0,
            cap,
        }
    }

    /// Compares candidate `i`, reading its queue only if it has not been compared yet.
    fn offer(&mut self, i: usize, queued: impl Fn(usize) -> u64) {
        if self.slots[..self.len].iter().any(|&(_, j)| j == i) {
            return;
        }
        let q = queued(i);
        let at = self.slots[..self.len]
            .iter()
            .position(|&(b, _)| q < b)
            .unwrap_or(self.len);
        if at >= self.cap {
            return;
        }
        let end = (self.len + 1).min(self.cap);
        self.slots.copy_within(at..end - 1, at + 1);
        self.slots[at] = (q, i);
        self.len = end;
    }

    fn candidate(&self, k: usize) -> usize {
        self.slots[k].1
    }
}

/// A 32-bit finalizer (MurmurHash3's): ECMP's per-flow hash.
#[inline(always)]
fn mix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOPS: [PortId; 4] = [PortId(10), PortId(11), PortId(12), PortId(13)];

    fn balancer(kind: LoadBalancing) -> Balancer {
        Balancer::new(kind, (2, 3), false, 42, 7)
    }

    /// `n` choices at switch 0 for flow 1 to host 2, one every `step` µs, with queue lengths
    /// `queued[port - 10]` fixed.
    fn picks(b: &mut Balancer, n: u64, step: u64, queued: [u64; 4]) -> Vec<u32> {
        (0..n)
            .map(|i| {
                let now = Time::from_ps(i * step * 1_000_000);
                let q = |p: PortId| queued[p.index() - 10];
                b.choose(0, NodeId(5), (FlowId(1), HostIdx(2)), now, &HOPS, q)
                    .0
                    - 10
            })
            .collect()
    }

    #[test]
    fn a_single_candidate_is_taken_without_a_draw() {
        for kind in [
            LoadBalancing::Ecmp,
            LoadBalancing::Spray,
            LoadBalancing::RandomSpray,
            LoadBalancing::DRILL,
            LoadBalancing::PowerOfTwo,
            LoadBalancing::LETFLOW,
        ] {
            let mut b = balancer(kind);
            let only = [PortId(3)];
            let got = b.choose(
                1,
                NodeId(6),
                (FlowId(0), HostIdx(0)),
                Time::ZERO,
                &only,
                |_| 0,
            );
            assert_eq!(got, PortId(3), "{kind:?}");
        }
    }

    #[test]
    fn ecmp_keeps_a_flow_on_one_port_and_spreads_flows() {
        let mut b = balancer(LoadBalancing::Ecmp);
        assert!(picks(&mut b, 20, 1, [0; 4])
            .windows(2)
            .all(|w| w[0] == w[1]));
        let mut used = [false; 4];
        for f in 0..64 {
            let p = b.choose(
                0,
                NodeId(5),
                (FlowId(f), HostIdx(2)),
                Time::ZERO,
                &HOPS,
                |_| 0,
            );
            used[p.index() - 10] = true;
        }
        assert_eq!(used, [true; 4]);
    }

    #[test]
    fn the_inline_ecmp_path_agrees_with_choose_and_only_ecmp_takes_it() {
        let mut b = balancer(LoadBalancing::Ecmp);
        for f in 0..64 {
            for node in [NodeId(5), NodeId(6)] {
                let flow = (FlowId(f), HostIdx(2));
                let chosen = b.choose(0, node, flow, Time::ZERO, &HOPS, |_| 0);
                assert_eq!(b.per_flow(flow.0, node, &HOPS, true), Some(chosen));
            }
        }
        for kind in [
            LoadBalancing::Spray,
            LoadBalancing::RandomSpray,
            LoadBalancing::DRILL,
            LoadBalancing::PowerOfTwo,
            LoadBalancing::LETFLOW,
        ] {
            assert_eq!(
                balancer(kind).per_flow(FlowId(1), NodeId(5), &HOPS, true),
                None
            );
        }
    }

    #[test]
    fn spray_alternates_per_destination() {
        let mut b = balancer(LoadBalancing::Spray);
        assert_eq!(picks(&mut b, 6, 1, [0; 4]), [0, 1, 2, 3, 0, 1]);
        // Another destination at the same switch has a turn of its own; another switch too.
        let at = |b: &mut Balancer, s, dst| {
            b.choose(
                s,
                NodeId(5),
                (FlowId(9), HostIdx(dst)),
                Time::ZERO,
                &HOPS,
                |_| 0,
            )
            .0 - 10
        };
        assert_eq!(at(&mut b, 0, 0), 0);
        assert_eq!(at(&mut b, 1, 2), 0);
        assert_eq!(at(&mut b, 0, 2), 2);
    }

    #[test]
    fn random_spray_uses_every_candidate_about_equally() {
        let mut b = balancer(LoadBalancing::RandomSpray);
        let mut counts = [0; 4];
        for p in picks(&mut b, 4000, 1, [0; 4]) {
            counts[p as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (900..1100).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn power_of_two_never_picks_the_longest_queue() {
        let mut b = balancer(LoadBalancing::PowerOfTwo);
        let got = picks(&mut b, 400, 1, [500, 100, 900, 300]);
        // Port 2 (900 B) loses to every other; port 1 (shortest) wins whenever drawn.
        assert!(!got.contains(&2));
        let ones = got.iter().filter(|&&p| p == 1).count();
        // Drawn in a pair with probability 1/2.
        assert!((170..230).contains(&ones), "{ones}");
    }

    #[test]
    fn drill_picks_the_shortest_queue_and_remembers_it() {
        let mut b = balancer(LoadBalancing::DRILL);
        let got = picks(&mut b, 50, 1, [500, 100, 900, 300]);
        // Once port 1 has been sampled it is remembered, and nothing shorter exists.
        let first = got.iter().position(|&p| p == 1).expect("port 1 sampled");
        assert!(first < 10, "{got:?}");
        assert!(got[first..].iter().all(|&p| p == 1), "{got:?}");
        // With every queue equal, the remembered port stays (ties keep the path).
        let mut b = balancer(LoadBalancing::DRILL);
        let got = picks(&mut b, 50, 1, [7; 4]);
        assert!(got.iter().all(|&p| p == got[0]), "{got:?}");
    }

    fn drill(d: u8, m: u8, ties: DrillTies) -> LoadBalancing {
        LoadBalancing::Drill { d, m, ties }
    }

    /// With every queue equal, a memory that keeps ties sends every packet the way the first
    /// went; samples that win ties spread the packets over every port, as power of two does.
    /// A strictly shorter remembered port still wins either way.
    #[test]
    fn drill_ties_go_to_the_memory_or_to_a_sample() {
        for (ties, tied_ports) in [(DrillTies::Memory, 1), (DrillTies::Sample, 4)] {
            let mut b = balancer(drill(2, 1, ties));
            let mut used = picks(&mut b, 200, 1, [7; 4]);
            used.sort_unstable();
            used.dedup();
            assert_eq!(used.len(), tied_ports, "{ties:?}: {used:?}");
            let mut b = balancer(drill(2, 1, ties));
            let got = picks(&mut b, 50, 1, [500, 100, 900, 300]);
            let first = got.iter().position(|&p| p == 1).expect("port 1 sampled");
            assert!(got[first..].iter().all(|&p| p == 1), "{ties:?}: {got:?}");
        }
    }

    /// The memory starts empty: with every queue empty, each destination keeps the port its
    /// first packet drew, and destinations spread over every port alike (a memory starting
    /// at the first next hop would send them all to port 10; a tie won by a draw that can
    /// never be the last port would leave port 13 out).
    #[test]
    fn drill_remembers_each_destinations_first_draw_not_the_first_port() {
        let mut b = Balancer::new(LoadBalancing::DRILL, (1, 64), false, 42, 7);
        let mut first = Vec::new();
        for dst in 0..64 {
            let ports: Vec<u32> = (0..5)
                .map(|_| {
                    let flow = (FlowId(dst), HostIdx(dst));
                    b.choose(0, NodeId(5), flow, Time::ZERO, &HOPS, |_| 0).0
                })
                .collect();
            assert!(ports.iter().all(|&p| p == ports[0]), "{ports:?}");
            first.push(ports[0] - 10);
        }
        for port in 0..HOPS.len() as u32 {
            let n = first.iter().filter(|&&p| p == port).count();
            assert!((6..=26).contains(&n), "port {port}: {n} of 64 destinations");
        }
    }

    #[test]
    fn the_nth_zero_bit_skips_the_set_ones() {
        for (bits, t, want) in [
            (0, 0, 0),
            (0, 5, 5),
            (0b1, 0, 1),
            (0b1011, 0, 2),
            (0b1011, 1, 4),
        ] {
            assert_eq!(nth_zero_bit(bits, t), want, "{bits:#b}, {t}");
        }
        assert_eq!(nth_zero_bit(u64::MAX >> 1, 0), 63);
    }

    #[test]
    fn drill_without_memory_is_the_best_of_its_samples() {
        let mut b = balancer(drill(2, 0, DrillTies::Memory));
        let got = picks(&mut b, 400, 1, [500, 100, 900, 300]);
        assert!(!got.contains(&2), "the longest queue never wins a pair");
        let mut used = got.clone();
        used.sort_unstable();
        used.dedup();
        assert_eq!(
            used,
            [0, 1, 3],
            "no memory: every port but the longest wins sometimes"
        );
    }

    #[test]
    fn drill_with_more_memory_keeps_the_best_few() {
        let mut b = balancer(drill(1, 2, DrillTies::Memory));
        let got = picks(&mut b, 200, 1, [40, 10, 30, 20]);
        let tail = &got[50..];
        assert!(tail.iter().all(|&p| p == 1), "{tail:?}");
        // The memory row holds the two best: ports 1 and 3.
        let row = (2) * 2;
        let mut remembered = [b.per_destination[row], b.per_destination[row + 1]];
        remembered.sort_unstable();
        assert_eq!(remembered, [1, 3]);
    }

    #[test]
    fn letflow_keeps_a_flowlet_and_redraws_after_a_gap() {
        let mut b = balancer(LoadBalancing::LETFLOW);
        // Packets 10 µs apart: one flowlet, one port.
        let close = picks(&mut b, 30, 10, [0; 4]);
        assert!(close.iter().all(|&p| p == close[0]), "{close:?}");
        // 200 µs apart: every packet starts a flowlet; over 40 of them several ports are used.
        let mut b = balancer(LoadBalancing::LETFLOW);
        let apart = picks(&mut b, 40, 200, [0; 4]);
        let mut used = apart.clone();
        used.sort_unstable();
        used.dedup();
        assert!(used.len() >= 3, "{apart:?}");
    }

    #[test]
    fn letflow_gap_is_measured_per_flow_and_a_slot_collision_starts_a_flowlet() {
        let mut b = balancer(LoadBalancing::LETFLOW);
        let go = |b: &mut Balancer, flow: u32, us: u64| {
            let now = Time::from_ps(us * 1_000_000);
            b.choose(0, NodeId(5), (FlowId(flow), HostIdx(2)), now, &HOPS, |_| 0)
        };
        let a = go(&mut b, 1, 0);
        // Another flow in between does not refresh flow 1's entry, but does not break it either.
        go(&mut b, 2, 50);
        assert_eq!(go(&mut b, 1, 90), a);
        // A flow sharing flow 1's slot takes it over; flow 1 then starts a new flowlet.
        let twin = 1 + FLOWLET_SLOTS as u32;
        go(&mut b, twin, 95);
        let e = b.flowlets[1];
        assert_eq!(e.flow, twin);
    }

    #[test]
    fn control_packets_hash_as_ecmp_only_when_asked() {
        let ecmp = balancer(LoadBalancing::Ecmp);
        let drill = |control, source_routed| {
            balancer(LoadBalancing::DRILL).with_control(control, source_routed)
        };
        let asked = drill(ControlBalancing::Ecmp, false);
        for f in 0..32 {
            let (flow, node) = (FlowId(f), NodeId(5));
            let hashed = ecmp.per_flow(flow, node, &HOPS, true);
            assert!(hashed.is_some());
            // ACKs take ECMP's port for their flow; data packets are still DRILL's.
            assert_eq!(asked.per_flow(flow, node, &HOPS, false), hashed);
            assert_eq!(asked.per_flow(flow, node, &HOPS, true), None);
            // By default, and over source routes, control packets are balanced as data.
            for b in [
                drill(ControlBalancing::Balanced, false),
                drill(ControlBalancing::Ecmp, true),
            ] {
                assert_eq!(b.per_flow(flow, node, &HOPS, false), None);
            }
        }
    }

    #[test]
    fn choices_are_deterministic_per_seed_and_differ_across_seeds() {
        for kind in [
            LoadBalancing::RandomSpray,
            LoadBalancing::DRILL,
            LoadBalancing::PowerOfTwo,
            LoadBalancing::LETFLOW,
        ] {
            let q = [3, 1, 4, 1];
            let run = |seed| {
                let mut b = Balancer::new(kind, (2, 3), false, seed, 7);
                picks(&mut b, 200, 150, q)
            };
            assert_eq!(run(1), run(1), "{kind:?}");
            if kind != LoadBalancing::DRILL {
                assert_ne!(run(1), run(2), "{kind:?}");
            }
        }
    }
}
