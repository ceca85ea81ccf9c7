"""Loading scenarios, key-path overrides and the bundled scenarios' numbers."""

from __future__ import annotations

import re
import tomllib

import pytest

import mptcplab
from mptcplab import units
from mptcplab.scenario import apply_overrides, parse_assignment, resolve_scenario_path


def test_a_file_loads_and_resolves_every_default(two_path):
    sc = mptcplab.load_scenario(two_path)
    assert sc.source == str(two_path)
    r = sc.resolved
    assert r["paths"][0]["rate"] == "4Mbit"
    assert r["paths"][1]["loss"] == "0%"  # default filled in
    assert r["connections"][0]["tcp"]["mss"] == 1448  # default filled in
    assert sc.seed == 3


def test_a_dict_loads_like_the_file(two_path):
    data = tomllib.loads(two_path.read_text())
    assert mptcplab.load_scenario(data).resolved == mptcplab.load_scenario(two_path).resolved


def test_overrides_address_list_elements_by_name_and_index(two_path):
    sc = mptcplab.load_scenario(
        two_path,
        ["paths.wifi.rate=10Mbit", "paths.1.delay=5ms", "connections.mptcp.cc=reno", "duration=2s", "seed=9"],
    )
    r = sc.resolved
    assert r["paths"][0]["rate"] == "10Mbit"
    assert r["paths"][1]["delay"] == "5ms"
    assert r["connections"][0]["cc"] == "reno"
    assert r["duration"] == "2s"
    assert r["seed"] == 9
    # The original is untouched.
    assert mptcplab.load_scenario(two_path).resolved["paths"][0]["rate"] == "4Mbit"


def test_overrides_create_nested_tables_and_accept_toml_literals(two_path):
    sc = mptcplab.load_scenario(
        two_path,
        {"paths.wifi.down.rate": "2Mbit", "connections.mptcp.tcp.idle_restart": False, "connections.mptcp.paths": ["cell"]},
    )
    r = sc.resolved
    assert r["paths"][0]["down"] == {"rate": "2Mbit"}
    assert r["connections"][0]["tcp"]["idle_restart"] is False
    assert r["connections"][0]["paths"] == ["cell"]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("duration=2s", "duration", "2s"),
        ("seed=5", "seed", 5),
        ("connections.0.tcp.timestamps=false", "connections.0.tcp.timestamps", False),
        ('connections.mptcp.paths=["wifi", "cell"]', "connections.mptcp.paths", ["wifi", "cell"]),
        ("paths.wifi.loss=0.01", "paths.wifi.loss", 0.01),
        ("paths.wifi.queue = 64 packets", "paths.wifi.queue", "64 packets"),
    ],
)
def test_assignments_parse_keys_and_values(text, key, value):
    assert parse_assignment(text) == (key, value)


def test_an_override_through_a_value_is_refused():
    with pytest.raises(mptcplab.ConfigError, match="is a value"):
        apply_overrides({"duration": "2s"}, ["duration.x=1"])


def test_bundled_names_resolve_to_files():
    assert resolve_scenario_path("nsdi12-wifi-3g").name == "nsdi12-wifi-3g.toml"
    names = {n for n, _, _ in mptcplab.bundled_scenarios()}
    assert {"nsdi12-wifi-3g", "kato-sndbuf", "stms-20ms-200ms", "wifi-lte-download"} <= names


def test_every_bundled_scenario_is_valid_and_described():
    for name, path, desc in mptcplab.bundled_scenarios():
        sc = mptcplab.load_scenario(path)
        assert sc.name == name
        assert desc
        header = "".join(line for line in path.read_text().splitlines(keepends=True) if line.startswith("#"))
        # A seed paper (seed 000..004), or another published source with its year (the paired
        # WiFi + cellular recordings: Aydin et al., INFOCOM 2023 CNERT).
        assert re.search(r"seed 00\d|\b(?:19|20)\d\d\b", header), f"{name} does not cite its source"


def _packets(seconds: float, bps: float, packet: int = 1500) -> int:
    """A queue given in time, as whole packets: time x rate / packet size."""
    return round(seconds * bps / 8 / packet)


def test_nsdi12_numbers_follow_the_paper():
    r = mptcplab.load_scenario("nsdi12-wifi-3g").resolved
    wifi, g3 = r["paths"]
    assert (wifi["rate"], g3["rate"]) == ("8Mbit", "2Mbit")
    # 20 ms and 150 ms base RTTs: one-way delays of half that.
    assert (wifi["delay"], g3["delay"]) == ("10ms", "75ms")
    # 80 ms and 2 s of queue at the link rate.
    assert wifi["queue"] == f"{_packets(0.080, 8e6)} packets" == "53 packets"
    assert g3["queue"] == f"{_packets(2.0, 2e6)} packets" == "333 packets"


def test_kato_numbers_follow_the_paper():
    r = mptcplab.load_scenario("kato-sndbuf").resolved
    fast, slow = r["paths"]
    assert fast["rate"] == slow["rate"] == "100Mbit"
    assert slow["delay"] == "40ms"  # 80 ms RTT
    assert r["connections"][0]["sndbuf"] == f"{1024 * 1024}B"


def test_stms_numbers_follow_the_slides():
    r = mptcplab.load_scenario("stms-20ms-200ms").resolved
    fast, slow = r["paths"]
    assert fast["rate"] == slow["rate"] == "30Mbit"
    assert (fast["delay"], slow["delay"]) == ("10ms", "100ms")  # 20 ms vs 200 ms RTT
    assert units.parse_probability(fast["loss"]) == pytest.approx(1e-4, abs=1e-15)
    assert fast["loss"] == slow["loss"]


def test_wifi_lte_numbers_follow_the_paper():
    r = mptcplab.load_scenario("wifi-lte-download").resolved
    wifi, lte = r["paths"]
    assert units.parse_probability(wifi["loss"]) == pytest.approx(0.009, abs=1e-15)
    assert (wifi["delay"], lte["delay"]) == ("15ms", "30ms")  # 30 ms and 60 ms RTT
    assert lte["queue"] == f"{_packets(0.740, 10e6)} packets"
    assert r["connections"][0]["app"] == {"kind": "download", "size": "16000000B"}
