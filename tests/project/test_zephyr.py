"""Zephyr applications. There is no Zephyr tree (nor west) on this machine, so everything short of
`west build` is checked: the files are complete and consistent with the board YAML, prj.conf sets
only Kconfig symbols Zephyr (or the project's module) defines, zephyr/module.yml has the fields
Zephyr's scripts/zephyr_module.py accepts, the application and the module's sources compile and
print TFLM's outputs against a stand-in for the five Zephyr APIs main.c uses, and a missing Zephyr
is a clear message."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from microbuild.boards import load_board
from microbuild.errors import ToolchainError
from microbuild.project import build_project, generate_project
from microbuild.project.formats.zephyr import ZEPHYR_KCONFIG

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import DS_CNN, HERE, TINY_FC, check_outputs

# zephyr/module.yml as Zephyr's scripts/zephyr_module.py validates it (METADATA_SCHEMA): the keys
# it knows at the top level and under build.
MODULE_KEYS = {"name", "build", "tests", "samples", "boards", "blobs"}
MODULE_BUILD_KEYS = {"cmake", "kconfig", "cmake-ext", "kconfig-ext", "sysbuild-cmake",
                     "sysbuild-kconfig", "sysbuild-cmake-ext", "sysbuild-kconfig-ext", "depends",
                     "settings"}


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("zephyr") / "kws"
    # The stand-in compiles the application on the host: the reference kernels, since the
    # Cortex-M7's default variants use instructions the host has not.
    generate_project("stm32f746", DS_CNN, "zephyr", root, variants={"*": "reference"})
    return root


def test_cmakelists_is_a_zephyr_application_using_the_module(app):
    text = (app / "CMakeLists.txt").read_text()
    assert "cmake_minimum_required(VERSION 3.20.0)" in text
    assert re.search(r"^find_package\(Zephyr\b.*HINTS \$ENV\{ZEPHYR_BASE\}\)", text, re.M)
    # The module is added before find_package(Zephyr), which reads ZEPHYR_EXTRA_MODULES.
    modules = text.index("list(APPEND ZEPHYR_EXTRA_MODULES ${CMAKE_CURRENT_SOURCE_DIR}/modules/"
                         "microbuild)")
    assert modules < text.index("find_package(Zephyr")
    assert text.index("find_package(Zephyr") < text.index("project(")
    assert "target_sources(app PRIVATE ${app_sources})" in text
    # The board Zephyr builds for is the YAML's zephyr.board.
    zephyr_board = load_board("stm32f746").zephyr["board"]
    assert f"set(BOARD {zephyr_board})" in text
    assert (app / ".microbuild-project.json").read_text().count(
        f"west build -b {zephyr_board}") == 1


def test_prj_conf_sets_only_kconfig_symbols_zephyr_or_the_module_defines(app):
    module_symbols = set(re.findall(r"^config (\w+)$", (app / "modules/microbuild/Kconfig")
                                    .read_text(), re.M))
    assert module_symbols == {"MICROBUILD"}
    settings = {}
    for line in (app / "prj.conf").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"CONFIG_([A-Z0-9_]+)=(y|n|\d+|\"[^\"]*\")", line)
        assert m, line
        settings[m.group(1)] = m.group(2)
    assert set(settings) <= set(ZEPHYR_KCONFIG) | module_symbols
    board = load_board("stm32f746")
    assert settings == {"SERIAL": "y", "CONSOLE": "y", "UART_CONSOLE": "y",
                        "MAIN_STACK_SIZE": str(board.stack_size), "FPU": "y", "MICROBUILD": "y"}


def test_prj_conf_follows_the_board(tmp_path):
    generate_project("rp2040-pico", DS_CNN, "zephyr", tmp_path / "pico")  # Cortex-M0+: no FPU
    conf = (tmp_path / "pico" / "prj.conf").read_text()
    assert "CONFIG_FPU" not in conf and "CONFIG_MAIN_STACK_SIZE=8192" in conf
    assert "set(BOARD rpi_pico)" in (tmp_path / "pico" / "CMakeLists.txt").read_text()


def test_module_yml_has_the_fields_zephyr_accepts(app):
    root = app / "modules" / "microbuild"
    meta = yaml.safe_load((root / "zephyr" / "module.yml").read_text())
    assert set(meta) <= MODULE_KEYS and set(meta["build"]) <= MODULE_BUILD_KEYS
    assert meta["name"] == "microbuild"
    assert (root / meta["build"]["cmake"] / "CMakeLists.txt").is_file()
    assert (root / meta["build"]["kconfig"]).is_file()


def _module_sources(app: Path) -> list[Path]:
    root = app / "modules" / "microbuild"
    text = (root / "CMakeLists.txt").read_text()
    runtime = re.search(r"set\(MICROBUILD_RUNTIME (\S+)\)", text).group(1)
    runtime = runtime.replace("${CMAKE_CURRENT_LIST_DIR}", str(root))
    block = re.search(r"zephyr_library_sources\((.*?)\)", text, re.S).group(1)
    return [Path(s.replace("${MICROBUILD_RUNTIME}", runtime)) if "${" in s else root / s
            for s in block.split()]


def test_module_cmakelists_lists_existing_sources(app):
    text = (app / "modules/microbuild/CMakeLists.txt").read_text()
    assert text.startswith("# microbuild's runtime") and "if(CONFIG_MICROBUILD)" in text
    assert "zephyr_library_named(microbuild)" in text
    assert "zephyr_library_compile_definitions(MB_WEIGHTS_ATTR=)" in text
    sources = _module_sources(app)
    assert all(s.is_file() for s in sources), [s for s in sources if not s.is_file()]
    names = {s.name for s in sources}
    assert {"ds_cnn.c", "ds_cnn_weights.c", "mb_aot_models.c", "print.c", "conv2d.c"} <= names
    # Zephyr brings start-up code and drivers: none of microbuild's.
    assert not any("startup" in str(s) or "drivers" in str(s) for s in sources)


def test_main_is_a_zephyr_application(app):
    main = (app / "src" / "main.c").read_text()
    for needed in ("#include <zephyr/kernel.h>", "#include <zephyr/drivers/uart.h>",
                   "DEVICE_DT_GET(DT_CHOSEN(zephyr_console))", "uart_poll_out(console",
                   "k_cycle_get_32()", "sys_clock_hw_cycles_per_sec()", "device_is_ready",
                   "int main(void)", "mb_aot_models[m]"):
        assert needed in main, needed


def test_application_and_module_run_against_a_zephyr_stand_in(app, tmp_path):
    """main.c and every source the module's CMakeLists.txt lists, compiled for the host with
    stand-ins of the Zephyr APIs main.c calls (tests/project/zephyr_stub), print TFLM's outputs:
    the files are complete and consistent with each other."""
    stub = HERE / "zephyr_stub"
    root = app / "modules" / "microbuild"
    include = root / "runtime" / "include"
    binary = tmp_path / "app"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2",
                    "-DMB_WEIGHTS_ATTR=", f"-I{stub}", f"-I{include}", f"-I{root / 'generated'}",
                    str(app / "src" / "main.c"), *map(str, _module_sources(app)),
                    str(stub / "zephyr_stub.c"), "-o", str(binary),
                    "-lm"], check=True)  # glibc keeps libm apart (Zephyr's C libraries link it)
    proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    check_outputs(proc.stdout, proc.returncode, "stm32f746", "ds_cnn", DS_CNN)


def test_without_zephyr_cmake_stops_with_a_clear_message(app, tmp_path):
    text = (app / "CMakeLists.txt").read_text()
    assert "no Zephyr tree was found" in text and "west build -b stm32f746g_disco" in text
    cmake = shutil.which("cmake")
    if cmake is not None:  # the real CMake, when installed (setup.sh does not install it)
        proc = subprocess.run([cmake, "-S", str(app), "-B", str(tmp_path / "build")],
                              capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin"})
        assert proc.returncode != 0
        message = " ".join(proc.stderr.split())
        assert "microbuild: this is a Zephyr application, and no Zephyr tree was found" in message
        assert "west build -b stm32f746g_disco" in message


def test_building_without_west_says_what_to_install(app, tmp_path):
    with pytest.raises(ToolchainError) as err:
        build_project(app, env={"PATH": str(tmp_path)})  # no west on this PATH
    message = str(err.value)
    assert "west" in message and "Zephyr tree" in message
    assert "docs.zephyrproject.org/latest/develop/getting_started" in message
    assert "`west build -b stm32f746g_disco`" in message


# --- the CMake files, built against a Zephyr stand-in ---------------------------------------------

CMAKE_STAND_IN = HERE / "zephyr_cmake_stub"
needs_cmake_and_arm = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="cmake and arm-none-eabi-gcc are needed to build against the Zephyr stand-in")


def board_variant(folder: Path, name: str, memory: str) -> Path:
    """A board YAML of the user's that extends stm32f746 with another ``memory`` section."""
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nextends: stm32f746\nmemory:\n{memory}")
    return path


def build_against_stand_in(app: Path, build: Path) -> tuple[subprocess.CompletedProcess, ...]:
    """`cmake` and `cmake --build` of the generated application, with ZEPHYR_BASE pointing at
    tests/project/zephyr_cmake_stub (ZephyrConfig.cmake: see it for what it stands in for)."""
    import os

    env = {**os.environ, "ZEPHYR_BASE": str(CMAKE_STAND_IN)}
    configure = subprocess.run(["cmake", "-S", str(app), "-B", str(build)], capture_output=True,
                               text=True, env=env, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    built = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True,
                           text=True, env=env, timeout=900)
    return configure, built


def symbol_address(elf: Path, name: str) -> int:
    from elftools.elf.elffile import ELFFile

    with elf.open("rb") as f:
        (symbol,) = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name(name)
        return symbol["st_value"]


@needs_cmake_and_arm
def test_the_workspace_stays_in_dtcm_and_west_build_ends_with_the_fit_report(tmp_path):
    """A board that places the model workspace in DTCM: the module puts it in Zephyr's DTCM
    (zephyr,dtcm, sections .dtcm_noinit.*), and the link is followed by microbuild's fit report
    over the board's regions, with microbuild.size.json beside zephyr.elf."""
    board = board_variant(tmp_path, "stm32f746-dtcm",
                          "  placement: {workspace: dtcm, data: sram1, bss: sram1, stack: sram1}\n")
    app = tmp_path / "app"
    generate_project(str(board), TINY_FC, "zephyr", app)
    configure, built = build_against_stand_in(app, tmp_path / "build")
    assert "microbuild: the model workspace goes to dtcm (Zephyr's zephyr,dtcm)" in configure.stdout
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    elf = tmp_path / "build" / "zephyr" / "zephyr.elf"
    dtcm = load_board(str(board)).regions["dtcm"]
    assert dtcm.origin <= symbol_address(elf, "mb_aot_workspace_tiny_fc") < dtcm.origin + dtcm.length
    # The fit report, printed after the link and written beside the ELF.
    assert "microbuild: zephyr.elf on board stm32f746-dtcm" in built.stdout
    assert re.search(r"^dtcm\s+\d+ B\s+64\.0 KiB", built.stdout, re.M), built.stdout[-2000:]
    size = json.loads((elf.parent / "microbuild.size.json").read_text())
    assert size["fits"] is True
    used = {r["name"]: r["used"] for r in size["regions"]}
    assert used["dtcm"] >= 32 and used["flash"] > 0  # tiny_fc's 32-byte workspace is in DTCM


@needs_cmake_and_arm
def test_a_workspace_outside_zephyrs_dtcm_stays_in_zephyrs_ram(tmp_path):
    """stm32f746 itself places the workspace in SRAM1, which is Zephyr's zephyr,sram: the
    configure step says so and the workspace lands there."""
    app = tmp_path / "app"
    generate_project("stm32f746", TINY_FC, "zephyr", app)
    configure, built = build_against_stand_in(app, tmp_path / "build")
    assert "the model workspace goes to Zephyr's RAM (zephyr,sram): board/stm32f746.yaml " \
           "places it in sram1" in configure.stdout
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    address = symbol_address(tmp_path / "build" / "zephyr" / "zephyr.elf",
                             "mb_aot_workspace_tiny_fc")
    assert 0x20010000 <= address < 0x20050000


@needs_cmake_and_arm
def test_a_firmware_that_does_not_fit_fails_the_build_with_microbuilds_message(tmp_path):
    """A DTCM of 16 bytes cannot hold tiny_fc's 32-byte workspace: the post-build step fails
    the build naming the region and the bytes over."""
    board = board_variant(tmp_path, "stm32f746-small",
                          "  regions:\n    dtcm: {length: 16}\n"
                          "  placement: {workspace: dtcm, data: sram1, bss: sram1, stack: sram1}\n")
    app = tmp_path / "app"
    generate_project(str(board), TINY_FC, "zephyr", app)
    _, built = build_against_stand_in(app, tmp_path / "build")
    assert built.returncode != 0
    output = built.stdout + built.stderr
    assert "microbuild: zephyr.elf on board stm32f746-small" in output
    assert "dtcm" in output and "does not fit" in output.lower(), output[-3000:]
    size = json.loads((tmp_path / "build" / "zephyr" / "microbuild.size.json").read_text())
    assert size["fits"] is False and "dtcm" in size["fit_error"]


def test_cmakelists_runs_the_fit_report_with_the_generating_python(app):
    text = (app / "CMakeLists.txt").read_text()
    assert f'set(MICROBUILD_PYTHON_DEFAULT "{sys.executable}")' in text
    assert "add_custom_command(TARGET zephyr_final POST_BUILD" in text
    assert "-m microbuild.project.zephyr_fit" in text
    module = (app / "modules/microbuild/CMakeLists.txt").read_text()
    assert 'dt_chosen(microbuild_dtcm PROPERTY "zephyr,dtcm")' in module
    assert "workspace:sram1:0x20010000" in module


# --- the RPC executor over Zephyr's UART API -------------------------------------------------------

def test_rpc_application_is_driven_from_the_host_against_the_stand_in(tmp_path):
    """--executor rpc: src/main.c serves microbuild's RPC executor with uart_poll_in/out. Compiled
    for the host with the stand-in APIs (the UART is stdin/stdout), the host drives it through
    microbuild.connect exactly as a board: the outputs are TFLM's."""
    from microbuild import api
    from microbuild.tflm_reference import tflm_outputs
    from microbuild.tensor_files import random_inputs

    app = tmp_path / "rpc"
    generate_project("stm32f746", DS_CNN, "zephyr", app, executor="rpc",
                     variants={"*": "reference"})
    main = (app / "src" / "main.c").read_text()
    assert "uart_poll_in(console, &byte)" in main and "mb_rpc_server_run()" in main
    stub = HERE / "zephyr_stub"
    root = app / "modules" / "microbuild"
    binary = tmp_path / "firmware"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2",
                    "-DMB_WEIGHTS_ATTR=", f"-I{stub}", f"-I{root / 'runtime' / 'include'}",
                    f"-I{root / 'generated'}", str(app / "src" / "main.c"),
                    *map(str, _module_sources(app)), str(stub / "zephyr_stub.c"),
                    "-o", str(binary), "-lm"], check=True, capture_output=True, timeout=600)
    # The stand-in runs as a process on this machine, so the host connects to it as to the host
    # board; the description is the project's, relabelled for that board.
    description = json.loads((root / "generated" / "firmware.rpc.json").read_text())
    assert description["board"] == "stm32f746"
    description["board"] = "host"
    with api.connect("host", binary, description=description) as dev:
        x = random_inputs(dev.specs("ds_cnn"), 5)
        y = dev.run("ds_cnn", x)
    assert (y[0] == tflm_outputs(DS_CNN, x)[0]).all()


@needs_cmake_and_arm
def test_rpc_application_builds_against_the_cmake_stand_in(tmp_path):
    app = tmp_path / "app"
    generate_project("stm32f746", TINY_FC, "zephyr", app, executor="rpc")
    _, built = build_against_stand_in(app, tmp_path / "build")
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    assert "microbuild: zephyr.elf on board stm32f746" in built.stdout
