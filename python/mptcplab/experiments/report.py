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
from mptcplab.experiments.base import Context, Result

__all__ = ["run_reproductions", "write_index"]


def run_one(
    name: str, out: Path, quick: bool, jobs: int, progress: Callable[[int, int], None] | None, data: Path | None = None,
) -> Result:
    mod = load(name)
    ctx = Context(out=out / name, quick=quick, jobs=jobs, progress=progress, data=data)
    t0 = time.monotonic()
    res: Result = mod.run(ctx)
    res.runtime_s = time.monotonic() - t0
    ctx.path("comparison.csv")
    res.comparison_frame().to_csv(ctx.out / "comparison.csv", index=False)
    (ctx.out / "section.md").write_text(res.markdown())
    (ctx.out / "result.json").write_text(
        json.dumps(
            {"name": res.name, "verdict": res.verdict, "reason": res.reason, "runtime_s": res.runtime_s,
             "quick": quick, "figures": [p.name for p in res.figures], "tables": {k: v.name for k, v in res.tables.items()}},
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
) -> list[Result]:
    results = []
    for name in names:
        if on_start:
            on_start(name)
        results.append(run_one(name, out, quick, jobs, progress, data))
    return results


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.verdict { font-weight: bold; }
.reproduced { color: #176617; } .partly { color: #a66b00; } .not { color: #a11; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; }
"""


def _inline(text: str) -> str:
    """Escapes text and renders **bold**, *italic* and `code`."""
    import re

    t = html.escape(text)
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


def write_index(results: Sequence[Result], out: Path, quick: bool, version: str) -> Path:
    """Writes ``out/index.html``: summary table, then each reproduction with inline figures."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>mptcplab reproduction report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>mptcplab reproduction report</h1>",
        f"<p>mptcplab {html.escape(version)}, Python {platform.python_version()}, generated {now}, "
        f"{'quick mode (fewer repetitions)' if quick else 'full repetition counts'}.</p>",
        "<table><tr><th>reproduction</th><th>source</th><th>verdict</th><th>run time</th></tr>",
    ]
    for r in results:
        cls = r.verdict.split()[0]
        parts.append(
            f"<tr><td><a href='#{r.name}'>{html.escape(r.title)}</a></td><td>{html.escape(r.source)}</td>"
            f"<td class='verdict {cls}'>{r.verdict}</td><td>{r.runtime_s:.1f} s</td></tr>"
        )
    parts.append("</table>")
    for r in results:
        cls = r.verdict.split()[0]
        parts.append(f"<section id='{r.name}'><h2>{html.escape(r.title)}</h2>")
        parts.append(_md_table_to_html(r.markdown()))
        for f in r.figures:
            rel = f.relative_to(out).as_posix()
            parts.append(f"<figure><img src='{html.escape(rel)}' alt='{html.escape(f.stem)}'><figcaption>{html.escape(f.stem)}</figcaption></figure>")
        links = " · ".join(f"<a href='{html.escape(p.relative_to(out).as_posix())}'>{html.escape(k)}</a>" for k, p in r.tables.items())
        if links:
            parts.append(f"<p>Data: {links}</p>")
        parts.append(f"<p class='verdict {cls}'>Run time {r.runtime_s:.1f} s.</p></section>")
    # Records on <body> how many figures the browser could load (checked by the test suite
    # in a headless browser).
    parts.append(
        "<script>window.addEventListener('load', () => { const imgs = [...document.images]; "
        "document.body.dataset.imagesTotal = imgs.length; "
        "document.body.dataset.imagesLoaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length; });</script>"
    )
    parts.append("</body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts))
    return index
