"""The README's Python examples, every one run as written: compiling a model, the SConstruct
using microbuild's SCons tool, and driving a model from the host (in a folder holding
`kws.tflite`, with `x` an input), which once failed because `import microbuild` did not make
`microbuild.api` available."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DS_CNN = REPO / "tests" / "models" / "ds_cnn.tflite"


def _python_block_with(needle: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    found = [b for b in blocks if needle in b]
    assert len(found) == 1, f"expected one README python block with {needle!r}, got {len(found)}"
    return found[0]


def test_the_readme_rpc_example_runs_as_written(tmp_path):
    example = _python_block_with("microbuild.connect(")
    shutil.copy(DS_CNN, tmp_path / "kws.tflite")
    # What the example leaves to the reader (an input x), then the example itself, then checks
    # on what it produced, in a fresh interpreter as a user would run it.
    script = textwrap.dedent("""\
        import numpy as np
        from microbuild.compiler import compile_model
        spec = compile_model("kws.tflite").inputs[0]
        x = np.random.default_rng(0).integers(-128, 128, spec.shape, dtype=np.int8)
        """) + example + textwrap.dedent("""\
        from microbuild.tflm_reference import tflm_outputs
        want = tflm_outputs("kws.tflite", [x])
        assert len(y) == len(want) and all((a == b.reshape(a.shape)).all() for a, b in zip(y, want))
        assert len(prof.ops) == len(compile_model("kws.tflite").summary()["ops"])
        assert prof.model_ticks > 0
        print("example ok")
        """)
    (tmp_path / "example.py").write_text(script)
    result = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "example ok" in result.stdout


# --- every python block of the README ---------------------------------------------------------
# Each block is run by exactly one test; a new block without one fails the first test below.
_BLOCKS_RUN_BY = {
    "compile_model(": "test_the_readme_compile_example_runs_as_written",
    "env.MicroFirmware(": "test_the_readme_sconstruct_example_builds_as_written",
    "microbuild.connect(": "test_the_readme_rpc_example_runs_as_written",
}


def test_every_readme_python_block_is_run_by_a_test():
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    assert blocks
    for block in blocks:
        needles = [needle for needle in _BLOCKS_RUN_BY if needle in block]
        assert len(needles) == 1, f"README python block run by no test (or by several):\n{block}"
        assert _BLOCKS_RUN_BY[needles[0]] in globals()


def test_the_readme_compile_example_runs_as_written(tmp_path):
    example = _python_block_with("compile_model(")
    shutil.copy(DS_CNN, tmp_path / "model.tflite")
    script = example + textwrap.dedent("""\
        assert m.workspace_bytes > 0 and m.weights_bytes > 0 and len(m.inputs) == 1
        print("example ok")
        """)
    (tmp_path / "example.py").write_text(script)
    result = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "example ok" in result.stdout
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["kws.c", "kws.h", "kws_weights.c"]
    assert "int kws_run(" in (tmp_path / "out" / "kws.h").read_text()


def test_the_readme_sconstruct_example_builds_as_written(tmp_path):
    # The block is an SConstruct: SCons runs it, in a folder holding kws.tflite.
    (tmp_path / "SConstruct").write_text(_python_block_with("env.MicroFirmware("))
    shutil.copy(DS_CNN, tmp_path / "kws.tflite")
    result = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in ("kws.elf", "kws.bin", "kws.hex", "kws.size.json"):
        assert (tmp_path / "build" / name).is_file(), name
    for name in ("kws.h", "kws.c", "kws_weights.c", "kws.json"):
        assert (tmp_path / "gen" / name).is_file(), name
    assert list((tmp_path / "build").rglob("libmicrobuild.a"))  # the stm32f746 runtime too
    from microbuild.firmware.note import read_note

    note = read_note(tmp_path / "build" / "kws.elf")
    assert note.board == "mps2-an500" and note.models == ["kws"]
