"""The HTML report of `microbuild validate --html`, opened in a real headless browser (Debian's
chromium driven by Playwright) and read back: the headline figures, the latency histogram, the
confusion matrix and the float model's error distribution, with nothing fetched from a network.
person_detect on the host board with a folder of labelled PNG images is also the Done-when
case's host half (the 200-sample run is benchmarks/validate_throughput.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from validate_support import shared_model
from microbuild import api
from microbuild.cli import main

CHROMIUM = Path("/usr/bin/chromium")


def _images(folder: Path, per_class: int) -> None:
    from PIL import Image

    rng = np.random.default_rng(11)
    for cls in ("no_person", "person"):
        (folder / cls).mkdir(parents=True)
        for k in range(per_class):
            pixels = rng.integers(0, 256, (120, 160), dtype=np.uint8)  # resized to 96x96
            Image.fromarray(pixels).save(folder / cls / f"{k}.png")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright (in microbuild's test extra) drives chromium")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is missing: setup.sh installs Debian's chromium package")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield browser
        browser.close()


def _open(browser, page_file: Path):
    page = browser.new_page()
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(page_file.as_uri())
    assert fetched == [page_file.as_uri()], f"the page fetched {fetched[1:]}"
    return page


def figure(page, name: str) -> str:
    return page.locator(f"[data-figure='{name}']").inner_text()


def test_person_detect_on_host_with_labelled_images_in_the_browser(
        tmp_path, host_validate_firmware, browser, capsys):
    pytest.importorskip("PIL", reason="pillow (microbuild's [images] extra) reads images")
    model = shared_model("person_detect")
    _images(tmp_path / "images", per_class=4)
    page_file = tmp_path / "report.html"
    code = main(["validate", "--board", "host", "--model", str(model), "--data",
                 str(tmp_path / "images"), "--firmware", str(host_validate_firmware.elf),
                 "--html", str(page_file), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["identical_to_tflm"] == doc["ran"] == doc["samples"] == 8
    assert doc["vs_labels"]["classes"][:2] == ["no_person", "person"]
    assert sum(map(sum, doc["vs_labels"]["confusion"])) == 8

    page = _open(browser, page_file)
    assert figure(page, "identical") == "8" and figure(page, "samples") == "8"
    assert "8 of 8 identical to TFLM" in page.locator(".headline").inner_text()
    accuracy = doc["vs_labels"]["deployed_accuracy"]
    assert figure(page, "deployed-accuracy") == f"{100 * accuracy:.1f}%"
    assert figure(page, "latency-median") == f"{doc['latency']['median_ticks']:,}"
    cells = page.locator("[data-chart='confusion'] rect.cell")
    size = len(doc["vs_labels"]["confusion"])
    assert cells.count() == size * size
    for cell in cells.all():
        row, col = int(cell.get_attribute("data-row")), int(cell.get_attribute("data-col"))
        assert int(cell.get_attribute("data-count")) == doc["vs_labels"]["confusion"][row][col]
        assert cell.is_visible()
    bars = page.locator("[data-chart='latency'] rect.bar")
    assert sum(int(b.get_attribute("data-count")) for b in bars.all()) == 8
    assert figure(page, "memory-weights") == f"{doc['memory']['totals']['weights']:,}"


def test_float_error_distribution_in_the_browser(tmp_path, host_device, browser):
    from microbuild.validate.report import render_html

    x = np.linspace(0, 2 * np.pi, 30, dtype=np.float32).reshape(30, 1, 1)
    np.save(tmp_path / "x.npy", x)
    report = api.validate("host", shared_model("hello_world_int8"), tmp_path / "x.npy",
                          float_model=shared_model("hello_world_float"), device=host_device)
    doc = report.to_dict()
    page_file = tmp_path / "float.html"
    page_file.write_text(render_html(doc), encoding="utf-8")
    page = _open(browser, page_file)
    (figures,) = doc["vs_float"]
    assert figure(page, "max-abs-0") == f"{figures['max_abs_error']:.4g}"
    assert figure(page, "snr-0") == f"{figures['snr_db']:.4g}"
    bars = page.locator("[data-chart='error-0'] rect.bar")
    assert bars.count() == len(figures["abs_error_histogram"]["counts"])
    assert sum(int(b.get_attribute("data-count")) for b in bars.all()) == 30
    tallest = max(bars.all(), key=lambda b: int(b.get_attribute("data-count")))
    assert tallest.bounding_box()["height"] > 100  # drawn, scaled to the chart
