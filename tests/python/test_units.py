"""The unit grammar as seen from Python: values, round trips and rejections."""

from __future__ import annotations

import pytest

from mptcplab import units


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10ms", 0.01), ("2s", 2.0), ("1.5 s", 1.5), ("250us", 250e-6), ("100ns", 100e-9), ("1min", 60.0)],
)
def test_durations_parse_to_seconds(text, seconds):
    assert units.parse_duration(text) == pytest.approx(seconds, rel=0, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "bps"),
    [("8Mbit", 8_000_000), ("1.5Gbit", 1_500_000_000), ("64kbit", 64_000), ("10Mbps", 10_000_000), ("2MB/s", 16_000_000)],
)
def test_rates_parse_to_bits_per_second(text, bps):
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "nbytes"), [("600KB", 600_000), ("1MiB", 1_048_576), ("1448", 1448), ("64 B", 64), ("6MB", 6_000_000)]
)
def test_sizes_parse_decimal_and_binary_prefixes(text, nbytes):
    assert units.parse_size(text) == nbytes


def test_queues_are_packets_or_bytes():
    assert units.parse_queue("64 packets") == (64, "packets")
    assert units.parse_queue("100pkt") == (100, "packets")
    assert units.parse_queue("30KB") == (30_000, "bytes")


def test_probabilities_accept_percent_and_fraction():
    assert units.parse_probability("0.9%") == pytest.approx(0.009, abs=1e-15)
    assert units.parse_probability("0.25") == 0.25


@pytest.mark.parametrize("ns", [1, 999, 1_000, 250_000, 10_000_000, 1_500_000_000, 27_000_000_000, 123_456_789])
def test_durations_round_trip_exactly(ns):
    text = units.format_duration(ns / 1e9)
    assert round(units.parse_duration(text) * 1e9) == ns


@pytest.mark.parametrize("bps", [1, 999, 64_000, 1_500_000, 8_000_000, 30_000_000, 1_000_000_000, 123_456_789])
def test_rates_round_trip_exactly(bps):
    assert units.parse_rate(units.format_rate(bps)) == bps


@pytest.mark.parametrize(("text", "canonical"), [("8Mbit", "8Mbit"), ("8000kbit", "8Mbit"), ("2.5Mbit", "2500kbit")])
def test_rate_formatting_is_canonical(text, canonical):
    assert units.format_rate(units.parse_rate(text)) == canonical


@pytest.mark.parametrize(("text", "canonical"), [("10ms", "10ms"), ("0.01s", "10ms"), ("1500ms", "1500ms"), ("2s", "2s")])
def test_duration_formatting_is_canonical(text, canonical):
    assert units.format_duration(units.parse_duration(text)) == canonical


@pytest.mark.parametrize(
    ("parse", "text", "hint"),
    [
        (units.parse_duration, "10", "no unit"),
        (units.parse_duration, "10 parsecs", "not a time unit"),
        (units.parse_duration, "-1s", "negative"),
        (units.parse_duration, "fast", "not a duration"),
        (units.parse_rate, "0Mbit", "positive"),
        (units.parse_rate, "-3Mbit", "positive"),
        (units.parse_rate, "8", "no unit"),
        (units.parse_rate, "8 furlongs", "not a rate unit"),
        (units.parse_size, "64 packets", "not packets"),
        (units.parse_size, "12 parsecs", "not a size unit"),
        (units.parse_queue, "1.5 packets", "whole number"),
        (units.parse_probability, "120%", "between 0 and 1"),
        (units.parse_probability, "often", "not a probability"),
    ],
)
def test_bad_values_are_rejected_with_the_reason(parse, text, hint):
    with pytest.raises(ValueError, match=hint):
        parse(text)


def test_formatting_rejects_impossible_values():
    with pytest.raises(ValueError):
        units.format_rate(0)
    with pytest.raises(ValueError):
        units.format_duration(-1.0)


def test_parameter_values_map_to_base_unit_numbers():
    assert units.to_number("8Mbit") == (8e6, "bit/s")
    assert units.to_number("10ms") == (0.01, "s")
    assert units.to_number("600KB") == (600_000.0, "B")
    assert units.to_number("64 packets") == (64.0, "packets")
    assert units.to_number(3) == (3.0, "")
    assert units.to_number("lia") is None
    assert units.to_number(True) is None
