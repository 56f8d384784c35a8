"""`generate --format zephyr --executor table`: a Zephyr application whose models are blobs in
the board's model slots. There is no Zephyr tree here, so it is checked up to that boundary (as
tests/project/test_zephyr.py does for the other executors): the slots in app.overlay as flash
partitions and in the module's mb_table_slots.h, the README's update loop, the message when
west is missing, and a build against the CMake stand-in (tests/project/zephyr_cmake_stub) whose
zephyr.elf carries the kernel set, so that `microbuild pack --firmware` packs for it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from microbuild import api
from microbuild.boards.loader import ENV_PATH
from microbuild.errors import MicrobuildError, ToolchainError
from microbuild.firmware.note import read_note
from microbuild.project import build_project, generate_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import TINY_FC  # noqa: E402
from test_zephyr import build_against_stand_in, needs_cmake_and_arm  # noqa: E402

TORCH_MLP = TINY_FC.parent / "torch_mlp.tflite"
# Three int8 FULLY_CONNECTED layers, as TFLM's hello_world (the same Keras sine model, made here).
HELLO_WORLD = Path(__file__).resolve().parents[1] / "models" / "keras_sine.tflite"
# stm32f746 with two A/B model slots at the end of its 1 MiB flash.
BOARD = """name: stm32f746-slots
extends: stm32f746
memory:
  placement:
    model_slots:
      - {region: flash, offset: 768K, size: 128K}
      - {region: flash, offset: 896K, size: 128K}
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Path:
    boards = tmp_path_factory.mktemp("boards")
    (boards / "stm32f746-slots.yaml").write_text(BOARD)
    root = tmp_path_factory.mktemp("zephyr-table") / "app"
    generate_project(str(boards / "stm32f746-slots.yaml"), TINY_FC, "zephyr", root,
                     executor="table")
    return root


def test_the_slots_are_flash_partitions_and_the_readme_shows_the_update_loop(app):
    overlay = (app / "app.overlay").read_text()
    assert re.search(r"&flash0 \{\s*partitions \{\s*compatible = \"fixed-partitions\";", overlay)
    assert "mb_model_slot0: partition@c0000" in overlay and "reg = <0xc0000 0x20000>;" in overlay
    assert "mb_model_slot1: partition@e0000" in overlay and "reg = <0xe0000 0x20000>;" in overlay
    slots = (app / "modules/microbuild/generated/mb_table_slots.h").read_text()
    assert "#define MB_TABLE_SLOT_ADDRESSES {0x080c0000u, 0x080e0000u}" in slots
    # The model is data: packed, not compiled into the module.
    assert (app / "model" / "tiny_fc.mbm").read_bytes()[:8] == b"MBMODEL\0"
    module = (app / "modules/microbuild/CMakeLists.txt").read_text()
    assert "table/slots_main.c" in module and "generated/mb_table_kernels.c" in module
    assert "MB_TABLE_MAIN=mb_table_slots_main" in module
    assert "tiny_fc.c" not in module
    assert "return mb_table_slots_main();" in (app / "src" / "main.c").read_text()
    readme = " ".join((app / "README.md").read_text().split())
    assert ("microbuild pack --firmware build/zephyr/zephyr.elf --model other.tflite -o "
            "other.mbm") in readme
    assert ("microbuild update --board board/stm32f746-slots.yaml --firmware "
            "build/zephyr/zephyr.elf --blob other.mbm --slot 1") in readme


def test_building_without_west_says_what_to_install(app, tmp_path):
    with pytest.raises(ToolchainError) as err:
        build_project(app, env={"PATH": str(tmp_path)})
    message = str(err.value)
    assert "`west` is not on PATH" in message and "`west build -b stm32f746g_disco`" in message


@needs_cmake_and_arm
def test_the_built_application_carries_its_kernel_set_for_pack(app, tmp_path, monkeypatch):
    _, built = build_against_stand_in(app, tmp_path / "build")
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    assert "microbuild: firmware note (kernel set) into zephyr.elf" in built.stdout
    elf = tmp_path / "build" / "zephyr" / "zephyr.elf"
    note = read_note(elf)
    assert note.executor == "table" and note.board == "stm32f746-slots"
    assert note.table == read_note_table(app)
    # Another model needing only those kernels is packed against the firmware Zephyr built.
    monkeypatch.setenv(ENV_PATH, str(app / "board"))
    packed = api.pack(elf, HELLO_WORLD, tmp_path / "hello.mbm")
    assert packed.path.read_bytes()[:8] == b"MBMODEL\0" and packed.ops == 3
    # One needing more workspace than the firmware reserves is refused at pack time.
    with pytest.raises(MicrobuildError, match="needs 112 bytes of workspace, the firmware "
                                              r"reserved 64 \(48 over\)"):
        api.pack(elf, TORCH_MLP, tmp_path / "mlp.mbm")


def read_note_table(app: Path) -> dict:
    from microbuild.project.table import read_project_note

    return read_project_note(app / "generated" / "firmware.note")["table"]
