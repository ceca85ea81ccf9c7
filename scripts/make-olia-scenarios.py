#!/usr/bin/env python3
"""Writes scenarios/olia-scenario-{a,a-n30,b,c,c-n30}.toml: seed 004's scenarios A, B and C
(Khalili et al., "MPTCP is not Pareto-optimal", CoNEXT 2012) with one connection per user.

The files are generated because they list every user; edit this script, not the files, and
rerun it from the repository root.
"""

from __future__ import annotations

from pathlib import Path

OUT = Path("scenarios")

COMMON = """#
# Assumptions common to the seed 004 scenarios (none of them is given on the slides):
#   - one long-lived bulk download per user (iperf-like), one connection each;
#   - every path has the same 100 ms base RTT: 50 ms on the server's side each way. Derived
#     from scenario B's probing-cost column: 2.04 = 2.1 - 15 e / 30 gives a probe e =
#     0.12 Mbit/s per red user, and 1 MSS (1500 B) per RTT = 0.12 Mbit/s means RTT = 100 ms;
#   - each shared bottleneck buffers one base-RTT bandwidth-delay product: queue = "100ms"
#     (a time limit at the link rate); every other link is 1 Gbit/s and never a bottleneck;
#   - 120 s runs, the first 20 s excluded from goodput (the seed gives no durations);
#   - MPTCP users run LIA (RFC 6356), the slides' "MPTCP"; TCP users run Reno.
# Normalised throughput = goodput / the per-user capacity C (Mbit/s).
"""

LINK = '[[links]]\nname = "{n}"\nfrom = "{f}"\nto = "{t}"\nrate = "{r}"\ndelay = "{d}"\n{q}'


def link(n: str, f: str, t: str, r: str = "1Gbit", d: str = "0ms", bottleneck: bool = False) -> str:
    return LINK.format(n=n, f=f, t=t, r=r, d=d, q='queue = "100ms"\n' if bottleneck else "")


def conn(name: str, kind: str, client: str, server: str, routes: list[tuple[str, list[str], list[str]]]) -> str:
    cc = "lia" if kind == "mptcp" else "reno"
    rs = ",\n    ".join(
        f'{{ name = "{n}", up = [{", ".join(chr(34) + x + chr(34) for x in up)}], '
        f'down = [{", ".join(chr(34) + x + chr(34) for x in down)}] }}'
        for n, up, down in routes
    )
    return (
        f'[[connections]]\nname = "{name}"\nkind = "{kind}"\ncc = "{cc}"\nclient = "{client}"\n'
        f'server = "{server}"\napp = {{ kind = "bulk" }}\nroutes = [\n    {rs},\n]\n'
    )


TAIL = '[output]\nwarmup = "20s"\n'


def scenario_a(n1: int, n2: int) -> str:
    head = f"""# Seed 004, scenario A ("MPTCP can penalize TCP users"): Khalili, Gast, Popovic, Upadhyay,
# Le Boudec, "MPTCP is not Pareto-optimal: performance issues and a possible solution",
# CoNEXT 2012 (seed 004 are the talk's slides). N1 = {n1} type-1 and N2 = {n2} type-2 users,
# C1 = C2 = 1 Mbit/s.
#
# Topology (reconstructed; the slides' figure is not in the seed):
#   type-1 users download from server s1 whose bottleneck, `s1-core`, has N1 x C1 =
#   {n1} Mbit/s. Their own ISP (`core-t1`) is fast. Upgraded to MPTCP, a type-1 user opens a
#   second path through the access link `shared` (N2 x C2 = {n2} Mbit/s) that the type-2 users
#   (single-path TCP from server s2) depend on. Both type-1 paths cross `s1-core`.
#   Why both: on the slides, type-1 users gain nothing from MPTCP (0.98 single-path, 0.96
#   MPTCP) while type-2 users lose (0.98 -> 0.70). If the second path bypassed the type-1
#   bottleneck, type-1 users would gain (as in scenario C, 1.3). The theory columns agree:
#   the optimum leaves the second path unused (1 and 1); with a probing cost of 1 MSS/RTT
#   per type-1 user on `shared`, type-2 users keep 1 - N1 x 0.06..0.067 / N2 = 0.94 (N1 = 10)
#   and 0.8 (N1 = 30).
#
#   s1 --s1-core ({n1} Mbit/s)--> core --core-t1--> t1          (type 1, path "own")
#                                   \\--shared ({n2} Mbit/s)--> ap --ap-t1--> t1   (path "shared")
#   s2 --s2-core--> core --shared--> ap --ap-t2--> t2           (type 2)
#   ACKs: t1-s1, t2-s2.
{COMMON}#
# The seed's table (normalised throughput):       type-1 single-path | MPTCP LIA | OLIA
#   N1 = 10: type 1                                      0.98        |   0.96    | 0.98
#            type 2                                      0.98        |   0.70    | 0.86
#   N1 = 30: type 1                                      0.98        |   0.98    | 0.98
#            type 2                                      0.98        |   0.44    | 0.75
# Variants (quote the patterns for the shell):
#   OLIA:               --set 'connections.type1-*.cc=olia'
#   type 1 single-path: --set 'connections.type1-*.kind=tcp' --set 'connections.type1-*.cc=reno'
#                       --set 'connections.type1-*.routes=[{{name="own", up=["t1-s1"], down=["s1-core", "core-t1"]}}]'
name = "olia-scenario-a{'' if n1 == 10 else '-n30'}"
description = "Seed 004 scenario A (Khalili et al. CoNEXT'12): N1={n1} MPTCP type-1 users hurt N2={n2} TCP type-2 users, C=1 Mbit/s"
duration = "120s"

"""
    links = [
        link("s1-core", "s1", "core", f"{n1}Mbit", "50ms", True),
        link("core-t1", "core", "t1"),
        link("s2-core", "s2", "core", d="50ms"),
        link("shared", "core", "ap", f"{n2}Mbit", bottleneck=True),
        link("ap-t1", "ap", "t1"),
        link("ap-t2", "ap", "t2"),
        link("t1-s1", "t1", "s1", d="50ms"),
        link("t2-s2", "t2", "s2", d="50ms"),
    ]
    conns = [
        conn(
            f"type1-{i:02}",
            "mptcp",
            "t1",
            "s1",
            [("own", ["t1-s1"], ["s1-core", "core-t1"]), ("shared", ["t1-s1"], ["s1-core", "shared", "ap-t1"])],
        )
        for i in range(1, n1 + 1)
    ] + [
        conn(f"type2-{i:02}", "tcp", "t2", "s2", [("shared", ["t2-s2"], ["s2-core", "shared", "ap-t2"])])
        for i in range(1, n2 + 1)
    ]
    return head + "\n".join(links) + "\n" + "\n".join(conns) + "\n" + TAIL


def scenario_b() -> str:
    head = f"""# Seed 004, scenario B ("MPTCP can penalize other MPTCP users"): Khalili, Gast, Popovic,
# Upadhyay, Le Boudec, "MPTCP is not Pareto-optimal: performance issues and a possible
# solution", CoNEXT 2012 (seed 004 are the talk's slides). 15 blue and 15 red users,
# C_X = 27 Mbit/s, C_T = 36 Mbit/s; throughputs in Mbit/s per user.
#
# Topology (reconstructed): blue users are multipath, one path through X and one through T.
# Red users are single-path through T; upgraded to MPTCP, a red user's second path crosses
# X *and then* T (the bridge `xout-tin`).
# Why both links: with C_X + C_T = 63 Mbit/s for 30 users, any allocation in which every
# path crosses one bottleneck can give everyone 63 / 30 = 2.1 Mbit/s, and the seed's
# optimum with red users multipath (no probing cost) is indeed 2.1. But its optimum *with*
# probing cost is 2.04 for everyone: 30 x 2.04 = 61.2 Mbit/s, so 1.8 Mbit/s of capacity is
# lost. A probe of e per red user on a one-link path would still count as throughput (total
# 63); only if the probe occupies two links at once does the total fall to 63 - 15 e:
# 63 - 15 e = 61.2 -> e = 0.12 Mbit/s (= 1 MSS per 100 ms RTT). The measured MPTCP column
# says the same: 15 x (1.4 + 2.0) = 51 Mbit/s < 60 (red single-path, 15 x (1.5 + 2.5));
# with every link full, 63 - 15 r = 51 gives r = 0.8 Mbit/s per red user on the X+T path,
# i.e. blue gets 27 - 12 = 15 on X (1.0 each) and 1.0 each on T, red 0.6 on T + 0.8.
#
#   s --s-xin--> xin --X (27 Mbit/s)--> xout --xout-blue--> blue      (blue path "x")
#   s --s-tin--> tin --T (36 Mbit/s)--> tout --tout-blue--> blue      (blue path "t")
#   s --s-tin--> tin --T--> tout --tout-red--> red                    (red path "t")
#   s --s-xin--> xin --X--> xout --xout-tin--> tin --T--> tout --tout-red--> red  (red "xt")
#   ACKs: blue-s, red-s.
{COMMON}#
# The seed's table (Mbit/s):      red single-path: MPTCP | optimum | red multipath: MPTCP | opt. (p. cost) | optimum
#   red users                                     1.5   |   2.1   |                1.4   |      2.04      |   2.1
#   blue users                                    2.5   |   2.1   |                2.0   |      2.04      |   2.1
# Variants (quote the patterns for the shell):
#   OLIA:                 --set 'connections.blue-*.cc=olia' --set 'connections.red-*.cc=olia'
#   red users single-path: --set 'connections.red-*.kind=tcp' --set 'connections.red-*.cc=reno'
#                          --set 'connections.red-*.routes=[{{name="t", up=["red-s"], down=["s-tin", "T", "tout-red"]}}]'
name = "olia-scenario-b"
description = "Seed 004 scenario B (Khalili et al. CoNEXT'12): 15 blue + 15 red MPTCP users, C_X=27, C_T=36 Mbit/s"
duration = "120s"

"""
    links = [
        link("s-xin", "s", "xin", d="50ms"),
        link("s-tin", "s", "tin", d="50ms"),
        link("X", "xin", "xout", "27Mbit", bottleneck=True),
        link("T", "tin", "tout", "36Mbit", bottleneck=True),
        link("xout-blue", "xout", "blue"),
        link("tout-blue", "tout", "blue"),
        link("tout-red", "tout", "red"),
        link("xout-tin", "xout", "tin"),
        link("blue-s", "blue", "s", d="50ms"),
        link("red-s", "red", "s", d="50ms"),
    ]
    conns = [
        conn(
            f"blue-{i:02}",
            "mptcp",
            "blue",
            "s",
            [("x", ["blue-s"], ["s-xin", "X", "xout-blue"]), ("t", ["blue-s"], ["s-tin", "T", "tout-blue"])],
        )
        for i in range(1, 16)
    ] + [
        conn(
            f"red-{i:02}",
            "mptcp",
            "red",
            "s",
            [("t", ["red-s"], ["s-tin", "T", "tout-red"]), ("xt", ["red-s"], ["s-xin", "X", "xout-tin", "T", "tout-red"])],
        )
        for i in range(1, 16)
    ]
    return head + "\n".join(links) + "\n" + "\n".join(conns) + "\n" + TAIL


def scenario_c(n1: int, n2: int) -> str:
    head = f"""# Seed 004, scenario C ("MPTCP is excessively aggressive toward TCP users"): Khalili, Gast,
# Popovic, Upadhyay, Le Boudec, "MPTCP is not Pareto-optimal: performance issues and a
# possible solution", CoNEXT 2012 (seed 004 are the talk's slides). N1 = {n1} multipath and
# N2 = {n2} single-path users, C1 = C2 = 1 Mbit/s.
#
# Topology (reconstructed): multipath users have their own access `ap1` (N1 x C1 = {n1}
# Mbit/s) and share `ap2` (N2 x C2 = {n2} Mbit/s) with the single-path users. Unlike scenario
# A, the two paths have separate bottlenecks, so multipath users gain from the second path:
# the slides measure 1.3 (N1 = 10) and 1.19 (N1 = 30) for them. Check of full use:
# 10 x 1.3 + 10 x 0.68 = 19.8 of 20 Mbit/s and 30 x 1.19 + 10 x 0.38 = 39.5 of 40 Mbit/s. The
# fair optimum gives every user (N1 C1 + N2 C2) / (N1 + N2) = 1.
#
#   s --s-core--> core --ap1 ({n1} Mbit/s)--> m                  (multipath, path "ap1")
#                   \\--ap2 ({n2} Mbit/s)--> a2 --a2-m--> m        (multipath, path "ap2")
#                                            \\--a2-sp--> sp       (single-path)
#   ACKs: m-s, sp-s.
{COMMON}#
# The seed's table (normalised throughput):  MPTCP LIA | optimum with p. cost | optimum
#   N1 = 10: multipath                          1.3    |        1.04          |   1
#            single-path                        0.68   |        0.94          |   1
#   N1 = 30: multipath                          1.19   |        1.04          |   1
#            single-path                        0.38   |        0.8           |   1
# Variant (quote the pattern for the shell):
#   OLIA: --set 'connections.multi-*.cc=olia'
name = "olia-scenario-c{'' if n1 == 10 else '-n30'}"
description = "Seed 004 scenario C (Khalili et al. CoNEXT'12): N1={n1} MPTCP users with their own AP share a second AP with N2={n2} TCP users"
duration = "120s"

"""
    links = [
        link("s-core", "s", "core", d="50ms"),
        link("ap1", "core", "m", f"{n1}Mbit", bottleneck=True),
        link("ap2", "core", "a2", f"{n2}Mbit", bottleneck=True),
        link("a2-m", "a2", "m"),
        link("a2-sp", "a2", "sp"),
        link("m-s", "m", "s", d="50ms"),
        link("sp-s", "sp", "s", d="50ms"),
    ]
    conns = [
        conn(
            f"multi-{i:02}",
            "mptcp",
            "m",
            "s",
            [("ap1", ["m-s"], ["s-core", "ap1"]), ("ap2", ["m-s"], ["s-core", "ap2", "a2-m"])],
        )
        for i in range(1, n1 + 1)
    ] + [
        conn(f"single-{i:02}", "tcp", "sp", "s", [("ap2", ["sp-s"], ["s-core", "ap2", "a2-sp"])])
        for i in range(1, n2 + 1)
    ]
    return head + "\n".join(links) + "\n" + "\n".join(conns) + "\n" + TAIL


def main() -> None:
    files = {
        "olia-scenario-a.toml": scenario_a(10, 10),
        "olia-scenario-a-n30.toml": scenario_a(30, 10),
        "olia-scenario-b.toml": scenario_b(),
        "olia-scenario-c.toml": scenario_c(10, 10),
        "olia-scenario-c-n30.toml": scenario_c(30, 10),
    }
    for name, text in files.items():
        (OUT / name).write_text(text)
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
