"""Runs reproductions and writes the report: one Markdown section, CSV and figures per
reproduction, and ``index.html`` with every figure inline, the tables and the verdicts."""

from __future__ import annotations

import html
import json
import platform
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from mptcplab.experiments import load
from mptcplab.experiments.base import ORIGINS, ClaimRow, Context, Result

__all__ = ["run_reproductions", "totals", "write_index"]


def run_one(
    name: str, out: Path, quick: bool, jobs: int, progress: Callable[[int, int], None] | None, data: Path | None = None,
    engine: str = "local", address: str | None = None, full: bool = False,
) -> Result:
    """Runs one reproduction and writes its section, claims table and result summary.

    The claims must be the module's ``CLAIMS``, declared at import, before the run: a
    reproduction cannot choose its claims or tolerances after seeing its numbers."""
    mod = load(name)
    ctx = Context(out=out / name, quick=quick, jobs=jobs, progress=progress, data=data, engine=engine, address=address,
                  full=full)
    t0 = time.monotonic()
    res: Result = mod.run(ctx)
    res.runtime_s = time.monotonic() - t0
    declared = tuple(getattr(mod, "CLAIMS", ()))
    if len(declared) != len(res.claims) or any(a is not b for a, b in zip(declared, res.claims)):
        raise RuntimeError(f"{name}: the result's claims are not the module's declared CLAIMS")
    res.tick_overlaps = list(ctx.tick_overlaps)
    res.origin = getattr(mod, "ORIGIN", res.origin)
    if res.origin not in ORIGINS:
        raise ValueError(f"{name}: origin {res.origin!r} is not one of {ORIGINS}")
    ctx.path("claims.csv")
    res.claim_frame().to_csv(ctx.out / "claims.csv", index=False)
    (ctx.out / "section.md").write_text(res.markdown())
    counts = res.counts()
    (ctx.out / "result.json").write_text(
        json.dumps(
            {"name": res.name, "origin": res.origin, "verdict": res.verdict,
             "reproduced_by_simulation": res.reproduced_by_simulation,
             "counts": {k: {"reproduced": c.reproduced, "testable": c.testable, "paper_inconsistent": c.inconsistent,
                            "not_testable": c.untestable} for k, c in counts.items()},
             "claims": res.verdicts(), "runtime_s": res.runtime_s, "quick": quick,
             "figures": [p.name for p in res.figures], "tables": {k: v.name for k, v in res.tables.items()},
             "tick_overlaps": res.tick_overlaps},
            indent=2,
        )
        + "\n"
    )
    return res


def run_reproductions(
    names: Sequence[str],
    out: Path,
    quick: bool,
    jobs: int,
    on_start: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    data: Path | None = None,
    engine: str = "local",
    address: str | None = None,
    full: bool = False,
) -> list[Result]:
    results = []
    for name in names:
        if on_start:
            on_start(name)
        results.append(run_one(name, out, quick, jobs, progress, data, engine, address, full))
    return results


_CSS = """
body { font-family: system-ui, sans-serif; font-size: 14px; line-height: 1.35; max-width: 1340px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.15em 0.45em; line-height: 1.25; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td i { color: #666; font-size: 0.9em; }
.verdict { font-weight: bold; }
.reproduced { color: #176617; } .partly { color: #a66b00; } .not { color: #a11; }
.body { display: flex; gap: 1.2em; align-items: flex-start; }
.body .text { flex: 1 1 60%; } .body .text p:first-child { margin-top: 0; }
.figs { flex: 1 1 40%; display: flex; flex-direction: column; gap: 0.4em; }
figure { margin: 0; } figure img { max-width: 100%; max-height: 250px; border: 1px solid #eee; }
.note, td.note { font-size: 0.85em; color: #444; }
table.claims { width: 100%; } table.claims td.n { white-space: nowrap; } table.claims td.paper { max-width: 16em; }
table.claims td.verdict { min-width: 7em; }
figcaption { font-size: 0.85em; color: #555; }
details { margin: 0.6em 0; } summary { cursor: pointer; color: #335; }
td details.more { margin: 0; } td details.more summary { color: inherit; }
p { margin: 0.45em 0; } h2 { margin: 1.4em 0 0.3em; } table { margin: 0.4em 0; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; }
"""

#: What the claim verdicts mean, printed once at the top of the report.
_LEGEND = (
    "Each section declares its claims before it runs: the paper's value and source, the quantity, "
    "and a tolerance with its reason. Verdicts are computed from the numbers: <b>reproduced</b> / "
    "<b>not reproduced</b> (inside / outside the tolerance), <b>not testable</b> (with why), "
    "<b>paper inconsistent</b> (the paper's own equation or table does not give the number it prints), "
    "<b>calibration target</b> (the one number open link parameters were fitted to; not counted, every "
    "other claim is then a prediction), <b>alternative reading</b> (a labelled reinterpretation of an "
    "inconsistent number; never counted); these two, and the supporting claims, are folded under each claims table. Model claims (the paper's equations evaluated) and simulation "
    "claims are counted separately, over each section's headline claims; a section is reproduced only "
    "when all of them are. The ablation column links each section's ablation table, where the stack's "
    "mechanisms or the setup's assumptions are changed one at a time to show what carries a claim that "
    "does not reproduce; ablations are reported beside the claims and never counted. The totals count the "
    "seed papers' claims and the project's own claims (the scheduler league's and the kernel agreement's "
    "simulator-against-kernel checks, which no seed makes) in two separate rows; a seed section is "
    "reproduced by simulation when every testable headline simulation claim of it is (the totals are also "
    "in <code>totals.json</code>)."
)


def _inline(text: str) -> str:
    """Escapes text and renders **bold**, *italic* and `code`."""
    import re

    # Sphinx cross-reference roles of the module docs (":mod:`x`") read as plain code here.
    text = re.sub(r":(?:mod|func|class|data|attr|meth|py:\w+):`~?([^`]+)`", r"`\1`", text)
    t = html.escape(text).replace("&lt;br&gt;", "<br>")
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    t = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", t)
    t = re.sub(r"``?(.+?)``?", r"<code>\1</code>", t)
    return t


def _md_table_to_html(md: str) -> str:
    """Renders the report's Markdown sections: paragraphs (lines joined until a blank line),
    bullet lists, and pipe tables. The section heading is rendered separately."""
    out: list[str] = []
    rows: list[list[str]] = []
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if rows:
            head, *body = rows
            out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>")
            out.extend("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in body)
            out.append("</table>")
            rows.clear()
        if para:
            out.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in md.splitlines():
        s = line.strip()
        if s.startswith("|"):
            if para or items:
                flush()
            cells = [_inline(c.strip()) for c in s.strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                rows.append(cells)
            continue
        if rows:
            flush()
        if not s or s.startswith("## "):
            flush()
            continue
        if s.startswith(("- ", "* ")):
            if para:
                flush()
            items.append(s[2:])
        elif items and line.startswith("  "):
            items[-1] += " " + s
        else:
            if items:
                flush()
            para.append(s)
    flush()
    return "\n".join(out)


def _verdict_class(v: str) -> str:
    return "reproduced" if v == "reproduced" else "not" if v.startswith(("not", "paper")) else "partly"


def _claims_html(r: Result, data: str) -> str:
    """The claims table in HTML: headline claims shown, supporting claims folded below them.
    Each tolerance carries a numbered reason listed under the table (most claims of a section
    share one), each claim its source as a hover title (all sources are in ``claims.csv``
    and ``section.md``)."""
    reasons: list[str] = []
    referenced = {c.alternative_of for c in r.claims if c.alternative_of}

    def row(x: ClaimRow) -> str:
        c = x.claim
        # Ids are shown where another row refers to them (alternative readings); every id is
        # in the row's hover title and in claims.csv.
        claim = f"{_inline(x.label)}"
        if c.id in referenced:
            claim += f" <i>[{html.escape(c.id)}]</i>"
        if x.tags:
            claim += f"<br><i>{html.escape('; '.join(x.tags))}</i>"
        tol = html.escape(x.tolerance)
        if c.tolerance is not None:
            if c.tolerance.reason not in reasons:
                reasons.append(c.tolerance.reason)
            tol += f" <sup>{reasons.index(c.tolerance.reason) + 1}</sup>"
        return (f"<tr title='{html.escape(c.id)}'><td>{claim}</td><td class='n'>{c.kind}</td>"
                f"<td class='paper' title='{html.escape(c.source)}'>{html.escape(x.paper)}</td>"
                f"<td>{html.escape(x.ours)}</td><td class='n'>{tol}</td>"
                f"<td class='verdict {_verdict_class(x.verdict)}'>{html.escape(x.verdict)}</td>"
                f"<td class='note'>{_note_html(x.note)}</td></tr>")

    head = ("<tr><th>claim</th><th>kind</th><th>paper</th><th>ours (n)</th><th>tolerance</th><th>verdict</th>"
            "<th>note</th></tr>")
    rows = r.rows()
    # Shown: the headline claims that can count (or that the paper contradicts itself on).
    # Folded: supporting claims, and the readings that are never counted by definition
    # (alternative readings, calibration targets), each still marked as such.
    main = [x for x in rows if x.claim.headline and not (x.claim.calibration or x.claim.alternative_of)]
    rest = [x for x in rows if x not in main]
    parts = [f"<table class='claims'>{head}{''.join(row(x) for x in main)}</table>"]
    if rest:
        ok = sum(x.verdict == "reproduced" for x in rest if x.claim.headline is False)
        support = sum(not x.claim.headline for x in rest)
        never = len(rest) - support
        what = ", ".join(w for w in (f"{support} supporting claims ({ok} reproduced)" if support else "",
                                     f"{never} alternative readings or calibration targets" if never else "") if w)
        parts.append(f"<details><summary>{what}: not counted</summary>"
                     f"<table class='claims'>{head}{''.join(row(x) for x in rest)}</table></details>")
    sources = sorted({c.source for c in r.claims})
    parts.append("<p class='note'>Tolerance reasons: " + " ".join(
        f"<sup>{i + 1}</sup> {_inline(x)}" for i, x in enumerate(reasons)) + f"<br>{data}</p>"
        + f"<details class='note'><summary>Sources ({len(sources)})</summary>"
        + html.escape("; ".join(sources)) + ".</details>")
    return "\n".join(parts)


#: A claim's note longer than this (characters) shows its opening and folds the rest.
NOTE_SHOWN = 90


def _note_html(note: str) -> str:
    """A claim's note; a long one folded after its first clause (at a sentence or clause end
    within :data:`NOTE_SHOWN` characters, else at a word), so a table row stays a line or
    two high and the whole note is one click away."""
    if len(note) <= NOTE_SHOWN:
        return _inline(note)
    cut = max(note.rfind(sep, 0, NOTE_SHOWN) for sep in (". ", "; ", ": "))
    cut = cut + 1 if cut > NOTE_SHOWN // 3 else note.rfind(" ", 0, NOTE_SHOWN)
    if cut <= 0 or note[:cut].count("`") % 2:
        cut = note.find(" ", NOTE_SHOWN)
    if cut <= 0:
        return _inline(note)
    return f"<details class='more'><summary>{_inline(note[:cut])} …</summary>{_inline(note[cut:])}</details>"


def _discussion_html(md: str) -> str:
    """The discussion's first block (paragraph or list item) shown, the rest folded below it."""
    blocks: list[list[str]] = []
    for line in md.strip().splitlines():
        s = line.strip()
        if not s:
            if blocks and blocks[-1]:
                blocks.append([])
            continue
        new_item = s.startswith(("- ", "* ")) and blocks and blocks[-1] and not blocks[-1][0].startswith("|")
        if not blocks or new_item:
            blocks.append([])
        blocks[-1].append(line)
    blocks = [b for b in blocks if b]
    if not blocks:
        return ""
    head = _md_table_to_html("\n".join(blocks[0]))
    if len(blocks) == 1:
        return head
    rest = "\n\n".join("\n".join(b) for b in blocks[1:])
    return (f"{head}<details><summary>Discussion, continued ({len(blocks) - 1} more)</summary>"
            f"{_md_table_to_html(rest)}</details>")


def _figure_html(out: Path, figures: Sequence[Path]) -> list[str]:
    """One image per figure: the PNG shown, the SVG (kept on disk) linked."""
    parts = []
    stems: dict[str, dict[str, Path]] = {}
    for f in figures:
        stems.setdefault(f.stem, {})[f.suffix] = f
    for stem, files in stems.items():
        shown = files.get(".png") or next(iter(files.values()))
        rel = shown.relative_to(out).as_posix()
        links = [f"<a href='{html.escape(p.relative_to(out).as_posix())}'>{p.suffix[1:].upper()}</a>"
                 for ext, p in sorted(files.items()) if p is not shown]
        cap = html.escape(stem) + (f" ({' · '.join(links)})" if links else "")
        parts.append(f"<figure><a href='{html.escape(rel)}'><img src='{html.escape(rel)}' alt='{html.escape(stem)}'></a>"
                     f"<figcaption>{cap}</figcaption></figure>")
    return parts


def totals(results: Sequence[Result]) -> dict[str, dict[str, object]]:
    """The report's totals, per origin (``seed``: the seed papers' sections; ``project``: the
    project's own checks): per kind the headline claims reproduced, testable, paper
    inconsistent and not testable, summed over the sections; and the sections reproduced by
    simulation (every testable headline simulation claim reproduced) out of the sections."""
    out: dict[str, dict[str, object]] = {}
    for origin in ("seed", "project"):
        rs = [r for r in results if r.origin == origin]
        kinds: dict[str, dict[str, int]] = {}
        for kind in ("model", "simulation"):
            cs = [r.counts()[kind] for r in rs]
            kinds[kind] = {"reproduced": sum(c.reproduced for c in cs), "testable": sum(c.testable for c in cs),
                           "paper_inconsistent": sum(c.inconsistent for c in cs),
                           "not_testable": sum(c.untestable for c in cs)}
        out[origin] = {**kinds, "sections": {
            "reproduced_by_simulation": sum(r.reproduced_by_simulation for r in rs), "total": len(rs),
            "names": [r.name for r in rs]}}
    return out


def _total_row(label: str, t: dict[str, object], runtime: float) -> str:
    cells = []
    for kind in ("model", "simulation"):
        k = t[kind]
        assert isinstance(k, dict)
        cells.append(f"{k['reproduced']}/{k['testable']}")
    secs = t["sections"]
    assert isinstance(secs, dict)
    return (f"<tr><th>{html.escape(label, quote=False)}</th><th>{cells[0]}</th><th>{cells[1]}</th>"
            f"<th>sections reproduced by simulation: {secs['reproduced_by_simulation']} of {secs['total']}</th>"
            f"<th></th><th>{runtime:.0f} s</th></tr>")


def write_index(results: Sequence[Result], out: Path, quick: bool, version: str) -> Path:
    """Writes ``out/index.html`` and ``out/totals.json`` (:func:`totals`): the legend, a summary
    table with model and simulation claim counts per section and one total row per origin
    (seed papers, the project's own), shared assumptions once per paper, then each section (setup folded,
    claims table, verdict, discussion, one image per figure)."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    total = sum(r.runtime_s for r in results)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>mptcplab reproduction report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>mptcplab reproduction report</h1>",
        f"<p>mptcplab {html.escape(version)}, Python {platform.python_version()}, generated {now}, "
        f"{'quick mode (fewer repetitions)' if quick else 'the papers’ repetition counts'}, "
        f"{total:.0f} s of run time.</p>",
        f"<p>{_LEGEND}</p>",
        "<table><tr><th>reproduction</th><th>model claims reproduced / testable</th>"
        "<th>simulation claims reproduced / testable</th><th>verdict</th><th>ablation</th><th>run time</th></tr>",
    ]
    for r in results:
        counts = r.counts()
        cells = []
        for kind in ("model", "simulation"):
            c = counts[kind]
            has = any(cl.kind == kind for cl in r.claims)
            cells.append(html.escape(c.short()) if has else "")
        ablations = " · ".join(f"<a href='{html.escape(p.relative_to(out).as_posix())}'>{html.escape(k)}</a>"
                               for k, p in r.tables.items() if "ablation" in k) or "—"
        mark = " <i>(project's own claims)</i>" if r.origin == "project" else ""
        parts.append(
            f"<tr><td><a href='#{r.name}' title='{html.escape(r.source)}'>{html.escape(r.title)}</a>{mark}</td>"
            f"<td>{cells[0]}</td><td>{cells[1]}</td>"
            f"<td class='verdict'>{html.escape(r.verdict)}</td><td>{ablations}</td><td>{r.runtime_s:.1f} s</td></tr>"
        )
    # Two totals: the seed papers' claims, and the project's own (never mixed into the seeds').
    tot = totals(results)
    for origin, label in (("seed", "seed papers' claims"), ("project", "project's own claims")):
        rs = [r for r in results if r.origin == origin]
        if rs:
            parts.append(_total_row(label, tot[origin], sum(r.runtime_s for r in rs)))
    parts.append("</table>")
    (out / "totals.json").write_text(json.dumps({"quick": quick, "runtime_s": total, **tot}, indent=2) + "\n")
    printed: set[str] = set()
    for r in results:
        parts.append(f"<section id='{r.name}'><h2>{html.escape(r.title)}</h2>")
        setup = _md_table_to_html(r.setup)
        if r.assumptions:
            key, title, text = r.assumptions
            anchor = f"assumptions-{key}"
            if key not in printed:
                printed.add(key)
                parts.append(f"<details id='{anchor}'><summary>{html.escape(title)} (shared by this paper's "
                             f"sections)</summary>{_md_table_to_html(text)}</details>")
            setup += f"<p>Shared assumptions: <a href='#{anchor}'>{html.escape(title)}</a>.</p>"
        parts.append(f"<details><summary><i>Source: {html.escape(r.source)}.</i> Setup and assumptions</summary>"
                     f"{setup}</details>")
        counts = r.counts()
        kinds = [k for k in ("model", "simulation") if any(c.kind == k for c in r.claims)]
        line = "; ".join(f"{k} {counts[k].sentence()}" for k in kinds)
        parts.append(f"<p><span class='verdict {_verdict_class(r.verdict.split(': ')[-1])}'>Verdict: "
                     f"{html.escape(r.verdict)}.</span> Headline claims: {html.escape(line)}.</p>")
        links = " · ".join(f"<a href='{html.escape(p.relative_to(out).as_posix())}'>{html.escape(k)}</a>" for k, p in r.tables.items())
        claims_csv = out / r.name / "claims.csv"
        if claims_csv.exists():
            links = f"<a href='{html.escape(claims_csv.relative_to(out).as_posix())}'>claims</a>" + (f" · {links}" if links else "")
        parts.append(_claims_html(r, f"Data: {links}. Run time {r.runtime_s:.1f} s."))
        # The discussion beside the figures: a section is as tall as the longer of the two.
        text = _discussion_html(r.discussion)
        figs = "".join(_figure_html(out, r.figures))
        parts.append(f"<div class='body'><div class='text'>{text}</div><div class='figs'>{figs}</div></div>")
        if r.tick_overlaps:
            parts.append(f"<p>Overlapping tick labels: {html.escape('; '.join(r.tick_overlaps))}</p>")
        parts.append("</section>")
    # Records on <body> how many figures the browser could load and how tall the page is (the
    # test suite checks both in a headless browser).
    parts.append(
        "<script>window.addEventListener('load', () => { const imgs = [...document.images]; "
        "document.body.dataset.imagesTotal = imgs.length; "
        "document.body.dataset.imagesLoaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length; "
        "document.body.dataset.pageHeight = document.documentElement.scrollHeight; });</script>"
    )
    parts.append("</body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts))
    return index
