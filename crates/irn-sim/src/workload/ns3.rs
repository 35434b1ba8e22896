//! Flow and FCT files of the ns-3 RDMA simulators (HPCC, ConWeave, TLT), MODEL.md §8, so that
//! the same traffic can run in irn and in ns-3 and the results can be compared line by line.
//!
//! **Flow files.** The first line is the flow count, then one flow per line in one of two forms:
//!
//! | form | columns | written by |
//! | --- | --- | --- |
//! | HPCC | `src dst pg dport size_bytes start_s` | HPCC's `traffic_gen.py` (`pg` 3, `dport` 100) |
//! | ConWeave | `src dst pg size_bytes start_s` | ConWeave's `traffic_gen.py` (`pg` 3) |
//!
//! `src` and `dst` are ns-3 node ids of hosts (converted to [`HostIdx`] with
//! [`host_of_node`]); `start_s` is in seconds, a plain decimal such as `2.000001234` (the
//! generators print `%.9f`), converted to picoseconds exactly, digit by digit, never through a
//! float. The form is taken from the first flow line and every other line must use it. `pg`
//! (priority group) must be a whole number but is otherwise ignored: irn gives every flow its
//! own queue pair on the one data priority. An HPCC file's `dport` (a port, 0 to 65535) is only
//! printed back in the FCT file, as HPCC does ([`FctPorts`]). Sizes must be at least 1 byte (ConWeave turns
//! 0 into 1, irn rejects it) and `src != dst`. The header's count must equal the number of flow
//! lines. Blank lines, trailing whitespace and CRLF line ends are accepted. The result is sorted by
//! start time, ties in file order.
//!
//! [`write_flows_conweave`] writes the 5-column form with `pg` = 3, the value both public
//! generators write (ConWeave's `traffic_gen.py` prints `"%d %d 3 %d %.9f"`), and start times
//! with 9 decimals (whole nanoseconds), or 12 when a start has picoseconds below the nanosecond
//! (irn's Poisson generator draws whole picoseconds) so that the file reads back exactly.
//! ns-3 reads the value as a `double` and rounds it to its time resolution (1 ns by default).
//!
//! **FCT files.** One line per finished flow, `src dst sport dport size_bytes start_ns fct_ns
//! ideal_fct_ns`, space separated, node ids in decimal as ConWeave prints them (HPCC prints the
//! hosts' IPv4 addresses in hex instead; [`parse_fct`] reads only the decimal form). The values
//! have ns-3's meaning, which differs from irn's `flows.csv`: see [`FctRecord`], and
//! [`assign_ports`] for the port numbers, which follow the simulator whose flow file a run
//! replays (HPCC's analysis picks flows by their `dport`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use irn_core::time::{Duration, Time};
use irn_core::transport::packets_for;

use super::{poisson, Cdf, FlowClass, FlowSpec, SizeDist};
use crate::ids::HostIdx;
use crate::topology::ns3::content_lines;
pub use crate::topology::ns3::{host_of_node, node_of_host, Ns3Error};
use crate::topology::{PathInfo, Topology};

/// The priority group [`write_flows_conweave`] writes: 3, as HPCC's and ConWeave's
/// `traffic_gen.py` do (ns-3 uses it as the flow's QoS class; irn ignores it).
pub const CONWEAVE_PG: u32 = 3;

/// First source port ns-3 gives a host's flows (HPCC and ConWeave both start at 10000).
pub const FIRST_SPORT: u16 = 10000;

/// Destination port of HPCC-style flows (HPCC's `traffic_gen.py` writes 100 in the `dport`
/// column), and ConWeave's first destination port per receiving host.
pub const FIRST_DPORT: u16 = 100;

const PS_PER_S: u64 = 1_000_000_000_000;

const FORMS: &str = "expected 6 columns (src dst pg dport size start_s, HPCC) or 5 (src dst pg \
                     size start_s, ConWeave)";

/// Read an ns-3 flow file (HPCC or ConWeave form; see the [module docs](self)) for `topo`, with
/// the ports its FCT file numbers them by.
pub fn read_flows(path: &Path, topo: &Topology) -> Result<(Vec<FlowSpec>, FctPorts), Ns3Error> {
    let name = path.display().to_string();
    let text =
        crate::input::read_text(path, crate::input::FLOWS).map_err(|e| Ns3Error::read(&name, e))?;
    parse_flows_and_ports(&text, &name, topo)
}

/// Parse the text of an ns-3 flow file; `name` is the file name used in error messages.
pub fn parse_flows(text: &str, name: &str, topo: &Topology) -> Result<Vec<FlowSpec>, Ns3Error> {
    parse_flows_and_ports(text, name, topo).map(|(flows, _)| flows)
}

/// [`parse_flows`], with the ports the FCT file numbers the flows by: ConWeave's for its form,
/// HPCC's with each flow's `dport` for HPCC's.
pub fn parse_flows_and_ports(
    text: &str,
    name: &str,
    topo: &Topology,
) -> Result<(Vec<FlowSpec>, FctPorts), Ns3Error> {
    let mut lines = content_lines(text);
    let Some((hline, header)) = lines.next() else {
        return Err(Ns3Error::whole(
            name,
            "empty file: an ns-3 flow file starts with the number of flows",
        ));
    };
    let count: u64 = match header[..] {
        [n] => n.parse().map_err(|_| {
            Ns3Error::at(
                name,
                hline,
                format!("the flow count `{n}` is not a whole number"),
            )
        })?,
        _ => {
            return Err(Ns3Error::at(
                name,
                hline,
                format!(
                    "expected 1 field (the number of flows), got {}",
                    header.len()
                ),
            ))
        }
    };

    // The column count of the first flow line, and that line's number.
    let mut form: Option<(usize, u64)> = None;
    let mut flows = Vec::new();
    let mut dports: Vec<u16> = Vec::new();
    for (line, fields) in lines {
        let n = fields.len();
        if n != 5 && n != 6 {
            return Err(Ns3Error::at(name, line, format!("{FORMS}, got {n}")));
        }
        match form {
            None => form = Some((n, line)),
            Some((first, first_line)) if first != n => {
                let label = |c: usize| if c == 6 { "HPCC" } else { "ConWeave" };
                return Err(Ns3Error::at(
                    name,
                    line,
                    format!(
                        "{n} columns ({} form), but line {first_line} has {first} ({} form); \
                         a file uses one form throughout",
                        label(n),
                        label(first)
                    ),
                ));
            }
            Some(_) => {}
        }
        if flows.len() as u64 == count {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "one more flow than the {count} the header (line {hline}) announces; fix \
                     the count"
                ),
            ));
        }

        let host = |what: &str, text: &str| -> Result<HostIdx, Ns3Error> {
            let node: u32 = text.parse().map_err(|_| {
                Ns3Error::at(
                    name,
                    line,
                    format!("{what} `{text}` is not a node id (a whole number)"),
                )
            })?;
            if node as usize >= topo.node_count() {
                return Err(Ns3Error::at(
                    name,
                    line,
                    format!(
                        "{what} node {node} is out of range: the topology has {} nodes",
                        topo.node_count()
                    ),
                ));
            }
            host_of_node(topo, node).ok_or_else(|| {
                Ns3Error::at(
                    name,
                    line,
                    format!("{what} node {node} is a switch; flows run between hosts"),
                )
            })
        };
        let whole = |what: &str, text: &str| -> Result<u64, Ns3Error> {
            text.parse().map_err(|_| {
                Ns3Error::at(name, line, format!("{what} `{text}` is not a whole number"))
            })
        };

        let src = host("src", fields[0])?;
        let dst = host("dst", fields[1])?;
        if src == dst {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "src and dst are both node {}: a flow needs two different hosts",
                    fields[0]
                ),
            ));
        }
        whole("pg", fields[2])?;
        if n == 6 {
            let dport = whole("dport", fields[3])?;
            dports.push(u16::try_from(dport).map_err(|_| {
                Ns3Error::at(
                    name,
                    line,
                    format!("dport {dport} is not a port: from 0 to 65535"),
                )
            })?);
        }
        let size_bytes =
            super::flow_size(fields[n - 2]).map_err(|why| Ns3Error::at(name, line, why))?;
        let start_text = fields[n - 1];
        let start_ps = seconds_to_ps(start_text).map_err(|why| {
            Ns3Error::at(
                name,
                line,
                format!("start_s `{start_text}` is not a start time in seconds: {why}"),
            )
        })?;
        flows.push(FlowSpec {
            src,
            dst,
            size_bytes,
            start: Time::from_ps(start_ps),
            class: FlowClass::Regular,
            verb: None,
        });
    }
    if (flows.len() as u64) < count {
        return Err(Ns3Error::at(
            name,
            hline,
            format!(
                "the header announces {count} flows, but the file has {}",
                flows.len()
            ),
        ));
    }
    // In start order, ties in file order; each flow keeps its `dport`.
    let mut order: Vec<usize> = (0..flows.len()).collect();
    order.sort_by_key(|&i| flows[i].start);
    let ports = if dports.is_empty() {
        FctPorts::ConWeave
    } else {
        FctPorts::Hpcc(order.iter().map(|&i| dports[i]).collect())
    };
    let flows = order.iter().map(|&i| flows[i]).collect();
    Ok((flows, ports))
}

/// Seconds written as a plain decimal (`2`, `2.5`, `.25`, `2.000001234`) to whole picoseconds,
/// exactly. More than 12 decimals are accepted only if the extra ones are zeros.
fn seconds_to_ps(text: &str) -> Result<u64, &'static str> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err("write a plain decimal number such as 2.000001234");
    }
    let (frac, below_ps) = frac.split_at(frac.len().min(12));
    if below_ps.bytes().any(|b| b != b'0') {
        return Err("irn keeps time in whole picoseconds (at most 12 decimals)");
    }
    let too_late = "it is later than irn's clock can count";
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_late)?
    };
    let frac_ps = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(12)
        .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0'));
    whole
        .checked_mul(PS_PER_S)
        .and_then(|ps| ps.checked_add(frac_ps))
        .ok_or(too_late)
}

/// A start time as seconds: 9 decimals if it is a whole nanosecond, else 12.
fn ps_to_seconds(ps: u64) -> String {
    let (s, frac) = (ps / PS_PER_S, ps % PS_PER_S);
    if frac % 1000 == 0 {
        format!("{s}.{:09}", frac / 1000)
    } else {
        format!("{s}.{frac:012}")
    }
}

/// Write `flows` as a ConWeave flow file (5 columns, `pg` = [`CONWEAVE_PG`], see the
/// [module docs](self)): node ids from `topo`, flows in the order given (ns-3 expects them by
/// start time, as every irn generator returns them). [`parse_flows`] reads it back to the same
/// flows.
///
/// # Panics
/// If a flow names a host that `topo` does not have.
pub fn write_flows_conweave<W: Write>(
    out: W,
    flows: &[FlowSpec],
    topo: &Topology,
) -> std::io::Result<()> {
    write_flows_conweave_by(out, flows, |h| node_of_host(topo, h))
}

/// [`write_flows_conweave`] with the ns-3 node id of each host given by `node_of` (e.g. the
/// host index itself, for files whose hosts come first, as every ns-3 topology generator numbers
/// them).
pub fn write_flows_conweave_by<W: Write>(
    mut out: W,
    flows: &[FlowSpec],
    node_of: impl Fn(HostIdx) -> u32,
) -> std::io::Result<()> {
    writeln!(out, "{}", flows.len())?;
    for f in flows {
        writeln!(
            out,
            "{} {} {CONWEAVE_PG} {} {}",
            node_of(f.src),
            node_of(f.dst),
            f.size_bytes,
            ps_to_seconds(f.start.as_ps())
        )?;
    }
    out.flush()
}

/// [`write_flows_conweave`] to a file, errors naming it.
pub fn write_flows_conweave_file(
    path: &Path,
    flows: &[FlowSpec],
    topo: &Topology,
) -> Result<(), Ns3Error> {
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| Ns3Error::write(&name, e))?;
    write_flows_conweave(BufWriter::new(file), flows, topo).map_err(|e| Ns3Error::write(&name, e))
}

/// A deterministic ns-3 flow trace for `irn gen-flows`: exactly [`poisson()`] over `topo`'s hosts
/// at `topo.min_host_rate()`, with sizes from `cdf`, so a scenario with the same seed and the
/// file written by [`write_flows_conweave`] carry the same flows, and irn and ns-3 replay the same
/// trace. Sorted by `(start, src)`. (ConWeave's generator offsets starts by 2 s, its warm-up;
/// irn starts at 0. Shift the flows if the ns-3 configuration expects the offset.)
pub fn generate(
    topo: &Topology,
    cdf: &Cdf,
    load: f64,
    duration: Duration,
    seed: u64,
) -> Vec<FlowSpec> {
    poisson(
        topo.hosts().len() as u32,
        topo.min_host_rate(),
        load,
        &SizeDist::Cdf(cdf.clone()),
        duration,
        seed,
    )
}

/// One line of an ns-3 FCT file (ConWeave's `qp_finish` output): `src dst sport dport
/// size_bytes start_ns fct_ns ideal_fct_ns`, each with the meaning ns-3 gives it, so that a
/// script reads irn's file and ns-3's for the same trace alike.
///
/// ns-3 (HPCC's `simulation/scratch/third.cc` and ConWeave's
/// `scratch/network-load-balance.cc`, function `qp_finish`) prints a line when the sender's
/// queue pair completes, which `RdmaHw::ReceiveAck` in `rdma-hw.cc` signals when an ACK moves
/// `snd_una` to the message size: `fct_ns` is the *sender-side* FCT, until the last ACK
/// arrives at the sender. irn's `flows.csv` `fct_us` is the receiver-side FCT (the receiver
/// holds every byte) and `sender_fct_us` the sender-side one, which irn writes here (rounded
/// to the nanosecond). A flow whose last ACK did not arrive before the run ended is not
/// printed, as in ns-3.
///
/// `ideal_fct_ns` is ns-3's `standalone_fct` ([`ns3_standalone_fct_ns`]), not irn's ideal FCT
/// (`flows.csv` `ideal_fct_us`), and `start_ns` is the start as ns-3 holds it
/// ([`ns3_start_ns`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FctRecord {
    /// ns-3 node id of the sending host.
    pub src_node: u32,
    /// ns-3 node id of the receiving host.
    pub dst_node: u32,
    /// Source port (see [`assign_ports`]).
    pub sport: u16,
    /// Destination port (see [`assign_ports`]).
    pub dport: u16,
    pub size_bytes: u64,
    /// When the flow started, in ns since the start of the run, as ns-3 prints it.
    pub start_ns: u64,
    /// Until the sender saw every byte acknowledged, in ns.
    pub fct_ns: u64,
    /// ns-3's ideal FCT of the flow, in ns.
    pub ideal_fct_ns: u64,
}

/// A flow's start as ns-3 prints it in an FCT file (`q->startTime.GetTimeStep()`, whole ns).
///
/// ns-3 reads a flow file's start as a `double` (the generators print `%.9f`) and schedules
/// the flow at `Seconds(start)`. In ConWeave's ns-3.19 and HPCC's ns-3.18 (`nstime.h`,
/// `int64x64-128.h`), `Seconds(double)` converts the `double` to the 64.64 fixed-point
/// `int64x64_t`, truncating its fraction to 64 bits, multiplies that by 10^9 exactly and keeps
/// the integer part (`Time(int64x64_t)` takes `GetHigh()`). So a start prints *rounded down*,
/// after two losses: the decimal's nearest `double` may lie below it (`2.000001234` prints
/// 2000001233, `0.000001` prints 999), and below 2^-11 s a `double` has bits finer than 2^-64
/// that the conversion drops (`0.00002`, a little above 20 µs as a `double`, prints 19999).
///
/// irn's start is taken as the decimal [`write_flows_conweave`] writes for it and read the
/// way ns-3 reads it (Rust parses decimals to the nearest `double`, as `strtod` does).
pub fn ns3_start_ns(start: Time) -> u64 {
    let seconds: f64 = ps_to_seconds(start.as_ps())
        .parse()
        .expect("a decimal of digits parses as a double");
    // seconds = mantissa × 2^exponent, exactly (a finite, non-negative double).
    let bits = seconds.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    // The 64.64 fixed-point value, its fractional bits truncated as ns-3's conversion does.
    let shift = exponent + 64;
    let fixed = if shift >= 0 {
        u128::from(mantissa) << shift
    } else {
        u128::from(mantissa)
            .checked_shr(shift.unsigned_abs())
            .unwrap_or(0)
    };
    ((fixed * 1_000_000_000) >> 64) as u64
}

/// ns-3's ideal FCT (`standalone_fct` in `qp_finish`), in ns, of a message of `size_bytes`
/// over `path`, with at most `mtu` bytes of payload and `header_bytes` of framing per packet:
///
/// `base_rtt + (size_bytes + packets × header_bytes) × 8 / bottleneck rate`, where
/// `base_rtt = 2 × one-way propagation delay + Σ over the path's links of (mtu × 8 / link
/// rate)` (its `pairRtt`: the delays both ways, one MTU's payload serialized once at every
/// hop, no ACK), every division rounded down to whole ns, as ns-3 computes it in integers.
///
/// ns-3 fills in its own packet: 48 B of headers without INT (`CustomHeader::
/// GetStaticWholeHeaderSize() − IntHeader::GetStaticSize()`: Ethernet 14, IPv4 20, UDP 8 and
/// its 6 B sequence header) and its `PACKET_PAYLOAD_SIZE` (1000 B by default). irn passes its
/// own framing (62 B by default) and MTU, the ones its packets carry: the formula is ns-3's,
/// the network irn's. The propagation delay is rounded to the nearest ns (ns-3's link delays
/// are whole ns).
pub fn ns3_standalone_fct_ns(path: &PathInfo, size_bytes: u64, mtu: u32, header_bytes: u32) -> u64 {
    const NS_PER_S: u128 = 1_000_000_000;
    let propagation_ns = (u128::from(path.propagation.as_ps()) + 500) / 1000;
    let per_hop: u128 = (path.rates.iter())
        .map(|r| u128::from(mtu) * 8 * NS_PER_S / u128::from(r.as_bps().max(1)))
        .sum();
    let base_rtt = 2 * propagation_ns + per_hop;
    let packets = u128::from(packets_for(size_bytes, mtu));
    let total_bytes = u128::from(size_bytes) + packets * u128::from(header_bytes);
    let transfer = total_bytes * 8 * NS_PER_S / u128::from(path.bottleneck.as_bps().max(1));
    u64::try_from(base_rtt + transfer).unwrap_or(u64::MAX)
}

/// How ns-3 numbers the UDP ports of flows, which FCT files print: as the simulator whose flow
/// file a run replays would (ConWeave's for every other workload).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum FctPorts {
    /// ConWeave's `network-load-balance.cc`: sport = 10000 + the number of earlier flows from
    /// the same source host, dport = 100 + the number of earlier flows to the same destination
    /// host (both `uint16_t`, so they wrap).
    #[default]
    ConWeave,
    /// HPCC's `third.cc`: sport = 10000 + the number of earlier flows on the same (src, dst)
    /// pair (wrapping), dport as the flow file gives it, one per flow in flow order (HPCC's
    /// generator writes 100; its `fct_analysis.py` keeps the flows with `dport` 100).
    Hpcc(Arc<[u16]>),
}

/// `(sport, dport)` for each flow, numbered as `ports` says, taking the flows in the order given
/// (the file order, which is start order).
pub fn assign_ports(flows: &[FlowSpec], ports: &FctPorts) -> Vec<(u16, u16)> {
    use std::collections::HashMap;
    let mut from: HashMap<HostIdx, u16> = HashMap::new();
    let mut to: HashMap<HostIdx, u16> = HashMap::new();
    let mut pair: HashMap<(HostIdx, HostIdx), u16> = HashMap::new();
    // Hand out the counter's value and advance it, wrapping as ns-3's `uint16_t` does.
    fn next(counter: &mut u16) -> u16 {
        let port = *counter;
        *counter = port.wrapping_add(1);
        port
    }
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| match ports {
            FctPorts::ConWeave => (
                next(from.entry(f.src).or_insert(FIRST_SPORT)),
                next(to.entry(f.dst).or_insert(FIRST_DPORT)),
            ),
            FctPorts::Hpcc(dports) => (
                next(pair.entry((f.src, f.dst)).or_insert(FIRST_SPORT)),
                dports.get(i).copied().unwrap_or(FIRST_DPORT),
            ),
        })
        .collect()
}

/// Write FCT records, one line each, as ConWeave does (see [`FctRecord`]).
pub fn write_fct<W: Write>(mut out: W, records: &[FctRecord]) -> std::io::Result<()> {
    for r in records {
        writeln!(
            out,
            "{} {} {} {} {} {} {} {}",
            r.src_node,
            r.dst_node,
            r.sport,
            r.dport,
            r.size_bytes,
            r.start_ns,
            r.fct_ns,
            r.ideal_fct_ns
        )?;
    }
    out.flush()
}

/// Read an FCT file as [`write_fct`] and ConWeave write it; `name` is the file name used in
/// error messages. Blank lines, trailing whitespace and CRLF line ends are accepted.
pub fn parse_fct(text: &str, name: &str) -> Result<Vec<FctRecord>, Ns3Error> {
    const COLUMNS: [&str; 8] = [
        "src",
        "dst",
        "sport",
        "dport",
        "size_bytes",
        "start_ns",
        "fct_ns",
        "ideal_fct_ns",
    ];
    let mut records = Vec::new();
    for (line, fields) in content_lines(text) {
        if fields.len() != COLUMNS.len() {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "expected 8 columns ({}), got {}",
                    COLUMNS.join(" "),
                    fields.len()
                ),
            ));
        }
        let mut v = [0u64; 8];
        for (k, (slot, text)) in v.iter_mut().zip(&fields).enumerate() {
            *slot = text.parse().map_err(|_| {
                Ns3Error::at(
                    name,
                    line,
                    format!("{} `{text}` is not a whole number", COLUMNS[k]),
                )
            })?;
        }
        let narrow = |k: usize, max: u64| -> Result<u64, Ns3Error> {
            if v[k] > max {
                return Err(Ns3Error::at(
                    name,
                    line,
                    format!("{} {} is larger than {max}", COLUMNS[k], v[k]),
                ));
            }
            Ok(v[k])
        };
        records.push(FctRecord {
            src_node: narrow(0, u64::from(u32::MAX))? as u32,
            dst_node: narrow(1, u64::from(u32::MAX))? as u32,
            sport: narrow(2, u64::from(u16::MAX))? as u16,
            dport: narrow(3, u64::from(u16::MAX))? as u16,
            size_bytes: v[4],
            start_ns: v[5],
            fct_ns: v[6],
            ideal_fct_ns: v[7],
        });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use irn_core::time::Bandwidth;

    fn star(hosts: u32) -> Topology {
        Topology::star(hosts, Bandwidth::from_gbps(100), Duration::from_us(1)).unwrap()
    }

    #[test]
    fn ns3_seconds_convert_exactly() {
        assert_eq!(seconds_to_ps("0"), Ok(0));
        assert_eq!(seconds_to_ps("2"), Ok(2 * PS_PER_S));
        assert_eq!(seconds_to_ps("2.000001234"), Ok(2_000_001_234_000));
        assert_eq!(seconds_to_ps("2.000000001234"), Ok(2_000_000_001_234));
        assert_eq!(seconds_to_ps("0.1"), Ok(100_000_000_000));
        assert_eq!(seconds_to_ps(".5"), Ok(500_000_000_000));
        assert_eq!(seconds_to_ps("3."), Ok(3 * PS_PER_S));
        assert_eq!(seconds_to_ps("1.0000000000010000"), Ok(PS_PER_S + 1));
        for bad in [
            "",
            ".",
            "-1",
            "+1",
            "1e-6",
            "1.2.3",
            "nan",
            "1.0000000000001",
            "18446745",
        ] {
            assert!(seconds_to_ps(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ns3_start_times_print_with_9_or_12_decimals() {
        assert_eq!(ps_to_seconds(0), "0.000000000");
        assert_eq!(ps_to_seconds(2_000_001_234_000), "2.000001234");
        assert_eq!(ps_to_seconds(2_000_000_001_234), "2.000000001234");
        for ps in [0, 1, 999, 1000, 123_456_789_012_345] {
            assert_eq!(seconds_to_ps(&ps_to_seconds(ps)), Ok(ps));
        }
    }

    #[test]
    fn ns3_start_times_round_down_as_ns3_holds_them() {
        // (start in s as a flow file has it, what ns-3.18/3.19 prints), worked out with exact
        // rational arithmetic from the double nearest each decimal.
        let cases: &[(&str, u64)] = &[
            ("0", 0),
            ("0.000000003", 2),
            ("0.000001", 999),
            ("0.00002", 19_999),
            ("0.1", 100_000_000),
            ("2", 2_000_000_000),
            ("2.5", 2_500_000_000),
            ("2.000000001", 2_000_000_001),
            ("2.000000003", 2_000_000_002),
            ("2.000001234", 2_000_001_233),
            ("2.000000001234", 2_000_000_001),
            ("3600.000000001", 3_600_000_000_000),
        ];
        for &(text, want) in cases {
            let start = Time::from_ps(seconds_to_ps(text).unwrap());
            assert_eq!(ns3_start_ns(start), want, "{text}");
        }
    }

    #[test]
    fn ns3_standalone_fct_is_worked_out_in_whole_ns() {
        // 100, 40 and 100 Gb/s links, 3 µs one way. Base RTT: 6000 ns of links + one 1024 B
        // payload per hop, floor(81.92) + floor(204.8) + floor(81.92) = 366 ns. 3000 B is 3
        // packets: (3000 + 3 × 62) B × 8 / 40 Gb/s = 637.2 ns, rounded down.
        let path = PathInfo {
            hops: 3,
            propagation: Duration::from_us(3),
            bottleneck: Bandwidth::from_gbps(40),
            rates: vec![
                Bandwidth::from_gbps(100),
                Bandwidth::from_gbps(40),
                Bandwidth::from_gbps(100),
            ],
        };
        assert_eq!(ns3_standalone_fct_ns(&path, 3000, 1024, 62), 6366 + 637);
        // ns-3's own packet: 48 B headers, 1000 B payloads; one byte is still one packet.
        assert_eq!(
            ns3_standalone_fct_ns(&path, 1, 1000, 48),
            6000 + 80 + 200 + 80 + 9
        );
    }

    #[test]
    fn ns3_generated_flows_round_trip_through_the_conweave_form() {
        let topo = star(8);
        let flows = generate(&topo, &Cdf::irn_default(), 0.7, Duration::from_us(500), 3);
        assert!(flows.len() > 10);
        let mut buf = Vec::new();
        write_flows_conweave(&mut buf, &flows, &topo).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let mut back = parse_flows(&text, "gen", &topo).unwrap();
        back.sort_by_key(|f| (f.start, f.src));
        assert_eq!(back, flows);
        // Same as the Poisson workload a scenario would draw.
        let direct = poisson(
            8,
            Bandwidth::from_gbps(100),
            0.7,
            &SizeDist::Cdf(Cdf::irn_default()),
            Duration::from_us(500),
            3,
        );
        assert_eq!(flows, direct);
    }

    #[test]
    fn ns3_ports_follow_the_simulators() {
        let f = |s: u32, d: u32| FlowSpec {
            src: HostIdx(s),
            dst: HostIdx(d),
            size_bytes: 1,
            start: Time::ZERO,
            class: FlowClass::Regular,
            verb: None,
        };
        let flows = [f(0, 1), f(0, 2), f(2, 1), f(0, 1)];
        assert_eq!(
            assign_ports(&flows, &FctPorts::ConWeave),
            vec![(10000, 100), (10001, 100), (10000, 101), (10002, 102)]
        );
        let hpcc = FctPorts::Hpcc(vec![100, 200, 100, 100].into());
        assert_eq!(
            assign_ports(&flows, &hpcc),
            vec![(10000, 100), (10000, 200), (10000, 100), (10001, 100)]
        );
    }
}
