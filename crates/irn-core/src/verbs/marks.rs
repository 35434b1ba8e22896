//! ECN at a verbs receive half (the responder for requests, the requester for responses): echo
//! a CE mark in the (read) ACK the packet triggers, for DCTCP-style controllers, and under DCQCN
//! pace CNPs back to the sender of marked packets — the notification point of a RoCE NIC, one
//! per packet space.

use super::packet::VerbsPacket;
use crate::cc::{CcConfig, CnpPacer};
use crate::packet::{Echo, Ecn};
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

    /// The echo for a request or response arriving at `now`, and whether a CNP must go back now.
    pub fn on_arrival(&mut self, now: Time, pkt: &VerbsPacket) -> (Echo, bool) {
        let ece = pkt.ecn == Ecn::Ce;
        let cnp = ece && self.cnp.as_mut().is_some_and(|c| c.on_marked(now));
        (Echo { ts: pkt.ts, ece }, cnp)
    }
}
