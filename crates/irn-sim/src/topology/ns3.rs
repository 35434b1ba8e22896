//! Topology files of the ns-3 RDMA simulators (HPCC, ConWeave, TLT), MODEL.md §8.
//!
//! The format, as those simulators read it with `>>` from an `ifstream`:
//!
//! ```text
//! N_nodes N_switches N_links
//! <N_switches switch ids>
//! src dst rate delay error_rate        (N_links lines, e.g. `0 128 100Gbps 1000ns 0`)
//! ```
//!
//! Nodes are numbered `0..N_nodes`; the hosts are the ids not listed as switches. Node ids become
//! [`NodeId`]s unchanged, and since [`Topology::from_links`] numbers hosts in `NodeId` order, host
//! `k` ([`HostIdx`]) is the `k`-th smallest host node id; [`host_of_node`] and [`node_of_host`]
//! convert between the two. In the published files hosts are `0..hosts`, so the two numberings
//! coincide, but nothing here relies on it.
//!
//! irn reads the files line by line, which is stricter than `>>` in ways that catch mistakes:
//!
//! - the header, the switch line and every link line must have exactly their number of fields
//!   (a file with no switches may omit the switch line);
//! - rates and delays go through irn's unit parsers ([`Bandwidth`], [`Duration`]): `100Gbps`,
//!   `40Gb/s`, `1000ns`, `1us`...;
//! - `error_rate`, the probability that the link loses a packet (each direction, as ns-3 puts its
//!   error model on both ends), must be a number in [0, 1): a link that loses everything would
//!   never deliver. [`parse_topology_with_loss`] returns the rates, which a scenario applies
//!   ([`crate::loss`]); [`parse_topology`] reads the network alone;
//! - a host must have exactly one link (one NIC port, MODEL.md §3).
//!
//! And as lenient as the simulators where the published files need it: blank lines, trailing
//! whitespace, CRLF line ends and a UTF-8 byte-order mark are accepted, and free text after the
//! last link is ignored (ns-3 stops reading after `N_links` links; ConWeave's
//! `leaf_spine_128_100G_OS2.txt` ends with notes). A line after the last link that looks like one
//! more link (five fields, two node ids; or two node ids and a rate, whatever the field count)
//! is an error, since the header's link count is then wrong;
//! - a link's rate must lie within [`LINK_RATES`], as a generated network's.
//!
//! Every error names the file and the 1-based line ([`Ns3Error`]).

use std::path::Path;

use irn_core::time::{Bandwidth, Duration};

use super::{LinkSpec, NodeKind, Topology, TopologyError, LINK_RATES, LINK_RATES_WHY};
use crate::ids::{HostIdx, NodeId};
use crate::loss::LinkLoss;

/// Why an ns-3 topology, flow or FCT file was rejected (or could not be read or written).
///
/// Each message is whole, with its cause in it (the I/O error, the topology's complaint): these
/// errors are also quoted inside scenario errors. So no variant reports a `source()` as well,
/// which would print the cause twice in an error chain.
#[derive(Debug, thiserror::Error)]
pub enum Ns3Error {
    /// The file could not be read or written.
    #[error("{file}: cannot {action}: {error}")]
    Io {
        file: String,
        /// `"read"` or `"write"`.
        action: &'static str,
        error: std::io::Error,
    },
    /// One line is wrong. `line` is 1-based.
    #[error("{file}:{line}: {problem}")]
    Line {
        file: String,
        line: u64,
        problem: String,
    },
    /// The file as a whole is wrong (for example, it is empty).
    #[error("{file}: {problem}")]
    File { file: String, problem: String },
    /// Every line parsed, but the network it describes cannot be simulated.
    #[error("{file}: {error}")]
    Topology { file: String, error: TopologyError },
}

impl Ns3Error {
    /// The 1-based line number the error points at, if it points at one.
    pub fn line(&self) -> Option<u64> {
        match self {
            Ns3Error::Line { line, .. } => Some(*line),
            _ => None,
        }
    }

    pub(crate) fn at(file: &str, line: u64, problem: impl Into<String>) -> Self {
        Ns3Error::Line {
            file: file.to_string(),
            line,
            problem: problem.into(),
        }
    }

    pub(crate) fn whole(file: &str, problem: impl Into<String>) -> Self {
        Ns3Error::File {
            file: file.to_string(),
            problem: problem.into(),
        }
    }

    pub(crate) fn read(file: &str, error: std::io::Error) -> Self {
        Ns3Error::Io {
            file: file.to_string(),
            action: "read",
            error,
        }
    }

    pub(crate) fn write(file: &str, error: std::io::Error) -> Self {
        Ns3Error::Io {
            file: file.to_string(),
            action: "write",
            error,
        }
    }
}

/// The non-blank lines of `text` as `(1-based line number, fields)`, after dropping a byte-order
/// mark. `str::lines` already strips `\r\n`; splitting on whitespace drops trailing spaces.
pub(crate) fn content_lines(text: &str) -> impl Iterator<Item = (u64, Vec<&str>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .map(|(i, line)| (i as u64 + 1, line.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, fields)| !fields.is_empty())
}

/// Read an ns-3 topology file (see the [module docs](self)); its links' error rates are not
/// returned (see [`read_topology_with_loss`]).
pub fn read_topology(path: &Path) -> Result<Topology, Ns3Error> {
    read_topology_with_loss(path).map(|(topology, _)| topology)
}

/// Read an ns-3 topology file with each link's `error_rate`, in the order of
/// [`Topology::links`].
pub fn read_topology_with_loss(path: &Path) -> Result<(Topology, Vec<f64>), Ns3Error> {
    let name = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::TOPOLOGY)
        .map_err(|e| Ns3Error::read(&name, e))?;
    parse_topology_with_loss(&text, &name)
}

/// Writes `topo` as an ns-3 topology file (see the [module docs](self)), so ns-3's RDMA
/// simulators and other tools can run the very graph a scenario generated (a Jellyfish drawn
/// from a seed, a WAN). Node ids are irn's [`NodeId`]s, links in irn's order with their rate
/// (in Gbps when whole, else bps: units every reader takes), delay (ns when whole, else ps) and
/// the probability `loss` gives it of losing a packet on the wire (written so that it reads
/// back as the same number). [`parse_topology_with_loss`] reads it back into the same nodes,
/// links, ports and losses.
pub fn write_topology<W: std::io::Write>(
    mut out: W,
    topo: &Topology,
    loss: &LinkLoss,
) -> std::io::Result<()> {
    let links = topo.links();
    let error_rates = loss.per_link_rates(topo);
    let switches = topo.switches();
    writeln!(
        out,
        "{} {} {}",
        topo.node_count(),
        switches.len(),
        links.len()
    )?;
    let ids: Vec<String> = switches.iter().map(|s| s.0.to_string()).collect();
    writeln!(out, "{}", ids.join(" "))?;
    for (l, error_rate) in links.iter().zip(error_rates) {
        let bps = l.rate.as_bps();
        let rate = if bps.is_multiple_of(1_000_000_000) {
            format!("{}Gbps", bps / 1_000_000_000)
        } else {
            format!("{bps}bps")
        };
        let ps = l.delay.as_ps();
        let delay = if ps.is_multiple_of(1000) {
            format!("{}ns", ps / 1000)
        } else {
            format!("{ps}ps")
        };
        writeln!(out, "{} {} {rate} {delay} {error_rate}", l.a.0, l.b.0)?;
    }
    Ok(())
}

/// Header counts up to this are trusted to size tables before the file confirms them.
const TRUSTED_COUNT: u32 = 1 << 16;

/// Parse the text of an ns-3 topology file; `name` is the file name used in error messages.
/// The links' error rates are checked but not returned (see [`parse_topology_with_loss`]).
pub fn parse_topology(text: &str, name: &str) -> Result<Topology, Ns3Error> {
    parse_topology_with_loss(text, name).map(|(topology, _)| topology)
}

/// [`parse_topology`], with each link's `error_rate` in the order of [`Topology::links`].
pub fn parse_topology_with_loss(text: &str, name: &str) -> Result<(Topology, Vec<f64>), Ns3Error> {
    let mut lines = content_lines(text);

    let Some((hline, header)) = lines.next() else {
        return Err(Ns3Error::whole(
            name,
            "empty file: an ns-3 topology starts with the line `N_nodes N_switches N_links`",
        ));
    };
    if header.len() != 3 {
        return Err(Ns3Error::at(
            name,
            hline,
            format!(
                "expected 3 fields (N_nodes N_switches N_links), got {}",
                header.len()
            ),
        ));
    }
    let count = |k: usize, what: &str| -> Result<u32, Ns3Error> {
        header[k].parse::<u32>().map_err(|_| {
            Ns3Error::at(
                name,
                hline,
                format!("{what} `{}` is not a whole number", header[k]),
            )
        })
    };
    let nodes = count(0, "N_nodes")?;
    let n_switches = count(1, "N_switches")?;
    let n_links = count(2, "N_links")?;
    if n_switches > nodes {
        return Err(Ns3Error::at(
            name,
            hline,
            format!("N_switches = {n_switches} is more than N_nodes = {nodes}"),
        ));
    }
    // The header's counts size the tables below. A small count is trusted (where the file
    // disagrees with it, that line is reported); a large one must fit in the file first, so a
    // damaged header cannot make the reader ask for gigabytes.
    let lines_after = text.lines().count().saturating_sub(1);
    if nodes > TRUSTED_COUNT && u64::from(nodes) > 2 * lines_after as u64 {
        return Err(Ns3Error::at(
            name,
            hline,
            format!(
                "N_nodes = {nodes}, but every node needs a link and the {lines_after} lines \
                 after the header can link at most {} nodes",
                2 * lines_after
            ),
        ));
    }

    // A node id field: a whole number below N_nodes.
    let node_id = |line: u64, what: &str, text: &str| -> Result<u32, Ns3Error> {
        let id: u32 = text.parse().map_err(|_| {
            Ns3Error::at(
                name,
                line,
                format!("{what} `{text}` is not a node id (a whole number)"),
            )
        })?;
        if id >= nodes {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "{what} {id} is out of range: the header says {nodes} nodes, ids 0 to {}",
                    nodes.saturating_sub(1)
                ),
            ));
        }
        Ok(id)
    };

    // Switch ids. A file without switches may leave the (empty) line out altogether.
    let mut kinds = vec![NodeKind::Host; nodes as usize];
    if n_switches > 0 {
        let Some((sline, ids)) = lines.next() else {
            return Err(Ns3Error::whole(
                name,
                format!(
                    "the file ends after the header; the second line should list the \
                     {n_switches} switch ids"
                ),
            ));
        };
        if ids.len() != n_switches as usize {
            return Err(Ns3Error::at(
                name,
                sline,
                format!(
                    "expected {n_switches} switch ids (the header's N_switches), got {}",
                    ids.len()
                ),
            ));
        }
        for text in ids {
            let id = node_id(sline, "switch id", text)?;
            if kinds[id as usize] == NodeKind::Switch {
                return Err(Ns3Error::at(
                    name,
                    sline,
                    format!("switch id {id} is listed twice"),
                ));
            }
            kinds[id as usize] = NodeKind::Switch;
        }
    }

    // Links. `host_link[n]` is the line of host n's link, to name both lines if it has two.
    let mut links = Vec::with_capacity((n_links as usize).min(lines_after));
    let mut error_rates = Vec::with_capacity(links.capacity());
    let mut host_link: Vec<Option<u64>> = vec![None; nodes as usize];
    let mut last_line = hline;
    while links.len() < n_links as usize {
        let Some((line, fields)) = lines.next() else {
            return Err(Ns3Error::at(
                name,
                hline,
                format!(
                    "the header says {n_links} links, but the file has only {} link lines \
                     (the last on line {last_line})",
                    links.len()
                ),
            ));
        };
        last_line = line;
        if fields.len() != 5 {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "expected 5 fields (src dst rate delay error_rate) on link {} of {n_links}, \
                     got {}",
                    links.len() + 1,
                    fields.len()
                ),
            ));
        }
        let a = node_id(line, "src", fields[0])?;
        let b = node_id(line, "dst", fields[1])?;
        if a == b {
            return Err(Ns3Error::at(
                name,
                line,
                format!("link from node {a} to itself; a link joins two different nodes"),
            ));
        }
        let rate: Bandwidth = fields[2]
            .parse()
            .map_err(|e| Ns3Error::at(name, line, format!("bad rate `{}`: {e}", fields[2])))?;
        // The bounds of a generated network's rates: outside them a byte takes under a
        // picosecond, or the run takes forever.
        let (slowest, fastest) = LINK_RATES;
        if !(slowest..=fastest).contains(&rate) {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "rate `{}` is out of range: between {slowest} and {fastest} \
                     ({LINK_RATES_WHY})",
                    fields[2]
                ),
            ));
        }
        let delay: Duration = fields[3]
            .parse()
            .map_err(|e| Ns3Error::at(name, line, format!("bad delay `{}`: {e}", fields[3])))?;
        let error_rate: f64 = fields[4].parse().map_err(|_| {
            Ns3Error::at(
                name,
                line,
                format!("error_rate `{}` is not a number", fields[4]),
            )
        })?;
        if !(0.0..1.0).contains(&error_rate) {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "error_rate {} is not a probability in [0, 1): the share of packets the \
                     link loses (a link that loses every packet would never deliver)",
                    fields[4]
                ),
            ));
        }
        error_rates.push(error_rate);
        for n in [a, b] {
            if kinds[n as usize] == NodeKind::Host {
                if let Some(first) = host_link[n as usize] {
                    return Err(Ns3Error::at(
                        name,
                        line,
                        format!(
                            "host {n} already has a link (line {first}); an irn host has \
                             exactly one NIC port"
                        ),
                    ));
                }
                host_link[n as usize] = Some(line);
            }
        }
        links.push(LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate,
            delay,
        });
    }

    // ns-3 stops reading here; a trailer of notes is fine, one more link line is not: five
    // fields that start with two node ids, or any line of two node ids and a rate (a link
    // with a field too few or too many, which ns-3 would read askew).
    for (line, fields) in lines {
        let ids = fields.len() >= 2 && fields[..2].iter().all(|f| f.parse::<u32>().is_ok());
        let rate = fields
            .get(2)
            .is_some_and(|f| f.parse::<Bandwidth>().is_ok());
        if ids && fields.len() == 5 {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "one more link after the {n_links} links the header announces; fix \
                     N_links on line {hline}"
                ),
            ));
        }
        if ids && rate {
            return Err(Ns3Error::at(
                name,
                line,
                format!(
                    "a link line with {} fields after the {n_links} links the header \
                     announces: a link has 5 (src dst rate delay error_rate), and N_links on \
                     line {hline} counts them all; complete it and fix N_links, or remove it",
                    fields.len()
                ),
            ));
        }
    }

    let topology = Topology::from_links(kinds, links).map_err(|error| Ns3Error::Topology {
        file: name.to_string(),
        error,
    })?;
    Ok((topology, error_rates))
}

/// The [`HostIdx`] of ns-3 node id `node`, or `None` if it is a switch or out of range.
///
/// Hosts are numbered in node-id order, so in the published files (hosts `0..hosts`) the host
/// index equals the node id.
pub fn host_of_node(topo: &Topology, node: u32) -> Option<HostIdx> {
    if node as usize >= topo.node_count() {
        return None;
    }
    topo.host_index(NodeId(node))
}

/// The ns-3 node id of host `h` (what flow and FCT files name). Panics if `h` is out of range.
pub fn node_of_host(topo: &Topology, h: HostIdx) -> u32 {
    topo.host_node(h).0
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAR: &str =
        "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 40Gbps 2us 0.000000\n";

    /// Written and read back, a topology has the same nodes, links (rates, delays, order) and
    /// so the same ports and routes.
    #[test]
    fn a_written_topology_reads_back_as_the_same_graph() {
        let odd = (
            Bandwidth::from_bps(12_345_678_901),
            Duration::from_ps(1_500),
        );
        let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
        for t in [
            Topology::jellyfish(20, 6, 30, link, 3).unwrap(),
            Topology::jellyfish(9, 4, 9, odd, 1).unwrap(),
            Topology::fat_tree(4, link.0, link.1).unwrap(),
            parse_topology(STAR, "star.txt").unwrap(),
        ] {
            // Every third link loses packets, at rates that must read back bit for bit.
            let rates: Vec<f64> = (0..t.links().len())
                .map(|i| [0.0, 1e-7, 0.012_345_678_9][i % 3])
                .collect();
            let loss = LinkLoss::per_link(&t, &rates);
            let mut text = Vec::new();
            write_topology(&mut text, &t, &loss).unwrap();
            let text = String::from_utf8(text).unwrap();
            let (back, back_rates) = parse_topology_with_loss(&text, "written.txt").unwrap();
            assert_eq!(back_rates, rates, "{text}");
            assert_eq!(back.links(), t.links(), "{text}");
            assert_eq!(back.hosts(), t.hosts());
            assert_eq!(back.switches(), t.switches());
            for s in 0..t.switches().len() {
                for h in 0..t.hosts().len() {
                    let h = HostIdx(h as u32);
                    assert_eq!(back.next_hops_at_switch(s, h), t.next_hops_at_switch(s, h));
                }
            }
        }
    }

    #[test]
    fn ns3_star_parses_with_hosts_in_node_order() {
        let t = parse_topology(STAR, "star.txt").unwrap();
        assert_eq!(t.node_count(), 4);
        assert_eq!(t.hosts(), &[NodeId(0), NodeId(1), NodeId(2)]);
        assert_eq!(t.switches(), &[NodeId(3)]);
        assert_eq!(t.links()[2].rate, Bandwidth::from_gbps(40));
        assert_eq!(t.links()[2].delay, Duration::from_us(2));
        assert_eq!(host_of_node(&t, 2), Some(HostIdx(2)));
        assert_eq!(host_of_node(&t, 3), None);
        assert_eq!(host_of_node(&t, 99), None);
        assert_eq!(node_of_host(&t, HostIdx(1)), 1);
    }

    #[test]
    fn ns3_hosts_after_switches_map_to_host_indices() {
        // Switch 0, hosts 1..=3: host index k is node k + 1.
        let text =
            "4 1 3\r\n0 \r\n1 0 10Gbps 1us 0\r\n2 0 10Gbps 1us 0\r\n0 3 10Gbps 1us 0\r\n\r\n";
        let t = parse_topology(text, "t").unwrap();
        assert_eq!(t.hosts(), &[NodeId(1), NodeId(2), NodeId(3)]);
        assert_eq!(host_of_node(&t, 3), Some(HostIdx(2)));
        assert_eq!(host_of_node(&t, 0), None);
        assert_eq!(node_of_host(&t, HostIdx(0)), 1);
    }

    #[test]
    fn ns3_trailer_is_ignored_but_an_extra_link_is_not() {
        let ok = format!("{STAR}\n\nFirst line: total node #, switch node #, link #\nsrc0 dst0 rate delay error_rate\n");
        assert!(parse_topology(&ok, "t").is_ok());
        let bad = format!("{STAR}0 3 100Gbps 1000ns 0\n");
        let err = parse_topology(&bad, "t").unwrap_err();
        assert_eq!(err.line(), Some(6), "{err}");
    }

    #[test]
    fn ns3_errors_from_the_builder_name_the_file() {
        // Node 2 is a host without a link.
        let err = parse_topology("3 0 1\n0 1 1Gbps 1us 0\n", "lonely.txt").unwrap_err();
        assert!(matches!(err, Ns3Error::Topology { .. }), "{err}");
        assert!(err.to_string().starts_with("lonely.txt: "), "{err}");
    }
}
