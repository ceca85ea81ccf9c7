"""Issue 35, Chen & Towsley (seed 000) Figs. 7-8: the links derived from the seed's own numbers
and the verdict rules, each checked against the derivation written beside it."""

from __future__ import annotations

import pandas as pd
import pytest

from mptcplab.experiments import _chen_towsley_links as links


def test_wifi_storage_follows_the_seeds_loss_model() -> None:
    """§V-A: N ≈ 3b/8·(F+1)² + F packets per cycle, loss 1/N, b = 2. The root for 0.9 % solves
    the equation; the seed's own example (μ = 10 Mbit/s, τ = 15 ms: BDP ≈ 12.5 packets of
    1500 B, B = 0) gives 0.7 %, so the storage for 0.7 % is that BDP within half a packet."""
    f = links.storage_for_loss(0.009)
    assert 0.75 * (f + 1) ** 2 + f == pytest.approx(1 / 0.009, rel=1e-12)
    assert links.storage_for_loss(0.007) == pytest.approx(10e6 * 0.015 / 12000, abs=0.5)
    # The WiFi path holds F: its 2-packet queue plus its BDP over 30 ms.
    bdp = links.wifi_shallow_rate_bps() * 0.030 / 12000
    assert bdp + links.WIFI_SHALLOW_QUEUE == pytest.approx(f, rel=1e-9)
    assert links.WIFI_SHALLOW["queue"] == "2 packets" and "loss" not in links.WIFI_SHALLOW


def test_cellular_buffer_and_dip_follow_from_the_seeds_rtts() -> None:
    """A full buffer of B packets adds B · 12000 bit / μ to the 80 ms base RTT (§V-A, Fig. 4):
    800 ms at 10 Mbit/s gives B = 600; 3.5 s with the same buffer needs μ' = 600 · 12000 / 3.42."""
    assert links.CELL_BUFFER_PACKETS == 600
    assert 0.080 + 600 * 12000 / links.CELL_RATE_BPS == pytest.approx(0.800)
    assert 0.080 + 600 * 12000 / links.CELL_DIP_RATE_BPS == pytest.approx(3.5)
    down = links.BLOATED_FINITE["down"]
    assert links.BLOATED_FINITE["queue"] == "600 packets" and links.BLOATED_FINITE["delay"] == "40ms"
    assert [x["at"] for x in down["schedule"]] == ["20s", "32s"]


def test_buffers_are_linux_311_defaults_on_an_8gb_host() -> None:
    """``tcp_init`` (3.x): limit = free pages << (PAGE_SHIFT − 7), over 6 MiB on 8 GB, so
    tcp_rmem[2] = min(6 MiB, limit) and tcp_wmem[2] = min(4 MiB, limit); the seed's "default
    maximum size of 6 MB" is that 6 MiB (6 291 456 B, 4.9 % above 6e6)."""
    assert links.TCP_RMEM_311 == {"min": 4096, "default": 87380, "max": 6291456}
    assert links.TCP_WMEM_311 == {"min": 4096, "default": 16384, "max": 4194304}
    conn = links.mptcp_autotuned({"kind": "bulk"})
    assert conn["rcvbuf"] == links.TCP_RMEM_311 and conn["sndbuf"] == links.TCP_WMEM_311
    assert conn["stack"] == "linux-v0.9x" and conn["sched_params"]["minrtt"]["penalisation_rule"] == "v0.88"


def test_fig7_scenario_is_deterministic_so_one_run_is_the_result() -> None:
    """No random loss is left in Figs. 7-8, so the seed changes nothing (the reason Fig. 7 runs
    once and Fig. 8's repeats differ by their start)."""
    import mptcplab
    from mptcplab.experiments import chen_towsley_fig7 as fig7

    sc = fig7.scenario(True)
    sc["duration"] = "8s"
    a, b = mptcplab.run(sc, seed=1), mptcplab.run(sc, seed=5)
    assert a.timeseries.equals(b.timeseries) and fig7.REPS == (1, 1)


def test_fig8_starts_spread_over_the_bloated_phase() -> None:
    from mptcplab.experiments import chen_towsley_fig8 as fig8

    starts = [fig8.start_time(r, 40) for r in range(1, 41)]
    assert starts[0] == 20.0 and starts[-1] == pytest.approx(31.7) and all(20 <= s < 32 for s in starts)
    # The ablation's starts are every tenth of the figure's 40.
    assert [fig8.start_time(r, fig8.ABLATION_SEEDS) for r in range(1, 5)] == pytest.approx(starts[::10])
    sc = fig8.scenario(True, True, 23.0)
    assert sc["connections"][0]["start"] == "23s" and sc["duration"] == "223s"


def _lower_end(xs: list[int]) -> float:
    """Lower end of the 95 % Student-t CI of the mean, computed here from the definition."""
    import math
    import statistics

    from mptcplab.experiments._numbers import _T95

    df = len(xs) - 1
    t = _T95.get(df) or _T95[max(k for k in _T95 if k <= df)]  # the table's nearest lower df: conservative
    return statistics.fmean(xs) - t * statistics.stdev(xs) / math.sqrt(len(xs))


@pytest.mark.parametrize(("wifi", "cell"), [
    ([0, 0, 0, 0], [0, 0, 0, 0]),
    ([1, 0, 0, 1], [0, 0, 0, 0]),          # a throttled download in two of four
    ([1, 1, 2, 0], [0, 0, 0, 0]),          # mean 1.0, but one download without a halving
    ([1, 1, 1, 1], [0, 0, 0, 0]),          # every download throttled once (zero spread)
    ([1, 2, 1, 1, 1, 2, 1, 1], [0] * 8),   # every download at least once
    ([0, 1, 0, 0], [3, 1, 1, 0]),
    ([0, 1, 0, 0], [3, 2, 2, 3]),
])
def test_penalisation_claim_needs_a_material_effect(wifi, cell) -> None:
    """The rule declared before the run (seed 000 §V-C "helps in this case by throttling the
    WiFi flow's sending rate"): penalisation throttles by halving the window, so a throttled
    download had at least one halving, and the most-halved subflow counts only when the lower
    end of the 95 % CI of its halvings per download reaches one. The expected verdict is derived
    here from that statement, not read from the module's constant."""
    from mptcplab.experiments import chen_towsley_fig8 as fig8

    top = wifi if sum(wifi) >= sum(cell) else cell
    if sum(wifi) + sum(cell) == 0:
        expected = "neither"
    elif _lower_end(top) < 1:
        expected = fig8.NOT_MATERIAL
    else:
        expected = "WiFi" if sum(wifi) > sum(cell) else "cellular"
    assert fig8.penalised_subflow(pd.Series(wifi), pd.Series(cell)).value == expected


def test_penalisation_materiality_on_the_figures_counts() -> None:
    """The two situations the figure has produced: 2 halvings in 80 downloads are not material;
    one halving in every download and a second in 6 of 80 (86 halvings) are: the lower end of
    the CI, 1.075 − t·s/√80 (t ≈ 2.0) with s = √(6·74/(80·79)) ≈ 0.267, is ≈ 1.016 ≥ 1. The same mean
    spread as 0 or 2 halvings per download would not be (lower end < 1): the verdict rests on
    every download having been throttled."""
    from mptcplab.experiments import chen_towsley_fig8 as fig8

    two = fig8.penalised_subflow(pd.Series([1, 1] + [0] * 78), pd.Series([0] * 80))
    assert two.value == fig8.NOT_MATERIAL
    every = [2] * 6 + [1] * 74
    assert _lower_end(every) == pytest.approx(1.016, abs=0.002)
    assert fig8.penalised_subflow(pd.Series(every), pd.Series([0] * 80)).value == "WiFi"
    halves = [2] * 43 + [0] * 37
    assert sum(halves) == 86 and _lower_end(halves) < 1
    assert fig8.penalised_subflow(pd.Series(halves), pd.Series([0] * 80)).value == fig8.NOT_MATERIAL


def test_spread_is_judged_by_the_paired_pitman_morgan_test() -> None:
    """var(X) = var(Y) exactly when corr(X + Y, X − Y) = 0 (cov = var X − var Y). Equal spreads
    up to noise give "no significant difference"; halving one series' deviations around a
    common trend gives "smaller"; identical series give "identical"."""
    from mptcplab.experiments import chen_towsley_fig8 as fig8

    base = pd.Series([float(x) for x in range(20)])
    shuffled = pd.Series([float(x) for x in (3, 7, 1, 19, 12, 0, 5, 15, 9, 18, 2, 11, 14, 6, 17, 4, 13, 8, 16, 10)])
    assert fig8._spread(base, shuffled).value == fig8.NO_DIFF      # same values, so the same SD
    assert fig8._spread(base, base * 0.5).value == fig8.SMALLER
    assert fig8._spread(base * 0.5, base).value == fig8.LARGER
    assert fig8._spread(base, base.copy()).value == fig8.IDENTICAL
    t, crit = fig8.pitman_morgan(base, base * 0.5)
    # n − 2 = 18 df; the t table's nearest lower entry, 15 df (2.131 against t₁₈ = 2.101), is used, the
    # conservative side, as mean_ci95 does.
    assert crit == pytest.approx(2.131) and t > crit


def test_fig7_claims_separate_inputs_fit_and_predictions() -> None:
    from mptcplab.experiments import chen_towsley_fig7 as fig7

    c = {x.id: x for x in fig7.CLAIMS}
    assert c["rtt-start"].not_testable and c["rtt-dip"].not_testable and c["rtt-early"].calibration
    assert [x.id for x in fig7.CLAIMS if x.calibration] == ["rtt-early"]
    assert c["rtt-after"].counted and c["starvation"].counted
    # The RTT after 35 s rests on the fitted buffer: its note must say so.
    assert "fitted" in fig7._rtt_after_note(pd.DataFrame({"variant": ["cellular x"], "cell_srtt_after_mean_s": [1.0]}))
    assert not c["starvation-after"].counted


def _restart_run(period: str, idle_restart: bool = True) -> pd.DataFrame:
    import mptcplab

    tcp = {**links.TCP_LINUX_311, "idle_restart": idle_restart}
    sc = {"name": "restart", "duration": "4s",
          "paths": [{"name": "p", "rate": "10Mbit", "delay": "15ms", "queue": "1000 packets"}],
          "connections": [{"name": "t", "kind": "tcp", "paths": ["p"], "tcp": tcp,
                           "app": {"kind": "periodic", "size": "300KB", "period": period}}],
          "output": {"timeseries": "10ms"}}
    ts = mptcplab.run(sc, seed=1).timeseries
    ts = ts[ts["metric"].isin(["cwnd_bytes", "dsn_sent_bytes", "rto_s"])]
    return ts.pivot_table(index="time_s", columns="metric", values="value")


@pytest.mark.parametrize("period", [1.0, 3.0])
def test_idle_restart_is_linux_311_tcp_cwnd_restart(period: float) -> None:
    """Seed 000 footnote 5 names ``tcp_cwnd_restart()``: after an idle period longer than the
    RTO the window is halved once per whole RTO of idle time since the last transmission
    (``while ((delta -= rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1``), never below
    min(cwnd, I_w). A 300 KB write on a 10 Mbit/s, 30 ms path ends its slow start with a
    window far above I_w = 10; the next write comes at ``period``. The expected number of
    halvings, ceil(idle / RTO) − 1, is computed from the samples (the last transmission known
    to 10 ms) and must be the same at both ends of that uncertainty; at 3 s the idle time is
    about 9 RTOs, enough to bring any window here to I_w. With idle restart off the window is
    kept."""
    import math

    w = _restart_run(f"{period}s")
    pre = w.loc[: period - 0.005]
    before, rto = pre["cwnd_bytes"].iloc[-1], pre["rto_s"].iloc[-1]
    sent = pre["dsn_sent_bytes"]
    last_send = sent.index[sent < sent.iloc[-1]][-1]  # the last sample before the final send
    after = w.loc[period:, "cwnd_bytes"].iloc[0]
    k = {math.ceil((period - t) / rto) - 1 for t in (last_send, last_send + 0.01)}
    assert len(k) == 1 and before > 10 * 1448
    expected = max(int(before) >> k.pop(), 10 * 1448)
    assert after == expected
    if period == 3.0:
        assert after == 10 * 1448
    kept = _restart_run(f"{period}s", idle_restart=False)
    assert kept.loc[period:, "cwnd_bytes"].iloc[0] == kept.loc[: period - 0.005, "cwnd_bytes"].iloc[-1]


def test_the_stated_apache2_writer_turns_off_v088s_send_buffer_path() -> None:
    """Seed 000 §III: Apache2 on v0.88. APR makes a socket with a timeout non-blocking, Linux
    3.11 raises ``sk_write_pending`` only for a writer asleep in ``sk_stream_wait_memory``, and
    v0.88 runs M1/M2 for a full send buffer only while it is raised: so Figs. 6-8 keep both
    mechanisms on and their send-buffer path off, and a configuration's own ``minrtt`` keys do
    not switch it back on."""
    from mptcplab.experiments import chen_towsley_fig6 as fig6
    from mptcplab.experiments import chen_towsley_fig8 as fig8

    assert links.APACHE_WRITER == {"send_buffer_path": False}
    conn = links.mptcp_autotuned({"kind": "bulk"}, sched_params={"minrtt": {"penalisation": True}})
    minrtt = conn["sched_params"]["minrtt"]
    assert (minrtt["send_buffer_path"], minrtt["penalisation"], minrtt["penalisation_rule"]) == (False, True, "v0.88")
    assert fig6.scenario("per_rtt")["connections"][0]["sched_params"]["minrtt"]["send_buffer_path"] is False
    assert fig8.scenario(True, True)["connections"][0]["sched_params"]["minrtt"]["send_buffer_path"] is False


def test_the_writer_ablation_keeps_its_own_writer_in_every_configuration(monkeypatch) -> None:
    """Fig. 8's ablation row "a blocking writer" must run with the send-buffer path on in all four
    configurations (the configuration's scheduler keys are merged first, the variant's last)."""
    from mptcplab.experiments import chen_towsley_fig8 as fig8

    seen = []

    class Stop(Exception):
        pass

    def fake_run(sc, seed):
        seen.append(sc["connections"][0]["sched_params"]["minrtt"])
        raise Stop

    import mptcplab

    monkeypatch.setattr(mptcplab, "run", fake_run)
    variant = next(v for v in fig8.ABLATIONS if v[0].startswith("a blocking writer"))
    for label, restart, penl in fig8.CONFIGS:
        with pytest.raises(Stop):
            fig8._one(label, restart, penl, 1, 4, variant)
    assert [m["send_buffer_path"] for m in seen] == [True] * 4
    assert [m["penalisation"] for m in seen] == [penl for _l, _r, penl in fig8.CONFIGS]


def test_fig7_starvation_is_read_from_the_series_over_the_window() -> None:
    """The cumulative send-buffer-limited time sampled every 10 ms: limited from 20.5 s to
    26.5 s (6 s) and from 36 s to 37 s gives 6/12 = 0.5 of 20–32 s (the claim's threshold,
    'most of that window'), 1/10 of 35–45 s and 0 of 0–20 s."""
    import numpy as np

    from mptcplab.experiments import chen_towsley_fig7 as fig7

    t = np.round(np.arange(0, 4501) * 0.01, 2)
    cum = np.clip(t - 20.5, 0, 6) + np.clip(t - 36.0, 0, 1)
    w = pd.DataFrame({"mptcp:sndbuf_limited_s": cum}, index=pd.Index(t, name="time_s"))
    assert fig7.starved_fraction(w, 20.0, 32.0) == pytest.approx(0.5)
    assert fig7.starved_fraction(w, 35.0) == pytest.approx(0.1)
    assert fig7.starved_fraction(w, 0.0, 20.0) == 0.0
    claim = next(c for c in fig7.CLAIMS if c.id == "starvation")
    assert claim.tolerance.holds(claim.paper, 0.5) and not claim.tolerance.holds(claim.paper, 0.49)


def test_fig6_the_61_percent_is_counted_as_the_model_number() -> None:
    """Rule (4) of Fig. 6: the 61 % is Eq. (12) at assumed inputs (1 − 0.25/0.64 = 60.9 %), so
    the simulated underestimation is supporting, and the section's counted simulation claims
    are the two causes the seed names."""
    from mptcplab.experiments import chen_towsley_fig6 as fig6

    by_id = {c.id: c for c in fig6.CLAIMS}
    assert not by_id["under"].counted and by_id["eq12-under"].counted and by_id["eq12-under"].kind == "model"
    assert sorted(c.id for c in fig6.CLAIMS if c.kind == "simulation" and c.counted) == ["cause-alpha", "cause-srtt"]
