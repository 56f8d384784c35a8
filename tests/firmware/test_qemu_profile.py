"""tools/qemu_profile.py: instructions per function from QEMU's translation-block trace, the
counts taken from objdump (QEMU's disassembler splits Helium instructions)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from microbuild import api

ROOT = Path(__file__).resolve().parents[2]
TINY_FC = ROOT / "tests" / "models" / "tiny_fc.tflite"


def test_the_profile_charges_the_helium_kernel_and_covers_the_timed_run(tmp_path):
    build = api.build_firmware("mps3-an547", [str(TINY_FC)], tmp_path / "fw")
    timed = api.run_firmware(build)
    model_instructions = timed.ticks["tiny_fc"] * 1_000_000_000 // timed.timer_hz
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "qemu_profile.py"),
                          str(build.elf), "--machine", "mps3-an547", "--top", "40",
                          "--function", "mb_fully_connected_s8_mve"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    total = int(lines[0].split()[0].replace(",", ""))
    rows = {m.group(2): int(m.group(1).replace(",", "")) for m in
            (re.match(r"^\s*([\d,]+)\s+[\d.]+%\s+(\S+)$", line) for line in lines[1:]) if m}
    # Every traced instruction is charged to a function, and the timed inference is inside.
    assert sum(rows.values()) == total and total >= model_instructions > 0
    kernel = rows["mb_fully_connected_s8_mve"]
    assert 0 < kernel < model_instructions
    blocks = [int(m.group(1).replace(",", "")) for m in
              (re.match(r"^\s*([\d,]+)\s+0x[0-9a-f]+: \d+ x \d+$", line) for line in lines) if m]
    assert sum(blocks) == kernel


def test_a_missing_firmware_is_said_plainly(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "qemu_profile.py"),
                          str(tmp_path / "none.elf"), "--machine", "mps3-an547"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "none.elf: no such firmware" in run.stderr
    assert "Traceback" not in run.stderr


ANCHORS = ROOT.parent / "shared" / "anchors" / "tflm"


@pytest.mark.skipif(not (ANCHORS / "run.py").is_file(),
                    reason="no TFLM anchor firmwares at ../shared/anchors/tflm")
def test_the_tflm_anchor_is_profiled_through_its_run_py():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "qemu_profile.py"), "--tflm",
                          str(TINY_FC), "--machine", "mps3-an547", "--top", "200"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    per_inference = re.match(r"TFLM \+ CMSIS-NN on mps3-an547: ([\d,]+) instructions", lines[0])
    assert per_inference and int(per_inference.group(1).replace(",", "")) > 0
    rows = {m.group(2): int(m.group(1).replace(",", "")) for m in
            (re.match(r"^\s*([\d,]+)\s+[\d.]+%\s+(\S+)$", line) for line in lines[2:]) if m}
    # CMSIS-NN's kernels for the model's FULLY_CONNECTED and SOFTMAX are charged
    assert rows.get("arm_nn_softmax_common_s8", 0) > 0
    assert any(name.startswith("arm_") and ("fully_connected" in name or "vec_mat_mult" in name)
               for name in rows), sorted(rows)


def test_a_missing_model_for_the_anchor_is_said_plainly(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "qemu_profile.py"), "--tflm",
                          str(tmp_path / "none.tflite"), "--machine", "mps3-an547"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "none.tflite: no such model" in run.stderr or "no TFLM anchor" in run.stderr
