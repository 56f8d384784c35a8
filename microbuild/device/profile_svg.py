"""The per-operator profile of `run --profile` as a standalone SVG bar chart (`--profile-svg`):
one horizontal bar per operator, its length the operator's timer ticks, labelled with the
operator, its kernel variant and its share of the sum."""

from __future__ import annotations

from typing import Any, Sequence
from xml.sax.saxutils import escape

_BAR = "#4e79a7"
_BAR_LOW = "#f28e2b"  # operators below a third of the model's MACs per tick


def profile_svg(title: str, unit: str, rows: Sequence[dict[str, Any]], width: int = 960) -> str:
    """``rows``: dicts with index, opcode, kernel, ticks, macs and macs_per_tick (as
    microbuild.cli.shared.profile_rows makes them); ``unit``: what a tick is on this board."""
    row_h, top, bottom, left, right = 20, 50, 40, 300, 170
    height = top + row_h * max(len(rows), 1) + bottom
    plot_w = width - left - right
    longest = max([r["ticks"] for r in rows] + [1])
    total = sum(r["ticks"] for r in rows) or 1
    rates = [r["macs_per_tick"] for r in rows if r.get("macs_per_tick")]
    overall = (sum(r["macs"] for r in rows) / total) if rates else None
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20" font-size="14">{escape(title)}</text>',
        f'<text x="10" y="38" fill="#555">bar length: timer ticks per operator ({escape(unit)})'
        + ("; orange: under a third of the model's MACs per tick" if overall else "")
        + "</text>",
    ]
    for k, r in enumerate(rows):
        y = top + k * row_h
        bar = plot_w * r["ticks"] / longest
        slow = overall is not None and r.get("macs_per_tick") is not None \
            and r["macs_per_tick"] < overall / 3
        label = f"#{r['index']} {r['opcode']}" + (f" ({r['kernel']})" if r.get("kernel") else "")
        value = f"{r['ticks']:,} ({100 * r['ticks'] / total:.1f}%)"
        tip = f"{label}: {r['ticks']:,} ticks" + (
            f", {r['macs']:,} MACs, {r['macs_per_tick']:.2f} MACs/tick"
            if r.get("macs_per_tick") else "")
        parts += [
            f'<text x="{left - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>',
            f'<rect x="{left}" y="{y + 3}" width="{max(bar, 1):.1f}" height="{row_h - 6}" '
            f'fill="{_BAR_LOW if slow else _BAR}"><title>{escape(tip)}</title></rect>',
            f'<text x="{left + bar + 4:.1f}" y="{y + 14}">{escape(value)}</text>',
        ]
    axis_y = top + row_h * max(len(rows), 1) + 4
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" '
                 'stroke="#333"/>')
    for k in range(5):
        ticks = longest * k / 4
        x = left + plot_w * k / 4
        parts.append(f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 4}" '
                     'stroke="#333"/>')
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 16}" text-anchor="middle">'
                     f"{ticks:,.0f}</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
