"""The Done-when case on an emulated board: person_detect validated on mps2-an500 (Cortex-M7)
over the RPC link, every sample bit-identical to TFLM, latency in QEMU icount instructions and
the memory fit reported. A modest number of samples keeps its CI cost low; the 200-sample run
and samples/s are benchmarks/validate_throughput.py's.

validate builds the emulated board with its console on Arm semihosting (QEMU's stdin/stdout)
instead of the CMSDK UART: every byte of these uploads went through that console, its framing
and CRCs, and came out bit-exact."""

from __future__ import annotations

import time

import numpy as np

from validate_support import shared_model
from microbuild import api
from microbuild.boards import resolve_board
from microbuild.device.runners.qemu import QemuRunner
from microbuild.device.transports.process import ProcessStdioTransport

SAMPLES = 6


def test_person_detect_on_the_cortex_m7_is_identical_to_tflm(tmp_path):
    model = shared_model("person_detect")
    images = np.random.default_rng(7).uniform(0, 1, (SAMPLES, 96, 96, 1)).astype(np.float32)
    np.save(tmp_path / "images.npy", images)  # (N, 96, 96, 1) for a 1x96x96x1 input
    report = api.validate("mps2-an500", model, tmp_path / "images.npy", out_dir=tmp_path,
                          timeout=60.0)
    doc = report.to_dict()
    assert doc["identical_to_tflm"] == doc["ran"] == SAMPLES and not doc["failures"]
    latency = doc["latency"]
    assert latency["kind"] == "instructions"
    assert 0 < latency["min_ticks"] <= latency["median_ticks"] <= latency["max_ticks"]
    # MobileNetV1 0.25 at 96x96 is some millions of instructions on any kernel set.
    assert int(latency["shown"]["median"].replace(",", "")) > 1_000_000
    regions = {r["name"]: r for r in doc["memory"]["regions"]}
    assert regions and all(r["over"] == 0 for r in regions.values())
    assert doc["memory"]["totals"]["weights"] > 200_000  # person_detect's ~250 KB of weights

    _starts_on_qemus_streams_and_exits_when_the_host_leaves(
        tmp_path / "mps2-an500-validate" / "firmware.elf")


def _starts_on_qemus_streams_and_exits_when_the_host_leaves(elf):
    """The firmware validate built is started on QEMU's standard streams even by a runner for the
    plain board (the ELF says which console it has), and ends with status 0 once the host closes
    its input, as the host board's firmware does, instead of waiting forever."""
    runner = QemuRunner(resolve_board("mps2-an500"))
    command = runner.command(elf)
    assert command[command.index("-serial") + 1] == "null"
    transport = runner.start(elf)
    try:
        assert isinstance(transport, ProcessStdioTransport)
        boot = b""
        deadline = time.monotonic() + 20
        while b"max packet" not in boot and time.monotonic() < deadline:
            boot += transport.read(1.0)
        assert b"microbuild rpc: board mps2-an500" in boot
        transport.child.proc.stdin.close()
        assert transport.child.proc.wait(timeout=20) == 0
    finally:
        transport.close()
