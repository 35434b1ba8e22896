//! An egress port and the link leaving it.
//!
//! A port serializes one packet at a time; the packet then propagates along the link. Packets
//! on a link arrive in the order they left, so the link is a FIFO and only its head's arrival
//! is ever scheduled (htsim's rule: one pending event per busy link, however long the link).
//!
//! Everything the packet path reads or writes about a port sits in one cache line ([`Port`]):
//! where it is, where its link goes, its delay, its packets in flight, and whether it is busy or
//! paused. What only PFC frames or odd link rates touch lives apart ([`PortExtra`]).

use irn_core::{Bandwidth, Duration, Time};

use crate::ids::{HostIdx, PortId};
use crate::packets::Fifo;
use crate::pause::PauseFrames;

/// The node a port belongs to, as its index among hosts or among switches, in four bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner(u32);

/// [`Owner`], unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerKind {
    Host(HostIdx),
    Switch(usize),
}

impl Owner {
    const SWITCH: u32 = 1 << 31;

    pub fn host(h: HostIdx) -> Self {
        debug_assert!(h.0 < Self::SWITCH);
        Owner(h.0)
    }

    pub fn switch(s: usize) -> Self {
        debug_assert!((s as u32) < Self::SWITCH);
        Owner(s as u32 | Self::SWITCH)
    }

    #[inline(always)]
    pub fn kind(self) -> OwnerKind {
        if self.0 & Self::SWITCH == 0 {
            OwnerKind::Host(HostIdx(self.0))
        } else {
            OwnerKind::Switch((self.0 & !Self::SWITCH) as usize)
        }
    }
}

/// One egress port: its place in the topology and its dynamic state, in one cache line.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub struct Port {
    /// Serializing a packet until then.
    pub busy_until: Time,
    /// When the pending `TxDone` is due, or [`Port::NO_WAKE`]: set while the port has more to
    /// send after its current packet. Ports that go idle after a packet schedule nothing, which
    /// saves an event per packet on every uncongested port. A `TxDone` at another time is
    /// stale.
    pub wake_at: Time,
    /// The link's propagation delay.
    pub delay: Duration,
    /// Picoseconds per byte when the rate divides 8 Tb/s evenly and is at least 2 kb/s (every
    /// common rate is; 0 otherwise, and [`PortExtra::rate`] gives the exact time): saves a
    /// 128-bit division per packet.
    ps_per_byte: u32,
    pub bytes_sent: u64,
    /// Packets propagating on the link, in the packet slab; each knows when the one behind it
    /// arrives.
    pub in_flight: Fifo,
    /// The port at the other end of the link.
    pub peer: PortId,
    /// Its node; the node's id (for reports) is the topology's (`Topology::ports`).
    pub owner: Owner,
    /// This port's number on its node (switches have at most `MAX_SWITCH_PORTS` ports).
    pub local: u16,
    /// Data is paused by the peer's PFC, or waits for credit (control packets still go).
    pub paused: bool,
    /// Credit flow control's roles ([`Port::SENDS_ON_CREDIT`], [`Port::SENDS_ON_GRANT`],
    /// [`Port::FREES_CREDIT`]); 0 without credits, so the packet path tests one byte of this
    /// line and goes on.
    pub credit: u8,
    /// The peer's node and local number, so an arrival is handled without loading the peer's
    /// line.
    pub peer_owner: Owner,
    pub peer_local: u16,
}

const _: () = assert!(std::mem::size_of::<Port>() == 64);

impl Port {
    /// How long after `t` the port is still serializing its current packet: zero for an idle
    /// port and for one whose link failed (`busy_until` at [`Time::MAX`]: what it was sending
    /// is lost, and counted as sent).
    pub fn sending_after(&self, t: Time) -> irn_core::Duration {
        if self.busy_until == Time::MAX {
            irn_core::Duration::ZERO
        } else {
            self.busy_until.saturating_since(t)
        }
    }

    /// No `TxDone` is pending.
    pub const NO_WAKE: Time = Time::MAX;

    /// [`Port::credit`]: the port's link ends at a credit-limited switch input.
    pub const SENDS_ON_CREDIT: u8 = 1;

    /// [`Port::credit`]: the port is a switch's, whose inputs are credit-limited: a data packet
    /// it sends frees credit at the input it came from.
    pub const FREES_CREDIT: u8 = 2;

    /// [`Port::credit`]: the port's link ends at a switch input that grants credit by the
    /// pause-equivalent rule (`[switch] credit_rule`): it spends a byte allowance that each
    /// grant replaces, and keeps no counters.
    pub const SENDS_ON_GRANT: u8 = 4;

    /// Port `local` of the node owned by `owner`, whose link leads to `peer`: the far port, its
    /// node's owner and its local number there.
    pub fn new(
        owner: Owner,
        local: usize,
        peer: (PortId, Owner, usize),
        rate: Bandwidth,
        delay: Duration,
    ) -> Self {
        let (peer, peer_owner, peer_local) = peer;
        const PS_PER_BYTE_AT_1BPS: u64 = 8 * 1_000_000_000_000;
        let ps_per_byte = if PS_PER_BYTE_AT_1BPS.is_multiple_of(rate.as_bps()) {
            u32::try_from(PS_PER_BYTE_AT_1BPS / rate.as_bps()).unwrap_or(0)
        } else {
            0
        };
        Port {
            busy_until: Time::ZERO,
            wake_at: Self::NO_WAKE,
            delay,
            ps_per_byte,
            bytes_sent: 0,
            in_flight: Fifo::default(),
            peer,
            owner,
            local: u16::try_from(local).expect("nodes have at most MAX_SWITCH_PORTS ports"),
            paused: false,
            credit: 0,
            peer_owner,
            peer_local: u16::try_from(peer_local)
                .expect("nodes have at most MAX_SWITCH_PORTS ports"),
        }
    }

    /// Time to serialize `bytes` on this port, whose [`PortExtra`] is `extra` (read only for a
    /// rate that does not divide 8 Tb/s).
    #[inline(always)]
    pub fn serialization(&self, bytes: u32, extra: &PortExtra) -> Duration {
        if self.ps_per_byte != 0 {
            Duration::from_ps(u64::from(bytes) * u64::from(self.ps_per_byte))
        } else {
            exact_serialization(bytes, extra)
        }
    }
}

#[cold]
fn exact_serialization(bytes: u32, extra: &PortExtra) -> Duration {
    extra.rate.serialization(u64::from(bytes))
}

/// What the packet path rarely needs about a port: its exact rate (for rates that do not divide
/// 8 Tb/s) and how long it has been paused (PAUSE frames only).
#[derive(Debug, Clone, Copy)]
pub struct PortExtra {
    pub rate: Bandwidth,
    pub pauses: PauseLog,
}

impl PortExtra {
    pub fn new(rate: Bandwidth) -> Self {
        PortExtra {
            rate,
            pauses: PauseLog::default(),
        }
    }
}

/// A port's pause timers and the PFC frames its switch input sends: touched by PAUSE frames
/// alone, so kept apart from [`PortExtra`], which a packet's serialization may read.
#[derive(Debug, Clone, Copy)]
pub struct PauseTimers {
    /// When the pause in force on this port runs out: [`Time::MAX`] for none or one without a
    /// timer. A `PauseEnd` at another time is stale (a newer frame overrode the timer).
    pub pause_until: Time,
    /// When this port's switch input refreshes its timed PAUSE upstream, or [`Time::MAX`]: a
    /// `PauseRefresh` at another time is stale (the input resumed, or paused again since).
    pub refresh_at: Time,
    /// The PFC frames this port's switch input sends upstream: `[switch] pfc_frames`, or its
    /// `[[pause_control]]` threshold rule's.
    pub frames: PauseFrames,
}

impl PauseTimers {
    pub fn new(frames: PauseFrames) -> Self {
        PauseTimers {
            pause_until: Time::MAX,
            refresh_at: Time::MAX,
            frames,
        }
    }
}

/// How long a port has been paused, and the PAUSE frames it sent and received: counted here,
/// where only PFC frames reach, so `[monitor]` reads them per port at no cost to data packets.
#[derive(Debug, Clone, Copy, Default)]
pub struct PauseLog {
    since: Time,
    total: Duration,
    /// PAUSE frames this port sent to its peer (for its node's input behind it)...
    pub sent: u64,
    /// ...and received from it.
    pub received: u64,
    /// The pause times of the frames it sent, in quanta, summed (an XOFF without a time adds
    /// none): what its pause control asked of the sender, the NRL slides' "pause to source".
    pub quanta_sent: u64,
}

impl PauseLog {
    /// Record a pause or resume received at `now` by a port that was `paused` before it.
    pub fn record(&mut self, now: Time, paused: bool, pause: bool) {
        self.received += u64::from(pause);
        self.hold(now, paused, pause);
    }

    /// Record a port that was `paused` stopping (`pause`) or going on at `now` without a frame:
    /// a port waiting for credit.
    pub fn hold(&mut self, now: Time, paused: bool, pause: bool) {
        if pause && !paused {
            self.since = now;
        } else if !pause && paused {
            self.total = self.total + (now - self.since);
        }
    }

    /// Paused time including a pause still in force (`paused`) at `now`.
    pub fn until(&self, now: Time, paused: bool) -> Duration {
        if paused {
            self.total + now.saturating_since(self.since)
        } else {
            self.total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(rate: Bandwidth) -> (Port, PortExtra) {
        let port = Port::new(
            Owner::switch(3),
            2,
            (PortId(1), Owner::switch(4), 0),
            rate,
            Duration::from_us(1),
        );
        (port, PortExtra::new(rate))
    }

    #[test]
    fn fast_path_serialization_matches_the_exact_one() {
        for gbps in [10, 25, 40, 100, 400] {
            let (p, extra) = port(Bandwidth::from_gbps(gbps));
            assert!(p.ps_per_byte != 0);
            for bytes in [64, 1086, 1102] {
                assert_eq!(
                    p.serialization(bytes, &extra),
                    Bandwidth::from_gbps(gbps).serialization(u64::from(bytes))
                );
            }
        }
        // A rate that does not divide 8 Tb/s, and one too slow for the 32-bit fast path.
        for bps in [3, 1000] {
            let (slow, extra) = port(Bandwidth::from_bps(bps));
            assert_eq!(slow.ps_per_byte, 0);
            assert_eq!(
                slow.serialization(1, &extra),
                Bandwidth::from_bps(bps).serialization(1)
            );
        }
        let (kbps2, _) = port(Bandwidth::from_bps(2000));
        assert_eq!(kbps2.ps_per_byte, 4_000_000_000);
    }

    #[test]
    fn owners_pack_into_four_bytes() {
        assert_eq!(Owner::host(HostIdx(7)).kind(), OwnerKind::Host(HostIdx(7)));
        assert_eq!(Owner::switch(0).kind(), OwnerKind::Switch(0));
        assert_eq!(Owner::switch(12345).kind(), OwnerKind::Switch(12345));
    }

    #[test]
    fn paused_time_accumulates() {
        let mut log = PauseLog::default();
        let mut paused = false;
        let mut set = |log: &mut PauseLog, at: u64, pause: bool| {
            log.record(Time::from_ps(at), paused, pause);
            paused = pause;
        };
        set(&mut log, 10, true);
        set(&mut log, 15, true); // repeated pause: no restart
        assert_eq!(log.until(Time::from_ps(20), true), Duration::from_ps(10));
        set(&mut log, 30, false);
        set(&mut log, 40, false);
        assert_eq!(log.until(Time::from_ps(100), false), Duration::from_ps(20));
        assert_eq!(log.received, 2);
    }
}
