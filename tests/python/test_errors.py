"""Every class of user error: one line `error: <file>: <key path>: <message>`, exit code 2,
no traceback, no output directory left behind; and the same errors from the API."""

from __future__ import annotations

from pathlib import Path

import pytest

import mptcplab
from conftest import mptcplab as cli


def assert_user_error(r, *fragments: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert line.startswith("error: "), line
    for f in fragments:
        assert f in line, f"{f!r} not in {line!r}"
    return line


# (substitution in the two-path scenario, key path, words the message must contain)
FILE_ERRORS = {
    "unknown key": (('rate = "4Mbit"', 'rat = "4Mbit"'), "paths[0].rat", ["unknown field", "did you mean `rate`"]),
    "unknown algorithm": (('cc = "lia"', 'cc = "olai"'), "connections[0].cc", ["`reno`", "`lia`"]),
    "wrong unit": (('delay = "10ms"', 'delay = "10 parsecs"'), "paths[0].delay", ["not a time unit", "ns, us, ms, s"]),
    "missing unit": (('rate = "4Mbit"', 'rate = "4"'), "paths[0].rate", ["no unit", "Mbit"]),
    "negative rate": (('rate = "4Mbit"', 'rate = "-4Mbit"'), "paths[0].rate", ["positive"]),
    "zero rate": (('rate = "1Mbit"', 'rate = "0Mbit"'), "paths[1].rate", ["positive"]),
    "missing path": (('paths = ["wifi", "cell"]', 'paths = ["wifi", "cel"]'), "connections[0].paths[1]",
                     ["no path named `cel`", "wifi, cell", "did you mean `cell`"]),
    "tcp over two paths": (('kind = "mptcp"', 'kind = "tcp"'), "connections[0].paths", ["exactly one path"]),
    "coupled cc on tcp": (('paths = ["wifi", "cell"]\ncc = "lia"', 'paths = ["wifi"]\ncc = "lia"\nkind = "tcp"'),
                          "connections[0]", []),
    "start after the end": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\nstart = "5s"'),
                            "connections[0].start", ["not before the end"]),
    "loss over 100%": (('loss = "0.5%"', 'loss = "150%"'), "paths[0].loss", ["between 0 and 1"]),
    "queue of zero": (('queue = "40 packets"', 'queue = "0 packets"'), "paths[0].queue", ["at least one packet"]),
    "RED thresholds reversed": (('queue = "40 packets"', 'queue = "40 packets"\naqm = { kind = "red", min = "30 packets", max = "10 packets" }'),
                                "paths[0].aqm.max", ["must exceed min = 30 packets"]),
    "RED thresholds in mixed units": (('queue = "40 packets"', 'queue = "40 packets"\naqm = { kind = "red", min = "5ms", max = "10 packets" }'),
                                      "paths[0].aqm.min", ["both be times"]),
    "missing key": (('duration = "3s"\n', ''), "", ["missing field `duration`"]),
    "unknown loss recovery": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { recovery = "rack" }'),
                              "connections[0].tcp.recovery", ["unknown variant `rack`", "`rack_tlp`", "`rfc6675`"]),
    "unknown right edge rule": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\nright_edge = "sideways"'),
                                "connections[0].right_edge", ["unknown variant `sideways`", "`connection`", "`per_subflow`"]),
    "unknown scaling ratio rule": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\nscaling_ratio = "max"'),
                                   "connections[0].scaling_ratio", ["unknown variant `max`", "`segment`", "`subflow_min`"]),
    "unknown out-of-order ACK rule": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { ooo_ack = "later" }'),
                                      "connections[0].tcp.ooo_ack",
                                      ["unknown variant `later`", "`immediate`", "`compressed`"]),
    "unknown delayed-ACK count": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { delack_count = "packets" }'),
                                  "connections[0].tcp.delack_count",
                                  ["unknown variant `packets`", "`segments`", "`bytes`"]),
    "unknown data-fragment rule": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ndata_frags = "skbs"'),
                                   "connections[0].data_frags",
                                   ["unknown variant `skbs`", "`segments`", "`pages`"]),
    "unknown window rounding": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\nwindow_rounding = "mss"'),
                                "connections[0].window_rounding",
                                ["unknown variant `mss`", "`exact`", "`scaled`"]),
    "unknown congestion-window unit": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { cwnd_unit = "segments" }'),
                                       "connections[0].tcp.cwnd_unit",
                                       ["unknown variant `segments`", "`bytes`", "`packets`"]),
    "unknown send-buffer check": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { sndbuf_check = "always" }'),
                                  "connections[0].tcp.sndbuf_check",
                                  ["unknown variant `always`", "`acked`", "`linux`"]),
    "unknown pacing MSS": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { pacing_mss = "mss" }'),
                           "connections[0].tcp.pacing_mss",
                           ["unknown variant `mss`", "`payload`", "`mss_cache`"]),
    "unknown RTT sample": (('app = { kind = "bulk" }', 'app = { kind = "bulk" }\ntcp = { rtt_sample = "oldest" }'),
                           "connections[0].tcp.rtt_sample",
                           ["unknown variant `oldest`", "`last`", "`first`"]),
    "unknown cubic idle rule": (('cc = "lia"', 'cc = "cubic"\ncc_params = { cubic = { idle = "sometimes" } }'),
                                "connections[0].cc_params.cubic.idle",
                                ["unknown variant `sometimes`", "`restart`", "`shift`"]),
    # Linux's socket buffers are C ints: a buffer above INT_MAX bytes cannot exist.
    "buffer above INT_MAX": (('cc = "lia"', 'cc = "lia"\nrcvbuf = 72057594037927936'), "connections[0].rcvbuf",
                             ["2147483647 B"]),
    # TCP small queues need each packet's departure when it is queued; CoDel decides it later.
    "host queue with CoDel": (('queue = "50 packets"', 'queue = "50 packets"\nqueue_at = "host"\naqm = { kind = "codel" }'),
                              "paths[1].queue_at", ["drop-tail or RED", "CoDel"]),
    "unknown penalisation rule": (('cc = "lia"', 'cc = "lia"\nscheduler = "minrtt"\n'
                                                 'sched_params = { minrtt = { penalisation_rule = "v0.87" } }'),
                                  "connections[0].sched_params.minrtt.penalisation_rule", ["`v0.9x`", "`v0.88`"]),
    "send-buffer path not a boolean": (('cc = "lia"', 'cc = "lia"\nscheduler = "minrtt"\n'
                                                      'sched_params = { minrtt = { send_buffer_path = "no" } }'),
                                       "connections[0].sched_params.minrtt.send_buffer_path", ["expected a boolean"]),
    "unknown buffer accounting": (('cc = "lia"', 'cc = "lia"\nbuffer_accounting = "skbs"'),
                                  "connections[0].buffer_accounting", ["`payload`", "`truesize`", "`skb`"]),
    "MAX_TCP_HEADER without skb accounting": (('cc = "lia"', 'cc = "lia"\nmax_tcp_header = 272'),
                                              "connections[0].max_tcp_header", ['buffer_accounting = "skb"']),
    "MAX_TCP_HEADER too large": (('cc = "lia"', 'cc = "lia"\nbuffer_accounting = "skb"\nmax_tcp_header = 4096'),
                                 "connections[0].max_tcp_header", ["0..=1024"]),
    "per_mss of the build without skb accounting": (('cc = "lia"', 'cc = "lia"\nper_mss = "build"'),
                                                     "connections[0].per_mss", ['buffer_accounting = "skb"']),
    "unknown per_mss": (('cc = "lia"', 'cc = "lia"\nper_mss = "kernel"'), "connections[0].per_mss",
                        ["`host`", "`build`"]),
    "unknown TSQ rule": (('cc = "lia"', 'cc = "lia"\ntcp = { tsq = "linux_5" }'), "connections[0].tcp.tsq",
                         ["`off`", "`linux_4`", "`linux_6`"]),
    "unknown stack": (('cc = "lia"', 'cc = "lia"\nstack = "v0.9x"'), "connections[0].stack",
                      ["`classic`", "`linux`", "`linux-v0.9x`"]),
}


@pytest.mark.parametrize("case", list(FILE_ERRORS))
def test_scenario_errors_name_file_key_and_allowed_values(case, scenario_file, tmp_path):
    (old, new), path, words = FILE_ERRORS[case]
    if case == "coupled cc on tcp":
        f = scenario_file('kind = "mptcp"\npaths = ["wifi", "cell"]', 'kind = "tcp"\npaths = ["wifi"]')
        path, words = "connections[0].cc", ["needs kind = \"mptcp\"", "allows: reno"]
    elif case == "tcp over two paths":
        f = scenario_file(old, new)
    else:
        f = scenario_file(old, new)
    out = tmp_path / "out"
    r = cli("run", str(f), "--out", str(out))
    prefix = f"error: {f}: {path}: " if path else f"error: {f}: "
    line = assert_user_error(r, *words)
    assert line.startswith(prefix), line
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.toml"]  # nothing half-written
    # `check` reports the same error.
    assert cli("check", str(f)).stderr == r.stderr


def test_the_same_errors_reach_the_api_as_config_error(scenario_file):
    f = scenario_file('rate = "4Mbit"', 'rat = "4Mbit"')
    with pytest.raises(mptcplab.ConfigError) as e:
        mptcplab.load_scenario(f)
    assert (e.value.file, e.value.path) == (str(f), "paths[0].rat")
    assert "did you mean `rate`" in e.value.message
    assert isinstance(e.value, ValueError)


def test_a_missing_file(tmp_path):
    f = tmp_path / "nope.toml"
    assert_user_error(cli("run", str(f)), f"error: {f}: no such file")


def test_a_directory_instead_of_a_file(tmp_path):
    assert_user_error(cli("check", str(tmp_path)), f"error: {tmp_path}: is a directory")


def test_an_unreadable_file(tmp_path):
    f = tmp_path / "binary.toml"
    f.write_bytes(b"\xff\xfe\x00garbage")
    assert_user_error(cli("check", str(f)), f"error: {f}: not a UTF-8 text file")


def test_malformed_toml_names_the_line(scenario_file):
    f = scenario_file('seed = 3', 'seed = = 3')
    assert_user_error(cli("check", str(f)), f"error: {f}: line 5, column", "malformed TOML")


def test_malformed_json_names_the_line(tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{\n  "duration": "1s",\n  oops\n}')
    assert_user_error(cli("check", str(f)), f"error: {f}: line 3, column 3: malformed JSON")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--set", "paths.wifi.rate"], ["--set paths.wifi.rate: expected KEY.PATH=VALUE"]),
        (["--set", "paths..rate=1Mbit"], ["expected KEY.PATH=VALUE"]),
        (["--set", "paths.wfi.rate=1Mbit"], ["--set paths.wfi.rate", "no element named `wfi`", "did you mean `wifi`"]),
        (["--set", "paths.7.rate=1Mbit"], ["--set paths.7.rate", "out of range"]),
        (["--set", "paths.wifi.rate=fast"], ["paths[0].rate", "not a bit rate"]),
        (["--set", "paths.wifi.rtae=1Mbit"], ["paths[0].rtae", "did you mean `rate`"]),
        (["--set", "connections.mptcp.scheduler=roundrobbin"], ["connections[0].scheduler", "`minrtt`", "did you mean `roundrobin`"]),
        (["--set", "connections.mptcp.join=later"], ["connections[0].join", "`fully_established`", "`add_addr`"]),
        (["--set", "connections.mptcp.option_sizes=big"], ["connections[0].option_sizes", "`classic` or `linux`"]),
        (["--set", "connections.mptcp.host_jitter=-3us"], ["connections[0].host_jitter", "negative"]),
    ],
)
def test_bad_overrides(args, fragments, two_path, tmp_path):
    out = tmp_path / "out"
    line = assert_user_error(cli("run", str(two_path), *args, "--out", str(out)), *fragments)
    assert line.startswith(f"error: {two_path}: ")
    assert not out.exists()


@pytest.mark.parametrize(
    ("vary", "fragments"),
    [
        ("paths.wifi.rate", ["--vary paths.wifi.rate: expected KEY.PATH=V1,V2"]),
        ("paths.wifi.rate=range(1Mbit,10ms,3)", ["same unit"]),
        ("paths.wifi.rate=range(1Mbit,10Mbit)", ["range(start, stop, n)"]),
        ("paths.wifi.rate=range(1Mbit,10Mbit,x)", ["whole number"]),
        ("paths.wifi.rate=range(0Mbit,10Mbit,3,log)", ["positive ends"]),
        ("paths.wifi.rate=1Mbit,,2Mbit", ["empty value"]),
        ("paths.wifi.rate=1Mbit,-2Mbit", ["paths[0].rate", "positive"]),
        ("paths.nope.rate=1Mbit", ["--vary paths.nope.rate", "no element named `nope`"]),
    ],
)
def test_bad_sweep_grids_write_nothing(vary, fragments, two_path, tmp_path):
    out = tmp_path / "sw"
    assert_user_error(cli("sweep", str(two_path), "--vary", vary, "--out", str(out)), *fragments)
    assert not out.exists()


def test_plot_of_something_that_is_not_an_output(tmp_path):
    assert_user_error(cli("plot", str(tmp_path)), f"error: {tmp_path}: is neither a run directory")


def test_plot_names_the_allowed_parameters(two_path, tmp_path):
    out = tmp_path / "sw"
    assert cli("sweep", str(two_path), "--set", "duration=1s", "--vary", "duration=1s,2s", "--out", str(out)).returncode == 0
    assert_user_error(cli("plot", str(out), "--x", "rate"), "--x: no column `rate`", "choose duration")


def test_output_never_overwrites_foreign_directories(two_path, tmp_path):
    precious = tmp_path / "thesis"
    precious.mkdir()
    (precious / "chapter1.tex").write_text("x")
    assert_user_error(cli("run", str(two_path), "--set", "duration=1s", "--out", str(precious)), "refusing to overwrite")
    assert_user_error(cli("sweep", str(two_path), "--vary", "duration=1s", "--out", str(precious)), "refusing")
    assert [p.name for p in precious.iterdir()] == ["chapter1.tex"]


def test_bad_command_line_options_are_usage_errors(two_path):
    r = cli("run", str(two_path), "--seed", "-1")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--seed" in r.stderr
    r = cli("sweep", str(two_path), "--out", "x")
    assert r.returncode == 2 and "--vary" in r.stderr
    assert Path("x").exists() is False
