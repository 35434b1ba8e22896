//! ConWeave (`load_balancing.kind = "conweave"`) on small leaf-spines: its probes and replies,
//! a reroute behind a TAIL with the destination ToR putting packets back in order, NOTIFYs, and
//! its keys.

use std::path::Path;

use irn_sim::config::SimConfig;
use irn_sim::metrics::ConWeaveSummary;
use irn_sim::scenario;
use irn_sim::sim::trace::TraceRow;

fn parse(text: &str) -> Result<SimConfig, String> {
    scenario::parse(text, "t.toml", Path::new("."), &[])
        .map(|mut sc| sc.runs.remove(0).config)
        .map_err(|e| e.to_string())
}

/// Two leaves of two hosts under two spines, 100 Gb/s, 1 µs links; IRN, lossy.
const NET: &str = "seed = 3\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\n\
                   hosts_per_leaf = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
                   [switch]\nmodel = \"shared-buffer\"\nbuffer = \"1MB\"\n\
                   [transport]\nkind = \"irn\"\n";

/// One 200 KB flow from host 0 (leaf 0) to host 2 (leaf 1), under ConWeave with `keys`.
fn one_flow(keys: &str) -> irn_sim::RunResult {
    let text = format!(
        "{NET}[workload]\nkind = \"trace\"\ncsv = \"src,dst,size_bytes,start_ns\\n0,2,200000,0\\n\"\n\
         [load_balancing]\nkind = \"conweave\"\n{keys}"
    );
    irn_sim::run(&parse(&text).unwrap(), &mut |_| {})
}

fn conweave(r: &irn_sim::RunResult) -> ConWeaveSummary {
    r.summary.conweave.expect("a ConWeave run reports it")
}

/// Alone on the network, every RTT request is answered in time (8 µs: the 4 µs base RTT plus
/// θ_reply's 4): nothing is rerouted or held, the flow probes once per round trip (each reply
/// makes the next packet open an epoch), and each reply is a 64 B packet of its own.
#[test]
fn an_unloaded_flow_probes_every_round_trip_and_never_moves() {
    let r = one_flow("");
    let c = conweave(&r);
    assert!(r.flows[0].fct_us.is_some());
    assert_eq!((c.reroutes, c.held_packets, c.notifies), (0, 0, 0));
    assert!(c.epochs > 1, "{c:?}");
    assert_eq!(c.replies, c.epochs);
    assert_eq!(c.control_bytes, 64 * c.replies);
    assert_eq!(r.summary.out_of_order_packets, 0);
}

/// With θ_reply at 0 every reply is late (a reply takes serialization and store-and-forward
/// on top of the propagation base RTT): epochs end in a TAIL and the flow may move between the
/// two spines (seed 3: 3 epochs, 2 reroutes); each TAIL is answered by a CLEAR. Unloaded, the
/// new path's packets never overtake the TAIL, and the receiver sees every packet in order.
#[test]
fn late_replies_reroute_behind_a_tail_and_the_receiver_sees_no_reordering() {
    let r = one_flow("reply_extra = \"0us\"\n");
    let c = conweave(&r);
    assert!(r.flows[0].fct_us.is_some());
    assert!(c.reroutes > 1, "{c:?}");
    assert_eq!(
        c.replies,
        c.epochs + c.reroutes,
        "an RTT reply per epoch, a CLEAR per TAIL"
    );
    assert_eq!(r.summary.out_of_order_packets, 0, "{c:?}");
    assert_eq!((c.held_packets, c.flushed_by_timer), (0, 0), "{c:?}");
    // The same run again: the same results.
    assert_eq!(one_flow("reply_extra = \"0us\"\n").summary, r.summary);
}

/// 1 MB flows from hosts 0 and 1 (leaf 0) to host 2 and host `second` (leaf 1) under RoCE
/// (go-back-N) with PFC and a 9 MB buffer, under ConWeave with `keys`.
fn two_roce_flows(second: u32, keys: &str) -> irn_sim::RunResult {
    irn_sim::run(&two_roce_config(second, keys), &mut |_| {})
}

fn two_roce_config(second: u32, keys: &str) -> SimConfig {
    let net = NET
        .replace("kind = \"irn\"\n", "kind = \"roce\"\n")
        .replace("buffer = \"1MB\"\n", "buffer = \"600KB\"\npfc = true\n");
    let text = format!(
        "{net}[workload]\nkind = \"trace\"\n\
         csv = \"src,dst,size_bytes,start_ns\\n0,2,1000000,0\\n1,{second},1000000,0\\n\"\n\
         [load_balancing]\nkind = \"conweave\"\n{keys}"
    );
    parse(&text).unwrap()
}

/// Two flows from leaf 0 to one host of leaf 1, through a destination ToR with `keys`.
fn two_to_one(keys: &str) -> irn_sim::RunResult {
    two_roce_flows(2, keys)
}

/// With replies always late (θ_reply 0), both flows reroute often and reorder at the same
/// destination port at once. Unlimited queues keep everything in order; with one reorder
/// queue per port, the second flow's early packets find none free and go on out of order
/// (seed 3: once), which go-back-N pays for in resent packets.
#[test]
fn a_port_out_of_reorder_queues_lets_packets_through_out_of_order() {
    let late = "reply_extra = \"0us\"\n";
    let unlimited = two_to_one(late);
    let one = two_to_one(&format!("{late}reorder_queues = 1\n"));
    let (u, o) = (conweave(&unlimited), conweave(&one));
    assert!(unlimited
        .flows
        .iter()
        .chain(&one.flows)
        .all(|f| f.fct_us.is_some()));
    assert_eq!(u.queues_exhausted, 0);
    assert_eq!(unlimited.summary.out_of_order_packets, 0, "{u:?}");
    assert!(o.queues_exhausted > 0, "{o:?}");
    assert!(one.summary.out_of_order_packets > 0 && one.summary.retransmissions > 0);
}

/// The P4 switch's rule (`reorder_queue_groups`): with two queues per port in one group, a
/// flow may take only the queue its hash names, and flows 0 and 1 both hash to queue 1; so
/// where any free queue serves both, the hashed rule leaves the second out of order.
#[test]
fn hashed_reorder_queues_run_out_before_the_port_does() {
    let late = "reply_extra = \"0us\"\nreorder_queues = 2\n";
    let any = two_to_one(late);
    let hashed = two_to_one(&format!("{late}reorder_queue_groups = 1\n"));
    assert_eq!(conweave(&any).queues_exhausted, 0);
    assert_eq!(any.summary.out_of_order_packets, 0);
    assert!(conweave(&hashed).queues_exhausted > 0);
    assert!(hashed.summary.out_of_order_packets > 0);
    // Groups of one queue each: every queue is a candidate, as with no groups.
    let all = two_to_one(&format!("{late}reorder_queue_groups = 2\n"));
    assert_eq!(all.summary, any.summary);
}

/// An incast through ECN-marking switches: CE-marked packets are answered with NOTIFYs.
#[test]
fn marked_packets_are_answered_with_notifies() {
    let text = format!(
        "{NET}cc = \"dcqcn\"\n[workload]\nkind = \"trace\"\n\
         csv = \"src,dst,size_bytes,start_ns\\n0,2,300000,0\\n1,2,300000,0\\n3,2,300000,0\\n\"\n\
         [load_balancing]\nkind = \"conweave\"\n"
    )
    .replace(
        "buffer = \"1MB\"\n",
        "buffer = \"1MB\"\necn = \"dcqcn\"\necn_kmin = \"5KB\"\necn_kmax = \"20KB\"\n",
    );
    let r = irn_sim::run(&parse(&text).unwrap(), &mut |_| {});
    let c = conweave(&r);
    assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
    assert!(r.summary.ecn_marks > 0);
    assert!(c.notifies > 0, "{c:?}");
}

#[test]
fn conweave_errors_name_the_key_and_what_is_allowed() {
    let lb = "[load_balancing]\nkind = \"conweave\"\n";
    let cases = [
        (
            format!("{NET}{lb}inactive = \"0us\"\n"),
            "load_balancing.inactive",
        ),
        (format!("{NET}{lb}reply_extr = \"1us\"\n"), "reply_extr"),
        (
            format!("{NET}{lb}reorder_buffer = \"nowhere\"\n"),
            "reorder_buffer",
        ),
        (
            format!("{NET}{lb}reorder_queues = 12\nreorder_queue_groups = 5\n"),
            "load_balancing.reorder_queue_groups",
        ),
        (
            format!("{NET}{lb}reorder_queue_groups = 3\n"),
            "groups need a limit",
        ),
        (
            format!("{NET}{lb}flow_table = 0\n"),
            "load_balancing.flow_table",
        ),
        (
            format!("{NET}[load_balancing]\nkind = \"drill\"\nstatic_paths = true\n"),
            "static_paths",
        ),
        (
            format!("{NET}[load_balancing]\nkind = \"ecmp\"\npath_busy = \"1us\"\n"),
            "path_busy",
        ),
        (
            format!("{NET}{lb}").replace(
                "link_delay = \"1us\"\n",
                "link_delay = \"1us\"\nrouting = \"k-shortest\"\n",
            ),
            "not with topology.routing = \"k-shortest\"",
        ),
        (
            format!("{NET}{lb}").replace(
                "buffer = \"1MB\"\n",
                "buffer = \"1MB\"\ndeflection = \"dibs\"\n",
            ),
            "not with load_balancing.kind = \"conweave\"",
        ),
    ];
    for (text, want) in cases {
        let err = parse(&text)
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{text}"));
        assert!(
            err.contains("t.toml") && err.contains(want),
            "{want}\n{err}"
        );
    }
}

/// Two 1 MB flows from leaf 0 to leaf 1 under RoCE (go-back-N) with PFC and a 9 MB buffer:
/// their replies come late behind each other's packets, so ConWeave moves flows between the
/// spines; the packets a new path delivers early wait at the destination ToR for their TAIL,
/// and the go-back-N receivers see nothing out of order, so nothing is resent.
#[test]
fn the_tail_releases_held_packets_in_order() {
    let r = two_roce_flows(3, "");
    let c = conweave(&r);
    assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
    assert!(c.reroutes > 0 && c.held_packets > 0, "{c:?}");
    assert!(c.flushed_by_tail > 0, "{c:?}");
    assert_eq!(c.flushed_by_timer, 0, "{c:?}");
    assert_eq!(
        (
            r.summary.out_of_order_packets,
            r.summary.retransmissions,
            r.summary.drops
        ),
        (0, 0, 0)
    );
}

/// ns-3's reorder buffer (`reorder_buffer = "outside"`) against the P4 switch's: four 1 MB
/// flows from two leaves into one host of a third, 600 KB buffers with PFC, replies always
/// late. Held in the buffer, early packets pause their inputs, and nothing is lost or resent;
/// held outside it, they come in unchecked and are admitted in bursts at the flush, where
/// some are dropped even under PFC (seed 3: 1,407), and go-back-N resends.
#[test]
fn held_packets_outside_the_buffer_can_be_dropped_at_the_flush() {
    let run = |keys: &str| {
        let net = NET
            .replace("kind = \"irn\"\n", "kind = \"roce\"\n")
            .replace("leaves = 2", "leaves = 3")
            .replace("buffer = \"1MB\"\n", "buffer = \"600KB\"\npfc = true\n");
        let text = format!(
            "{net}[workload]\nkind = \"trace\"\n\
             csv = \"src,dst,size_bytes,start_ns\\n0,4,1000000,0\\n1,4,1000000,0\\n2,4,1000000,0\\n3,4,1000000,0\\n\"\n\
             [load_balancing]\nkind = \"conweave\"\nreply_extra = \"0us\"\n{keys}"
        );
        irn_sim::run(&parse(&text).unwrap(), &mut |_| {})
    };
    let (inside, outside) = (run(""), run("reorder_buffer = \"outside\"\n"));
    for r in [&inside, &outside] {
        assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
        assert!(conweave(r).held_packets > 0);
    }
    let s = &inside.summary;
    assert_eq!((s.drops, s.retransmissions), (0, 0));
    assert!(s.pause_frames > 0);
    assert!(outside.summary.drops > 0 && outside.summary.retransmissions > 0);
}

/// One 1 MB RoCE (go-back-N) flow from host 0 (leaf 4) to host 2 (leaf 5), with PFC; the
/// link between leaf 5 and `spine` fails 20 µs in for 1 ms, routing reconverging 5 µs later.
fn one_flow_with_a_failure(spine: u32) -> irn_sim::RunResult {
    one_flow_with_a_failure_and(spine, "")
}

/// [`one_flow_with_a_failure`] with ConWeave's `keys`.
fn one_flow_with_a_failure_and(spine: u32, keys: &str) -> irn_sim::RunResult {
    let net = NET
        .replace("kind = \"irn\"\n", "kind = \"roce\"\n")
        .replace("buffer = \"1MB\"\n", "buffer = \"600KB\"\npfc = true\n");
    let text = format!(
        "{net}[workload]\nkind = \"trace\"\ncsv = \"src,dst,size_bytes,start_ns\\n0,2,1000000,0\\n\"\n\
         [load_balancing]\nkind = \"conweave\"\n{keys}\
         [failures]\nreconvergence = \"5us\"\n\
         [[failures.link]]\nnodes = [5, {spine}]\nat = \"20us\"\nfor = \"1ms\"\n"
    );
    irn_sim::run(&parse(&text).unwrap(), &mut |_| {})
}

/// An unloaded flow crosses one spine. A failed link of the other spine loses only replies
/// and acknowledgements sent that way: a lost RTT reply makes ConWeave reroute behind a TAIL,
/// and the data arrives in order. A failed link of the flow's own path loses the data on and
/// behind it until routing reconverges, and then routing moves the flow to the other spine
/// without ConWeave's TAIL: its destination ToR is not told, and the receiver sees the gap,
/// which go-back-N resends. Either way the flow completes.
#[test]
fn a_failed_path_moves_the_flow_unknown_to_its_destination() {
    let runs = [6, 7].map(one_flow_with_a_failure);
    let hit = (runs.iter())
        .position(|r| conweave(r).failovers > 0)
        .expect("the flow crosses one of the spines");
    let (on_path, other) = (&runs[hit], &runs[1 - hit]);
    for r in &runs {
        assert!(r.flows[0].fct_us.is_some());
        assert!(lost(r) > 0);
    }
    assert_eq!(conweave(on_path).failovers, 1);
    assert!(on_path.summary.out_of_order_packets > 0);
    assert!(on_path.summary.retransmissions > 0);
    let c = conweave(other);
    assert_eq!((c.failovers, c.reroutes), (0, 1), "{c:?}");
    assert_eq!(
        (
            other.summary.out_of_order_packets,
            other.summary.retransmissions
        ),
        (0, 0)
    );
}

/// With `static_paths` (ConWeave's ns-3) the path table keeps the failed path: no flow is moved
/// when routing reconverges, and the flow on it loses packets until ConWeave's own reroute,
/// more than when routing moves it.
#[test]
fn static_paths_keep_sending_on_the_failed_path() {
    for spine in [6, 7] {
        let moved = one_flow_with_a_failure(spine);
        let kept = one_flow_with_a_failure_and(spine, "static_paths = true\n");
        assert!(kept.flows[0].fct_us.is_some());
        assert_eq!(conweave(&kept).failovers, 0);
        if conweave(&moved).failovers > 0 {
            assert!(
                lost(&kept) > lost(&moved),
                "{} {}",
                lost(&kept),
                lost(&moved)
            );
        } else {
            assert_eq!(
                kept.summary, moved.summary,
                "the failure is off the flow's path"
            );
        }
    }
}

/// A source ToR's flow table of one entry: of two flows starting together from leaf 4, one is
/// tracked and the other goes by ECMP, untouched by ConWeave (no epoch of its own); a third
/// flow, starting once the first has ended, takes the freed entry.
#[test]
fn a_full_flow_table_leaves_new_flows_to_ecmp() {
    let run = |third_ns: u64, keys: &str| {
        let text = format!(
            "{NET}[workload]\nkind = \"trace\"\n\
             csv = \"src,dst,size_bytes,start_ns\\n0,2,100000,0\\n1,3,100000,0\\n0,3,10000,{third_ns}\\n\"\n\
             [load_balancing]\nkind = \"conweave\"\n{keys}"
        );
        irn_sim::run(&parse(&text).unwrap(), &mut |_| {})
    };
    let unlimited = run(1_000_000, "");
    let one = run(1_000_000, "flow_table = 1\n");
    let busy = run(1_000, "flow_table = 1\n");
    for r in [&unlimited, &one, &busy] {
        assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
    }
    assert_eq!(conweave(&unlimited).flows_untracked, 0);
    assert_eq!(conweave(&one).flows_untracked, 1);
    assert_eq!(conweave(&busy).flows_untracked, 2);
    // Fewer flows probing, fewer epochs.
    assert!(conweave(&one).epochs < conweave(&unlimited).epochs);
    assert!(conweave(&busy).epochs < conweave(&one).epochs);
}

fn lost(r: &irn_sim::RunResult) -> u64 {
    r.summary.failures.as_ref().expect("failures").packets_lost
}

/// The rows of a run of `cfg` traced for every flow, as `trace.csv` has them, split into
/// columns.
fn traced(cfg: &SimConfig) -> (Vec<Vec<String>>, irn_sim::RunResult) {
    let ids: Vec<u32> = (0..cfg.flows.len() as u32).collect();
    let mut rows = Vec::new();
    let mut sink =
        |row: &TraceRow| rows.push(row.to_string().split(',').map(String::from).collect());
    let r = irn_sim::run_traced(cfg, &ids, &mut sink, &mut |_| {}, None);
    (rows, r)
}

/// With every flow traced, ConWeave's rows count what its summary counts: a `reroute` row at
/// the source ToR (no port) for each TAIL, a `hold` at the destination ToR's port to the host
/// for each held packet, and a `release` for each when its queue flushes, all of a flush at
/// one instant and in the order held, `by=tail` or `by=timer` as the flush counts say. Without
/// a wait for the TAIL (`default_wait` and `flush_slack` 0), some queues flush on their timer.
#[test]
fn the_trace_shows_reroutes_holds_and_releases() {
    for (keys, by) in [
        ("", "by=tail"),
        (
            "default_wait = \"0us\"\nflush_slack = \"0us\"\n",
            "by=timer",
        ),
    ] {
        let (rows, r) = traced(&two_roce_config(2, keys));
        let c = conweave(&r);
        let of = |event: &'static str| rows.iter().filter(move |row| row[4] == event);
        assert!(c.held_packets > 0, "{keys}: {c:?}");
        assert_eq!(of("reroute").count() as u64, c.reroutes, "{keys}");
        assert!(of("reroute").all(|row| row[2] == "switch0" && row[3].is_empty()));
        assert!(of("reroute").all(|row| row[7].starts_with("path=")));
        assert_eq!(of("hold").count() as u64, c.held_packets, "{keys}");
        assert_eq!(of("release").count() as u64, c.held_packets, "{keys}");
        assert!(of("hold")
            .chain(of("release"))
            .all(|row| row[2] == "switch1"));
        // One flush: one instant of a flow's releases, counted by what flushed it.
        let mut flushes: Vec<(&str, &str, &str)> = of("release")
            .map(|row| (row[0].as_str(), row[1].as_str(), row[7].as_str()))
            .collect();
        flushes.dedup();
        let count = |by| flushes.iter().filter(|f| f.2 == by).count() as u64;
        assert_eq!(count("by=tail"), c.flushed_by_tail, "{keys}: {c:?}");
        assert_eq!(count("by=timer"), c.flushed_by_timer, "{keys}: {c:?}");
        assert!(count(by) > 0, "{keys}: {c:?}");
        assert_eq!(flushes.len() as u64, c.flushed_by_tail + c.flushed_by_timer);
        for flow in ["0", "1"] {
            let psns = |event: &'static str| -> Vec<String> {
                of(event)
                    .filter(|row| row[1] == flow)
                    .map(|row| row[5].clone())
                    .collect()
            };
            assert_eq!(psns("hold"), psns("release"), "{keys}: flow {flow}");
        }
        // The trace only reads.
        assert_eq!(
            r.summary,
            irn_sim::run(&two_roce_config(2, keys), &mut |_| {}).summary
        );
    }
}
