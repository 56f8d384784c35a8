"""The README's Python example for driving a model from the host, run as written (in a folder
holding `kws.tflite`, with `x` an input): it once failed because `import microbuild` did not make
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
        from microbuild.reference import tflm_outputs
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
