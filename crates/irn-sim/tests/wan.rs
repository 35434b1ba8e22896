//! A tiny WAN end to end: two 2-host stars at 10 Gb/s joined by one 10 Gb/s long-haul link of
//! 1 ms, IRN over the default (input-queued, lossy) switch. Every flow finishes; a cross-site
//! flow waits at least the one-way delay for its last byte and the round trip for its last ACK,
//! a flow inside a site never touches the WAN, and a lone packet's FCT is worked out by hand.

use std::path::{Path, PathBuf};

use irn_sim::ids::HostIdx;
use irn_sim::scenario;
use irn_sim::topology::WanSite;

/// Hosts 0, 1 in site A, 2, 3 in site B. The retransmission timeouts sit above the 2 ms round
/// trip (the defaults, 100 and 320 us, are a datacenter's).
const SCENARIO: &str = r#"
[topology]
kind = "wan"
[topology.site]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"
[topology.wan]
rate = "10Gbps"
delay = "1ms"
[transport]
kind = "irn"
rto_low = "3ms"
rto_high = "5ms"
[workload]
kind = "trace"
file = "flows.csv"
"#;

/// Two flows into the long haul at once (A to B), one the other way later, a lone packet from
/// B to A, and one flow inside site A.
const FLOWS: &str = "src,dst,size_bytes,start_ns
0,2,100000,0
1,3,1000000,0
2,1,1000,0
0,1,20000,0
3,0,50000,100000
";

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let path = std::env::temp_dir().join(format!("irn-wan-test-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_tiny_wan_finishes_every_flow_with_the_long_hauls_delay() {
    let dir = TempDir::new();
    std::fs::write(dir.0.join("flows.csv"), FLOWS).unwrap();
    let sc = scenario::parse(SCENARIO, "wan.toml", Path::new(&dir.0), &[]).unwrap();
    let cfg = &sc.runs[0].config;
    let t = &cfg.topology;
    assert_eq!((t.hosts().len(), t.long_haul_links().len()), (4, 1));
    let r = irn_sim::run(cfg, &mut |_| {});

    for f in &r.flows {
        let (fct, sender_fct) = (f.fct_us.unwrap(), f.sender_fct_us.unwrap());
        let across = t.site_of(HostIdx(f.src)) != t.site_of(HostIdx(f.dst));
        assert!(
            fct >= f.ideal_fct_us,
            "flow {}: {fct} < {}",
            f.flow_id,
            f.ideal_fct_us
        );
        if across {
            assert!(
                fct > 1_000.0,
                "flow {}: last byte after {fct} us",
                f.flow_id
            );
            assert!(
                sender_fct > 2_000.0,
                "flow {}: last ACK after {sender_fct} us",
                f.flow_id
            );
        } else {
            assert!(sender_fct < 100.0, "flow {} stays in site A", f.flow_id);
        }
        assert_eq!(
            f.timeouts, 0,
            "flow {}: no timeout above the round trip",
            f.flow_id
        );
    }
    assert_eq!(r.summary.flows_incomplete, 0);
    assert_eq!(t.site_of(HostIdx(1)), Some(WanSite::A));

    // Flow 2 (1000 B, 1062 B on the wire, 849.6 ns per 10 Gb/s hop) goes host 2, B's switch,
    // the long haul, A's switch, host 1, alone on each output: serialized three times, then
    // 1 us + 1 ms + 1 us of propagation. Its 64 B ACK (51.2 ns per hop) comes back the same way.
    let lone = &r.flows[2];
    assert_eq!((lone.src, lone.dst, lone.size_bytes), (2, 1, 1000));
    // 3 × 0.8496 + 1002 us; then 3 × 0.0512 + 1002 us more.
    assert_eq!(lone.ideal_fct_us, 1004.5488);
    assert_eq!(lone.fct_us, Some(1004.5488));
    assert_eq!(lone.sender_fct_us, Some(2006.7024));
}

/// BDP-FC across a WAN: the IRN paper's one cap per network is the longest path's BDP, here
/// the WAN's (10 Gb/s × 2 ms ≈ 2,300 packets), so flows inside a site may put a WAN's worth in
/// flight and an incast there overflows its switch; `bdp_cap_scope = "path"` gives each flow
/// its own path's (10 Gb/s × 4 µs ≈ 4 packets inside a site) and the incast loses nothing.
#[test]
fn a_cap_per_path_keeps_a_sites_incast_within_its_buffer() {
    let text = |scope: &str| {
        format!(
            "[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"star\"\nhosts = 4\n\
             link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[topology.wan]\nrate = \"10Gbps\"\n\
             delay = \"1ms\"\n[switch]\nbuffer = \"100KB\"\n[transport]\nkind = \"irn\"\n\
             rto_low = \"3ms\"\nrto_high = \"5ms\"\n{scope}\n[workload]\nkind = \"trace\"\n\
             csv = \"\"\"\nsrc,dst,size_bytes,start_ns\n1,0,2000000,0\n2,0,2000000,0\n\
             3,0,2000000,0\n0,4,100000,0\n\"\"\"\n"
        )
    };
    let config = |scope: &str| {
        let s = scenario::parse(&text(scope), "t.toml", Path::new("."), &[]).unwrap();
        s.runs.into_iter().next().unwrap().config
    };
    let network = config("");
    let path = config("bdp_cap_scope = \"path\"");
    // Caps: the WAN's for every flow, or each path's (frames of 1024 B + 62 B).
    let cap = |cfg: &irn_sim::SimConfig, flow: usize| {
        cfg.flow_transport(&cfg.flows[flow]).bdp_cap.unwrap()
    };
    let inside = (0..3)
        .find(|&i| network.flows[i].dst == HostIdx(0))
        .unwrap();
    let across = (0..4)
        .find(|&i| network.flows[i].dst == HostIdx(4))
        .unwrap();
    assert_eq!(cap(&network, inside), cap(&network, across));
    assert!(cap(&network, inside) > 2000, "{}", cap(&network, inside));
    assert!(cap(&path, inside) <= 5, "{}", cap(&path, inside));
    assert_eq!(cap(&path, across), cap(&network, across));

    let run = |cfg: &irn_sim::SimConfig| irn_sim::run(cfg, &mut |_| {});
    let (wide, own) = (run(&network), run(&path));
    assert!(wide.summary.drops > 0, "the WAN's cap overflows the incast");
    assert_eq!(own.summary.drops, 0);
    assert!(own.flows.iter().all(|f| f.fct_us.is_some()));
    assert!(own.summary.avg_fct_us.unwrap() < wide.summary.avg_fct_us.unwrap());

    let err = scenario::parse(
        &text("bdp_cap_scope = \"path\"").replace("kind = \"irn\"", "kind = \"roce\""),
        "t.toml",
        Path::new("."),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("transport.bdp_cap_scope = \"path\": transport.kind = \"roce\" has no BDP-FC"),
        "{err}"
    );
}
