//! `[switch] credits` and its `credit_*` keys: InfiniBand credit flow control instead of PFC.
//!
//! ```toml
//! [switch]
//! credits = true
//! credit_window_blocks = 2048  # 64-byte blocks (128 KiB), at most half the counters' modulus
//! credit_counter_bits = 12     # 12 (the standard) to 24
//! credit_interval = "auto"     # a window's time at the link's rate, or a duration
//! credit_update_blocks = 64    # an input's update as soon as this much more credit is free
//! credit_rule = "standard"     # or "pause-equivalent": the inputs [[pause_control]] selects
//!                              # grant, every interval, the interval minus their rule's PAUSE
//! ```

use super::switch::CreditRuleKind;
use super::{
    about, auto_or_at_least, invalid, min_frame_floor, ScenarioError, ScenarioFile,
    SwitchModelKind, SET,
};
use crate::credits::{
    blocks, free_blocks, Counters, CreditConfig, CreditRule, BLOCK_BYTES, MAX_COUNTER_BITS,
    STANDARD_COUNTER_BITS,
};

/// `[switch] credits`, checked against the switch model, PFC and pause control, the buffer and
/// the largest frame; `None` without credits. An interval is at least a minimum frame's time at
/// the slowest link: a port sending its flow-control packets more often than it can serialize
/// them would queue them without end (a "1ps" interval filled 6.7 GB in 25 s).
pub(super) fn build(
    s: &ScenarioFile,
    file: &str,
    topology: &crate::topology::Topology,
    buffer: u64,
    max_frame: u64,
) -> Result<Option<CreditConfig>, ScenarioError> {
    let sw = &s.switch;
    if !sw.credits {
        return no_credit_keys(s, file).map(|()| None);
    }
    let rule = match sw.credit_rule.unwrap_or_default() {
        CreditRuleKind::Standard => CreditRule::Standard,
        CreditRuleKind::PauseEquivalent => CreditRule::PauseEquivalent,
    };
    let conflict = if sw.pfc {
        Some("switch.pfc = true: credits replace PFC; set switch.pfc = false")
    } else if sw.model != SwitchModelKind::InputQueued {
        Some("switch.model = \"shared-buffer\": credits count each input's own buffer; use \"input-queued\"")
    } else if !s.pause_control.is_empty() && rule == CreditRule::Standard {
        Some(
            "[[pause_control]] is set: its inputs would be paused and credit-limited at once; \
             remove it, or set switch.credit_rule = \"pause-equivalent\" to have them grant \
             credit by its rule",
        )
    } else {
        None
    };
    if let Some(why) = conflict {
        return Err(invalid(file, "switch.credits", "true", why));
    }
    if rule == CreditRule::PauseEquivalent && s.pause_control.is_empty() {
        return Err(invalid(
            file,
            "switch.credit_rule",
            "\"pause-equivalent\"",
            "needs a [[pause_control]] entry naming the inputs that grant by it and its rule \
             (ports = \"long-haul\", rule = \"on-off\" or \"time-based\")",
        ));
    }
    let d = CreditConfig::default();
    let counter_bits = sw.credit_counter_bits.unwrap_or(STANDARD_COUNTER_BITS);
    if !(STANDARD_COUNTER_BITS..=MAX_COUNTER_BITS).contains(&counter_bits) {
        return Err(invalid(
            file,
            "switch.credit_counter_bits",
            &counter_bits.to_string(),
            &format!("between {STANDARD_COUNTER_BITS} (the standard) and {MAX_COUNTER_BITS}"),
        ));
    }
    let half = Counters::new(counter_bits).half();
    let frame = blocks(max_frame);
    let window_blocks = sw.credit_window_blocks.unwrap_or(d.window_blocks);
    if window_blocks < frame || window_blocks > half {
        return Err(invalid(
            file,
            "switch.credit_window_blocks",
            &window_blocks.to_string(),
            &format!(
                "between {frame} (the largest frame, {max_frame}B, in 64-byte blocks) and \
                 {half} (half the modulus of {counter_bits}-bit counters; widen \
                 switch.credit_counter_bits for more)"
            ),
        ));
    }
    // An input that cannot hold the largest frame never grants credit for it: a long-haul
    // input too (its own buffer), or nothing crosses the WAN.
    let long = (topology.wan_info()).map(|w| {
        let bytes = w.buffer_bytes();
        (
            bytes,
            "topology.wan.buffer",
            super::switch::long_haul_buffer(s, bytes),
        )
    });
    let inputs = [(buffer, "switch.buffer", format!("{buffer}B"))];
    for (bytes, key, text) in inputs.into_iter().chain(long) {
        if free_blocks(bytes) < frame {
            return Err(invalid(
                file,
                key,
                &text,
                &format!(
                    "with credits, at least {}B: the largest frame ({max_frame}B) in whole \
                     64-byte blocks",
                    u64::from(frame) * BLOCK_BYTES
                ),
            ));
        }
    }
    let update_blocks = sw.credit_update_blocks.unwrap_or(d.update_blocks);
    if update_blocks == 0 {
        return Err(invalid(
            file,
            "switch.credit_update_blocks",
            "0",
            "at least 1 block",
        ));
    }
    let slowest = topology.ports().iter().map(|p| p.rate).min();
    let floor = slowest.map(|rate| min_frame_floor(rate, "the slowest link"));
    let floor = floor.unwrap_or_default();
    let interval = auto_or_at_least(
        file,
        "switch.credit_interval",
        sw.credit_interval.as_deref(),
        (floor.0, &floor.1),
    )?;
    Ok(Some(CreditConfig {
        window_blocks,
        counter_bits,
        interval,
        update_blocks,
        rule,
    }))
}

/// A `credit_interval` longer than the standard allows (the time to send a window at the
/// fastest link's rate) is accepted, for WAN experiments; say so, with the numbers.
pub(super) fn interval_warning(
    credits: Option<&CreditConfig>,
    topology: &crate::topology::Topology,
) -> Option<String> {
    let c = credits?;
    let every = c.interval?;
    let fastest = topology.ports().iter().map(|p| p.rate).max()?;
    let window = fastest.serialization(u64::from(c.window_blocks) * BLOCK_BYTES);
    (every > window).then(|| {
        format!(
            "switch.credit_interval = {every} is longer than the time to send a window of {} \
             blocks at {fastest} ({}), the longest the standard allows between \
             flow-control packets: credit can come late and links idle",
            c.window_blocks,
            about(window)
        )
    })
}

/// Standard credits return a round trip after they are spent, so a link whose round trip
/// holds more than the window (a long-haul link's, with the standard's 128 KiB) carries at
/// most a window per round trip: said, with the worst link's share of its rate. The
/// pause-equivalent rule grants by the buffer instead.
pub(super) fn window_warning(
    credits: Option<&CreditConfig>,
    topology: &crate::topology::Topology,
) -> Option<String> {
    let c = credits.filter(|c| c.rule != CreditRule::PauseEquivalent)?;
    let window = u64::from(c.window_blocks) * BLOCK_BYTES;
    let ports = topology.ports();
    let (share, link) = (ports.iter())
        .filter(|p| topology.kind(ports[p.peer.index()].node) == crate::topology::NodeKind::Switch)
        .map(|p| {
            let bdp = p.rate.bdp_bytes(p.delay * 2);
            (window as f64 / bdp.max(1) as f64, p)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    (share < 1.0).then(|| {
        format!(
            "switch.credit_window_blocks = {} ({window} B) is less than a round trip of the \
             {}, {} link ({} B): credit comes back a round trip after it is spent, so that \
             link carries at most {:.2} % of its rate; raise credit_window_blocks (with \
             credit_counter_bits) or set credit_rule = \"pause-equivalent\"",
            c.window_blocks,
            link.rate,
            about(link.delay),
            link.rate.bdp_bytes(link.delay * 2),
            100.0 * share
        )
    })
}

/// Refuses a `credit_*` key without `credits = true`.
fn no_credit_keys(s: &ScenarioFile, file: &str) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let set = [
        ("credit_window_blocks", sw.credit_window_blocks.is_some()),
        ("credit_counter_bits", sw.credit_counter_bits.is_some()),
        ("credit_interval", sw.credit_interval.is_some()),
        ("credit_update_blocks", sw.credit_update_blocks.is_some()),
        ("credit_rule", sw.credit_rule.is_some()),
    ];
    match set.iter().find(|(_, set)| *set) {
        Some((key, _)) => Err(invalid(
            file,
            &format!("switch.{key}"),
            SET,
            "applies only with switch.credits = true",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::tests::one;

    fn error(toml: &str) -> String {
        match one(toml) {
            Ok(_) => panic!("accepted:\n{toml}"),
            Err(e) => e.to_string(),
        }
    }

    /// The standard window (2,048 blocks, 128 KiB) on a link whose round trip holds more
    /// caps that link at a window a round trip: warned, with the share; a short link, or a
    /// window that covers the round trip, is not (nor the pause-equivalent rule, which grants
    /// by the buffer: `window_warning` skips it).
    #[test]
    fn a_window_short_of_a_round_trip_is_warned() {
        let warned = |delay: &str, keys: &str| {
            let text = format!(
                "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\n\
                 link_delay = \"{delay}\"\n[switch]\ncredits = true\n{keys}"
            );
            let run = one(&text).unwrap();
            (run.warnings.into_iter()).find(|w| w.contains("credit_window_blocks"))
        };
        let w = warned("100us", "").unwrap();
        assert!(
            w.starts_with(
                "switch.credit_window_blocks = 2048 (131072 B) is less than a round trip of the \
                 100Gbps, 100us link (2500000 B): credit comes back a round trip after it is \
                 spent, so that link carries at most 5.24 % of its rate"
            ),
            "{w}"
        );
        assert_eq!(warned("1us", ""), None);
        let wide = "credit_counter_bits = 24\ncredit_window_blocks = 400000\n";
        assert_eq!(warned("100us", wide), None);
    }

    #[test]
    fn credits_resolve_with_the_standard_defaults() {
        let cfg = one("[switch]\ncredits = true\n").unwrap().config;
        let credits = cfg.credits.expect("credits");
        assert_eq!(credits, crate::credits::CreditConfig::default());
        let cfg = one(
            "[switch]\ncredits = true\ncredit_counter_bits = 20\ncredit_window_blocks = 524288\n\
             credit_interval = \"1us\"\ncredit_update_blocks = 8\n",
        )
        .unwrap()
        .config;
        let credits = cfg.credits.expect("credits");
        assert_eq!((credits.counter_bits, credits.window_blocks), (20, 524_288));
        assert_eq!(credits.interval, Some(irn_core::Duration::from_us(1)));
        assert_eq!(credits.update_blocks, 8);
        assert!(one("").unwrap().config.credits.is_none());
        let cfg = one(
            "[switch]\ncredits = true\ncredit_rule = \"pause-equivalent\"\n[[pause_control]]\n\
             ports = \"switch\"\nrule = \"time-based\"\nthreshold = \"10KB\"\nconstant = \"1KB\"\n",
        )
        .unwrap()
        .config;
        let rule = cfg.credits.expect("credits").rule;
        assert_eq!(rule, crate::credits::CreditRule::PauseEquivalent);
        assert!(!cfg.pause_control.is_empty());
    }

    #[test]
    fn an_interval_past_the_standards_warns_with_the_numbers() {
        let warnings = |interval: &str| {
            crate::scenario::tests::one(&format!(
                "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\n\
                 [switch]\ncredits = true\ncredit_interval = \"{interval}\"\n"
            ))
            .unwrap()
            .warnings
        };
        assert!(warnings("10us").is_empty());
        let w = warnings("20us");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "switch.credit_interval = 20us is longer than the time to send a window of 2048 \
                 blocks at 100Gbps (10.5us)"
            ),
            "{}",
            w[0]
        );
    }

    #[test]
    fn bad_credit_settings_name_the_key_and_what_is_allowed() {
        let cases = [
            ("pfc = true\ncredits = true", "switch.credits = true: switch.pfc = true: credits replace PFC"),
            ("model = \"shared-buffer\"\ncredits = true", "use \"input-queued\""),
            ("credit_interval = \"1us\"", "switch.credit_interval is set: applies only with switch.credits = true"),
            ("credits = true\ncredit_counter_bits = 11", "switch.credit_counter_bits = 11: between 12 (the standard) and 24"),
            ("credits = true\ncredit_window_blocks = 2049", "switch.credit_window_blocks = 2049: between 17 (the largest frame, 1086B, in 64-byte blocks) and 2048"),
            ("credits = true\ncredit_window_blocks = 16", "between 17"),
            ("credits = true\nbuffer = \"1086B\"", "switch.buffer = 1086B: with credits, at least 1088B"),
            ("credits = true\ncredit_update_blocks = 0", "switch.credit_update_blocks = 0: at least 1 block"),
            ("credits = true\ncredit_interval = \"0us\"", "switch.credit_interval = \"0us\": \"auto\" or at least 16800ps (16.8ns) (one minimum frame, 64 B + 20 B of preamble and gap, at 40Gbps, the slowest link"),
            ("credits = true\ncredit_interval = \"1ps\"", "switch.credit_interval = \"1ps\": \"auto\" or at least 16800ps"),
            ("credit_rule = \"standard\"", "switch.credit_rule is set: applies only with switch.credits = true"),
            ("credits = true\ncredit_rule = \"pause-equivalent\"", "switch.credit_rule = \"pause-equivalent\": needs a [[pause_control]] entry"),
            ("credits = true\n[[pause_control]]\nports = \"switch\"\nrule = \"on-off\"\nthreshold = 1", "[[pause_control]] is set: its inputs would be paused and credit-limited at once; remove it, or set switch.credit_rule = \"pause-equivalent\""),
            ("credits = true\ncredit_rule = \"pause-equivalent\"\n[[pause_control]]\nports = \"switch\"\nrule = \"threshold\"\nthreshold = \"10KB\"", "pause_control[0].rule = \"threshold\": \"on-off\" or \"time-based\" with switch.credit_rule = \"pause-equivalent\""),
            ("credits = true\ncredit_rule = \"pause-equivalent\"\n[[pause_control]]\nports = \"switch\"\nrule = \"on-off\"\nthreshold = \"10KB\"\ninterval = \"1ms\"", "pause_control[0].interval = \"1ms\": between 16800ps (16.8ns) (one minimum frame, 64 B + 20 B of preamble and gap, at 40Gbps, the port's link: nothing on a link happens more often) and 838848ns (the longest pause at 40Gbps with credit grants)"),
        ];
        for (switch, want) in cases {
            let got = error(&format!("[switch]\n{switch}\n"));
            assert!(got.contains(want), "{switch}:\n{got}\nwanted: {want}");
        }
    }
}
