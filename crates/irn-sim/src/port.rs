//! An egress port and the link leaving it.
//!
//! A port serializes one packet at a time; the packet then propagates along the link. Packets
//! on a link arrive in the order they left, so the link is a FIFO and only its head's arrival
//! is ever scheduled.

use irn_core::{Bandwidth, Duration, Time};

use crate::packets::Fifo;

/// Dynamic state of one port (its static description is `topology::Port`).
#[derive(Debug)]
pub struct PortState {
    /// Serializing a packet until then.
    pub busy_until: Time,
    /// When the pending `TxDone` is due, if one is: set while the port has more to send after
    /// its current packet. Ports that go idle after a packet schedule nothing, which saves an
    /// event per packet on every uncongested port. A `TxDone` at another time is stale.
    pub wake_at: Option<Time>,
    /// Data is paused by the peer's PFC (control packets still go).
    pub paused: bool,
    pub paused_since: Time,
    pub paused_total: Duration,
    /// Packets propagating on the link, with their arrival times (non-decreasing), in the
    /// simulation's pool of link nodes.
    pub in_flight: Fifo,
    /// Picoseconds per byte when the rate divides 8 Tb/s evenly (every common rate does); saves
    /// a 128-bit division per packet.
    ps_per_byte: Option<u64>,
    rate: Bandwidth,
    pub bytes_sent: u64,
    pub pause_frames_sent: u64,
}

impl PortState {
    pub fn new(rate: Bandwidth) -> Self {
        let ps_per_bit_x8 = 8 * 1_000_000_000_000u64;
        let ps_per_byte =
            (ps_per_bit_x8 % rate.as_bps() == 0).then(|| ps_per_bit_x8 / rate.as_bps());
        PortState {
            busy_until: Time::ZERO,
            wake_at: None,
            paused: false,
            paused_since: Time::ZERO,
            paused_total: Duration::ZERO,
            in_flight: Fifo::default(),
            ps_per_byte,
            rate,
            bytes_sent: 0,
            pause_frames_sent: 0,
        }
    }

    /// Time to serialize `bytes` on this port.
    pub fn serialization(&self, bytes: u32) -> Duration {
        match self.ps_per_byte {
            Some(ps) => Duration::from_ps(u64::from(bytes) * ps),
            None => self.rate.serialization(u64::from(bytes)),
        }
    }

    /// Record a pause or resume received from the peer at `now`.
    pub fn set_paused(&mut self, now: Time, pause: bool) {
        if pause && !self.paused {
            self.paused_since = now;
        } else if !pause && self.paused {
            self.paused_total = self.paused_total + (now - self.paused_since);
        }
        self.paused = pause;
    }

    /// Paused time including a pause still in force at `now`.
    pub fn paused_until(&self, now: Time) -> Duration {
        if self.paused {
            self.paused_total + now.saturating_since(self.paused_since)
        } else {
            self.paused_total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_serialization_matches_the_exact_one() {
        for gbps in [10, 25, 40, 100, 400] {
            let p = PortState::new(Bandwidth::from_gbps(gbps));
            assert!(p.ps_per_byte.is_some());
            for bytes in [64, 1086, 1102] {
                assert_eq!(
                    p.serialization(bytes),
                    Bandwidth::from_gbps(gbps).serialization(u64::from(bytes))
                );
            }
        }
        let odd = PortState::new(Bandwidth::from_bps(3));
        assert_eq!(
            odd.serialization(1),
            Bandwidth::from_bps(3).serialization(1)
        );
    }

    #[test]
    fn paused_time_accumulates() {
        let mut p = PortState::new(Bandwidth::from_gbps(40));
        p.set_paused(Time::from_ps(10), true);
        p.set_paused(Time::from_ps(15), true); // repeated pause: no restart
        assert_eq!(p.paused_until(Time::from_ps(20)), Duration::from_ps(10));
        p.set_paused(Time::from_ps(30), false);
        p.set_paused(Time::from_ps(40), false);
        assert_eq!(p.paused_until(Time::from_ps(100)), Duration::from_ps(20));
    }
}
