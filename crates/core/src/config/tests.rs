//! Parsing and validation of whole scenarios.

use super::*;

const OK: &str = r#"
        duration = "10s"
        [[paths]]
        name = "wifi"
        rate = "8Mbit"
        delay = "10ms"
        queue = "100 packets"
        loss = "0.9%"
        [[connections]]
        name = "c"
        kind = "mptcp"
        paths = ["wifi"]
        app = { kind = "bulk" }
    "#;

fn refused(text: &str) -> ConfigError {
    Scenario::from_toml_str(text).expect_err("must be refused")
}

#[test]
fn a_value_with_a_line_break_is_quoted_back_on_one_line() {
    let e = refused(&OK.replace(r#"duration = "10s""#, r#"duration = "x\ny""#));
    assert_eq!(e.to_string(), "duration: `x\\ny` is not a duration");
    let e = refused(&OK.replace(r#"duration = "10s""#, r#"duration = "x\u001by\u2028""#));
    assert_eq!(e.to_string(), "duration: `x\\x1by\\u2028` is not a duration");
}

#[test]
fn a_periodic_total_that_overflows_is_refused_at_its_key() {
    // 2^32 writes of 2^32 B wrap to 0 in u64: the run used to end in an invariant panic.
    let app = r#"app = { kind = "periodic", size = "4294967296B", count = 4294967296, period = "1s" }"#;
    let e = refused(&OK.replace(r#"app = { kind = "bulk" }"#, app));
    assert_eq!(e.path, "connections[0].app.count");
    // Without a count the run's duration bounds the writes: 10 s / 1 us = 10^7 writes.
    let app = r#"app = { kind = "periodic", size = "1GB", period = "1us" }"#;
    assert_eq!(refused(&OK.replace(r#"app = { kind = "bulk" }"#, app)).path, "connections[0].app.count");
    let app = r#"app = { kind = "periodic", size = "1KB", period = "1us" }"#;
    assert!(Scenario::from_toml_str(&OK.replace(r#"app = { kind = "bulk" }"#, app)).is_ok());
}

#[test]
fn a_bulk_write_of_no_bytes_is_refused_and_one_above_the_buffer_is_not() {
    let app = r#"app = { kind = "bulk", write = "0B" }"#;
    let e = refused(&OK.replace(r#"app = { kind = "bulk" }"#, app));
    assert_eq!(e.to_string(), "connections[0].app.write: each write needs at least one byte");
    // A send() larger than the send buffer is what iperf's 128 KiB default makes of a 64 KiB
    // buffer: Linux copies it in parts, waiting between them.
    let app = r#"app = { kind = "bulk", write = "128KiB" }
        sndbuf = "64KiB""#;
    assert!(Scenario::from_toml_str(&OK.replace(r#"app = { kind = "bulk" }"#, app)).is_ok());
}

#[test]
fn periods_and_timers_below_one_microsecond_are_refused() {
    let app = r#"app = { kind = "periodic", size = "1KB", period = "999ns" }"#;
    assert_eq!(refused(&OK.replace(r#"app = { kind = "bulk" }"#, app)).path, "connections[0].app.period");
    let tcp = r#"app = { kind = "bulk" }
        tcp = { rto_min = "1ns", rto_initial = "1ns", rto_max = "1ns" }"#;
    assert_eq!(refused(&OK.replace(r#"app = { kind = "bulk" }"#, tcp)).path, "connections[0].tcp.rto_min");
}

#[test]
fn a_byte_queue_must_hold_one_packet_of_every_connection_crossing_it() {
    let e = refused(&OK.replace(r#"queue = "100 packets""#, r#"queue = "64B""#));
    assert_eq!(e.path, "paths[0].queue");
    assert!(e.message.contains("1500-byte"), "{}", e.message);
    assert!(Scenario::from_toml_str(&OK.replace(r#"queue = "100 packets""#, r#"queue = "1500B""#)).is_ok());
    // A per-direction queue is named where it is written; a smaller MTU needs less.
    let down = OK.replace(r#"queue = "100 packets""#, "down = { queue = \"1000B\" }");
    assert_eq!(refused(&down).path, "paths[0].down.queue");
    let small_mtu =
        down.replace(r#"app = { kind = "bulk" }"#, "app = { kind = \"bulk\" }\ntcp = { mss = 536, mtu = 576 }");
    assert!(Scenario::from_toml_str(&small_mtu).is_ok());
}

#[test]
fn explicit_drop_ordinals_start_at_one() {
    let e = refused(&OK.replace(r#"loss = "0.9%""#, "drop = [3, 0]"));
    assert_eq!(e.path, "paths[0].drop[1]");
}

#[test]
fn route_names_are_unique_within_a_connection() {
    let text = r#"
            duration = "2s"
            [[links]]
            name = "a"
            from = "client"
            to = "server"
            rate = "10Mbit"
            [[links]]
            name = "b"
            from = "server"
            to = "client"
            rate = "10Mbit"
            [[connections]]
            name = "c"
            kind = "mptcp"
            routes = [{ name = "r", up = ["a"], down = ["b"] }, { name = "r", up = ["a"], down = ["b"] }]
            app = { kind = "bulk" }
        "#;
    assert_eq!(refused(text).path, "connections[0].routes[1].name");
    assert!(Scenario::from_toml_str(&text.replacen("name = \"r\"", "name = \"r1\"", 1)).is_ok());
}

#[test]
fn a_scenario_cannot_ask_for_captures() {
    // The issue's input: a scenario file naming a directory anywhere. Captures are the
    // caller's option; the old key is refused by name whatever it holds, and before any
    // directory is created.
    let dir = std::env::temp_dir().join(format!("mptcplab-pcap-refused-{}", std::process::id()));
    let text = format!("{OK}\n[output.pcap]\ndir = \"{}\"\n", dir.display());
    let e = refused(&text);
    assert_eq!(e.path, "output.pcap");
    assert!(e.message.contains("--pcap") && e.message.contains("pcap_dir="), "{}", e.message);
    assert!(!e.message.contains('\n'));
    assert!(!dir.exists());
    assert_eq!(refused(&format!("{OK}\n[output]\npcap = {{}}\n")).path, "output.pcap");
}

#[test]
fn loss_recovery_is_chosen_by_name_and_a_wrong_name_lists_the_choices() {
    let s = Scenario::from_toml_str(OK).unwrap();
    assert_eq!((s.connections[0].tcp.recovery, s.connections[0].tcp.prr), (Recovery::Rfc6675, false));
    let linux = OK.replace(
        "app = { kind = \"bulk\" }",
        "app = { kind = \"bulk\" }\ntcp = { recovery = \"rack_tlp\", prr = true }",
    );
    let s = Scenario::from_toml_str(&linux).unwrap();
    assert_eq!((s.connections[0].tcp.recovery, s.connections[0].tcp.prr), (Recovery::RackTlp, true));
    let bad = OK.replace("app = { kind = \"bulk\" }", "app = { kind = \"bulk\" }\ntcp = { recovery = \"rack\" }");
    let e = Scenario::from_toml_str(&bad).unwrap_err().to_string();
    for part in ["connections[0].tcp.recovery", "`rack`", "`rack_tlp`", "`rfc6675`"] {
        assert!(e.contains(part), "{part} missing from: {e}");
    }
}

#[test]
fn bbr_runs_on_the_simulator_for_tcp_and_mptcp() {
    for kind in ["mptcp", "tcp"] {
        let text = OK.replace("kind = \"mptcp\"", &format!("kind = \"{kind}\"\ncc = \"bbr\""));
        let s = Scenario::from_toml_str(&text).unwrap();
        assert_eq!(s.connections[0].cc, CcKind::Bbr);
        let out = crate::run_json(&s.to_json_pretty(), None).unwrap();
        assert!(out.summary.connections[0].goodput_bps > 0.0, "{kind}");
    }
}

#[test]
fn the_linux_stack_resolves_its_profile_and_written_keys_win() {
    let text = OK.replace("kind = \"mptcp\"", "kind = \"mptcp\"\nstack = \"linux\"\nsndbuf = \"1MiB\"");
    let s = Scenario::from_toml_str(&text).unwrap();
    let c = &s.connections[0];
    assert_eq!(c.stack, Stack::Linux);
    assert_eq!(c.sndbuf, BufSize::Fixed(ByteSize(1 << 20)));
    assert_eq!(
        c.rcvbuf,
        BufSize::Auto(BufTriple { min: ByteSize(4096), default: ByteSize(131_072), max: ByteSize(33_554_432) })
    );
    assert_eq!(
        (c.scheduler, c.cc, c.tcp.recovery, c.tcp.prr),
        (SchedKind::LinuxDefault, CcKind::Cubic, Recovery::RackTlp, true)
    );
    assert_eq!(
        (c.buffer_accounting, c.window_update, c.mptcp_retransmit),
        (BufferAccounting::Truesize, WindowUpdate::AllSubflows, true)
    );
    // The resolved scenario parses to the same thing.
    let again = Scenario::from_json_str(&s.to_json_pretty()).unwrap();
    assert_eq!(again.to_json_pretty(), s.to_json_pretty());
    let e = Scenario::from_toml_str(&OK.replace("kind = \"mptcp\"", "kind = \"mptcp\"\nstack = \"linx\"")).unwrap_err();
    assert_eq!(e.path, "connections[0].stack");
    assert!(e.message.contains("linux"), "{}", e.message);
}

#[test]
fn buffer_triples_are_checked_key_by_key() {
    let with = |b: &str| Scenario::from_toml_str(&OK.replace("kind = \"mptcp\"", &format!("kind = \"mptcp\"\n{b}")));
    let e = with("rcvbuf = { min = \"64KB\", default = \"32KB\", max = \"1MB\" }").unwrap_err();
    assert_eq!(e.path, "connections[0].rcvbuf.min");
    let e = with("sndbuf = { min = \"4KB\", default = \"2MB\", max = \"1MB\" }").unwrap_err();
    assert_eq!(e.path, "connections[0].sndbuf.default");
    let e = with("sndbuf = 0").unwrap_err();
    assert_eq!((e.path.as_str(), e.message.as_str()), ("connections[0].sndbuf", "must be > 0"));
    let e = with("sndbuf = -1").unwrap_err();
    assert_eq!(e.path, "connections[0].sndbuf");
    // The config fuzzer's find: a fixed `rcvbuf` of 2^56 B overflowed size × scaling ratio.
    // Linux's buffers are C ints, so INT_MAX = 2 147 483 647 B is the largest accepted.
    let e = with("rcvbuf = { min = \"4KB\", default = \"64KB\", max = \"1000GB\" }").unwrap_err();
    assert_eq!(e.path, "connections[0].rcvbuf.max");
    assert!(e.message.contains("2147483647 B"), "{}", e.message);
    assert!(with("sndbuf = 2147483648").is_err() && with("sndbuf = 2147483647").is_ok());
    let e = with("rcvbuf = { min = \"4KB\", default = \"64KB\" }").unwrap_err();
    assert_eq!(e.path, "connections[0].rcvbuf");
    assert!(e.message.contains("max"), "{}", e.message);
}

#[test]
fn a_valid_scenario_parses_with_defaults() {
    let s = Scenario::from_toml_str(OK).unwrap();
    assert_eq!(s.paths[0].rate, Some(Rate(8_000_000)));
    assert_eq!(s.connections[0].tcp.iw, 10);
    assert!((s.paths[0].loss.unwrap().0 - 0.009).abs() < 1e-12);
    // The resolved form parses back to the same thing.
    assert!(s.to_json_pretty().contains("\"0.9%\""), "{}", s.to_json_pretty());
    let again = Scenario::from_json_str(&s.to_json_pretty()).unwrap();
    assert_eq!(again.to_json_pretty(), s.to_json_pretty());
}

#[test]
fn unknown_keys_name_the_path_and_suggest() {
    let bad = OK.replace("rate = \"8Mbit\"", "rat = \"8Mbit\"");
    let e = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(e.path, "paths[0].rat");
    assert!(e.message.contains("did you mean `rate`"), "{e}");
}

#[test]
fn wrong_units_name_the_field() {
    let bad = OK.replace("\"10ms\"", "\"10 parsecs\"");
    let e = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(e.path, "paths[0].delay");
    assert!(e.message.contains("not a time unit"), "{e}");
}

#[test]
fn a_missing_path_is_reported_with_the_defined_ones() {
    let bad = OK.replace("paths = [\"wifi\"]", "paths = [\"wfi\"]");
    let e = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(e.path, "connections[0].paths[0]");
    assert!(e.message.contains("did you mean `wifi`"), "{e}");
}

#[test]
fn unknown_algorithms_list_the_allowed_ones() {
    let bad = OK.replace("app = { kind = \"bulk\" }", "app = { kind = \"bulk\" }\ncc = \"lai\"");
    let e = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(e.path, "connections[0].cc");
    assert!(e.message.contains("`reno`") && e.message.contains("did you mean `lia`"), "{e}");
}

/// `writer`: the classic model's sleeping writer unless written, the `linux` profile's polling
/// one there; any other value is one error naming the key and both values.
#[test]
fn the_writer_key_takes_sleep_or_poll() {
    use crate::config::Writer;
    let with = |b: &str| Scenario::from_toml_str(&OK.replace("kind = \"mptcp\"", &format!("kind = \"mptcp\"\n{b}")));
    assert_eq!(with("").unwrap().connections[0].writer, Writer::Sleep);
    assert_eq!(with("stack = \"linux\"").unwrap().connections[0].writer, Writer::Poll);
    assert_eq!(with("stack = \"linux\"\nwriter = \"sleep\"").unwrap().connections[0].writer, Writer::Sleep);
    let e = with("writer = \"blocking\"").unwrap_err();
    assert_eq!(e.path, "connections[0].writer");
    assert!(e.message.contains("`sleep`") && e.message.contains("`poll`"), "{}", e.message);
}
