//! `kind = "wan"`: two datacenter sites joined by long-haul links.
//!
//! ```toml
//! [topology]
//! kind = "wan"
//! [topology.site]        # both sites: a [topology] of any kind but "ns3" and "wan"
//! kind = "leaf-spine"    #   (default: the default topology, a k = 6 fat-tree)
//! leaves = 2
//! [topology.site_b]      # optional: a different second site, its keys in full (default:
//!                        #   the same as site)
//! kind = "star"
//! hosts = 4
//! [topology.wan]
//! links = 1              # parallel long-haul links between the border switches (default 1)
//! rate = "100Gbps"       # each link's rate (default 100Gbps)
//! delay = "25ms"         # one-way propagation (default 25ms: the slides' 50 ms round trip)
//! buffer = "600MB"       # a border switch's buffer for each long-haul input
//!                        #   (default: twice the link's rate × round trip)
//! ```
//!
//! Each site's border switch is placed by its kind: a star's one switch; a dumbbell's right
//! switch in site A and left switch in site B (so the WAN reads left to right: A's hosts, A's
//! bottleneck, the long haul, B's bottleneck, B's hosts); a leaf-spine or fat-tree gets a
//! dedicated border switch linked to every spine or core switch at their links' rate and delay.
//! Hosts are numbered site A's first (see [`Topology::wan`]).

use std::path::Path;

use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::{network, TopologyKind, TopologySection};
use crate::scenario::{invalid, link_rate, parse_key, ScenarioError};
use crate::topology::{Border, Site, Topology, TopologyError, WanLinks, WanSite};
use crate::units::Bytes;

/// `[topology.wan]`: the long-haul links.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WanSection {
    /// Parallel links between the two border switches (default 1), equal-cost next hops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<u32>,
    /// Each link's rate (default 100Gbps, the slides' link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// Each link's one-way propagation delay (default 25ms: the slides' 50 ms round trip, 150
    /// maximum PAUSE times at 100 Gb/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
    /// A border switch's buffer for each long-haul input (default: twice the link's rate ×
    /// round trip, as the datacenter switches' 240 KB is twice their BDP, IRN §4.1; the slides
    /// ask at least rate × round trip + the pause threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<String>,
}

/// The slides' long-haul link: 100 Gb/s with a 50 ms round trip.
const DEFAULT_RATE: &str = "100Gbps";
const DEFAULT_DELAY: &str = "25ms";
/// Global distances are a few hundred milliseconds round trip at most.
const MAX_DELAY: Duration = Duration::from_ms(1000);

/// The sites' tables: their keys as `[topology]`'s at `at`.
const SITES: [(WanSite, &str); 2] = [
    (WanSite::A, "topology.site"),
    (WanSite::B, "topology.site_b"),
];

/// Fills a wan's defaults: both sites (the second a copy of the first unless given) and the
/// links' count, rate and delay. Rejects a site that is not one generated datacenter.
pub(super) fn normalize(tp: &mut TopologySection, file: &str) -> Result<(), ScenarioError> {
    let site = tp.site.get_or_insert_with(Default::default);
    normalize_site(site, file, SITES[0].1)?;
    match &mut tp.site_b {
        Some(b) => normalize_site(b, file, SITES[1].1)?,
        None => tp.site_b = tp.site.clone(),
    }
    let wan = tp.wan.get_or_insert_with(Default::default);
    wan.links.get_or_insert(1);
    wan.rate.get_or_insert_with(|| DEFAULT_RATE.into());
    wan.delay.get_or_insert_with(|| DEFAULT_DELAY.into());
    Ok(())
}

fn normalize_site(site: &mut TopologySection, file: &str, at: &str) -> Result<(), ScenarioError> {
    // A file makes a kindless site an ns-3 one: name the file, the key that was written.
    if let (None, Some(name)) = (site.kind, &site.file) {
        return Err(invalid(
            file,
            &format!("{at}.file"),
            &format!("{name:?}"),
            "a wan site is one generated datacenter (\"fat-tree\", \"star\", \"dumbbell\", \
             \"leaf-spine\", \"clos3\" or \"rail\"), not an ns-3 topology file",
        ));
    }
    let kind = site.resolved_kind();
    if matches!(
        kind,
        TopologyKind::Ns3 | TopologyKind::Wan | TopologyKind::Jellyfish
    ) {
        return Err(invalid(
            file,
            &format!("{at}.kind"),
            &format!("\"{}\"", kind.name()),
            "a wan site is one generated datacenter: \"fat-tree\", \"star\", \"dumbbell\", \
             \"leaf-spine\", \"clos3\" or \"rail\" (its kind places the border switch)",
        ));
    }
    site.normalize_at(file, at)
}

/// The two sites and the links between them, each value checked where its key is named.
pub(super) fn build(
    tp: &TopologySection,
    file: &str,
    base_dir: &Path,
    seed: u64,
) -> Result<Topology, ScenarioError> {
    let default = TopologySection::default();
    let a = tp.site.as_deref().unwrap_or(&default);
    let b = tp.site_b.as_deref().unwrap_or(a);
    let ta = network(a, SITES[0].1, file, base_dir, seed)?;
    let tb = network(b, SITES[1].1, file, base_dir, seed)?;
    let links = links(tp.wan.as_ref().unwrap_or(&WanSection::default()), file)?;
    let site = |t, s: &TopologySection, which| Site {
        topology: t,
        border: border(t, s, which),
    };
    Topology::wan(site(&ta, a, WanSite::A), site(&tb, b, WanSite::B), links).map_err(|e| {
        let (key, value) = match &e {
            TopologyError::WanTopTierFull { site, .. } => {
                let (s, at) = if *site == WanSite::A {
                    (a, SITES[0].1)
                } else {
                    (b, SITES[1].1)
                };
                // The top tier's ports count a leaf-spine's leaves, a clos3's pods or a rail's
                // rail leaves (groups x rails); a fat-tree's k is at most 64, far below the
                // radix.
                let (name, n) = match s.kind.unwrap_or_default() {
                    TopologyKind::Clos3 => ("pods", s.pods),
                    TopologyKind::Rail => ("groups", s.groups),
                    _ => ("leaves", s.leaves),
                };
                (format!("{at}.{name}"), n.unwrap_or_default().to_string())
            }
            _ => ("topology.wan.links".into(), links.links.to_string()),
        };
        invalid(file, &key, &value, &e.to_string())
    })
}

/// Where a site of `s`'s kind meets the WAN (see the module docs).
fn border(t: &Topology, s: &TopologySection, which: WanSite) -> Border {
    match s.kind.unwrap_or_default() {
        TopologyKind::Star => Border::Switch(t.switches()[0]),
        // Left switch, then right (`Topology::dumbbell`): the one facing the other site.
        TopologyKind::Dumbbell => Border::Switch(match which {
            WanSite::A => t.switches()[1],
            WanSite::B => t.switches()[0],
        }),
        _ => Border::TopTier,
    }
}

/// `[topology.wan]`'s values, defaults filled.
fn links(w: &WanSection, file: &str) -> Result<WanLinks, ScenarioError> {
    let links = w.links.unwrap_or(1);
    if links == 0 {
        return Err(invalid(
            file,
            "topology.wan.links",
            "0",
            "at least 1 long-haul link",
        ));
    }
    let rate_text = w.rate.as_deref().unwrap_or(DEFAULT_RATE);
    let rate = link_rate(file, "topology.wan.rate", rate_text)?;
    let delay_text = w.delay.as_deref().unwrap_or(DEFAULT_DELAY);
    let delay = parse_key::<Duration>(file, "topology.wan.delay", delay_text)?;
    if delay == Duration::ZERO || delay > MAX_DELAY {
        return Err(invalid(
            file,
            "topology.wan.delay",
            &format!("{delay_text:?}"),
            &format!("a one-way delay greater than 0 and at most {MAX_DELAY}"),
        ));
    }
    let buffer_bytes = match &w.buffer {
        Some(text) => {
            let b = parse_key::<Bytes>(file, "topology.wan.buffer", text)?.0;
            // Twice the round trip of the fastest, longest long-haul link: 10 Tb/s × 2 s × 2.
            const MAX: u64 = 5_000_000_000_000;
            if b == 0 || b > MAX {
                return Err(invalid(
                    file,
                    "topology.wan.buffer",
                    &format!("{text:?}"),
                    &format!(
                        "between 1B and {} (twice the round trip of the fastest, longest \
                         long-haul link: 10Tbps × 2s)",
                        Bytes(MAX)
                    ),
                ));
            }
            b
        }
        None => rate.bdp_bytes(delay * 2).saturating_mul(2),
    };
    Ok(WanLinks {
        links,
        rate,
        delay,
        buffer_bytes,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::ids::HostIdx;
    use crate::scenario::tests::one;
    use crate::scenario::{parse, Run};
    use crate::topology::WanSite;

    const BRIEF: &str = "[topology]\nkind = \"wan\"\n\
        [topology.site]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
        link_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
        [topology.wan]\nlinks = 1\nrate = \"100Gbps\"\ndelay = \"25ms\"\nbuffer = \"600MB\"\n";

    fn with_sets(text: &str, sets: &[&str]) -> Run {
        let mut o = vec!["workload.duration=10us".to_string()];
        o.extend(sets.iter().map(|s| s.to_string()));
        parse(text, "t.toml", Path::new("."), &o)
            .unwrap()
            .runs
            .remove(0)
    }

    #[test]
    fn defaults_fill_both_sites_and_the_links() {
        let run = one("[topology]\nkind = \"wan\"\n").unwrap();
        let tp = &run.resolved.topology;
        let site = tp.site.as_deref().unwrap();
        assert_eq!(
            (site.k, site.link_rate.as_deref()),
            (Some(6), Some("40Gbps"))
        );
        assert_eq!(
            tp.site_b.as_deref().unwrap().k,
            Some(6),
            "site_b copies site"
        );
        let wan = tp.wan.as_ref().unwrap();
        assert_eq!(wan.links, Some(1));
        assert_eq!(
            (wan.rate.as_deref(), wan.delay.as_deref()),
            (Some("100Gbps"), Some("25ms"))
        );
        assert_eq!(wan.buffer, None, "computed when built");
        assert!(tp.link_rate.is_none() && tp.link_delay.is_none());

        let t = &run.config.topology;
        // Two k = 6 fat-trees of 54 hosts and 45 switches, each with a border switch.
        assert_eq!((t.hosts().len(), t.switches().len()), (108, 92));
        let w = t.wan_info().unwrap();
        assert_eq!(w.hosts(WanSite::B), 54..108);
        // Twice 100 Gb/s × 50 ms.
        assert_eq!(w.buffer_bytes(), 1_250_000_000);
        assert_eq!(w.spec().delay, irn_core::Duration::from_ms(25));
    }

    #[test]
    fn the_briefs_example_and_a_different_second_site() {
        let t = one(BRIEF).unwrap().config.topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (16, 10));
        let w = t.wan_info().unwrap();
        assert_eq!(w.buffer_bytes(), 600_000_000);
        assert_eq!(t.site_of(HostIdx(8)), Some(WanSite::B));
        let lh = t.long_haul_links()[0];
        assert_eq!(t.ports()[lh.a.index()].rate.to_string(), "100Gbps");

        // Site B a dumbbell: its left switch (1 host, the bottleneck) is the border.
        let text = format!(
            "{BRIEF}[topology.site_b]\nkind = \"dumbbell\"\nleft = 1\nright = 2\n\
             bottleneck_rate = \"10Gbps\"\n"
        );
        let t = one(&text).unwrap().config.topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (11, 5 + 2));
        let border = t.wan_info().unwrap().border(WanSite::B);
        assert_eq!(t.node_ports(border).len(), 3);
        let p = t.path(HostIdx(0), HostIdx(10));
        // Host, leaf, spine, border (A); long haul; left switch, bottleneck, right switch, host.
        assert_eq!(p.hops, 6);
        assert_eq!(p.bottleneck.to_string(), "10Gbps");
    }

    #[test]
    fn set_reaches_into_the_wan_and_its_sites() {
        let run = with_sets(
            BRIEF,
            &[
                "topology.wan.delay=10ms",
                "topology.wan.links=2",
                "topology.site.spines=1",
            ],
        );
        let t = &run.config.topology;
        assert_eq!(t.wan_info().unwrap().spec().delay.to_string(), "10ms");
        assert_eq!(t.long_haul_links().len(), 2);
        assert_eq!(t.switches().len(), 2 * (2 + 1 + 1));
        let run = with_sets(
            "",
            &[
                "topology.kind=wan",
                "topology.site.kind=star",
                "topology.site.hosts=2",
            ],
        );
        assert_eq!(run.config.topology.hosts().len(), 4);
    }

    #[test]
    fn keys_and_errors() {
        let star = "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"star\"\nhosts = 2\n";
        let cases = [
            (
                "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"ns3\"\nfile = \"x.txt\"\n"
                    .to_string(),
                "t.toml: topology.site.kind = \"ns3\": a wan site is one generated datacenter",
            ),
            (
                "[topology]\nkind = \"wan\"\n[topology.site]\nfile = \"x.txt\"\n".into(),
                "topology.site.file = \"x.txt\": a wan site is one generated datacenter (\"fat-tree\", \"star\", \"dumbbell\", \"leaf-spine\", \"clos3\" or \"rail\"), not an ns-3 topology file",
            ),
            (
                "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"wan\"\n".into(),
                "topology.site.kind = \"wan\": a wan site",
            ),
            (
                format!("{star}[topology.site_b]\nkind = \"ns3\"\n"),
                "topology.site_b.kind = \"ns3\": a wan site",
            ),
            (
                format!("{star}k = 4\n"),
                "topology.site.k is set: does not apply to topology.site.kind = \"star\"",
            ),
            (
                format!("{star}[topology.site.wan]\nlinks = 1\n"),
                "topology.site.wan is set: does not apply to topology.site.kind = \"star\"",
            ),
            (
                "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"star\"\n".into(),
                "topology.site.hosts = (missing): required for kind = \"star\"",
            ),
            (
                star.replace("hosts = 2", "hosts = 512"),
                "topology.site.hosts = 512: between 2 and 511",
            ),
            (
                format!("{star}link_rate = \"fast\"\n"),
                "topology.site.link_rate = \"fast\"",
            ),
            (
                format!("{star}[topology.site_b]\nkind = \"leaf-spine\"\nleaves = 0\n"),
                "topology.site_b.leaves = 0: between 1 and 512",
            ),
            (
                "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"leaf-spine\"\n\
                 leaves = 512\nspines = 1\nhosts_per_leaf = 1\n"
                    .into(),
                "topology.site.leaves = 512: site A's top-tier switch (node 1024 of the site) has \
                 512 ports already",
            ),
            (
                format!("{star}[topology.wan]\nlinks = 0\n"),
                "topology.wan.links = 0: at least 1",
            ),
            (
                format!("{star}[topology.wan]\nlinks = 512\n"),
                "topology.wan.links = 512: site A's border switch would have 514 ports",
            ),
            (
                format!("{star}[topology.wan]\nrate = \"0Gbps\"\n"),
                "topology.wan.rate = \"0Gbps\": ",
            ),
            (
                format!("{star}[topology.wan]\ndelay = \"x\"\n"),
                "topology.wan.delay = \"x\": ",
            ),
            (
                format!("{star}[topology.wan]\ndelay = \"0ms\"\n"),
                "topology.wan.delay = \"0ms\": a one-way delay greater than 0 and at most 1s",
            ),
            (
                format!("{star}[topology.wan]\ndelay = \"1001ms\"\n"),
                "topology.wan.delay = \"1001ms\": a one-way delay greater than 0",
            ),
            (
                format!("{star}[topology.wan]\nbuffer = \"lots\"\n"),
                "topology.wan.buffer = \"lots\": `lots` is not a byte size",
            ),
            (
                format!("{star}[topology.wan]\nbuffer = \"0B\"\n"),
                "topology.wan.buffer = \"0B\": between 1B and 5000GB (twice the round trip of the fastest, longest long-haul link: 10Tbps × 2s)",
            ),
            // Below the largest frame (1086 B), or its whole 64-byte blocks with credits, a
            // long-haul input drops everything or never grants credit for it.
            (
                format!("{star}[topology.wan]\nbuffer = \"1085B\"\n"),
                "topology.wan.buffer = 1085B: must hold at least one full frame (1086B): a \
                 long-haul input that cannot drops every packet crossing the WAN",
            ),
            (
                format!("{star}[topology.wan]\nrate = \"1Mbps\"\ndelay = \"1us\"\n"),
                "topology.wan.buffer = 0B (the default: twice the long link's bandwidth-delay \
                 product): must hold at least one full frame",
            ),
            (
                format!("{star}[topology.wan]\nbuffer = \"1086B\"\n[switch]\ncredits = true\n"),
                "topology.wan.buffer = 1086B: with credits, at least 1088B",
            ),
            (
                format!("{star}[topology.wan]\nlength = 1\n"),
                "unknown field `length`, expected one of `links`, `rate`, `delay`, `buffer`",
            ),
            (
                "[topology]\nkind = \"wan\"\nk = 4\n".into(),
                "topology.k is set: does not apply to topology.kind = \"wan\"",
            ),
            (
                "[topology]\nkind = \"wan\"\nlink_delay = \"1us\"\n".into(),
                "topology.link_delay is set: does not apply to topology.kind = \"wan\"",
            ),
            (
                "[topology]\nkind = \"star\"\nhosts = 2\n[topology.wan]\nlinks = 1\n".into(),
                "topology.wan is set: does not apply to topology.kind = \"star\"",
            ),
            (
                "[topology]\n[topology.site_b]\nkind = \"star\"\n".into(),
                "topology.site_b is set: does not apply to topology.kind = \"fat-tree\"",
            ),
        ];
        for (text, want) in cases {
            let err = one(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}\n{err}");
        }
        one(&format!("{star}[topology.wan]\nlinks = 510\n")).unwrap();
        one(&format!("{star}[topology.wan]\nbuffer = \"1086B\"\n")).unwrap();
    }

    /// With the shared-buffer switch a long-haul input's buffer joins its border switch's pool,
    /// whatever its size: two long links of 100 KB under a 9 MB pool make 9.2 MB (taking the
    /// 9 MB off per long link once wrapped below zero, an endless pool), and a border whose
    /// PFC headroom the long links' buffers cover is not refused for `switch.buffer`.
    #[test]
    fn long_haul_buffers_join_a_shared_border_pool() {
        let wan = |keys: &str| {
            format!(
                "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"star\"\nhosts = 2\n\
                 [topology.wan]\n{keys}\n[switch]\nmodel = \"shared-buffer\"\n"
            )
        };
        let run = one(&wan("links = 2\nbuffer = \"100KB\"")).unwrap();
        let t = &run.config.topology;
        for site in [WanSite::A, WanSite::B] {
            let border = t.wan_info().unwrap().border(site);
            assert_eq!(t.shared_pool(border, 9_000_000), 9_200_000);
        }
        assert_eq!(t.shared_pool(t.hosts()[0], 9_000_000), 9_000_000);
        // 100 Gb/s, 500 us: the long link's input reserves 12.5 MB of round trip and more,
        // less than the pool's 9 MB + 25 MB but not than switch.buffer's 9 MB alone.
        let pfc = wan("delay = \"500us\"\nbuffer = \"25MB\"") + "pfc = true\n";
        one(&pfc).unwrap();
        let err = one(&pfc.replace("25MB", "1MB")).unwrap_err().to_string();
        assert!(
            err.contains("and the shared pool must hold a 1086B frame besides; at least"),
            "{err}"
        );
        assert!(
            err.contains("B (besides the 1000000B of its long-haul inputs' topology.wan.buffer)"),
            "{err}"
        );
    }
}
