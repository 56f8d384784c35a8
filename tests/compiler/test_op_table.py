"""The operator table (`microbuild ops`, the README's copy) and TFLM's operator list behind it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from microbuild.cli import main
from microbuild.compiler.op_table import markdown_table, operator_rows, replace_in_readme
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.tflm_ops import TFLM_BUILTIN_OPS
from microbuild.paths import runtime_dir

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_table_is_the_generated_one():
    text = README.read_text(encoding="utf-8")
    assert replace_in_readme(text) == text, \
        "README.md's operator table is stale: run .venv/bin/python tools/update_operator_table.py"


def test_every_tflm_builtin_has_a_row_with_its_status():
    rows = {r.opcode: r for r in operator_rows()}
    assert TFLM_BUILTIN_OPS <= set(rows)
    assert rows["CONV_2D"].status == "kernel" and "dsp" in rows["CONV_2D"].variants
    assert rows["SHAPE"].status == "compile time"
    # WHILE has no lowering: loops with a compile-time trip count are unrolled before lowering
    assert rows["WHILE"].status == "compile time"
    assert all(r.status == "not yet" for name, r in rows.items()
               if name not in REGISTRY and name != "WHILE")
    assert "| SHAPE | compile time |" in markdown_table()


def test_every_kernel_operator_names_sources_that_exist():
    for name, lowering in REGISTRY.items():
        if not lowering.runs_on_device:
            continue
        for source in (*lowering.kernel_sources, *lowering.float32_sources):
            path = runtime_dir() / (source if "/" in source else f"kernels/{source}")
            assert path.is_file(), f"{name}: {path} is missing"


def test_tflm_builtin_list_matches_the_installed_tflite_micro_wheel():
    """TFLM_BUILTIN_OPS is read from the wheel's kernel registrations; check it still is."""
    import tflite_micro  # a test dependency (setup.sh installs it)

    so = next(Path(tflite_micro.__file__).parent.rglob("_runtime*.so"))
    symbols = subprocess.run(["nm", "-C", str(so)], capture_output=True, text=True,
                             check=True).stdout
    from tflite.BuiltinOperator import BuiltinOperator

    builtins = {k for k in vars(BuiltinOperator) if not k.startswith("_")}
    registered = {name for name in builtins if f"Register_{name}(" in symbols}
    assert registered == TFLM_BUILTIN_OPS, (sorted(registered - TFLM_BUILTIN_OPS),
                                            sorted(TFLM_BUILTIN_OPS - registered))


def test_ops_command_prints_the_table(capsys):
    assert main(["ops"]) == 0
    text = capsys.readouterr().out
    assert "CONV_2D" in text and "compile time" in text
