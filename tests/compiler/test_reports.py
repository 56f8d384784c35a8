"""Reports people read: the compile table (shapes, MACs, kernel variant, live memory) and the
memory plan picture (buffers named by the operator that writes them, offsets in KiB)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from microbuild.cli import main
from microbuild.compiler import compile_model

MODELS = Path(__file__).resolve().parent.parent / "models"
DS_CNN = MODELS / "ds_cnn.tflite"
SVG = "{http://www.w3.org/2000/svg}"


def _row(text: str, index: int) -> list[str]:
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0] == str(index):
            return cells
    raise AssertionError(f"no row {index} in:\n{text}")


def test_the_compile_table_shows_shapes_macs_variant_and_live_memory(tmp_path, capsys):
    assert main(["compile", str(DS_CNN), "-o", str(tmp_path / "c"), "--board", "stm32f746"]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if "┃" in line and "operator" in line)
    for column in ("input shapes", "output shapes", "MACs", "kernel (cortex-m7)", "live"):
        assert column in header
    # Op 0: a 10x4 convolution, 1 input channel, 64 filters, 25x5 outputs: 25*5*64 * 10*4*1 MACs.
    assert _row(text, 0)[1:5] == ["CONV_2D", "1x49x10x1, 64x10x4x1, 64", "1x25x5x64",
                                  f"{25 * 5 * 64 * 10 * 4:,}"]
    assert _row(text, 0)[5] == "dsp (default)"
    # Op 1: depthwise 3x3 over 64 channels: 25*5*64 * 3*3.
    assert _row(text, 1)[4] == f"{25 * 5 * 64 * 9:,}"
    # Op 10: FULLY_CONNECTED 64 -> 12, no bias ("-"): 12 * 64.
    assert _row(text, 10)[2] == "1x1x1x64, 12x64, -" and _row(text, 10)[4] == "768"
    assert _row(text, 11)[4] == ""  # SOFTMAX does no multiply-accumulate
    assert "MACs per inference: 2,656,768" in text


def test_live_memory_is_what_the_plan_keeps_during_each_op(tmp_path, capsys):
    # Op by op (DS-CNN's first pair would otherwise run row by row, live together).
    assert main(["compile", str(DS_CNN), "-o", str(tmp_path / "c"), "--json",
                 "--no-row-stream"]) == 0
    summary = json.loads(capsys.readouterr().out)
    ops = summary["ops"]
    first = ops[0]
    # Op 0 reads the model input and writes its output; its scratch is live with them.
    assert first["live_bytes"] == 49 * 10 + 25 * 5 * 64 + first["scratch_bytes"]
    fc, softmax = ops[-2], ops[-1]
    assert fc["opcode"] == "FULLY_CONNECTED" and fc["live_bytes"] == 64 + 12
    # SOFTMAX runs in place: its input and output share one 12-byte buffer.
    assert softmax["opcode"] == "SOFTMAX" and softmax["live_bytes"] == 12
    shared = [b for b in summary["plan"]["buffers"]
              if {softmax["inputs"][0], softmax["outputs"][0]} <= set(b["tensors"])]
    assert len(shared) == 1 and shared[0]["size"] == 12
    # Never more than the workspace, and the workspace is needed by some op (first-fit may
    # leave holes, so the peak can be below it).
    assert max(op["live_bytes"] for op in ops) <= summary["workspace_bytes"]
    assert [op["output_shapes"] for op in ops][-1] == [[1, 12]]


def test_the_plan_svg_names_buffers_by_their_writer_and_ticks_in_kib(tmp_path):
    model = compile_model(DS_CNN, row_stream=False)  # op 0's output whole (not in rows)
    root = ET.fromstring(model.plan_svg())
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    titles = [t.text or "" for r in root.iter(f"{SVG}rect") for t in r.findall(f"{SVG}title")]
    assert len(titles) == len(model.plan.buffers)
    # Each buffer is named by the operator that writes it (the tensor's name in its tooltip).
    assert any(t.startswith("op 0 CONV_2D (7.8 KiB): ") for t in titles), titles
    assert any(t.startswith("model input 0 (490 B): serving_default") for t in titles), titles
    assert any(t.startswith("op 1 DEPTHWISE_CONV_2D") for t in titles)
    assert "op 0 CONV_2D" in texts and "op 1 DEPTHWISE_CONV_2D" in texts
    # Offsets in KiB: the top tick is the whole workspace.
    assert f"{model.plan.workspace_bytes / 1024:.1f} KiB" in texts and "0.0 KiB" in texts
    assert any("workspace offset (KiB)" in t for t in texts)
