//! The verbs mix: which RDMA operation each flow of a workload is (IRN §5).
//!
//! Without a mix every flow is one message on the transport alone (a Write-like stream of data
//! packets). With one, every flow becomes one verb on a pair of `irn_core::verbs` queue pairs,
//! drawn from the mix's weights. The flow's bytes always travel from `src` to `dst`, so a mix
//! changes the operations but not the traffic matrix:
//!
//! | verb | requester | what moves |
//! | --- | --- | --- |
//! | Write, Write-with-immediate | `src` | request packets `src → dst` (16 B RETH each), ACKs back |
//! | Send | `src` | request packets `src → dst` (6 B each), ACKs back; `dst` posts the receive WQE |
//! | Read | `dst` | one Read request `dst → src`, response packets `src → dst`, read ACKs back |
//! | Atomic (fetch-and-add) | `src` | one request `src → dst`, one 8-byte response back |
//!
//! An atomic moves 8 bytes whatever size the workload drew, so atomics lower the offered load by
//! their share of the bytes.

use rand::Rng;

use super::FlowSpec;
use crate::rng::{stream, Purpose};

/// The bytes an atomic moves.
pub const ATOMIC_BYTES: u64 = 8;

/// One flow's RDMA operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    Write,
    WriteImm,
    Read,
    Send,
    /// Fetch-and-add on an 8-byte word.
    Atomic,
}

impl Verb {
    pub const ALL: [Verb; 5] = [
        Verb::Write,
        Verb::WriteImm,
        Verb::Read,
        Verb::Send,
        Verb::Atomic,
    ];

    /// The name used in scenario files and output columns.
    pub const fn name(self) -> &'static str {
        match self {
            Verb::Write => "write",
            Verb::WriteImm => "write_imm",
            Verb::Read => "read",
            Verb::Send => "send",
            Verb::Atomic => "atomic",
        }
    }

    /// Whether the requester sits at the flow's destination (a Read pulls `src`'s bytes).
    pub const fn requester_at_dst(self) -> bool {
        matches!(self, Verb::Read)
    }
}

/// Relative weights of the verbs in a workload; at least one is positive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VerbMix {
    /// Indexed like [`Verb::ALL`].
    weights: [f64; 5],
}

/// A mix whose weights are not usable.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum MixError {
    #[error("weight {weight} for {verb}: weights are finite and not negative")]
    BadWeight { verb: &'static str, weight: f64 },
    #[error("every weight is zero: give at least one verb a positive weight")]
    Empty,
}

impl VerbMix {
    /// A mix of `weights`, indexed like [`Verb::ALL`].
    pub fn new(weights: [f64; 5]) -> Result<Self, MixError> {
        for (verb, &weight) in Verb::ALL.iter().zip(&weights) {
            if !weight.is_finite() || weight < 0.0 {
                return Err(MixError::BadWeight {
                    verb: verb.name(),
                    weight,
                });
            }
        }
        if weights.iter().sum::<f64>() <= 0.0 {
            return Err(MixError::Empty);
        }
        Ok(VerbMix { weights })
    }

    /// Draws a verb for every flow, in order, from one stream of `seed`; atomics get
    /// [`ATOMIC_BYTES`].
    pub fn assign(&self, flows: &mut [FlowSpec], seed: u64) {
        let mut rng = stream(seed, Purpose::Verbs, 0);
        let total: f64 = self.weights.iter().sum();
        for flow in flows {
            let mut x = rng.random::<f64>() * total;
            let mut verb = Verb::ALL[0];
            for (&v, &w) in Verb::ALL.iter().zip(&self.weights) {
                if w > 0.0 {
                    verb = v;
                    if x < w {
                        break;
                    }
                    x -= w;
                }
            }
            flow.verb = Some(verb);
            if verb == Verb::Atomic {
                flow.size_bytes = ATOMIC_BYTES;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostIdx;
    use irn_core::Time;

    fn flows(n: usize) -> Vec<FlowSpec> {
        (0..n)
            .map(|i| FlowSpec {
                src: HostIdx(0),
                dst: HostIdx(1),
                size_bytes: 1000 + i as u64,
                start: Time::ZERO,
                class: Default::default(),
                verb: None,
            })
            .collect()
    }

    #[test]
    fn draws_follow_the_weights() {
        let mix = VerbMix::new([2.0, 0.0, 1.0, 1.0, 0.0]).unwrap();
        let mut f = flows(40_000);
        mix.assign(&mut f, 7);
        let count = |v: Verb| f.iter().filter(|f| f.verb == Some(v)).count() as f64 / 40_000.0;
        assert!((count(Verb::Write) - 0.5).abs() < 0.01);
        assert!((count(Verb::Read) - 0.25).abs() < 0.01);
        assert!((count(Verb::Send) - 0.25).abs() < 0.01);
        assert_eq!(count(Verb::WriteImm), 0.0);
        assert_eq!(count(Verb::Atomic), 0.0);
    }

    #[test]
    fn atomics_move_eight_bytes_and_draws_are_deterministic() {
        let mix = VerbMix::new([1.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
        let (mut a, mut b) = (flows(1000), flows(1000));
        mix.assign(&mut a, 3);
        mix.assign(&mut b, 3);
        assert_eq!(a, b);
        assert!(a
            .iter()
            .all(|f| (f.verb == Some(Verb::Atomic)) == (f.size_bytes == ATOMIC_BYTES)));
    }

    #[test]
    fn unusable_weights_are_rejected() {
        assert_eq!(VerbMix::new([0.0; 5]), Err(MixError::Empty));
        assert!(matches!(
            VerbMix::new([1.0, f64::NAN, 0.0, 0.0, 0.0]),
            Err(MixError::BadWeight {
                verb: "write_imm",
                ..
            })
        ));
        assert!(VerbMix::new([1.0, 0.0, -1.0, 0.0, 0.0]).is_err());
    }
}
