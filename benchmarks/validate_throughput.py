"""How fast `microbuild validate` goes: samples per second over the RPC link, on the emulated
Cortex-M7 (mps2-an500 under QEMU) and on the host board, and how much of each sample is spent
beyond the inference itself (uploading the input, reading the outputs, comparing).

On mps2-an500 validate builds the board with its console on Arm semihosting (QEMU's stdin and
stdout, microbuild.validate.run.validation_board); the row "mps2-an500 (CMSDK UART)" is the same
firmware with the board's own UART console, what validate used before, on fewer samples (each
takes seconds): the upload through a one-byte UART model is what that console costs.

The Done-when run of issue 30: 200 samples of ../shared/models/person_detect.tflite (96x96 grey
images, seeded uniform floats in [0, 1], quantized to the int8 input), every one compared with
TFLM. The inference alone is timed by RUN requests on the input already in the workspace (the
same firmware, the same link, no upload); the overhead per sample is the validate loop's time per
sample minus that. TFLM's own time on the host (the reference outputs) is reported apart.

Writes benchmarks/results/validate_throughput.json and .md, the HTML report of the mps2-an500 run
(benchmarks/results/validate_person_detect_mps2-an500.html), and prints the table. Wall-clock
figures depend on how loaded the machine is (the load average is recorded with them).

    nice -n 19 .venv/bin/python benchmarks/validate_throughput.py [--samples 200] [--uart-samples 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from microbuild import api  # noqa: E402
from microbuild.boards import resolve_board  # noqa: E402
from microbuild.validate.report import render_html  # noqa: E402
from microbuild.validate.run import validation_board  # noqa: E402

RESULTS = HERE / "results"
MODEL = HERE.parent.parent / "shared" / "models" / "person_detect.tflite"
HTML = RESULTS / "validate_person_detect_mps2-an500.html"
BARE_RUNS = 20


def bare_run_seconds(dev) -> float:
    """Median wall time of one RUN request on the input already in the workspace."""
    index = dev.info.model(dev.models[0]).index
    times = []
    for _ in range(BARE_RUNS):
        start = time.perf_counter()
        status, _ = dev.client.run(index)
        times.append(time.perf_counter() - start)
        assert status == 0
    return statistics.median(times)


def measure(board: str, console: str, data: Path, folder: Path, html: Path | None = None) -> dict:
    """validate's loop on ``board`` with the firmware validate builds (``console`` "validate"),
    or with the board's own console ("uart")."""
    plain = resolve_board(board)
    target = validation_board(plain, folder / console) if console == "validate" else plain
    build = api.build_firmware(target, [MODEL], folder / console / board, executor="rpc")
    with api.connect(board, build, timeout=60.0) as dev:
        report = api.validate(board, MODEL, data, device=dev, firmware=build)
        bare = bare_run_seconds(dev)
    doc = report.to_dict()
    if html is not None:
        html.write_text(render_html(doc), encoding="utf-8")
    per_sample = report.seconds / max(report.ran, 1)
    if plain.is_host:
        shown = board
    else:
        shown = f"{board} ({'semihosting console' if target is not plain else 'CMSDK UART'})"
    return {"board": shown, "samples": report.ran, "identical": report.identical,
            "samples_per_second": doc["samples_per_second"],
            "ms_per_sample": 1e3 * per_sample, "ms_inference": 1e3 * bare,
            "ms_overhead": 1e3 * (per_sample - bare),
            "overhead_share": (per_sample - bare) / per_sample,
            "latency_median": doc["latency"]["shown"]["median"],
            "latency_unit": doc["latency"]["unit"],
            "tflm_reference_ms_per_sample": 1e3 * report.reference_seconds / max(report.samples, 1),
            "link_requests": doc["link"]["requests"],
            "retransmissions": doc["link"]["retransmissions"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--uart-samples", type=int, default=10,
                        help="samples through mps2-an500's UART console (0: skip that row)")
    args = parser.parse_args()
    if not MODEL.is_file():
        print(f"{MODEL} is not here: this benchmark needs ../shared/models", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        images = np.random.default_rng(0).uniform(0, 1, (args.samples, 96, 96, 1))
        np.save(folder / "images.npy", images.astype(np.float32))
        np.save(folder / "few.npy", images[:args.uart_samples].astype(np.float32))
        RESULTS.mkdir(exist_ok=True)
        rows.append(measure("mps2-an500", "validate", folder / "images.npy", folder, HTML))
        if args.uart_samples:
            rows.append(measure("mps2-an500", "uart", folder / "few.npy", folder))
        rows.append(measure("host", "validate", folder / "images.npy", folder))
    load = os.getloadavg()[0]
    (RESULTS / "validate_throughput.json").write_text(
        json.dumps({"load_average": load, "cpus": os.cpu_count(), "rows": rows}, indent=2) + "\n")
    header = ("| board | samples | identical to TFLM | samples/s | ms/sample | ms inference (bare RUN) "
              "| ms overhead/sample | overhead share | median latency | TFLM ms/sample (host) |")
    lines = [f"# validate throughput: {MODEL.name}, {args.samples} samples", "",
             f"Load average {load:.1f} on {os.cpu_count()} CPUs at the end of the run. "
             f"HTML report of the first row: {HTML.relative_to(HERE.parent)}.", "", header,
             "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['board']} | {r['samples']} | {r['identical']} | "
                     f"{r['samples_per_second']:.1f} | {r['ms_per_sample']:.2f} | "
                     f"{r['ms_inference']:.2f} | {r['ms_overhead']:.2f} | "
                     f"{100 * r['overhead_share']:.0f}% | {r['latency_median']} "
                     f"{r['latency_unit']} | {r['tflm_reference_ms_per_sample']:.2f} |")
    text = "\n".join(lines) + "\n"
    (RESULTS / "validate_throughput.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
