//! What `irn run` says below its table about ports still paused at the end, and `irn
//! validate` of inputs that are not regular files: a FIFO and a device are refused at once.

mod common;

use common::*;

/// An incast on a one-switch star cut off 50 µs after it starts, with `extra` keys.
fn star(extra: &str) -> String {
    format!(
        r#"name = "star"
[topology]
kind = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "1us"
[workload]
kind = "incast"
senders = 3
total = "3MB"
receiver = 0
[transport]
kind = "roce"
[run]
drain_limit = "50us"
{extra}"#
    )
}

fn note(extra: &str, name: &str) -> String {
    let dir = scratch(name);
    std::fs::write(dir.join("s.toml"), star(extra)).unwrap();
    ok(&irn(&["run", "s.toml", "--out", "out"], &dir))
}

#[test]
fn host_pauses_and_credit_waits_are_no_deadlock() {
    let table = note(
        "[switch]\npfc = true\n[pauses]\nhosts = [0]\ngap = \"1ns\"\nlength = \"1ms\"\n\
         start = \"1ns\"\n",
        "note-hosts",
    );
    assert!(!table.contains("a PFC deadlock"), "{table}");
    assert!(
        table.contains("by the hosts' configured pauses ([pauses])")
            && table.contains("no deadlock")
            && table.contains("lengthen run.drain_limit"),
        "{table}"
    );
    let table = note(
        "[switch]\nmodel = \"input-queued\"\nbuffer = \"30KB\"\ncredits = true\n",
        "note-credit",
    );
    assert!(!table.contains("deadlock:"), "{table}");
    assert!(
        table.contains("waiting for credit") && table.contains("no deadlock"),
        "{table}"
    );
}

#[test]
fn fifos_and_devices_are_refused_as_scenarios() {
    let e = refused(&irn(&["validate", "/dev/zero"], std::path::Path::new(".")));
    assert!(
        e.contains("/dev/zero: cannot read: a device or socket, not a regular file"),
        "{e}"
    );
    let dir = scratch("fifo-scenario");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("s.toml"))
        .status();
    if made.is_ok_and(|s| s.success()) {
        let e = refused(&irn(&["validate", "s.toml"], &dir));
        assert!(
            e.contains("s.toml: cannot read: a FIFO, not a regular file"),
            "{e}"
        );
    }
}
