//! `[ordering]`: the ordering layer every NIC runs under its transport (Eunomia §3, §2.1's
//! ideal layer, Fig. 17a's static bitmaps).
//!
//! ```toml
//! [ordering]
//! kind = "eunomia"   # "none" (default), "ideal", "static-bitmap", "eunomia"
//! size = "16B"       # static-bitmap: the bitmap per connection
//! block_bits = 16    # eunomia: the unit a bitmap grows by
//! cap = 256          # eunomia: the most bits one connection may hold, or "none"
//! pool_blocks = 1024 # eunomia: the blocks each NIC's memory controller holds
//! max_connections = 256  # eunomia: connections each NIC tracks at once (state records)
//! records_in_pool = true # eunomia: the records take blocks of the pool (§4), or sit beside it
//! write_last = "sender"     # any layer: "off" (default), "sender", "receiver" (appendix A.1)
//! write_last_delay = "2us"  # receiver: placing a staged last packet from host memory
//! feedback = "arrival"      # any layer: a held or dropped packet's CE mark (its CNP) on
//!                           # "arrival" (default) or on "delivery" in order
//! sample_interval = "1ms" # any layer: how often each NIC's ordering memory is sampled
//! ```

use irn_core::ordering::{Feedback, OrderingConfig, OrderingMode, WriteLast};
use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::{check_keys, invalid, parse_key, ScenarioError};
use crate::config::Ordering;
use crate::units::Bytes;

/// The section as written; keys of another `kind` are rejected, the chosen kind's defaults
/// filled in when the scenario is loaded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OrderingSection {
    pub kind: OrderingKind,
    /// static-bitmap: bytes of bitmap per connection (Fig. 17a: 4B to 64B).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// eunomia: bits per block. Default 16.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_bits: Option<u32>,
    /// eunomia: bits one connection may hold (a multiple of `block_bits`), or `"none"`: as many
    /// as a connection's block table holds (64 blocks). Default 256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<Cap>,
    /// eunomia: blocks in each NIC's pool. Default 1024.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_blocks: Option<u32>,
    /// eunomia: connections one NIC tracks at once (one state record each). Default 256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u32>,
    /// eunomia: whether the state records take blocks of the pool. Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records_in_pool: Option<bool>,
    /// Any layer: how often every NIC's ordering memory is sampled. Default "1ms".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<String>,
    /// Any layer: every flow is a WRITE whose last packet the sender holds (`"sender"`) or the
    /// receiver stages in host memory (`"receiver"`); `"off"` (the default) treats flows as
    /// SENDs. See [`WriteLast`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_last: Option<String>,
    /// write_last = "receiver": the time to place a staged last packet. Default 2 µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_last_delay: Option<String>,
    /// Any layer: when a held or dropped packet's CE mark counts (its DCQCN CNP is paced).
    /// Default `"arrival"`. See [`Feedback`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackKind>,
}

/// `ordering.feedback`, as [`Feedback`] is named in a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedbackKind {
    Arrival,
    Delivery,
}

/// `ordering.write_last_delay`'s default: IRN §6.3's worst case for fetching a packet over PCIe
/// again (the NIC reads the staged packet back from host memory, then writes it where the
/// application reads), the same figure `transport.retransmit_delay` takes for a retransmission.
/// Measured PCIe read round trips are nearer 1 µs, so the default errs against the receiver.
const DEFAULT_WRITE_LAST_DELAY: &str = "2us";

/// The most `ordering.write_last_delay` may be: far above any PCIe round trip, and well under the
/// millisecond timescales a run reports.
const MAX_WRITE_LAST_DELAY: Duration = Duration::from_us(100);

/// `ordering.kind`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrderingKind {
    #[default]
    None,
    Ideal,
    StaticBitmap,
    Eunomia,
}

impl OrderingKind {
    fn name(self) -> &'static str {
        match self {
            OrderingKind::None => "none",
            OrderingKind::Ideal => "ideal",
            OrderingKind::StaticBitmap => "static-bitmap",
            OrderingKind::Eunomia => "eunomia",
        }
    }
}

/// `ordering.cap`: bits, or `"none"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cap {
    Bits(u32),
    Word(String),
}

impl OrderingSection {
    /// The kind as a scenario names it.
    pub(super) fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// Rejects keys of another kind and fills the chosen kind's defaults.
    pub(super) fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        let (stat, eunomia) = (
            self.kind == OrderingKind::StaticBitmap,
            self.kind == OrderingKind::Eunomia,
        );
        check_keys(
            file,
            ("ordering", "kind"),
            self.kind.name(),
            &[
                ("size", self.size.is_some(), stat),
                ("block_bits", self.block_bits.is_some(), eunomia),
                ("cap", self.cap.is_some(), eunomia),
                ("pool_blocks", self.pool_blocks.is_some(), eunomia),
                ("max_connections", self.max_connections.is_some(), eunomia),
                ("records_in_pool", self.records_in_pool.is_some(), eunomia),
                (
                    "sample_interval",
                    self.sample_interval.is_some(),
                    self.kind != OrderingKind::None,
                ),
                (
                    "feedback",
                    self.feedback.is_some(),
                    self.kind != OrderingKind::None,
                ),
            ],
        )?;
        if self.kind != OrderingKind::None {
            self.sample_interval.get_or_insert_with(|| "1ms".into());
            self.feedback.get_or_insert(FeedbackKind::Arrival);
        }
        let write_last = self.write_last.as_deref().unwrap_or("off");
        if !matches!(write_last, "off" | "sender" | "receiver") {
            return Err(invalid(
                file,
                "ordering.write_last",
                &format!("{write_last:?}"),
                "\"off\", \"sender\" (Eunomia: the sender holds a WRITE's last packet until \
                 the rest is acknowledged) or \"receiver\" (appendix A.1: the receiver stages \
                 it in host memory)",
            ));
        }
        if write_last != "off" && self.kind == OrderingKind::None {
            return Err(invalid(
                file,
                "ordering.write_last",
                &format!("{write_last:?}"),
                "needs an ordering layer (ordering.kind = \"ideal\", \"static-bitmap\" or \
                 \"eunomia\"): without one no packet is placed out of order, so a WRITE's last \
                 packet never overtakes its data; use \"off\"",
            ));
        }
        check_keys(
            file,
            ("ordering", "write_last"),
            write_last,
            &[(
                "write_last_delay",
                self.write_last_delay.is_some(),
                write_last == "receiver",
            )],
        )?;
        if write_last == "receiver" {
            self.write_last_delay
                .get_or_insert_with(|| DEFAULT_WRITE_LAST_DELAY.into());
        }
        if stat {
            self.size.get_or_insert_with(|| "16B".into());
        }
        if eunomia {
            let d = OrderingConfig::default();
            self.block_bits.get_or_insert(d.block_bits);
            self.cap.get_or_insert(Cap::Bits(d.cap_bits));
            self.pool_blocks.get_or_insert(d.pool_blocks);
            self.max_connections.get_or_insert(d.max_connections);
            self.records_in_pool.get_or_insert(d.records_in_pool);
        }
        Ok(())
    }

    /// The validated layer.
    pub(super) fn to_ordering(&self, file: &str) -> Result<Ordering, ScenarioError> {
        let mut config = OrderingConfig::default();
        let mode = match self.kind {
            OrderingKind::None => OrderingMode::None,
            OrderingKind::Ideal => OrderingMode::Ideal,
            OrderingKind::StaticBitmap => {
                let text = self.size.as_deref().unwrap_or("16B");
                let bytes = parse_key::<Bytes>(file, "ordering.size", text)?.0;
                if !(1..=8192).contains(&bytes) {
                    return Err(invalid(
                        file,
                        "ordering.size",
                        &format!("{text:?}"),
                        "a static bitmap of 1B to 8KB per connection (Fig. 17a: 4B to 64B)",
                    ));
                }
                OrderingMode::Static {
                    bits: bytes as u32 * 8,
                }
            }
            OrderingKind::Eunomia => {
                config.block_bits = self.block_bits.unwrap_or(config.block_bits);
                config.pool_blocks = self.pool_blocks.unwrap_or(config.pool_blocks);
                config.max_connections = self.max_connections.unwrap_or(config.max_connections);
                config.records_in_pool = self.records_in_pool.unwrap_or(config.records_in_pool);
                config.cap_bits = match &self.cap {
                    None => config.cap_bits,
                    Some(Cap::Bits(bits)) => *bits,
                    Some(Cap::Word(w)) if w == "none" => {
                        config.block_bits * OrderingConfig::MAX_BLOCKS_PER_CONNECTION
                    }
                    Some(Cap::Word(w)) => {
                        return Err(invalid(
                            file,
                            "ordering.cap",
                            &format!("{w:?}"),
                            "a number of bits (a multiple of block_bits) or \"none\"",
                        ))
                    }
                };
                config.validate().map_err(|e| {
                    let message = e.to_string();
                    let (key, rest) = message.split_once(" = ").unwrap_or(("ordering", &message));
                    let key = if key == "cap_bits" { "cap" } else { key };
                    let (value, allowed) = rest.split_once(": ").unwrap_or((rest, ""));
                    invalid(file, &format!("ordering.{key}"), value, allowed)
                })?;
                OrderingMode::Eunomia
            }
        };
        let sample_interval = match &self.sample_interval {
            None => Ordering::DEFAULT_SAMPLE_INTERVAL,
            Some(text) => {
                let d = parse_key::<Duration>(file, "ordering.sample_interval", text)?;
                if d < Self::MIN_SAMPLE_INTERVAL {
                    return Err(invalid(
                        file,
                        "ordering.sample_interval",
                        &format!("{text:?}"),
                        "at least \"1us\" (each sample reads every running connection)",
                    ));
                }
                d
            }
        };
        let write_last = match self.write_last.as_deref() {
            Some("sender") => WriteLast::Sender,
            Some("receiver") => {
                let key = "ordering.write_last_delay";
                let text = self
                    .write_last_delay
                    .as_deref()
                    .unwrap_or(DEFAULT_WRITE_LAST_DELAY);
                let placement_delay = parse_key::<Duration>(file, key, text)?;
                if placement_delay > MAX_WRITE_LAST_DELAY {
                    return Err(invalid(
                        file,
                        key,
                        &format!("{text:?}"),
                        "between 0us and 100us (a PCIe round trip is 1-2us)",
                    ));
                }
                WriteLast::Receiver { placement_delay }
            }
            // "off", or nothing; `normalize` refused anything else.
            _ => WriteLast::Off,
        };
        let feedback = match self.feedback {
            Some(FeedbackKind::Delivery) => Feedback::Delivery,
            Some(FeedbackKind::Arrival) | None => Feedback::Arrival,
        };
        Ok(Ordering {
            mode,
            config,
            sample_interval,
            write_last,
            feedback,
        })
    }

    /// The shortest `sample_interval`: each sample reads every running connection, and the
    /// memory of one changes at most once per packet it receives (a 1 KB frame takes 80 ns at
    /// 100 Gb/s), so finer samples would cost time and show nothing more.
    const MIN_SAMPLE_INTERVAL: Duration = Duration::from_us(1);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::parse;

    fn ordering(text: &str) -> Result<Ordering, String> {
        let overrides = ["workload.duration=10us".to_string()];
        parse(text, "t.toml", Path::new("."), &overrides)
            .map(|s| s.runs[0].config.ordering)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn each_kind_with_its_defaults_and_overrides() {
        let d = OrderingConfig::default();
        let cases: &[(&str, OrderingMode, OrderingConfig)] = &[
            ("", OrderingMode::None, d),
            ("kind = \"ideal\"", OrderingMode::Ideal, d),
            (
                "kind = \"static-bitmap\"",
                OrderingMode::Static { bits: 128 },
                d,
            ),
            (
                "kind = \"static-bitmap\"\nsize = \"4B\"",
                OrderingMode::Static { bits: 32 },
                d,
            ),
            ("kind = \"eunomia\"", OrderingMode::Eunomia, d),
            (
                "kind = \"eunomia\"\ncap = \"none\"\npool_blocks = 128",
                OrderingMode::Eunomia,
                OrderingConfig {
                    cap_bits: 1024,
                    pool_blocks: 128,
                    ..d
                },
            ),
            (
                "kind = \"eunomia\"\npool_blocks = 8\nrecords_in_pool = false\nmax_connections = 4",
                OrderingMode::Eunomia,
                OrderingConfig {
                    pool_blocks: 8,
                    max_connections: 4,
                    records_in_pool: false,
                    ..d
                },
            ),
            (
                "kind = \"eunomia\"\nblock_bits = 32\ncap = 512",
                OrderingMode::Eunomia,
                OrderingConfig {
                    block_bits: 32,
                    cap_bits: 512,
                    ..d
                },
            ),
        ];
        for (section, mode, config) in cases {
            let got = ordering(&format!("[ordering]\n{section}\n")).unwrap();
            assert_eq!((got.mode, got.config), (*mode, *config), "{section}");
        }
    }

    #[test]
    fn every_layer_samples_its_memory_every_millisecond_unless_told() {
        let interval = |section: &str| {
            ordering(&format!("[ordering]\n{section}\n")).map(|o| o.sample_interval)
        };
        let ms = Duration::from_ms(1);
        assert_eq!(interval(""), Ok(ms));
        for kind in ["ideal", "static-bitmap", "eunomia"] {
            assert_eq!(interval(&format!("kind = \"{kind}\"")), Ok(ms));
            let set = format!("kind = \"{kind}\"\nsample_interval = \"250us\"");
            assert_eq!(interval(&set), Ok(Duration::from_us(250)));
        }
    }

    #[test]
    fn write_last_with_its_default_delay() {
        let cases = [
            ("kind = \"eunomia\"", WriteLast::Off),
            ("write_last = \"off\"", WriteLast::Off),
            (
                "kind = \"eunomia\"\nwrite_last = \"sender\"",
                WriteLast::Sender,
            ),
            (
                "kind = \"ideal\"\nwrite_last = \"receiver\"",
                WriteLast::Receiver {
                    placement_delay: Duration::from_us(2),
                },
            ),
            (
                "kind = \"static-bitmap\"\nwrite_last = \"receiver\"\nwrite_last_delay = \"500ns\"",
                WriteLast::Receiver {
                    placement_delay: Duration::from_ns(500),
                },
            ),
        ];
        for (section, want) in cases {
            let got = ordering(&format!("[ordering]\n{section}\n")).unwrap();
            assert_eq!(got.write_last, want, "{section}");
        }
    }

    #[test]
    fn feedback_on_arrival_unless_told() {
        let cases = [
            ("kind = \"eunomia\"", Feedback::Arrival),
            (
                "kind = \"ideal\"\nfeedback = \"arrival\"",
                Feedback::Arrival,
            ),
            (
                "kind = \"static-bitmap\"\nsize = \"32B\"\nfeedback = \"delivery\"",
                Feedback::Delivery,
            ),
        ];
        for (section, want) in cases {
            let got = ordering(&format!("[ordering]\n{section}\n")).unwrap();
            assert_eq!(got.feedback, want, "{section}");
        }
    }

    #[test]
    fn bad_values_and_keys_of_another_kind_are_refused_by_name() {
        let cases = [
            (
                "feedback = \"arrival\"",
                "ordering.feedback is set: does not apply to ordering.kind = \"none\"",
            ),
            (
                "kind = \"eunomia\"\nfeedback = \"late\"",
                "unknown variant `late`, expected `arrival` or `delivery`",
            ),
            (
                "kind = \"ideal\"\nsize = \"4B\"",
                "ordering.size is set: does not apply to ordering.kind = \"ideal\"",
            ),
            (
                "kind = \"static-bitmap\"\ncap = 16",
                "ordering.cap is set: does not apply",
            ),
            (
                "kind = \"static-bitmap\"\nsize = \"0B\"",
                "ordering.size = \"0B\": a static bitmap of 1B to 8KB",
            ),
            (
                "kind = \"eunomia\"\ncap = 100",
                "ordering.cap = 100: must be a positive multiple of block_bits = 16",
            ),
            (
                "kind = \"eunomia\"\ncap = \"all\"",
                "ordering.cap = \"all\": a number of bits",
            ),
            (
                "kind = \"eunomia\"\nblock_bits = 12",
                "ordering.block_bits = 12: must be 8, 16, 32 or 64",
            ),
            (
                "kind = \"eunomia\"\npool_blocks = 0",
                "ordering.pool_blocks = 0",
            ),
            (
                "kind = \"eunomia\"\npool_blocks = 20",
                "ordering.pool_blocks = 20: too small for one connection's state record (24 \
                 blocks) and its first bitmap block with records_in_pool = true: at least 25",
            ),
            (
                "kind = \"eunomia\"\nmax_connections = 0",
                "ordering.max_connections = 0: must be between 1 and 65536",
            ),
            (
                "kind = \"ideal\"\nrecords_in_pool = false",
                "ordering.records_in_pool is set: does not apply to ordering.kind = \"ideal\"",
            ),
            ("kind = \"eunomai\"", "unknown variant `eunomai`"),
            (
                "sample_interval = \"1ms\"",
                "ordering.sample_interval is set: does not apply to ordering.kind = \"none\"",
            ),
            (
                "kind = \"eunomia\"\nsample_interval = \"500ns\"",
                "ordering.sample_interval = \"500ns\": at least \"1us\"",
            ),
            (
                "kind = \"ideal\"\nsample_interval = \"often\"",
                "ordering.sample_interval = \"often\"",
            ),
            (
                "write_last = \"sender\"",
                "ordering.write_last = \"sender\": needs an ordering layer",
            ),
            (
                "kind = \"none\"\nwrite_last = \"receiver\"",
                "ordering.write_last = \"receiver\": needs an ordering layer",
            ),
            (
                "kind = \"eunomia\"\nwrite_last = \"both\"",
                "ordering.write_last = \"both\": \"off\", \"sender\"",
            ),
            (
                "kind = \"eunomia\"\nwrite_last = \"sender\"\nwrite_last_delay = \"1us\"",
                "ordering.write_last_delay is set: does not apply to ordering.write_last = \"sender\"",
            ),
            (
                "kind = \"eunomia\"\nwrite_last = \"receiver\"\nwrite_last_delay = \"1ms\"",
                "ordering.write_last_delay = \"1ms\": between 0us and 100us",
            ),
            (
                "kind = \"eunomia\"\nwrite_last = \"receiver\"\nwrite_last_delay = \"fast\"",
                "ordering.write_last_delay = \"fast\"",
            ),
        ];
        for (section, want) in cases {
            let err = ordering(&format!("[ordering]\n{section}\n")).unwrap_err();
            assert!(err.contains(want), "{section}: {err}");
        }
    }
}
