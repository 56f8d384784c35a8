"""`run --profile` as people read it: each operator's kernel variant, MACs and MACs per tick next
to its ticks, and `--profile-svg` drawing the same profile as a bar chart (QEMU icount: exact)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from microbuild import cli

DS_CNN = Path(__file__).resolve().parent.parent / "models" / "ds_cnn.tflite"
SVG = "{http://www.w3.org/2000/svg}"


def test_profile_table_json_and_svg_agree(tmp_path, capsys):
    out = str(tmp_path / "fw")
    svg_path = tmp_path / "profile.svg"
    assert cli.main(["run", "--board", "mps2-an500", "--model", str(DS_CNN), "--profile",
                     "--profile-svg", str(svg_path), "-o", out, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    ops = document["models"][0]["profile"]["ops"]
    summary = json.loads((tmp_path / "fw" / "firmware.src" / "ds_cnn" / "ds_cnn.json")
                         .read_text())
    by_index = {op["index"]: op for op in summary["ops"]}
    for op in ops:
        compiled = by_index[op["op_index"]]
        assert op["kernel"] == compiled["kernel"] and op["macs"] == compiled["macs"]
        if op["macs"]:
            assert op["macs_per_tick"] == op["macs"] / op["ticks"]
        else:
            assert op["macs_per_tick"] is None
    assert ops[0]["macs"] == 25 * 5 * 64 * 10 * 4

    # The chart: one bar per operator, lengths in proportion to the ticks.
    root = ET.parse(svg_path).getroot()
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(bars) == len(ops)
    longest = max(op["ticks"] for op in ops)
    widest = max(float(b.get("width")) for b in bars)
    for bar, op in zip(bars, ops):
        assert abs(float(bar.get("width")) - widest * op["ticks"] / longest) < 1.01
        assert bar.find(f"{SVG}title").text.startswith(
            f"#{op['index']} {op['opcode']} ({op['kernel']}): {op['ticks']:,} ticks")
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "#0 CONV_2D (dsp)" in labels

    # The table shows the same figures as the chart drawn by the same run. (Two RPC runs may
    # differ by a tick per operator: where in a timer period an operator starts depends on how
    # long the board polled its UART for the host's request.)
    svg_again = tmp_path / "again.svg"
    assert cli.main(["run", "--board", "mps2-an500", "--model", str(DS_CNN), "--profile",
                     "--profile-svg", str(svg_again), "-o", out]) == 0
    text = capsys.readouterr().out
    titles = [r.find(f"{SVG}title").text for r in ET.parse(svg_again).getroot().iter(f"{SVG}rect")
              if r.find(f"{SVG}title") is not None]
    ticks0 = int(re.match(r"#0 CONV_2D \(dsp\): ([0-9,]+) ticks", titles[0]).group(1)
                 .replace(",", ""))
    assert abs(ticks0 - ops[0]["ticks"]) <= 1
    header = next(line for line in text.splitlines() if "┃" in line and "operator" in line)
    for column in ("variant", "MACs", "ticks", "instructions", "MACs/tick", "share"):
        assert column in header
    row = next(line for line in text.splitlines() if line.startswith("│  0 │"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[1:5] == ["CONV_2D", "dsp", f"{ops[0]['macs']:,}", f"{ticks0:,}"]
    assert cells[6] == f"{ops[0]['macs'] / ticks0:.2f}"


def test_profile_svg_needs_profile(tmp_path, capsys):
    assert cli.main(["run", "--board", "host", "--model", str(DS_CNN), "--profile-svg",
                     str(tmp_path / "p.svg")]) == 1
    assert "--profile-svg draws the per-operator profile: add --profile" in \
        capsys.readouterr().err
