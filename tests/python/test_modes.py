"""The operating-modes rule and agreement by distribution (mptcplab.validation.modes), on
hand-made runs whose answer follows from the rule as declared: gaps above 5 % of the median
that exceed the spread of the group on each side split the runs; groups of one are outliers."""

from __future__ import annotations

import pytest

from mptcplab.validation.modes import (
    SELF_DRAWS, agree_within, at_least, distribution_agreement, find_modes, kernel_self_agreement,
    nearest_mode_distance, runs_needed,
)


def test_two_stable_operating_points_are_two_modes_with_their_shares() -> None:
    # The example: 4.377-4.379 Mbit/s in five runs, 2.98-2.99 in three. The gap
    # 4.377 - 2.99 = 1.387 exceeds 5 % of the median (0.2) and both spreads (0.002, 0.01).
    m = find_modes([4.377, 4.378, 4.379, 4.38, 4.38, 2.98, 2.99, 2.99])
    assert [(md.value, md.n) for md in m.by_value()] == [(2.99, 3), (4.379, 5)]
    assert [md.share for md in m.modes] == [5 / 8, 3 / 8] and m.outliers == () and not m.unimodal


def test_a_continuous_spread_is_one_mode_and_scatter_never_splits_one() -> None:
    # Neighbours 0.3 apart on a median of 4.4 (6.8 %): every gap is a candidate, but each
    # is narrower than the groups it would separate, so the cuts fall one by one.
    assert find_modes([3.2 + 0.3 * k for k in range(10)]).unimodal
    # Gaps all below 5 % of the median (100.4 - 100.1 = 0.3 < 5.0): one mode.
    assert find_modes([100, 100.1, 100.4, 100.5, 100.6]).unimodal


def test_one_run_far_off_is_an_outlier_not_a_mode() -> None:
    m = find_modes([10, 10.1, 10.2, 10.3, 20])
    assert m.unimodal and m.outliers == (20.0,) and m.modes[0].n == 4 and m.modes[0].share == 0.8
    # Three runs: two at 4.38 and one at 2.98 (the second day).
    m = find_modes([4.38, 4.38, 2.98])
    assert m.unimodal and m.outliers == (2.98,)


def test_a_cut_that_fails_is_dropped_smallest_gap_first() -> None:
    # Median 1.31, so gaps above 0.0655 are candidates; neighbours 0.06 apart never are. The
    # cut 1.12 | 1.25 (gap 0.13) is narrower than the group above it (1.25-1.43, spread 0.18)
    # and goes; the cut 1.43 | 2.5 (1.07) exceeds both spreads then (0.43 and 0.01) and stays.
    m = find_modes([1.0, 1.06, 1.12, 1.25, 1.31, 1.37, 1.43, 2.5, 2.51])
    assert [(md.low, md.high, md.n) for md in m.by_value()] == [(1.0, 1.43, 7), (2.5, 2.51, 2)]
    # Isolated runs between two modes hold every cut around them (a group of one has no
    # spread): they are outliers, the modes keep their runs.
    m = find_modes([1.0, 1.01, 1.5, 2.0, 2.5, 2.51])
    assert [md.n for md in m.by_value()] == [2, 2] and m.outliers == (1.5, 2.0)


def test_ten_runs_or_twenty_by_their_spread() -> None:
    assert runs_needed([1.0] * 9) == 10  # not yet ten
    assert runs_needed([1.0] * 9 + [1.015]) == 10  # spread 1.5 % of the median: agree
    assert runs_needed([1.0] * 9 + [1.0201]) == 20
    assert agree_within([5.0, 5.1], 0.02) and not agree_within([5.0, 5.11], 0.02)


def test_agreement_by_distribution_needs_every_big_mode_matched_with_its_share() -> None:
    kernel = [4.38] * 7 + [2.99] * 3
    # Modes 4.3 (60 %) and 3.0 (40 %): within 10 % and 20 points of 70 % / 30 %.
    assert distribution_agreement(kernel, [4.3] * 6 + [3.0] * 4).agrees
    # The right values but the shares swapped: 30 % vs 70 % differ by 40 points.
    assert not distribution_agreement(kernel, [4.3] * 3 + [3.0] * 7).agrees
    # One simulator mode between the kernel's (the simulator at 2.40): no match.
    a = distribution_agreement(kernel, [2.40] * 10)
    assert not a.agrees and "not matched" in a.reason
    # A kernel mode below 20 % need not be matched: a unimodal simulator at the big mode agrees.
    assert distribution_agreement([4.38] * 9 + [2.99] * 2 + [4.37] * 9, [4.35] * 10).agrees
    # Unimodal kernel: the medians, within 10 %.
    assert distribution_agreement([10.0] * 10, [10.9] * 10).agrees
    assert not distribution_agreement([10.0] * 10, [11.1] * 10).agrees


def test_kernel_runs_scattered_into_small_groups_are_judged_by_their_median() -> None:
    # 20 runs: six tight pairs (each gap to the next pair at least 0.3, above 5 % of the
    # median 2.2 and both pairs' spreads) and eight runs spread wider apart than that, each an
    # outlier. Each pair holds 10 % of the runs, so no mode reaches 20 %: judged by the median
    # (2.2011, the mean of the 10th and 11th runs, 2.2 and 2.2022).
    pairs = [v for x in (1.0, 1.3, 1.7, 2.2, 2.9, 3.8) for v in (x, x * 1.001)]
    scattered = pairs + [0.5, 0.62, 0.78, 4.9, 6.3, 8.1, 10.4, 13.5]
    assert len(find_modes(scattered).modes) == 6
    a = distribution_agreement(scattered, [20.0] * 10)
    assert not a.agrees and "scattered" in a.reason
    assert distribution_agreement(scattered, [2.3] * 10).agrees  # +4.5 %
    assert not distribution_agreement(scattered, [2.5] * 10).agrees  # +13.6 %


def test_the_distance_to_the_nearest_kernel_mode() -> None:
    assert nearest_mode_distance([4.38] * 7 + [2.99] * 3, [3.1] * 5) == pytest.approx(3.1 / 2.99 - 1)


def test_the_kernel_in_the_simulators_place_agrees_as_often_as_the_rule_allows() -> None:
    # 20 kernel runs in two modes, 1.0 (16 runs, 80 %) and 2.0 (4 runs, 20 %).
    kernel = [1.0] * 16 + [2.0] * 4
    # Resampled, 10 draws: X of them are 2.0, X ~ Binomial(10, 0.2). The rule matches both modes
    # when 2 <= X <= 4 (X = 0: no simulator mode near 2.0; X = 1: 2.0 is an outlier, not a mode;
    # X >= 5: the 1.0 mode holds <= 50 %, 30 points or more from 80 %): P = 0.30199 + 0.20133 +
    # 0.08808 = 0.5914. Halves, 10 and 10: Y of the held-out ten are 2.0, Y hypergeometric
    # (N = 20, K = 4, n = 10). Y = 0: the other half holds all four (a 40 % mode) and the held-out
    # half none; Y = 1: the held-out 2.0 is an outlier while the other half's three are a mode;
    # Y = 2: 20 % modes on both sides; Y >= 3: the other half's 2.0 runs are at most one outlier,
    # a unimodal kernel at 1.0, and the held-out half's median is 1.0. P = 1 - (C(16,10) +
    # 4 C(16,9)) / C(20,10) = 1 - (8008 + 45760) / 184756 = 0.7090. Each estimate has a standard
    # error of sqrt(p (1 - p) / 400) < 0.025; allowed: four of them.
    got = kernel_self_agreement(kernel, 10)
    assert SELF_DRAWS == 400
    assert got.resampled == pytest.approx(0.5914, abs=0.1)
    assert got.halves == pytest.approx(0.7090, abs=0.1)
    # Deterministic: the same runs give the same draws.
    assert kernel_self_agreement(kernel, 10) == got
    # One tight mode: every draw agrees, both ways.
    one = kernel_self_agreement([5.0, 5.01, 5.02, 4.99, 5.0, 5.03, 4.98, 5.0, 5.01, 5.0], 10)
    assert (one.resampled, one.halves) == (1.0, 1.0)


def test_the_chance_of_meeting_a_count_is_the_poisson_binomial_tail() -> None:
    # Two fair coins: at least one head 3/4, both 1/4; certain and impossible events count as such.
    assert at_least([0.5, 0.5], 1) == pytest.approx(0.75)
    assert at_least([0.5, 0.5], 2) == pytest.approx(0.25)
    assert at_least([1.0, 1.0, 0.0], 2) == pytest.approx(1.0)
    assert at_least([1.0, 1.0, 0.0], 3) == pytest.approx(0.0)
    assert at_least([0.3] * 5, 0) == pytest.approx(1.0)
