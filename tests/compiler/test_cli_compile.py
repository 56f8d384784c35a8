"""`microbuild compile`: files written, the summary, --json, --plan-svg, and user errors."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from microbuild.cli import main

MODELS = Path(__file__).resolve().parent.parent / "models"


def test_compile_writes_prefixed_sources_and_prints_a_summary(tmp_path, capsys):
    out = tmp_path / "kws"
    assert main(["compile", str(MODELS / "ds_cnn.tflite"), "-o", str(out), "--prefix", "kws",
                 "--plan-svg", str(tmp_path / "plan.svg")]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["kws.c", "kws.h", "kws_weights.c"]
    header = (out / "kws.h").read_text()
    assert "int kws_run(const int8_t *in0, int8_t *out0, void *workspace);" in header
    assert "#define KWS_WORKSPACE_SIZE " in header and "#define KWS_INPUT0_SHAPE {1, 49, 10, 1}" in header
    text = capsys.readouterr().out
    assert "CONV_2D" in text and "DEPTHWISE_CONV_2D" in text and "SOFTMAX" in text
    assert "input 0: int8[1, 49, 10, 1]" in text and "workspace:" in text
    svg = ET.parse(tmp_path / "plan.svg").getroot()
    assert svg.tag.endswith("svg") and len(svg.findall(".//{*}rect")) > 5


def test_compile_json_summary(tmp_path, capsys):
    assert main(["compile", str(MODELS / "tiny_fc.tflite"), "-o", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {"workspace_bytes", "weights_bytes", "ops", "inputs", "outputs"} <= set(summary)
    assert [op["opcode"] for op in summary["ops"]] == ["FULLY_CONNECTED", "FULLY_CONNECTED", "SOFTMAX"]
    assert summary["inputs"][0]["shape"] == [1, 16] and summary["outputs"][0]["dtype"] == "int8"
    assert summary["weights_bytes"] > 0 and summary["workspace_bytes"] > 0


def test_two_prefixes_link_into_one_program(tmp_path):
    """Every global symbol carries the prefix: two models compiled into one executable."""
    from microbuild.compiler import compile_model

    a = compile_model(MODELS / "tiny_fc.tflite", prefix="first")
    b = compile_model(MODELS / "ds_cnn.tflite", prefix="second")
    a.write(tmp_path)
    b.write(tmp_path)
    (tmp_path / "main.c").write_text(
        '#include "first.h"\n#include "second.h"\n'
        "static unsigned char wa[FIRST_WORKSPACE_SIZE], wb[SECOND_WORKSPACE_SIZE];\n"
        "int main(void) { return first_run(first_input0(wa), first_output0(wa), wa)"
        " | second_run(second_input0(wb), second_output0(wb), wb); }\n")
    kernels = sorted({str(m.runtime_dir / k) for m in (a, b) for k in m.kernel_sources})
    sources = [str(p) for p in tmp_path.glob("*.c")] + kernels
    result = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path}",
                             f"-I{a.runtime_dir / 'include'}", *sources, "-o", str(tmp_path / "both")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert subprocess.run([str(tmp_path / "both")]).returncode == 0


def test_not_a_model_is_a_clear_error_without_traceback(tmp_path):
    bad = tmp_path / "notes.tflite"
    bad.write_text("these are my notes")
    result = subprocess.run([sys.executable, "-m", "microbuild", "compile", str(bad), "-o",
                             str(tmp_path / "out")], capture_output=True, text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"error: {bad}: not a TFLite model" in result.stderr


def test_unsupported_ops_are_listed_by_index_and_name(tmp_path, capsys):
    sys.path.insert(0, str(MODELS / "generate"))
    from tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", 0.05, 0)
    y = b.tensor("y", (1, 8), "int8", 0.05, 0)
    z = b.tensor("z", (1, 8), "int8", 0.05, 0)
    b.operator("WHILE", [x], [y])  # TFLM has it; microbuild has no subgraphs yet
    b.operator("RELU", [y], [z])
    model = tmp_path / "while.tflite"
    model.write_bytes(b.build([x], [z]))
    out = tmp_path / "out"
    assert main(["compile", str(model), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "WHILE (op 0): TFLM has a kernel for it, microbuild does not yet" in err
    assert "microbuild ops" in err
    assert not out.exists()  # nothing half-written


def test_variant_by_op_index_is_honoured(tmp_path, capsys):
    """`--variant 1=reference` names op 1 (it was read as an opcode "1" and ignored)."""
    assert main(["compile", str(MODELS / "ds_cnn.tflite"), "--board", "mps2-an500", "--variant",
                 "1=reference", "--json", "-o", str(tmp_path)]) == 0
    ops = json.loads(capsys.readouterr().out)["ops"]
    assert (ops[1]["kernel"], ops[1]["kernel_choice"]) == ("reference", "forced")
    assert ops[0]["kernel"] != "reference" and ops[0]["kernel_choice"] == "default"
