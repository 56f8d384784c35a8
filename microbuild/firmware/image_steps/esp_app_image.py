"""ESP32 app image: what the ESP32's boot loader reads from flash, made by `esptool elf2image`
(PyPI package esptool: `pip install esptool`, or microbuild's `esp` extra).

The image is a header (chip id, flash mode/frequency/size, entry point) and a list of segments,
each with its load address; the loader maps flash segments into the IROM/DROM windows through
the cache MMU and copies RAM segments (.data) to their run address itself, so microbuild's
start-up copies nothing (loader_places_sections) and only clears .bss.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from microbuild.errors import BoardError, BuildError
from microbuild.firmware.image_steps.base import ImageStep


def esptool_command() -> list[str]:
    """How to run esptool from this interpreter; BuildError when it is not installed."""
    if importlib.util.find_spec("esptool") is None:
        raise BuildError("the esp_app_image step needs esptool, which is not installed in this "
                         f"Python ({sys.executable}): `pip install esptool` (or "
                         "`pip install 'microbuild-mcu[esp]'`)")
    return [sys.executable, "-m", "esptool"]


class EspAppImage(ImageStep):
    name = "esp_app_image"
    loader_places_sections = True

    def check(self) -> None:
        if not self.settings.get("chip"):
            raise BoardError(f"{self.where()}: the esp_app_image step needs chip, esptool's "
                             "--chip (e.g. esp32c3)")

    def outputs(self, name: str) -> list[str]:
        return [f"{name}.app-image.bin"]

    def command(self, elf: Path, output: Path) -> list[str]:
        s = self.settings
        # --use-segments: one image segment per ELF program header, so sections that ld put
        # back to back in a window (.rodata, .mb_weights) stay one segment (two segments in
        # one 64 KiB page cannot be mapped).
        command = esptool_command() + ["--chip", str(s["chip"]), "elf2image", "--use-segments"]
        for key in ("flash_mode", "flash_freq", "flash_size"):
            if s.get(key):
                command += [f"--{key.replace('_', '-')}", str(s[key])]
        return command + ["-o", str(output), str(elf)]

    def run(self, elf: Path, outputs: list[Path]) -> str:
        command = self.command(elf, outputs[0])
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 or not outputs[0].is_file():
            raise BuildError(f"esptool elf2image failed (exit status {result.returncode}) for "
                             f"{elf}:\n  $ {' '.join(command)}\n"
                             + (result.stdout + result.stderr).strip())
        return f"{outputs[0].name}: {self.settings['chip']} app image (esptool elf2image)"
