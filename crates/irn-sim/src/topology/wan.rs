//! Two datacenter sites joined by long-haul links, the WAN of NRL's slides on lossless Ethernet
//! across global distances, composed from any two single-site topologies.
//!
//! Each site keeps its own wiring; [`Topology::wan`] renumbers its nodes, gives it one border
//! switch ([`Border`]: one of its own switches, or a dedicated one above its top tier) and joins
//! the two borders with `links` parallel long-haul links of their own rate and one-way delay.
//! Routing stays shortest paths with ECMP, so a packet between the sites crosses exactly one
//! long-haul link, chosen among the parallel ones like any equal-cost next hop.
//!
//! Numbering, so workloads (which pick hosts by index) and tests can name what they mean:
//! - nodes: site A's hosts, then site B's (host indices `0..nA` and `nA..nA + nB`, each site's
//!   in its own order), then site A's switches in its own order followed by its dedicated border
//!   switch if it has one, then site B's switches and dedicated border likewise;
//! - ports: every site node keeps its ports in its site's order; a top-tier switch under a
//!   dedicated border gains one port last, to the border; a dedicated border's ports lead to the
//!   top tier first (in node order), then come its long-haul ports; a site switch that is its
//!   own border gains the long-haul ports after its own. On each border the long-haul ports are
//!   the last `links`, link `i` at both ends ([`Topology::long_haul_links`]).

use core::ops::Range;

use irn_core::time::{Bandwidth, Duration};

use super::{node_tiers, LinkSpec, NodeKind, TierRun, Topology, TopologyError, MAX_SWITCH_PORTS};
use crate::ids::{HostIdx, NodeId, PortId};

/// One of the two sites of a WAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WanSite {
    /// The first site: its hosts come first.
    A,
    /// The second site.
    B,
}

impl WanSite {
    fn index(self) -> usize {
        self as usize
    }
}

impl core::fmt::Display for WanSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            WanSite::A => "A",
            WanSite::B => "B",
        })
    }
}

/// Where a site meets the WAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    /// This switch of the site (its own [`NodeId`] there) is the border: a star's one switch, a
    /// dumbbell's switch on the WAN's side.
    Switch(NodeId),
    /// A dedicated border switch linked once to every switch of the site's top tier (the
    /// switches farthest from the hosts: a leaf-spine's spines, a fat-tree's cores), each link at
    /// the rate and delay of that switch's first port, i.e. the top tier's own links.
    TopTier,
}

/// One site as [`Topology::wan`] takes it: a single-site network and where its border is.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    pub topology: &'a Topology,
    pub border: Border,
}

/// The long-haul links between the two border switches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WanLinks {
    /// Parallel links, at least 1; each is an equal-cost next hop at either border.
    pub links: u32,
    pub rate: Bandwidth,
    /// One-way propagation delay of each link.
    pub delay: Duration,
    /// The buffer a border switch gives each long-haul input (a WAN link must hold about its
    /// round trip to stay lossless under pause control). The topology only carries it, for the
    /// switch models to read.
    pub buffer_bytes: u64,
}

/// One long-haul link by its two ends. Each port is its border's egress onto the link and, in
/// the switch models, the input the link's packets arrive on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongHaulLink {
    /// The port on site A's border switch.
    pub a: PortId,
    /// The port on site B's border switch.
    pub b: PortId,
}

impl LongHaulLink {
    /// The end at `site`'s border.
    pub fn at(&self, site: WanSite) -> PortId {
        match site {
            WanSite::A => self.a,
            WanSite::B => self.b,
        }
    }
}

/// What makes a [`Topology`] a WAN: its two sites, their borders and the long-haul links.
#[derive(Clone, Debug, PartialEq)]
pub struct Wan {
    spec: WanLinks,
    /// Site B's first host index (= site A's host count).
    first_b_host: u32,
    hosts: u32,
    borders: [NodeId; 2],
    long_haul: Vec<LongHaulLink>,
}

impl Wan {
    /// The long-haul links, in order.
    pub fn long_haul_links(&self) -> &[LongHaulLink] {
        &self.long_haul
    }

    /// The links' rate, delay, count and the border buffer, as given.
    pub fn spec(&self) -> WanLinks {
        self.spec
    }

    /// The buffer of each long-haul input at a border switch, in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        self.spec.buffer_bytes
    }

    /// `site`'s border switch.
    pub fn border(&self, site: WanSite) -> NodeId {
        self.borders[site.index()]
    }

    /// The host indices of `site`: site A's `0..nA`, site B's `nA..nA + nB`.
    pub fn hosts(&self, site: WanSite) -> Range<u32> {
        match site {
            WanSite::A => 0..self.first_b_host,
            WanSite::B => self.first_b_host..self.hosts,
        }
    }

    /// The site of host `h` (any index past site A's is site B's).
    pub fn site_of(&self, h: HostIdx) -> WanSite {
        if h.0 < self.first_b_host {
            WanSite::A
        } else {
            WanSite::B
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        size_of::<Wan>() + self.long_haul.capacity() * size_of::<LongHaulLink>()
    }
}

impl Topology {
    /// Sites `a` and `b` joined by `wan.links` long-haul links between their border switches
    /// (see the module docs for the numbering). Fails if `wan.links` is 0, a [`Border::Switch`]
    /// is not a switch of its site, a border or a top-tier switch would exceed
    /// [`MAX_SWITCH_PORTS`], or the composed network does ([`Topology::from_links`]).
    pub fn wan(a: Site<'_>, b: Site<'_>, wan: WanLinks) -> Result<Topology, TopologyError> {
        if wan.links == 0 {
            return Err(TopologyError::WanNoLinks);
        }
        let hosts = [a.topology.hosts().len(), b.topology.hosts().len()];
        let mut kinds = vec![NodeKind::Host; hosts[0] + hosts[1]];
        let mut links = Vec::new();
        let mut borders = [NodeId(0); 2];
        let mut tiers = Vec::new();
        for (which, site, host_base) in [(WanSite::A, a, 0), (WanSite::B, b, hosts[0])] {
            borders[which.index()] = add_site(which, site, host_base, wan, &mut kinds, &mut links)?;
            tiers.extend(site_tiers(which, site));
        }
        let long_haul = LinkSpec {
            a: borders[0],
            b: borders[1],
            rate: wan.rate,
            delay: wan.delay,
        };
        links.extend((0..wan.links).map(|_| long_haul));
        let mut t = Topology::from_links(kinds, links)?.with_tier_runs(tiers);

        // The long-haul links come last, so they are each border's last ports, in order.
        let ends = t.node_ports(borders[0]).end;
        let long_haul = (ends - wan.links..ends)
            .map(|p| LongHaulLink {
                a: PortId(p),
                b: t.ports()[p as usize].peer,
            })
            .collect();
        t.wan = Some(Box::new(Wan {
            spec: wan,
            first_b_host: hosts[0] as u32,
            hosts: (hosts[0] + hosts[1]) as u32,
            borders,
            long_haul,
        }));
        Ok(t)
    }
}

/// Appends `site`'s switches (and its dedicated border, if any) to `kinds` and its links (and
/// the border's) to `links`, its hosts numbered from `host_base`; returns its border's new id.
fn add_site(
    which: WanSite,
    site: Site<'_>,
    host_base: usize,
    wan: WanLinks,
    kinds: &mut Vec<NodeKind>,
    links: &mut Vec<LinkSpec>,
) -> Result<NodeId, TopologyError> {
    let t = site.topology;
    let switch_base = kinds.len();
    let new_id: Vec<NodeId> = (0..t.node_count() as u32)
        .map(|n| match t.host_index(NodeId(n)) {
            Some(h) => NodeId((host_base + h.index()) as u32),
            None => {
                let row = t.switches().partition_point(|s| s.0 < n);
                NodeId((switch_base + row) as u32)
            }
        })
        .collect();
    kinds.resize(kinds.len() + t.switches().len(), NodeKind::Switch);
    links.extend(t.links().iter().map(|l| LinkSpec {
        a: new_id[l.a.index()],
        b: new_id[l.b.index()],
        ..*l
    }));
    let long_haul = wan.links as usize;
    match site.border {
        Border::Switch(n) => {
            if n.index() >= t.node_count() || t.kind(n) != NodeKind::Switch {
                return Err(TopologyError::WanBorderNotSwitch {
                    site: which,
                    node: n,
                });
            }
            check_border_ports(which, t.node_ports(n).len(), long_haul)?;
            Ok(new_id[n.index()])
        }
        Border::TopTier => {
            let top = top_tier(t);
            check_border_ports(which, top.len(), long_haul)?;
            let border = NodeId(kinds.len() as u32);
            kinds.push(NodeKind::Switch);
            for s in top {
                let ports = t.node_ports(s);
                if ports.len() >= MAX_SWITCH_PORTS {
                    return Err(TopologyError::WanTopTierFull {
                        site: which,
                        switch: s,
                        ports: ports.len(),
                    });
                }
                let own = t.ports()[ports.start as usize];
                links.push(LinkSpec {
                    a: new_id[s.index()],
                    b: border,
                    rate: own.rate,
                    delay: own.delay,
                });
            }
            Ok(border)
        }
    }
}

/// `site`'s switches' tiers in the WAN, in the order [`add_site`] numbers them: the site's
/// own named tiers (or all its switches as `switch`), then its dedicated border, if any.
fn site_tiers(which: WanSite, site: Site<'_>) -> Vec<TierRun> {
    let t = site.topology;
    let mut runs: Vec<TierRun> = if t.tier_runs().is_empty() {
        vec![TierRun {
            site: None,
            name: "switch",
            switches: t.switches().len() as u32,
        }]
    } else {
        t.tier_runs().to_vec()
    };
    if site.border == Border::TopTier {
        runs.push(TierRun {
            site: None,
            name: "border",
            switches: 1,
        });
    }
    for r in &mut runs {
        r.site = Some(which);
    }
    runs
}

/// A border switch has `site_ports` ports in its site and `long_haul` more.
fn check_border_ports(
    site: WanSite,
    site_ports: usize,
    long_haul: usize,
) -> Result<(), TopologyError> {
    if site_ports + long_haul > MAX_SWITCH_PORTS {
        return Err(TopologyError::WanBorderPorts {
            site,
            site_ports,
            links: long_haul,
        });
    }
    Ok(())
}

/// The switches farthest (in hops) from their nearest host, in node order.
fn top_tier(t: &Topology) -> Vec<NodeId> {
    let tier = node_tiers(t);
    let top = t.switches().iter().map(|s| tier[s.index()]).max();
    (t.switches().iter().copied())
        .filter(|s| Some(tier[s.index()]) == top)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const G10: Bandwidth = Bandwidth::from_gbps(10);
    const US: Duration = Duration::from_us(1);

    fn links(links: u32, rate: Bandwidth, delay: Duration) -> WanLinks {
        WanLinks {
            links,
            rate,
            delay,
            buffer_bytes: 1_000_000,
        }
    }

    fn star(hosts: u32) -> Topology {
        Topology::star(hosts, G10, US).unwrap()
    }

    /// The star's switch is its border.
    fn at_switch(t: &Topology) -> Site<'_> {
        Site {
            topology: t,
            border: Border::Switch(t.switches()[0]),
        }
    }

    fn top_tier(t: &Topology) -> Site<'_> {
        Site {
            topology: t,
            border: Border::TopTier,
        }
    }

    /// A 4-host leaf-spine (10 Gb/s hosts, 40 Gb/s spines, 1 us) and a k = 4 fat-tree (16 hosts,
    /// 10 Gb/s, 2 us) joined by two 100 Gb/s links of 5 ms.
    fn leaf_spine_and_fat_tree() -> (Topology, Topology, Topology) {
        let a = Topology::leaf_spine(2, 2, 2, G10, Bandwidth::from_gbps(40), US).unwrap();
        let b = Topology::fat_tree(4, G10, US * 2).unwrap();
        let w = links(2, Bandwidth::from_gbps(100), Duration::from_ms(5));
        let t = Topology::wan(top_tier(&a), top_tier(&b), w).unwrap();
        (a, b, t)
    }

    fn far_node(t: &Topology, p: PortId) -> NodeId {
        t.ports()[t.ports()[p.index()].peer.index()].node
    }

    /// How many long-haul links each equal-cost path from `src` to `dst` crosses.
    fn long_haul_crossings(t: &Topology, src: HostIdx, dst: HostIdx) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![(t.host_port(src), 0)];
        while let Some((p, crossed)) = stack.pop() {
            let crossed = crossed + usize::from(t.is_long_haul(p));
            let next = far_node(t, p);
            if next == t.host_node(dst) {
                out.push(crossed);
                continue;
            }
            stack.extend(t.next_hops(next, dst).iter().map(|&q| (q, crossed)));
        }
        out
    }

    #[test]
    fn two_stars_numbering_ports_and_path() {
        let (a, b) = (star(2), star(3));
        let ms = Duration::from_ms(1);
        let t = Topology::wan(at_switch(&a), at_switch(&b), links(1, G10, ms)).unwrap();
        // Hosts 0, 1 (A) and 2, 3, 4 (B); A's switch 5, B's 6.
        assert_eq!((t.node_count(), t.hosts().len()), (7, 5));
        assert_eq!(t.switches(), &[NodeId(5), NodeId(6)]);
        assert_eq!(t.ports().len(), 2 * (5 + 1));
        for h in 0..5 {
            assert_eq!(t.host_port(HostIdx(h)), PortId(h), "host {h}");
        }
        // Each switch: its host ports in its star's order, the long-haul port last.
        assert_eq!(t.node_ports(NodeId(5)), 5..8);
        assert_eq!(t.node_ports(NodeId(6)), 8..12);
        assert_eq!(far_node(&t, PortId(6)), NodeId(1));
        assert_eq!(far_node(&t, PortId(10)), NodeId(4));
        assert_eq!(
            t.long_haul_links(),
            &[LongHaulLink {
                a: PortId(7),
                b: PortId(11)
            }]
        );
        assert!(t.is_long_haul(PortId(7)) && t.is_long_haul(PortId(11)));
        assert!(!t.is_long_haul(PortId(6)));

        let wan = t.wan_info().unwrap();
        assert_eq!(
            (wan.border(WanSite::A), wan.border(WanSite::B)),
            (NodeId(5), NodeId(6))
        );
        assert_eq!((wan.hosts(WanSite::A), wan.hosts(WanSite::B)), (0..2, 2..5));
        let sites: Vec<_> = (0..5).map(|h| t.site_of(HostIdx(h)).unwrap()).collect();
        use WanSite::{A, B};
        assert_eq!(sites, [A, A, B, B, B]);
        assert_eq!(wan.buffer_bytes(), 1_000_000);

        let p = t.path(HostIdx(1), HostIdx(3));
        assert_eq!((p.hops, p.propagation), (3, ms + US * 2));
        assert_eq!(p.rates, [G10; 3]);
        assert_eq!(t.max_path_propagation(), ms + US * 2);
        assert_eq!(t.path(HostIdx(2), HostIdx(4)).propagation, US * 2);
    }

    #[test]
    fn a_single_site_has_no_wan() {
        let t = star(2);
        assert!(t.wan_info().is_none() && t.long_haul_links().is_empty());
        assert_eq!(t.site_of(HostIdx(0)), None);
    }

    #[test]
    fn leaf_spine_and_fat_tree_counts() {
        let (_, _, t) = leaf_spine_and_fat_tree();
        // Hosts: 4 of A, 16 of B. A's 2 leaves and 2 spines (20..24), its border 24; B's 8 edge,
        // 8 aggregation and 4 core switches (25..45), its border 45.
        assert_eq!((t.hosts().len(), t.switches().len()), (20, 4 + 1 + 20 + 1));
        let wan = t.wan_info().unwrap();
        let (ba, bb) = (wan.border(WanSite::A), wan.border(WanSite::B));
        assert_eq!((ba, bb), (NodeId(24), NodeId(45)));
        assert_eq!(wan.hosts(WanSite::B), 4..20);
        // Links: A's 4 + 4 and 2 to its border; B's 48 and 4 to its border; 2 long-haul.
        assert_eq!(t.links().len(), 8 + 2 + 48 + 4 + 2);
        assert_eq!(t.ports().len(), 2 * t.links().len());

        // A border: the top tier's links first, at their rate and delay, then the long haul.
        let port = |p: u32| t.ports()[p as usize];
        let border_a: Vec<_> = t.node_ports(ba).map(port).collect();
        let rates: Vec<u64> = border_a
            .iter()
            .map(|p| p.rate.as_bps() / 1_000_000_000)
            .collect();
        assert_eq!(rates, [40, 40, 100, 100]);
        assert_eq!(border_a[0].delay, US);
        assert_eq!(border_a[3].delay, Duration::from_ms(5));
        let spines: Vec<_> = t
            .node_ports(ba)
            .take(2)
            .map(|p| far_node(&t, PortId(p)))
            .collect();
        assert_eq!(spines, [NodeId(22), NodeId(23)]);
        let cores: Vec<_> = t
            .node_ports(bb)
            .take(4)
            .map(|p| far_node(&t, PortId(p)))
            .collect();
        assert_eq!(cores, [NodeId(41), NodeId(42), NodeId(43), NodeId(44)]);
        assert_eq!(port(t.node_ports(bb).start).delay, US * 2);
        // A top-tier switch's border port is its last.
        assert_eq!(t.node_ports(NodeId(22)).len(), 3);
        assert_eq!(far_node(&t, PortId(t.node_ports(NodeId(41)).end - 1)), bb);

        let ends: Vec<_> = t.long_haul_links().iter().map(|l| (l.a.0, l.b.0)).collect();
        let (ea, eb) = (t.node_ports(ba).end, t.node_ports(bb).end);
        assert_eq!(ends, [(ea - 2, eb - 2), (ea - 1, eb - 1)]);
        for l in t.long_haul_links() {
            assert_eq!(t.ports()[l.a.index()].peer, l.b);
            assert_eq!(l.at(WanSite::B), l.b);
        }
    }

    #[test]
    fn routes_cross_the_wan_once_and_spread_over_its_links() {
        let (_, _, t) = leaf_spine_and_fat_tree();
        let wan = t.wan_info().unwrap();
        for src in (0..20).map(HostIdx) {
            for dst in (0..20).map(HostIdx).filter(|&d| d != src) {
                let want = usize::from(t.site_of(src) != t.site_of(dst));
                let crossings = long_haul_crossings(&t, src, dst);
                assert!(
                    crossings.iter().all(|&c| c == want),
                    "{src} -> {dst}: {crossings:?}"
                );
            }
        }
        // Both long-haul links are next hops at each border towards the other site.
        let (la, lb): (Vec<_>, Vec<_>) = t.long_haul_links().iter().map(|l| (l.a, l.b)).unzip();
        for h in wan.hosts(WanSite::B) {
            assert_eq!(t.next_hops(wan.border(WanSite::A), HostIdx(h)), la);
        }
        for h in wan.hosts(WanSite::A) {
            assert_eq!(t.next_hops(wan.border(WanSite::B), HostIdx(h)), lb);
        }
        // Host 0 to B's host 0: host, leaf, spine, border (1 us each), 5 ms, then border, core,
        // aggregation, edge, host (2 us each).
        let p = t.path(HostIdx(0), HostIdx(4));
        assert_eq!(p.hops, 8);
        assert_eq!(p.propagation, Duration::from_ms(5) + US * 11);
        assert_eq!(p.bottleneck, G10);
        assert_eq!(t.max_path_propagation(), Duration::from_ms(5) + US * 11);
    }

    /// Inside each site, every switch routes its own site's hosts as it did alone.
    #[test]
    fn routing_inside_a_site_is_unchanged() {
        let (a, b, t) = leaf_spine_and_fat_tree();
        let wan = t.wan_info().unwrap();
        let first_switch = [20, 25];
        for (i, (site, alone)) in [(WanSite::A, &a), (WanSite::B, &b)].into_iter().enumerate() {
            let host_base = wan.hosts(site).start;
            for (row, &s) in alone.switches().iter().enumerate() {
                let new = NodeId(first_switch[i] + row as u32);
                let shift = t.node_ports(new).start as i64 - alone.node_ports(s).start as i64;
                for h in 0..alone.hosts().len() as u32 {
                    let want: Vec<i64> = (alone.next_hops(s, HostIdx(h)).iter())
                        .map(|p| p.0 as i64 + shift)
                        .collect();
                    let got: Vec<i64> = (t.next_hops(new, HostIdx(host_base + h)).iter())
                        .map(|p| p.0 as i64)
                        .collect();
                    assert_eq!(got, want, "site {site}, switch {s}, host {h}");
                }
            }
        }
    }

    /// 50 ms one way at 400 Gb/s: delays add up in picoseconds without saturating.
    #[test]
    fn long_delays_add_up_exactly() {
        let (a, b) = (star(2), star(2));
        let delay = Duration::from_ms(50);
        let fast = Bandwidth::from_gbps(400);
        let t = Topology::wan(at_switch(&a), at_switch(&b), links(1, fast, delay)).unwrap();
        assert_eq!(t.max_path_propagation(), delay + US * 2);
        assert_eq!(t.max_path_propagation().as_ps(), 50_002_000_000);
        // The round trip's bytes at 400 Gb/s: 5 GB, far from u64's limits.
        assert_eq!(fast.bdp_bytes(t.max_path_propagation() * 2), 5_000_200_000);
    }

    #[test]
    fn rejected_wans() {
        let (s2, s511) = (star(2), star(511));
        let tall = Topology::leaf_spine(512, 1, 1, G10, G10, US).unwrap();
        let err = |a: Site<'_>, b: Site<'_>, n: u32| {
            Topology::wan(a, b, links(n, G10, US))
                .unwrap_err()
                .to_string()
        };
        let cases = [
            (
                err(at_switch(&s2), at_switch(&s2), 0),
                "a wan needs at least 1 long-haul link".to_string(),
            ),
            (
                err(
                    at_switch(&s2),
                    Site {
                        topology: &s2,
                        border: Border::Switch(NodeId(1)),
                    },
                    1,
                ),
                "site B's border must be one of the site's switches; node 1 is not".into(),
            ),
            (
                err(at_switch(&s511), at_switch(&s2), 2),
                "site A's border switch would have 513 ports (511 towards its site, 2 long-haul)"
                    .into(),
            ),
            (
                err(at_switch(&s2), top_tier(&tall), 1),
                "site B's top-tier switch (node 1024 of the site) has 512 ports already".into(),
            ),
        ];
        for (got, want) in cases {
            assert!(got.starts_with(&want), "{got}");
        }
        assert!(Topology::wan(at_switch(&s511), at_switch(&s2), links(1, G10, US)).is_ok());
    }
}
