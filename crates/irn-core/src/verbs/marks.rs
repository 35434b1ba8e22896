//! ECN at a verbs receive half (the responder for requests, the requester for responses): echo
//! a CE mark in the (read) ACK the packet triggers, for DCTCP-style controllers, and under DCQCN
//! pace CNPs back to the sender of marked packets — the notification point of a RoCE NIC, one
//! per packet space.

use super::packet::{Opcode, VerbsPacket};
use crate::cc::{CcConfig, CnpPacer};
use crate::packet::{Echo, Ecn, Qpn};
use crate::time::Time;
use crate::transport::TransportConfig;

#[derive(Debug, Clone)]
pub(super) struct MarkEcho {
    cnp: Option<CnpPacer>,
}

impl MarkEcho {
    pub fn new(cfg: &TransportConfig) -> Self {
        MarkEcho {
            cnp: match cfg.cc {
                CcConfig::Dcqcn(p) => Some(CnpPacer::new(p.cnp_interval)),
                _ => None,
            },
        }
    }

    /// The echo a reply to `pkt` carries: its timestamp and whether it was CE-marked.
    pub fn echo(pkt: &VerbsPacket) -> Echo {
        Echo {
            ts: pkt.ts,
            ece: pkt.ecn == Ecn::Ce,
        }
    }

    /// A packet that was not discarded arrived at `now`: counts its mark in `marked`, and returns
    /// the CNP (`opcode`, to `peer`) to send now if one is due, counted in `cnps`. Called only
    /// after the packet has been checked, so a malformed packet (one dropped as if it had not
    /// arrived) never paces a CNP.
    pub fn on_accepted(
        &mut self,
        now: Time,
        pkt: &VerbsPacket,
        (peer, opcode): (Qpn, Opcode),
        marked: &mut u64,
        cnps: &mut u64,
    ) -> Option<VerbsPacket> {
        let ece = pkt.ecn == Ecn::Ce;
        *marked += u64::from(ece);
        let cnp = ece && self.cnp.as_mut().is_some_and(|c| c.on_marked(now));
        *cnps += u64::from(cnp);
        cnp.then(|| VerbsPacket::cnp(peer, opcode))
    }
}
