//! `[transport]`'s go-back-N keys: the loss reactions ConnectX NICs have in lossy mode
//! (`tx_window`, `slow_restart` and its `slow_restart_factor` and `slow_restart_growth`), ns-3's
//! NACK timer (`nack_interval`), and the IRN paper's ACK-less RoCE baseline (`acks`). Each is off
//! when absent, so a scenario without them runs the IRN paper's §2.1 go-back-N.

use irn_core::cc::CcConfig;
use irn_core::transport::{Acks, Growth, LossRecovery, RtoPolicy, SlowRestart, TransportConfig};
use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::super::{
    invalid, min_frame_floor, parse_key, OrderingKind, ScenarioError, ScenarioFile,
};

/// `transport.tx_window`: a packet count, or `"off"` / `"auto"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TxWindow {
    Packets(i64),
    Word(String),
}

/// What the keys set: the fields of [`TransportConfig`] they fill.
pub(super) struct GoBackN {
    pub(super) tx_window: Option<u32>,
    pub(super) slow_restart: Option<SlowRestart>,
    pub(super) nack_interval: Option<Duration>,
    pub(super) acks: Acks,
}

/// Reads and checks the keys against `transport`, the configuration the other keys built;
/// `auto_cap` is the BDP cap the topology gives (`tx_window = "auto"`); `lossy` says why the
/// network loses packets though PFC is on, if it does.
pub(super) fn build(
    s: &ScenarioFile,
    file: &str,
    transport: &TransportConfig,
    auto_cap: u32,
    lossy: Option<&str>,
) -> Result<GoBackN, ScenarioError> {
    let t = &s.transport;
    let go_back_n = transport.recovery == LossRecovery::GoBackN;
    let only_go_back_n = |key: &str, value: &str| {
        invalid(
            file,
            &format!("transport.{key}"),
            value,
            &format!(
                "a go-back-N option (kind = \"roce\" or \"irn-go-back-n\"); kind = \"{}\" \
                 recovers otherwise",
                t.kind.name()
            ),
        )
    };
    let tx_window = match &t.tx_window {
        None => None,
        Some(TxWindow::Word(w)) if w == "off" => None,
        Some(v) if !go_back_n => return Err(only_go_back_n("tx_window", &shown(v))),
        Some(TxWindow::Word(w)) if w == "auto" => Some(auto_cap),
        Some(TxWindow::Packets(n)) if (1..=i64::from(TransportConfig::MAX_WINDOW)).contains(n) => {
            Some(*n as u32)
        }
        Some(v) => {
            return Err(invalid(
                file,
                "transport.tx_window",
                &shown(v),
                &format!(
                    "\"off\", \"auto\" (the BDP cap, {auto_cap} packets here) or a packet count \
                     from 1 to {}",
                    TransportConfig::MAX_WINDOW
                ),
            ))
        }
    };
    let slow_restart = slow_restart(s, file, go_back_n, tx_window.or(transport.bdp_cap))?;
    let nack_interval = match t.nack_interval.as_deref() {
        None | Some("off") => None,
        Some(v) if !go_back_n => return Err(only_go_back_n("nack_interval", &format!("{v:?}"))),
        // A receiver NACKs at most once per interval: no more often than a frame can leave.
        Some(v) => {
            let (floor, why) = min_frame_floor(transport.line_rate, "the hosts' line rate");
            match parse_key::<Duration>(file, "transport.nack_interval", v)? {
                d if d < floor => {
                    return Err(invalid(
                        file,
                        "transport.nack_interval",
                        &format!("{v:?}"),
                        &format!("\"off\" or at least {} ({why})", super::super::shown(floor)),
                    ))
                }
                d => Some(d),
            }
        }
    };
    let acks = match t.acks.as_deref() {
        None | Some("every-packet") => Acks::EveryPacket,
        Some("none") => {
            no_acks(s, file, (transport, tx_window), lossy)?;
            Acks::None
        }
        Some(v) => {
            return Err(invalid(
                file,
                "transport.acks",
                &format!("{v:?}"),
                "\"every-packet\" or \"none\"",
            ))
        }
    };
    Ok(GoBackN {
        tx_window,
        slow_restart,
        nack_interval,
        acks,
    })
}

/// `transport.slow_restart` with its factor and growth; `window` is the window it would cut
/// (the transmit window, else the BDP cap).
fn slow_restart(
    s: &ScenarioFile,
    file: &str,
    go_back_n: bool,
    window: Option<u32>,
) -> Result<Option<SlowRestart>, ScenarioError> {
    let t = &s.transport;
    if t.slow_restart != Some(true) {
        let set = [
            (
                "slow_restart_factor",
                t.slow_restart_factor.map(crate::scenario::real),
            ),
            (
                "slow_restart_growth",
                t.slow_restart_growth.as_ref().map(|g| format!("{g:?}")),
            ),
        ];
        if let Some((key, Some(v))) = set.into_iter().find(|(_, v)| v.is_some()) {
            return Err(invalid(
                file,
                &format!("transport.{key}"),
                &v,
                "applies only with transport.slow_restart = true",
            ));
        }
        return Ok(None);
    }
    if !go_back_n {
        return Err(invalid(
            file,
            "transport.slow_restart",
            "true",
            &format!(
                "a go-back-N option (kind = \"roce\" or \"irn-go-back-n\"); kind = \"{}\" \
                 recovers otherwise",
                t.kind.name()
            ),
        ));
    }
    if window.is_none() {
        return Err(invalid(
            file,
            "transport.slow_restart",
            "true",
            "slow restart cuts and regrows a window, and this sender has none: set \
             transport.tx_window = \"auto\" (the BDP cap) or a packet count",
        ));
    }
    let factor = t.slow_restart_factor.unwrap_or(SlowRestart::DEFAULT.factor);
    if !(factor > 0.0 && factor < 1.0) {
        return Err(invalid(
            file,
            "transport.slow_restart_factor",
            &crate::scenario::real(factor),
            "a fraction above 0 and below 1 (the window after a loss is that much of it)",
        ));
    }
    let growth = match t.slow_restart_growth.as_deref() {
        None | Some("additive") => Growth::Additive,
        Some("slow-start") => Growth::SlowStart,
        Some(v) => return Err(invalid(
            file,
            "transport.slow_restart_growth",
            &format!("{v:?}"),
            "\"additive\" (+1 packet per round trip) or \"slow-start\" (doubling per round trip)",
        )),
    };
    Ok(Some(SlowRestart { factor, growth }))
}

/// `acks = "none"` only where nothing waits for an ACK.
fn no_acks(
    s: &ScenarioFile,
    file: &str,
    (transport, tx_window): (&TransportConfig, Option<u32>),
    lossy: Option<&str>,
) -> Result<(), ScenarioError> {
    let why = if transport.recovery != LossRecovery::GoBackN {
        Some(format!(
            "kind = \"{}\" needs ACKs; only go-back-N (kind = \"roce\") can run without",
            s.transport.kind.name()
        ))
    } else if !(s.switch.pfc || s.switch.credits) {
        Some("a network without PFC (or credits) loses packets, and only ACKs tell the sender they arrived: set switch.pfc = true".into())
    } else if let Some(lossy) = lossy.filter(|_| transport.rto != RtoPolicy::Disabled) {
        Some(format!(
            "the network loses packets though PFC is on ({lossy}), and only ACKs tell the \
             sender which arrived: without ACKs a loss is never recovered"
        ))
    } else if transport.rto != RtoPolicy::Disabled {
        Some("timeouts are on, and a sender without ACKs would time out on every message: the network must be lossless and in order (PFC, no per-packet load balancing), with transport.timeouts \"auto\" or \"off\"".into())
    } else if tx_window.is_some() || transport.bdp_cap.is_some() {
        Some("a transmit window (or BDP-FC) waits for ACKs to open: leave tx_window \"off\"".into())
    } else if matches!(
        transport.cc,
        CcConfig::Timely(_)
            | CcConfig::Dctcp(_)
            | CcConfig::Aimd(_)
            | CcConfig::Hpcc(_)
            | CcConfig::Swift(_)
            | CcConfig::Powertcp(_)
    ) {
        Some("Timely, DCTCP, AIMD, HPCC, Swift and PowerTCP are clocked by ACKs; without them use cc = \"none\" or \"dcqcn\"".into())
    } else if s.ordering.kind != OrderingKind::None {
        Some("an [ordering] layer answers with SACKs and replays with an ACK: use ordering.kind = \"none\"".into())
    } else if s.workload.verbs.is_some() {
        Some("verbs (workload.verbs) complete on ACKs and read responses: use message flows".into())
    } else {
        None
    };
    match why {
        Some(why) => Err(invalid(file, "transport.acks", "\"none\"", &why)),
        None => Ok(()),
    }
}

/// A `tx_window` value as the scenario wrote it.
fn shown(v: &TxWindow) -> String {
    match v {
        TxWindow::Packets(n) => n.to_string(),
        TxWindow::Word(w) => format!("{w:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tests::one;

    fn transport(keys: &str) -> Result<TransportConfig, String> {
        one(&format!("[transport]\nkind = \"roce\"\n{keys}"))
            .map(|r| r.config.transport)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn keys_resolve_and_default_to_section_2_1() {
        let plain = transport("").unwrap();
        assert_eq!(
            (
                plain.tx_window,
                plain.slow_restart,
                plain.nack_interval,
                plain.acks
            ),
            (None, None, None, Acks::EveryPacket)
        );
        assert_eq!(transport("tx_window = \"off\"\n"), Ok(plain));
        // "auto" is the cap IRN's BDP-FC would use on this topology.
        let cap = one("[transport]\nkind = \"irn\"\n")
            .unwrap()
            .config
            .transport
            .bdp_cap;
        assert_eq!(transport("tx_window = \"auto\"\n").unwrap().tx_window, cap);
        let t = transport(
            "tx_window = 16\nslow_restart = true\nslow_restart_factor = 0.25\n\
             slow_restart_growth = \"slow-start\"\nnack_interval = \"4us\"\n",
        )
        .unwrap();
        assert_eq!(t.tx_window, Some(16));
        assert_eq!(
            t.slow_restart,
            Some(SlowRestart {
                factor: 0.25,
                growth: Growth::SlowStart
            })
        );
        assert_eq!(t.nack_interval, Some(Duration::from_us(4)));
        let t = transport("tx_window = 16\nslow_restart = true\n").unwrap();
        assert_eq!(t.slow_restart, Some(SlowRestart::DEFAULT));
        // IRN's go-back-N variant has a window already: its BDP cap.
        let gbn = one("[transport]\nkind = \"irn-go-back-n\"\nslow_restart = true\n").unwrap();
        assert_eq!(
            gbn.config.transport.slow_restart,
            Some(SlowRestart::DEFAULT)
        );
        let t = one(
            "[switch]\npfc = true\n[transport]\nkind = \"roce\"\nacks = \"none\"\ncc = \"dcqcn\"\n",
        )
        .unwrap()
        .config
        .transport;
        assert_eq!((t.acks, t.rto), (Acks::None, RtoPolicy::Disabled));
    }

    #[test]
    fn bad_values_and_combinations_are_refused() {
        let pfc = "[switch]\npfc = true\n";
        let cases = [
            ("", "tx_window = 0\n", "transport.tx_window = 0: \"off\", \"auto\" (the BDP cap, 110 packets here) or a packet count from 1 to 4194304"),
            ("", "tx_window = \"on\"\n", "transport.tx_window = \"on\": \"off\", \"auto\""),
            ("", "kind = \"irn\"\ntx_window = 8\n", "transport.tx_window = 8: a go-back-N option (kind = \"roce\" or \"irn-go-back-n\"); kind = \"irn\" recovers otherwise"),
            ("", "slow_restart = true\n", "transport.slow_restart = true: slow restart cuts and regrows a window, and this sender has none: set transport.tx_window"),
            ("", "slow_restart_factor = 0.5\n", "transport.slow_restart_factor = 0.5: applies only with transport.slow_restart = true"),
            ("", "tx_window = 8\nslow_restart = true\nslow_restart_factor = 1.0\n", "transport.slow_restart_factor = 1: a fraction above 0 and below 1"),
            ("", "tx_window = 8\nslow_restart = true\nslow_restart_growth = \"cubic\"\n", "transport.slow_restart_growth = \"cubic\": \"additive\""),
            ("", "nack_interval = \"0us\"\n", "transport.nack_interval = \"0us\": \"off\" or at least 16800ps (16.8ns) (one minimum frame, 64 B + 20 B of preamble and gap, at 40Gbps, the hosts' line rate"),
            ("", "nack_interval = \"1ps\"\n", "transport.nack_interval = \"1ps\": \"off\" or at least 16800ps"),
            ("", "kind = \"tcp\"\nnack_interval = \"4us\"\n", "transport.nack_interval = \"4us\": a go-back-N option"),
            ("", "acks = \"some\"\n", "transport.acks = \"some\": \"every-packet\" or \"none\""),
            ("", "acks = \"none\"\n", "transport.acks = \"none\": a network without PFC (or credits) loses packets"),
            (pfc, "acks = \"none\"\ntimeouts = \"on\"\n", "transport.acks = \"none\": timeouts are on"),
            ("[topology]\nloss_rate = 0.001\n[switch]\npfc = true\n", "acks = \"none\"\n", "transport.acks = \"none\": the network loses packets though PFC is on (lossy links lose packets on the wire), and only ACKs tell the sender which arrived"),
            (pfc, "acks = \"none\"\ntx_window = 8\n", "transport.acks = \"none\": a transmit window (or BDP-FC) waits for ACKs"),
            (pfc, "acks = \"none\"\ncc = \"timely\"\n", "transport.acks = \"none\": Timely, DCTCP, AIMD, HPCC, Swift and PowerTCP are clocked by ACKs"),
            (pfc, "kind = \"irn\"\nacks = \"none\"\n", "transport.acks = \"none\": kind = \"irn\" needs ACKs"),
            ("[ordering]\nkind = \"ideal\"\n[switch]\npfc = true\n", "acks = \"none\"\n", "transport.acks = \"none\": an [ordering] layer"),
        ];
        for (before, keys, want) in cases {
            let text = format!("{before}[transport]\nkind = \"roce\"\n{keys}");
            // `kind` given twice: the case's own wins.
            let text = if keys.starts_with("kind") {
                format!("{before}[transport]\n{keys}")
            } else {
                text
            };
            let err = one(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{keys:?}: {err}");
        }
    }
}
