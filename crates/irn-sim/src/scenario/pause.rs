//! `[[pause_control]]` (switch inputs that send PAUSE frames by a rule of their own: the WAN's
//! receiving ends) and `[pauses]` (hosts that pause their switch at random, the NRL slides'
//! "end cluster"). See `crate::pause`.
//!
//! ```toml
//! [[pause_control]]
//! ports = "long-haul"    # whose inputs: [monitor]-style switch-port selectors (the default:
//!                        # both ends of every long-haul link of a `wan` topology)
//! rule = "time-based"    # "none" (never pause), "threshold", "on-off" or "time-based"
//! threshold = 5          # a size ("21MB") or a number of longest pauses' worth of data
//! height = 110           # time-based: the buffer height (default: the input's buffer)
//! constant = 2           # time-based: the characteristic constant (required)
//! interval = "auto"      # on-off, time-based: how often (auto: the longest pause)
//! resume = "auto"        # threshold: XON below this (auto: threshold − 2 frames)
//! frames = "timed"       # threshold: "xoff-xon" or "timed" (default: switch.pfc_frames)
//!
//! [pauses]
//! hosts = [1]
//! gap = ["0ms", "20ms"]  # uniform, between one pause's end and the next's start (or "5ms")
//! length = ["0ms", "10ms"]
//! start = "0ms"
//! ```
//!
//! The slides count data in *longest pauses*: what a link sends during 65,535 quanta, which is
//! 65,535 × 64 B = 4,194,240 B at every rate; a number here means that many of them.

use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::monitor::{select, PortSelection};
use super::switch::PfcFramesKind;
use super::{
    about, duration_in, invalid, min_frame_floor, parse_key, shown, ScenarioError, ScenarioFile,
    SET,
};
use crate::config::SwitchModel;
use crate::ids::HostIdx;
use crate::pause::{
    quanta_time, ControlLoop, PauseControl, PauseFrames, PauseRule, PauseSourceConfig, MAX_QUANTA,
};
use crate::topology::{NodeKind, Topology};
use crate::units::Bytes;

/// Bytes a link sends during the longest pause, at any rate: 65,535 quanta of 512 bits.
pub const LONGEST_PAUSE_BYTES: u64 = MAX_QUANTA as u64 * crate::pause::QUANTUM_BITS / 8;

/// One `[[pause_control]]` entry as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseControlSection {
    /// Default `"long-haul"`: both ends of every long-haul link.
    #[serde(default = "long_haul")]
    pub ports: PortSelection,
    pub rule: RuleKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Level>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<Level>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<Level>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Level>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<PfcFramesKind>,
}

fn long_haul() -> PortSelection {
    PortSelection::One("long-haul".into())
}

/// `pause_control.rule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleKind {
    /// Never pause: the input drops when full.
    None,
    Threshold,
    OnOff,
    TimeBased,
}

impl RuleKind {
    /// As the scenario writes it.
    fn name(self) -> &'static str {
        match self {
            RuleKind::None => "none",
            RuleKind::Threshold => "threshold",
            RuleKind::OnOff => "on-off",
            RuleKind::TimeBased => "time-based",
        }
    }
}

/// An amount of buffered data: a size, or a number of longest pauses' worth.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Level {
    Pauses(f64),
    Size(String),
}

/// `[pauses]` as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PausesSection {
    pub hosts: Vec<u32>,
    pub gap: Span,
    pub length: Span,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

/// A fixed duration or a uniform range `[low, high]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Span {
    Fixed(String),
    Uniform(Vec<String>),
}

impl Span {
    /// As the scenario writes it: `"5ms"` or `["0ms", "20ms"]`.
    fn written(&self) -> String {
        match self {
            Span::Fixed(d) => format!("{d:?}"),
            Span::Uniform(r) => format!("{r:?}"),
        }
    }
}

/// `[[pause_control]]` resolved.
#[derive(Debug, Default)]
pub(super) struct Controls {
    pub(super) controls: Vec<PauseControl>,
    /// Inputs whose buffer is below what their rule needs when the sink stops, and time-based
    /// loops that swing.
    pub(super) warnings: Vec<String>,
    /// Why a rule can drop packets (then timeouts must stay on), if one can.
    pub(super) drops: Option<String>,
}

/// `[[pause_control]]`, resolved against the topology and the switches' buffers. With
/// `grants` (`switch.credit_rule = "pause-equivalent"`) its inputs grant credit by their rule
/// instead of pausing: the rule must be periodic and its interval at most the longest pause
/// (the slides: credit at least as often as the largest grant takes to send; a grant is then
/// at most 65,535 blocks).
pub(super) fn controls(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
    (buffer, model): (u64, SwitchModel),
    max_frame: u64,
    grants: bool,
) -> Result<Controls, ScenarioError> {
    if s.pause_control.is_empty() {
        return Ok(Controls::default());
    }
    if model != SwitchModel::InputQueued {
        return Err(invalid(
            file,
            "pause_control",
            SET,
            "pause control needs switch.model = \"input-queued\": it watches one input's own buffer",
        ));
    }
    let mut out: Vec<PauseControl> = Vec::new();
    let mut warnings = Vec::new();
    let mut drops = None;
    for (n, c) in s.pause_control.iter().enumerate() {
        let key = |k: &str| format!("pause_control[{n}].{k}");
        if grants && !matches!(c.rule, RuleKind::OnOff | RuleKind::TimeBased) {
            return Err(invalid(
                file,
                &key("rule"),
                &format!("{:?}", c.rule.name()),
                "\"on-off\" or \"time-based\" with switch.credit_rule = \"pause-equivalent\": \
                 its inputs grant credit every interval by the rule's PAUSE",
            ));
        }
        let mut ports = Vec::new();
        let selectors: &[String] = match &c.ports {
            PortSelection::One(one) => std::slice::from_ref(one),
            PortSelection::Many(many) => many,
        };
        for sel in selectors {
            select(topology, sel, &mut ports)
                .map_err(|allowed| invalid(file, &key("ports"), &format!("{sel:?}"), &allowed))?;
        }
        ports.sort_unstable();
        ports.dedup();
        if ports.is_empty() {
            let written = written_ports(&c.ports);
            return Err(invalid(
                file,
                &key("ports"),
                &written,
                "selects no port on this network (\"long-haul\", the default, selects the two \
                 ends of a wan's long-haul links); name the ports, e.g. \"switch\" or \
                 \"switch:3:downlinks\"",
            ));
        }
        for &p in &ports {
            let link = &topology.ports()[p.index()];
            if topology.kind(link.node) != NodeKind::Switch {
                return Err(invalid(
                    file,
                    &key("ports"),
                    &written_ports(&c.ports),
                    &format!(
                        "port {} is a host's: pause control runs on switch inputs",
                        p.0
                    ),
                ));
            }
            if out.iter().any(|o| o.port == p) {
                return Err(invalid(
                    file,
                    &key("ports"),
                    &written_ports(&c.ports),
                    &format!("port {} already has a pause control", p.0),
                ));
            }
            let buffer = topology.input_buffer(p, buffer);
            let rule = rule(s, c, file, &key, buffer, max_frame)?;
            let longest = quanta_time(link.rate, MAX_QUANTA);
            let interval = match c.interval.as_deref().unwrap_or("auto") {
                "auto" => longest,
                // Each interval may send a PAUSE frame: no shorter than sending the smallest.
                v => {
                    let floor = min_frame_floor(link.rate, "the port's link");
                    let most = grants.then(|| {
                        (
                            longest,
                            format!("the longest pause at {} with credit grants", link.rate),
                        )
                    });
                    let most = most.as_ref().map(|(d, why)| (*d, why.as_str()));
                    duration_in(file, &key("interval"), v, (floor.0, &floor.1), most)?
                }
            };
            if rule == PauseRule::Off {
                drops.get_or_insert_with(|| {
                    format!("{} = \"none\" drops what does not fit", key("rule"))
                });
            }
            let link = ControlLoop {
                rate: link.rate,
                round_trip: link.delay * 2,
                interval,
                max_frame,
            };
            let at = format!("{}: port {}", key("ports"), p.0);
            if let Some(warning) = sizing_warning(&at, c.rule, rule, link, buffer) {
                drops.get_or_insert_with(|| format!("{at}'s input can overflow (see the warning)"));
                warnings.push(warning);
            }
            warnings.extend(stability_warning(&at, rule, link));
            if rule.periodic() {
                drops.get_or_insert_with(|| {
                    format!(
                        "{} = {:?} pauses by interval, which a full input can outrun",
                        key("rule"),
                        c.rule
                    )
                });
            }
            out.push(PauseControl {
                port: p,
                rule,
                interval,
            });
        }
    }
    Ok(Controls {
        controls: out,
        warnings,
        drops,
    })
}

/// Data in longest pauses, the slides' unit, for a warning.
fn units(bytes: f64) -> String {
    format!("{} units", level(bytes / LONGEST_PAUSE_BYTES as f64))
}

/// A level in units of the longest pause: one decimal, or two significant digits below 0.05
/// (a 10 KB level is 0.0024 units, not "0.0").
fn level(units: f64) -> String {
    if units == 0.0 || units.abs() >= 0.05 {
        return format!("{units:.1}");
    }
    let decimals = (1.0 - units.abs().log10().floor()) as usize;
    format!("{units:.decimals$}")
}

/// The warning for an input whose buffer is below what its rule needs to stay lossless when
/// the sink stops for good (`PauseRule::lossless_buffer`), with the numbers; `None` if it
/// holds that (or the rule never pauses, which drops by design).
fn sizing_warning(
    at: &str,
    kind: RuleKind,
    rule: PauseRule,
    link: ControlLoop,
    buffer: u64,
) -> Option<String> {
    if rule == PauseRule::Off {
        return None;
    }
    let name = format!("rule = {:?}", kind.name());
    let given = format!("{buffer} B ({})", units(buffer as f64));
    let Some(needed) = rule.lossless_buffer(link) else {
        let longest = quanta_time(link.rate, MAX_QUANTA);
        let gap = if link.interval > longest {
            format!(
                "longer than the longest pause ({}): the sender runs between pauses",
                about(longest)
            )
        } else {
            format!(
                "the longest pause, on a link whose one-way delay ({}) is shorter: each refresh \
                 reaches the sender as the pause it renews ends, and a frame slips through \
                 (a shorter interval closes the gap)",
                about(Duration::from_ps(link.round_trip.as_ps() / 2))
            )
        };
        return Some(format!(
            "{at}: {name} checks every {}, {gap}; a sink that stops for good overflows any \
             buffer (this one holds {given})",
            about(link.interval)
        ));
    };
    if buffer >= needed {
        return None;
    }
    let formula = match rule {
        PauseRule::Threshold { .. } => "threshold + rate × (round trip + PAUSE frame) + 2 frames",
        PauseRule::OnOff { .. } => {
            "threshold + rate × (round trip + PAUSE frame + interval) + 2 frames"
        }
        _ => {
            "max(threshold, height − constant) + what the partial pauses of a round trip and \
             an interval let through + a frame per interval"
        }
    };
    Some(format!(
        "{at}'s input holds {given}, less than {name} needs when the sink stops for good: \
         {formula} = {needed} B ({}) at {} with a round trip of {} and an interval of {}: it can \
         overflow",
        units(needed as f64),
        link.rate,
        about(link.round_trip),
        about(link.interval)
    ))
}

/// The warning for a time-based rule whose loop swings instead of settling (delay over
/// `height − constant` past π/2, see `crate::pause`), with the height that would settle.
fn stability_warning(at: &str, rule: PauseRule, link: ControlLoop) -> Option<String> {
    let ratio = rule.time_based_delay_ratio(link)?;
    let PauseRule::TimeBased {
        height, constant, ..
    } = rule
    else {
        return None;
    };
    if ratio < std::f64::consts::FRAC_PI_2 {
        return None;
    }
    let settles = link.settling_height(constant);
    Some(format!(
        "{at}: rule = \"time-based\" swings instead of settling: its loop delay (round trip {} \
         + PAUSE frame + half the {} interval = {}) over height − constant ({} − {} = \
         {}, {} B) is {ratio:.3}, past π/2 ≈ 1.571; a height of at least {settles} B ({}) \
         would settle",
        about(link.round_trip),
        about(link.interval),
        units(link.loop_delay_bytes()),
        level(height as f64 / LONGEST_PAUSE_BYTES as f64),
        level(constant as f64 / LONGEST_PAUSE_BYTES as f64),
        units((height - constant) as f64),
        height - constant,
        units(settles as f64)
    ))
}

/// One entry's rule, its keys checked against it.
fn rule(
    s: &ScenarioFile,
    c: &PauseControlSection,
    file: &str,
    key: &dyn Fn(&str) -> String,
    buffer: u64,
    max_frame: u64,
) -> Result<PauseRule, ScenarioError> {
    let kind = c.rule.name();
    let keys = [
        ("threshold", c.threshold.is_some(), c.rule != RuleKind::None),
        ("height", c.height.is_some(), c.rule == RuleKind::TimeBased),
        (
            "constant",
            c.constant.is_some(),
            c.rule == RuleKind::TimeBased,
        ),
        (
            "interval",
            c.interval.is_some(),
            c.rule != RuleKind::Threshold,
        ),
        ("resume", c.resume.is_some(), c.rule == RuleKind::Threshold),
        ("frames", c.frames.is_some(), c.rule == RuleKind::Threshold),
    ];
    if let Some((k, ..)) = keys.iter().find(|(_, set, applies)| *set && !applies) {
        return Err(invalid(
            file,
            &key(k),
            SET,
            &format!("does not apply to rule = \"{kind}\""),
        ));
    }
    if c.rule == RuleKind::None {
        return Ok(PauseRule::Off);
    }
    let level = |k: &str, l: Option<&Level>, what: &str| -> Result<u64, ScenarioError> {
        let l = l.ok_or_else(|| invalid(file, &key(k), "(missing)", what))?;
        bytes(file, &key(k), l)
    };
    let threshold = level(
        "threshold",
        c.threshold.as_ref(),
        "a size or a number of longest pauses",
    )?;
    if threshold == 0 || threshold >= buffer {
        return Err(invalid(
            file,
            &key("threshold"),
            &format!("{threshold} B"),
            &format!("above 0 and below the input's buffer ({buffer} B)"),
        ));
    }
    Ok(match c.rule {
        RuleKind::Threshold => {
            let resume_below = match &c.resume {
                None => threshold.saturating_sub(2 * max_frame),
                Some(l) => bytes(file, &key("resume"), l)?,
            };
            if resume_below > threshold {
                return Err(invalid(
                    file,
                    &key("resume"),
                    &format!("{resume_below} B"),
                    &format!("at most the threshold ({threshold} B)"),
                ));
            }
            let frames = match c.frames.unwrap_or(s.switch.pfc_frames) {
                PfcFramesKind::XoffXon => PauseFrames::XoffXon,
                PfcFramesKind::Timed => PauseFrames::Timed {
                    quanta: MAX_QUANTA,
                    refresh: None,
                },
            };
            PauseRule::Threshold {
                pause_at: threshold,
                resume_below,
                frames,
            }
        }
        RuleKind::OnOff => PauseRule::OnOff { threshold },
        RuleKind::None => unreachable!("returned above"),
        RuleKind::TimeBased => {
            let height = match &c.height {
                None => buffer,
                Some(l) => bytes(file, &key("height"), l)?,
            };
            let constant = level(
                "constant",
                c.constant.as_ref(),
                "the characteristic constant, a size or a number of longest pauses (the slides \
                 use 2 and 20 with a height of 110)",
            )?;
            if constant >= height {
                return Err(invalid(
                    file,
                    &key("constant"),
                    &format!("{constant} B"),
                    &format!("below the height ({height} B)"),
                ));
            }
            PauseRule::TimeBased {
                threshold,
                height,
                constant,
            }
        }
    })
}

/// A level in bytes.
fn bytes(file: &str, key: &str, l: &Level) -> Result<u64, ScenarioError> {
    match l {
        Level::Pauses(n) if n.is_finite() && *n >= 0.0 => {
            Ok((n * LONGEST_PAUSE_BYTES as f64).round() as u64)
        }
        Level::Pauses(n) => Err(invalid(
            file,
            key,
            &super::real(*n),
            "a size such as \"20MB\" or a number of longest pauses (≥ 0)",
        )),
        Level::Size(v) => Ok(parse_key::<Bytes>(file, key, v)?.0),
    }
}

/// `[pauses]`, resolved: one source per host.
pub(super) fn sources(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
) -> Result<Vec<PauseSourceConfig>, ScenarioError> {
    let Some(p) = &s.pauses else {
        return Ok(Vec::new());
    };
    let hosts = topology.hosts().len();
    if p.hosts.is_empty() {
        return Err(invalid(
            file,
            "pauses.hosts",
            "[]",
            "at least one host index",
        ));
    }
    let span = |k: &str, v: &Span| -> Result<(Duration, Duration), ScenarioError> {
        let key = format!("pauses.{k}");
        match v {
            Span::Fixed(d) => {
                let d = parse_key::<Duration>(file, &key, d)?;
                Ok((d, d))
            }
            Span::Uniform(r) if r.len() == 2 => {
                let lo = parse_key::<Duration>(file, &key, &r[0])?;
                let hi = parse_key::<Duration>(file, &key, &r[1])?;
                if lo > hi {
                    return Err(invalid(
                        file,
                        &key,
                        &format!("{r:?}"),
                        "[low, high] with low ≤ high",
                    ));
                }
                Ok((lo, hi))
            }
            Span::Uniform(r) => Err(invalid(
                file,
                &key,
                &format!("{r:?}"),
                "a duration or a [low, high] pair of them",
            )),
        }
    };
    let gap = span("gap", &p.gap)?;
    let length = span("length", &p.length)?;
    // Each pause is a PAUSE frame and each cycle two events: a cycle shorter on average than
    // sending the smallest frame would do nothing but pause and resume ("0s" and "1ps" never
    // ended).
    let (floor, why) = min_frame_floor(topology.min_host_rate(), "the slowest host link");
    let mean = |(lo, hi): (Duration, Duration)| (lo + hi).as_ps() / 2;
    if mean(gap) + mean(length) < floor.as_ps() {
        return Err(invalid(
            file,
            "pauses.length",
            &p.length.written(),
            &format!(
                "a pause and the gap after it (pauses.gap = {}) of at least {} together on \
                 average ({why})",
                p.gap.written(),
                shown(floor)
            ),
        ));
    }
    let start = match &p.start {
        Some(v) => parse_key::<Duration>(file, "pauses.start", v)?,
        None => Duration::ZERO,
    };
    let mut out: Vec<PauseSourceConfig> = Vec::with_capacity(p.hosts.len());
    for &h in &p.hosts {
        if h as usize >= hosts {
            return Err(invalid(
                file,
                "pauses.hosts",
                &h.to_string(),
                &format!("a host index below {hosts}"),
            ));
        }
        // A host listed twice would draw its pauses twice from its one seeded stream: the same
        // pauses, each frame sent and counted twice.
        if out.iter().any(|c| c.host == HostIdx(h)) {
            return Err(invalid(
                file,
                "pauses.hosts",
                &format!("{:?}", p.hosts),
                &format!("distinct hosts; host {h} is listed twice"),
            ));
        }
        out.push(PauseSourceConfig {
            host: HostIdx(h),
            start,
            gap,
            length,
        });
    }
    Ok(out)
}

/// A `ports` selection as the file writes it: `"host"` or `["switch:1", "host"]`.
fn written_ports(ports: &PortSelection) -> String {
    match ports {
        PortSelection::One(s) => format!("{s:?}"),
        PortSelection::Many(v) => format!("{v:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PortId;
    use crate::scenario::tests::one;

    fn ports(c: &[PauseControl]) -> Vec<PortId> {
        c.iter().map(|c| c.port).collect()
    }

    const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"100Gbps\"\n\
                        link_delay = \"1us\"\n[switch]\nbuffer = \"100MB\"\n";

    /// Warnings give levels in longest pauses with one decimal, and small ones with two
    /// significant digits, never as "0.0".
    #[test]
    fn small_levels_keep_their_digits() {
        let cases = [
            (0.0, "0.0"),
            (90.0, "90.0"),
            (0.05, "0.1"),
            (0.049, "0.049"),
            (0.0024, "0.0024"),
            (-0.0024, "-0.0024"),
        ];
        for (units, shown) in cases {
            assert_eq!(level(units), shown, "{units}");
        }
    }

    #[test]
    fn rules_resolve_in_bytes_and_longest_pauses() {
        let run = one(&format!(
            "{STAR}[[pause_control]]\nports = \"switch:0\"\nrule = \"time-based\"\n\
             threshold = 5\nconstant = \"4MB\"\nheight = 20\n"
        ))
        .unwrap();
        let c = &run.config.pause_control;
        assert_eq!(ports(c), [PortId(3), PortId(4), PortId(5)]);
        assert_eq!(
            c[0].rule,
            PauseRule::TimeBased {
                threshold: 5 * LONGEST_PAUSE_BYTES,
                height: 20 * LONGEST_PAUSE_BYTES,
                constant: 4_000_000,
            }
        );
        // The longest pause at 100 Gb/s.
        assert_eq!(
            c[0].interval,
            quanta_time(irn_core::Bandwidth::from_gbps(100), MAX_QUANTA)
        );
        assert_eq!(LONGEST_PAUSE_BYTES, 4_194_240);
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (
                "ports = \"host:0\"\nrule = \"on-off\"\nthreshold = 1",
                "is a host's",
            ),
            (
                "ports = \"switch:0\"\nrule = \"on-off\"",
                "pause_control[0].threshold = (missing)",
            ),
            (
                "ports = \"switch:0\"\nrule = \"on-off\"\nthreshold = 1\nconstant = 2",
                "pause_control[0].constant is set: does not apply to rule = \"on-off\"",
            ),
            (
                "ports = \"switch:0\"\nrule = \"time-based\"\nthreshold = 1",
                "pause_control[0].constant = (missing)",
            ),
            (
                "ports = \"switch:0\"\nrule = \"time-based\"\nthreshold = 1\nconstant = 30",
                "below the height",
            ),
            (
                "ports = \"switch:0\"\nrule = \"on-off\"\nthreshold = 30",
                "below the input's buffer",
            ),
            (
                "ports = \"switch:0\"\nrule = \"on-off\"\nthreshold = -1",
                "(≥ 0)",
            ),
            (
                "ports = \"switch:0\"\nrule = \"on-off\"\nthreshold = 1\ninterval = \"0s\"",
                "pause_control[0].interval = \"0s\": at least 6720ps (6.7ns) (one minimum frame, \
                 64 B + 20 B of preamble and gap, at 100Gbps, the port's link",
            ),
            (
                "ports = \"switch:0\"\nrule = \"on-off\"\nthreshold = 1\ninterval = \"1ps\"",
                "pause_control[0].interval = \"1ps\": at least 6720ps",
            ),
            (
                "ports = \"switch:9\"\nrule = \"on-off\"\nthreshold = 1",
                "pause_control[0].ports",
            ),
            (
                "ports = \"switch:0\"\nrule = \"sometimes\"\nthreshold = 1",
                "sometimes",
            ),
            (
                "ports = \"switch:0\"\nrule = \"none\"\nthreshold = 1",
                "pause_control[0].threshold is set: does not apply to rule = \"none\"",
            ),
        ];
        for (keys, want) in cases {
            let err = one(&format!("{STAR}[[pause_control]]\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
        let err = one(&format!(
            "{STAR}model = \"shared-buffer\"\n[[pause_control]]\nports = \"switch\"\n\
             rule = \"on-off\"\nthreshold = 1\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("needs switch.model = \"input-queued\""),
            "{err}"
        );
    }

    #[test]
    fn a_buffer_without_a_round_trip_warns_with_the_numbers() {
        let slow = STAR.replace("1us", "5ms");
        let run = one(&format!(
            "{slow}[[pause_control]]\nports = \"switch:0:downlinks\"\nrule = \"on-off\"\n\
             threshold = \"10MB\"\n"
        ))
        .unwrap();
        // 100 Gb/s × (10 ms + a PAUSE frame + an interval) + 10 MB and two frames: more than
        // 100 MB; and the default RTO_low, 100 µs, is far below a round trip over two 5 ms links.
        assert_eq!(run.warnings.len(), 4, "{:?}", run.warnings);
        assert!(
            run.warnings[3].starts_with(
                "transport.rto_low = 100us is shorter than the longest path's round-trip \
                 propagation (20ms)"
            ),
            "{}",
            run.warnings[3]
        );
        assert_eq!(
            run.warnings[0],
            "pause_control[0].ports: port 3's input holds 100000000 B (23.8 units), less than \
             rule = \"on-off\" needs when the sink stops for good: threshold + rate × (round \
             trip + PAUSE frame + interval) + 2 frames = 139196477 B (33.2 units) at 100Gbps \
             with a round trip of 10ms and an interval of 335.5us: it can overflow"
        );
    }

    /// Each rule's own bound (`PauseRule::lossless_buffer`): the warning names the rule, and
    /// comes just below the bound, not at it.
    #[test]
    fn each_rule_warns_below_its_own_bound() {
        let slow = STAR.replace("1us", "1ms").replace("100MB", "1GB");
        let keys = [
            (
                "threshold",
                "threshold = 5",
                "threshold + rate × (round trip + PAUSE frame)",
            ),
            ("on-off", "threshold = 5", "+ interval) + 2 frames"),
            (
                "time-based",
                "threshold = 5\nheight = 30\nconstant = 2",
                "max(threshold, height − constant) + what the partial pauses",
            ),
        ];
        for (rule, keys, formula) in keys {
            let entry = format!("ports = \"switch:0:downlinks\"\nrule = \"{rule}\"\n{keys}");
            let big = one(&format!("{slow}[[pause_control]]\n{entry}\n")).unwrap();
            let c = &big.config.pause_control[0];
            let link = ControlLoop {
                rate: irn_core::Bandwidth::from_gbps(100),
                round_trip: Duration::from_ms(2),
                interval: c.interval,
                max_frame: big.config.max_frame_bytes(),
            };
            let needed = c.rule.lossless_buffer(link).unwrap();
            let sized = |buffer: u64| {
                let file = slow.replace("1GB", &format!("{buffer}B"));
                let run = one(&format!("{file}[[pause_control]]\n{entry}\n")).unwrap();
                (run.warnings.into_iter()).find(|w| w.starts_with("pause_control"))
            };
            assert_eq!(sized(needed), None, "{rule}");
            let w = sized(needed - 1).unwrap_or_else(|| panic!("{rule}: no warning"));
            let want = format!(
                "port 3's input holds {} B ({}), less than rule = \"{rule}\" needs",
                needed - 1,
                units((needed - 1) as f64)
            );
            assert!(w.contains(&want), "{w}");
            assert!(w.contains(formula), "{w}");
            assert!(w.contains(&format!("= {needed} B (")), "{w}");
        }
    }

    /// An interval longer than the longest pause, or as long on a link shorter than it one
    /// way: the sender gets through between pauses, and no buffer is enough.
    #[test]
    fn pauses_with_gaps_overflow_any_buffer() {
        let cases = [
            (
                "5ms",
                "interval = \"1ms\"\n",
                "checks every 1ms, longer than the longest pause (335.5us): the sender runs \
                 between pauses; a sink that stops for good overflows any buffer (this one holds \
                 100000000 B (23.8 units))",
            ),
            (
                "100us",
                "",
                "checks every 335.5us, the longest pause, on a link whose one-way delay (100us) \
                 is shorter: each refresh reaches the sender as the pause it renews ends",
            ),
        ];
        for (delay, interval, want) in cases {
            let file = STAR.replace("1us", delay);
            let run = one(&format!(
                "{file}[[pause_control]]\nports = \"switch:0:downlinks\"\nrule = \"on-off\"\n\
                 threshold = 1\n{interval}"
            ))
            .unwrap();
            assert!(run.warnings[0].contains(want), "{}", run.warnings[0]);
        }
        // A shorter interval closes the gap: the buffer is enough.
        let run = one(&format!(
            "{}[[pause_control]]\nports = \"switch:0:downlinks\"\nrule = \"on-off\"\n\
             threshold = 1\ninterval = \"300us\"\n",
            STAR.replace("1us", "100us")
        ))
        .unwrap();
        assert!(
            !run.warnings.iter().any(|w| w.starts_with("pause_control")),
            "{:?}",
            run.warnings
        );
    }

    /// The time-based loop's warning fires one byte of height past the bound, not at it, and
    /// names the height that settles.
    #[test]
    fn a_time_based_loop_that_swings_warns_with_the_height_that_settles() {
        // One way 25 ms: a round trip of 150 longest pauses at 100 Gb/s.
        let file = STAR.replace("1us", "25ms").replace("100MB", "2GB");
        let swings = |height: u64| {
            let run = one(&format!(
                "{file}[[pause_control]]\nports = \"switch:0:downlinks\"\n\
                 rule = \"time-based\"\nthreshold = 5\nconstant = 20\nheight = \"{height}B\"\n"
            ))
            .unwrap();
            (run.warnings.into_iter()).find(|w| w.contains("swings"))
        };
        let c = 20 * LONGEST_PAUSE_BYTES;
        let settles = ControlLoop {
            rate: irn_core::Bandwidth::from_gbps(100),
            round_trip: Duration::from_ms(50),
            interval: quanta_time(irn_core::Bandwidth::from_gbps(100), MAX_QUANTA),
            max_frame: 1086,
        }
        .settling_height(c);
        assert_eq!(swings(settles), None);
        let w = swings(settles - 1).unwrap();
        assert!(
            w.starts_with(
                "pause_control[0].ports: port 3: rule = \"time-based\" swings instead of \
                 settling: its loop delay (round trip 50ms + PAUSE frame + half the 335.5us \
                 interval = 149.5 units) over height − constant"
            ),
            "{w}"
        );
        assert!(w.contains("is 1.571, past π/2 ≈ 1.571"), "{w}");
        assert!(
            w.contains(&format!("a height of at least {settles} B (115.2 units)")),
            "{w}"
        );
        // The slides' height at the slides' RTT 150 and C = 20.
        let slides = swings(110 * LONGEST_PAUSE_BYTES).unwrap();
        assert!(
            slides.contains(
                "over height − constant (110.0 − 20.0 = 90.0 units, 377481600 B) is 1.661"
            ),
            "{slides}"
        );
    }

    /// Pauses that start past the latest the run can end never happen: said, with the end.
    #[test]
    fn pauses_that_start_after_the_run_can_end_are_warned_of() {
        let keys = "hosts = [1]\ngap = \"1ms\"\nlength = \"10us\"";
        let late = |start: &str| {
            let run = one(&format!("{STAR}[pauses]\n{keys}\nstart = \"{start}\"\n")).unwrap();
            (run.warnings.iter())
                .find(|w| w.starts_with("pauses.start"))
                .cloned()
        };
        let warning = late("1s").expect("a start past the end is warned of");
        assert!(
            warning
                .starts_with("pauses.start = \"1s\" is at or after the latest this run can end (")
                && warning.ends_with("plus run.drain_limit), so no host pauses"),
            "{warning}"
        );
        assert_eq!(late("5us"), None);
    }

    #[test]
    fn pausing_hosts() {
        let run = one(&format!(
            "{STAR}[pauses]\nhosts = [2, 1]\ngap = [\"1ms\", \"2ms\"]\nlength = \"10us\"\n"
        ))
        .unwrap();
        let p = &run.config.pause_sources;
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].host, HostIdx(2));
        assert_eq!(p[0].gap, (Duration::from_ms(1), Duration::from_ms(2)));
        assert_eq!(p[0].length, (Duration::from_us(10), Duration::from_us(10)));
        for (keys, want) in [
            (
                "hosts = [3]\ngap = \"1ms\"\nlength = \"1ms\"",
                "pauses.hosts = 3: a host index below 3",
            ),
            (
                "hosts = []\ngap = \"1ms\"\nlength = \"1ms\"",
                "at least one host",
            ),
            (
                "hosts = [2, 1, 2]\ngap = \"1ms\"\nlength = \"1ms\"",
                "pauses.hosts = [2, 1, 2]: distinct hosts; host 2 is listed twice",
            ),
            (
                "hosts = [1, 1]\ngap = \"1ms\"\nlength = \"1ms\"",
                "pauses.hosts = [1, 1]: distinct hosts; host 1 is listed twice",
            ),
            (
                "hosts = [0]\ngap = [\"2ms\", \"1ms\"]\nlength = \"1ms\"",
                "low ≤ high",
            ),
            (
                "hosts = [0]\ngap = [\"2ms\"]\nlength = \"1ms\"",
                "[low, high] pair",
            ),
            (
                "hosts = [0]\ngap = \"0s\"\nlength = \"0s\"",
                "pauses.length = \"0s\": a pause and the gap after it (pauses.gap = \"0s\") of at \
                 least 6720ps (6.7ns) together on average (one minimum frame",
            ),
            (
                "hosts = [0]\ngap = \"0s\"\nlength = \"1ps\"",
                "pauses.length = \"1ps\": a pause and the gap after it",
            ),
            (
                "hosts = [0]\ngap = [\"0s\", \"10ps\"]\nlength = [\"0s\", \"12ns\"]",
                "pauses.length = [\"0s\", \"12ns\"]: a pause and the gap after it (pauses.gap = \
                 [\"0s\", \"10ps\"])",
            ),
        ] {
            let err = one(&format!("{STAR}[pauses]\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
    }
}
