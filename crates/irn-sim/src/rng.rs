//! Seeded random streams: one independent generator per (scenario seed, purpose, index).
//!
//! A run draws randomness for several unrelated things: arrival times, flow sizes, destinations,
//! ECMP hash salts, incast sender choice, fault injection. If they all shared one generator, any
//! change to one of them would shift every later draw of the others: switching the flow-size CDF
//! would change *when* flows arrive and *where* they go, and two runs meant to differ in one
//! factor would differ in all of them. Giving each purpose (and each host, via `index`) its own
//! stream keeps the other draws fixed, so comparisons between scenarios isolate the factor that
//! was changed, and adding a host never reshuffles the traffic of the existing ones.
//!
//! Streams are derived purely from their three inputs, so results do not depend on the order in
//! which streams are created, on threads, or on the machine. They do depend on the `rand`
//! version, because [`StdRng`]'s algorithm is only stable within one: `Cargo.lock` pins it.

use rand::rngs::StdRng;
use rand::SeedableRng;

/// What a random stream is used for. Each purpose has a fixed tag mixed into the stream's seed.
///
/// The tags are part of the result format: changing one changes every result that uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// Flow inter-arrival times (index: the sending host).
    Arrivals,
    /// Flow sizes (index: the sending host).
    Sizes,
    /// Flow destinations (index: the sending host).
    Destinations,
    /// Per-switch salts for ECMP hashing (index: the switch).
    EcmpSalt,
    /// Choice of incast senders (index: the incast repetition or group).
    Incast,
    /// Packet drop and link fault injection (index: the link or port).
    Faults,
    /// RED/ECN marking decisions (index: the switch).
    EcnMarking,
    /// Which verb each flow is (index: 0, one stream for the whole workload).
    Verbs,
    /// Each queue pair's initial PSNs (index: the flow and its packet space, see
    /// [`crate::config::InitialPsn`]).
    InitialPsn,
    /// Per-packet load balancing's random draws (index: the switch).
    LoadBalancing,
    /// A host's random PAUSE frames, `[pauses]` (index: the host).
    Pauses,
    /// A random topology's graph, `kind = "jellyfish"` (index: 0).
    Topology,
    /// Where DIBS deflects a packet (index: the switch).
    Deflection,
    /// Which links fail, `[failures]` (index: 0).
    Failures,
    /// Repeated incast queries, `kind = "queries"` (index 0: the queries' arrival times;
    /// index 1: each query's receiver and senders). Two streams, so a change in who takes part
    /// never moves an arrival.
    Queries,
    /// MP-RDMA's virtual-path draws (index: 0; each queue pair mixes in its QPN and initial
    /// PSN).
    VirtualPaths,
    /// Which hosts a collective job's ranks run on, `placement = "random"` (index: the job).
    Placement,
}

impl Purpose {
    /// The constant that names this purpose in the seed mix: its name as eight ASCII bytes, so
    /// the constants are distinct by construction and readable in a debugger.
    pub const fn tag(self) -> u64 {
        u64::from_le_bytes(match self {
            Purpose::Arrivals => *b"arrivals",
            Purpose::Sizes => *b"sizes\0\0\0",
            Purpose::Destinations => *b"dests\0\0\0",
            Purpose::EcmpSalt => *b"ecmpsalt",
            Purpose::Incast => *b"incast\0\0",
            Purpose::Faults => *b"faults\0\0",
            Purpose::EcnMarking => *b"ecnmark\0",
            Purpose::Verbs => *b"verbs\0\0\0",
            Purpose::InitialPsn => *b"isn\0\0\0\0\0",
            Purpose::LoadBalancing => *b"lbalance",
            Purpose::Pauses => *b"pauses\0\0",
            Purpose::Topology => *b"topology",
            Purpose::Deflection => *b"deflect\0",
            Purpose::Failures => *b"failures",
            Purpose::Queries => *b"queries\0",
            Purpose::VirtualPaths => *b"vpaths\0\0",
            Purpose::Placement => *b"placemnt",
        })
    }
}

/// The golden-ratio increment of SplitMix64; added between mixing steps so that a zero input
/// never meets the finalizer's fixed point at zero.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finalizer: a bijection on `u64` in which every input bit affects every output
/// bit, so nearby seeds (0, 1, 2, ...) give unrelated outputs.
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 64-bit seed of the stream for `(seed, purpose, index)`: the three values absorbed one
/// after another, each followed by a full mix.
pub const fn stream_seed(seed: u64, purpose: Purpose, index: u64) -> u64 {
    let h = mix(seed.wrapping_add(GAMMA));
    let h = mix((h ^ purpose.tag()).wrapping_add(GAMMA));
    mix((h ^ index).wrapping_add(GAMMA))
}

/// An independent, deterministic random stream for one purpose and index within a scenario.
///
/// Same `(seed, purpose, index)` ⇒ the same sequence, always; changing any of the three gives an
/// unrelated sequence. See the module documentation for why streams are split this way.
pub fn stream(seed: u64, purpose: Purpose, index: u64) -> StdRng {
    StdRng::seed_from_u64(stream_seed(seed, purpose, index))
}

/// SplitMix64 (Steele et al., 2014): a generator of one `u64` of state and a few instructions
/// per draw, for choices made on the packet path (per-packet load balancing), where a
/// [`StdRng`] would cost more than the rest of the decision. Portable and deterministic: only
/// wrapping integer arithmetic.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    pub const fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }

    /// A uniform index below `n` (0 < `n` ≤ 2³²), by multiplying 32 random bits by `n`
    /// (Lemire's method without its rejection step: a bias of at most n / 2³², negligible for
    /// the handful of candidates a switch has).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Two distinct uniform indices below `n` (`n` ≥ 2).
    #[inline]
    pub fn two_distinct(&mut self, n: usize) -> (usize, usize) {
        let a = self.below(n);
        let b = (a + 1 + self.below(n - 1)) % n;
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    const ALL: [Purpose; 13] = [
        Purpose::Arrivals,
        Purpose::Sizes,
        Purpose::Destinations,
        Purpose::EcmpSalt,
        Purpose::Incast,
        Purpose::Faults,
        Purpose::EcnMarking,
        Purpose::Verbs,
        Purpose::InitialPsn,
        Purpose::LoadBalancing,
        Purpose::Pauses,
        Purpose::Topology,
        Purpose::Queries,
    ];

    fn first(seed: u64, purpose: Purpose, index: u64) -> Vec<u64> {
        let mut rng = stream(seed, purpose, index);
        (0..8).map(|_| rng.random::<u64>()).collect()
    }

    #[test]
    fn same_inputs_give_the_same_sequence() {
        for p in ALL {
            assert_eq!(first(42, p, 3), first(42, p, 3), "{p:?}");
        }
    }

    #[test]
    fn purpose_tags_are_distinct() {
        let mut tags: Vec<u64> = ALL.iter().map(|p| p.tag()).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), ALL.len());
    }

    #[test]
    fn different_seed_purpose_or_index_differ() {
        let mut seen = std::collections::HashSet::new();
        for seed in [0, 1, 2, u64::MAX] {
            for p in ALL {
                for index in [0, 1, 2, 1000] {
                    assert!(
                        seen.insert(first(seed, p, index)),
                        "stream ({seed}, {p:?}, {index}) repeats another"
                    );
                }
            }
        }
    }

    #[test]
    fn seed_and_index_are_not_interchangeable() {
        // A naive `seed ^ index` mix would make these equal.
        assert_ne!(
            first(1, Purpose::Arrivals, 2),
            first(2, Purpose::Arrivals, 1)
        );
        assert_ne!(
            stream_seed(5, Purpose::Sizes, 5),
            stream_seed(0, Purpose::Sizes, 0)
        );
    }

    #[test]
    fn splitmix_draws_are_uniform_and_two_distinct_differ() {
        let mut r = SplitMix::new(stream_seed(3, Purpose::LoadBalancing, 0));
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[r.below(5)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
        let mut pairs = [[0u32; 3]; 3];
        for _ in 0..30_000 {
            let (a, b) = r.two_distinct(3);
            assert_ne!(a, b);
            pairs[a][b] += 1;
        }
        // Each of the six ordered pairs about equally often.
        for (a, row) in pairs.iter().enumerate() {
            for (b, &c) in row.iter().enumerate() {
                assert!(a == b || (4_500..5_500).contains(&c), "{pairs:?}");
            }
        }
        // The sequence is fixed by the seed alone.
        let mut again = SplitMix::new(stream_seed(3, Purpose::LoadBalancing, 0));
        let mut fresh = SplitMix::new(stream_seed(3, Purpose::LoadBalancing, 0));
        assert_eq!(again.next_u64(), fresh.next_u64());
        assert_eq!(SplitMix::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }
}
