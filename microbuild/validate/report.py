"""The HTML page of a validation run: one self-contained file (inline SVG and CSS, no script,
nothing fetched) with the figures, the latency histogram, the confusion matrix and each output's
error distribution; what a user attaches to a pull request.

Figures carry ``data-figure`` attributes (``identical``, ``samples``, ``deployed-accuracy``, ...)
so a reader or a test can find them without parsing the prose."""

from __future__ import annotations

import html
import math
from typing import Any

BAR_WIDTH, CHART_HEIGHT = 24, 160


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return f"{value:.{digits}g}"
    if isinstance(value, int):
        return f"{value:,}"
    return html.escape(str(value))


def _figure(name: str, value: Any, digits: int = 4) -> str:
    return f'<span data-figure="{name}">{_fmt(value, digits)}</span>'


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def histogram_svg(title: str, hist: dict[str, list], unit: str, kind: str) -> str:
    """Bars of a histogram ({edges, counts}) as inline SVG, its bins labelled at both ends."""
    counts, edges = hist.get("counts", []), hist.get("edges", [])
    if not counts:
        return ""
    top = max(counts) or 1
    width = 60 + BAR_WIDTH * len(counts)
    bars = []
    for k, count in enumerate(counts):
        h = CHART_HEIGHT * count / top
        x = 50 + BAR_WIDTH * k
        tip = f"{edges[k]:.4g} – {edges[k + 1]:.4g} {unit}: {count}"
        bars.append(f'<rect class="bar" data-count="{count}" x="{x}" y="{20 + CHART_HEIGHT - h:.1f}"'
                    f' width="{BAR_WIDTH - 2}" height="{h:.1f}"><title>{html.escape(tip)}</title>'
                    "</rect>")
    return (f'<figure data-chart="{kind}"><figcaption>{html.escape(title)}</figcaption>'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{CHART_HEIGHT + 50}"'
            f' role="img">'
            f'<text x="4" y="16">{top}</text><text x="4" y="{20 + CHART_HEIGHT}">0</text>'
            + "".join(bars) +
            f'<text x="50" y="{CHART_HEIGHT + 38}">{edges[0]:.4g}</text>'
            f'<text x="{width - 10}" y="{CHART_HEIGHT + 38}" text-anchor="end">'
            f'{edges[-1]:.4g} {html.escape(unit)}</text></svg></figure>')


def confusion_svg(classes: list[str], matrix: list[list[int]]) -> str:
    """The confusion matrix as a grid of shaded cells with their counts."""
    n = len(matrix)
    cell = 36 if n <= 12 else 18
    left, top = 90, 40
    peak = max((max(row) for row in matrix), default=0) or 1
    parts = []
    for i, row in enumerate(matrix):
        parts.append(f'<text x="{left - 6}" y="{top + cell * i + cell * 0.65:.0f}" '
                     f'text-anchor="end">{html.escape(classes[i] if i < len(classes) else str(i))}'
                     "</text>")
        for j, count in enumerate(row):
            shade = 0.08 + 0.85 * count / peak if count else 0.0
            parts.append(f'<rect class="cell" data-row="{i}" data-col="{j}" data-count="{count}" '
                         f'x="{left + cell * j}" y="{top + cell * i}" width="{cell - 1}" '
                         f'height="{cell - 1}" fill="rgb(33,102,172)" fill-opacity="{shade:.2f}" '
                         f'stroke="#ccc"><title>label {i}, predicted {j}: {count}</title></rect>')
            if cell >= 30 and count:
                parts.append(f'<text x="{left + cell * j + cell / 2:.0f}" '
                             f'y="{top + cell * i + cell * 0.65:.0f}" text-anchor="middle">'
                             f"{count}</text>")
    for j in range(n):
        parts.append(f'<text x="{left + cell * j + cell / 2:.0f}" y="{top - 8}" '
                     f'text-anchor="middle">{j}</text>')
    size = left + cell * n + 10
    return ('<figure data-chart="confusion"><figcaption>confusion matrix of the deployed model '
            '(rows: label, columns: prediction)</figcaption>'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{top + cell * n + 10}"'
            f' role="img">' + "".join(parts) + "</svg></figure>")


STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.headline { font-size: 1.4em; }
.bad { color: #b00; }
rect.bar { fill: #2166ac; }
svg text { font-size: 11px; fill: #444; }
figure { margin: 0 0 1.5em; }
"""


def render_html(doc: dict[str, Any]) -> str:
    """The page of a ValidationReport's ``to_dict()``."""
    e = html.escape
    title = f"{doc['model']} on {doc['board']}"
    body = [f"<h1>Validation of {e(title)}</h1>",
            f"<p>data: <code>{e(doc['data'])}</code>; samples: {_figure('samples', doc['samples'])}"
            f", ran on the device: {_figure('ran', doc['ran'])}"
            + (" — <strong class='bad'>interrupted</strong>" if doc["interrupted"] else "")
            + "</p>",
            f"<p class='headline'>{_figure('identical', doc['identical_to_tflm'])} of "
            f"{_fmt(doc['ran'])} identical to TFLM</p>"]
    if doc["failures"]:
        body.append("<h2>Samples the device failed</h2><table><tr><th>sample</th><th>file</th>"
                    "<th>error</th></tr>" + "".join(
                        f"<tr data-failure='{f['index']}'><td>{f['index']}</td><td>{e(f['name'])}"
                        f"</td><td>{e(f['message'])}</td></tr>" for f in doc["failures"])
                    + "</table>")
    latency = doc.get("latency") or {}
    if latency:
        body.append("<h2>Latency per inference</h2><table><tr><th></th><th>ticks</th>"
                    f"<th>{e(latency['unit'])}</th></tr>" + "".join(
                        f"<tr><td>{k}</td><td>{_figure(f'latency-{k}', latency[f'{k}_ticks'])}"
                        f"</td><td>{e(latency['shown'][k])}</td></tr>"
                        for k in ("min", "median", "max"))
                    + f"</table><p>timer {latency['timer_hz']:,} Hz ({e(latency['kind'])})</p>")
        body.append(histogram_svg("latency histogram (ticks per inference)",
                                  latency["histogram"], "ticks", "latency"))
    vs_labels = doc.get("vs_labels")
    if vs_labels:
        body.append("<h2>Against the labels</h2><table><tr><th>model</th><th>accuracy</th></tr>"
                    "<tr><td>deployed</td><td><span data-figure='deployed-accuracy'>"
                    f"{_percent(vs_labels['deployed_accuracy'])}</span></td></tr>"
                    + (f"<tr><td>float</td><td><span data-figure='float-accuracy'>"
                       f"{_percent(vs_labels['float_accuracy'])}</span></td></tr>"
                       if vs_labels["float_accuracy"] is not None else "")
                    + "</table>")
        body.append(confusion_svg(vs_labels["classes"], vs_labels["confusion"]))
    vs_float = doc.get("vs_float")
    if vs_float:
        body.append(f"<h2>Against the float model</h2><p><code>{e(doc['float_model'])}</code></p>"
                    "<table><tr><th>output</th><th>top-1 agreement</th><th>mean |err|</th>"
                    "<th>max |err|</th><th>RMSE</th><th>cosine</th><th>SNR dB</th></tr>")
        for o in vs_float:
            k = o["output"]
            body.append(f"<tr><td>{k} {e(o['name'])}</td>"
                        f"<td><span data-figure='top1-{k}'>{_percent(o['top1_agreement'])}</span>"
                        f"</td><td>{_figure(f'mean-abs-{k}', o['mean_abs_error'])}</td>"
                        f"<td>{_figure(f'max-abs-{k}', o['max_abs_error'])}</td>"
                        f"<td>{_figure(f'rmse-{k}', o['rmse'])}</td>"
                        f"<td>{_figure(f'cosine-{k}', o['cosine'], 6)}</td>"
                        f"<td>{_figure(f'snr-{k}', o['snr_db'])}</td></tr>")
        body.append("</table>")
        for o in vs_float:
            body.append(histogram_svg(f"output {o['output']} ({o['name']}): |deployed − float| "
                                      "per value", o["abs_error_histogram"], "",
                                      f"error-{o['output']}"))
    memory = doc.get("memory") or {}
    if memory:
        body.append("<h2>Memory</h2><table><tr><th>part</th><th>bytes</th></tr>" + "".join(
            f"<tr><td>{e(k)}</td><td>{_figure(f'memory-{k}', v)}</td></tr>"
            for k, v in memory.get("totals", {}).items() if v) + "</table>")
        if memory.get("regions"):
            body.append("<table><tr><th>region</th><th>used</th><th>size</th><th>use</th></tr>"
                        + "".join(f"<tr><td>{e(r['name'])}</td><td>{_fmt(r['used'])}</td>"
                                  f"<td>{_fmt(r['length'])}</td><td>{_fmt(r['percent'])}%</td>"
                                  "</tr>" for r in memory["regions"]) + "</table>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{e(title)}: validation</title><style>{STYLE}</style></head><body>"
            + "\n".join(part for part in body if part) + "</body></html>\n")
