"""A PlatformIO project: platformio.ini with

- an environment on microbuild's own development platform (microbuild/project/platformio_platform,
  copied into the project as platformio/microbuild-platform/ and referenced as
  ``symlink://${PROJECT_DIR}/...``, so the project works wherever it is copied): any board a
  microbuild YAML describes, built with the toolchain installed on this machine;
- where the board YAML names them (``platformio: {platform, board}``), an environment on the
  official PlatformIO platform and board, as PlatformIO users expect;

and an extra script (pre:) that compiles the model from its .tflite during `pio run` with
microbuild's SCons tool. Both halves delegate to microbuild.project.buildtime.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from microbuild.errors import BoardError
from microbuild.project.files import BOARD_DIR, ProjectFiles
from microbuild.project import table
from microbuild.project.formats.base import Instructions, ProjectFormat
from microbuild.project.platformio_offline import (
    PROJECT_CORE,
    offline_environment,
    seed_offline_core,
)
from microbuild.project.platformio_run import run_pio
from microbuild.project.readme import (
    common_values,
    microbuild_runner,
    prints_text,
    regenerate_arguments,
    rpc_run_section,
    self_test_section,
)
from microbuild.project.run_and_flash import (
    console_hint,
    emulator_package,
    flash_commands,
    flash_package,
    run_command,
    toolchain_packages,
)
from microbuild.project.sources import add_bare_metal_files
from microbuild.project.templates import template, templates_dir

# microbuild's own PlatformIO platform, copied into each project (beside this package).
PLATFORM_SOURCE = Path(__file__).resolve().parents[1] / "platformio_platform"
PLATFORM_DIR = "platformio/microbuild-platform"  # in the project
EXTRA_SCRIPT = "platformio/extra_script.py"
USER_INI = "platformio_user.ini"


def _env_name(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "_", text.lower())


def official(board) -> tuple[str, str] | None:
    """(platform, board) of PlatformIO's own support for ``board``, if its YAML names both."""
    pio = board.platformio
    if not pio:
        return None
    platform, pio_board = pio.get("platform"), pio.get("board")
    if bool(platform) != bool(pio_board):
        missing = "platform" if not platform else "board"
        raise BoardError(
            f"board '{board.name}': its `platformio:` section names a {'board' if pio_board else 'platform'} "
            f"but no {missing}; give both (e.g. platform: ststm32, board: disco_f746ng) or remove "
            "the section (microbuild's own PlatformIO platform builds any board)")
    return (platform, pio_board) if platform else None


def environments(board) -> tuple[str, str | None]:
    """(microbuild platform's environment, the official one or None)."""
    local = _env_name(board.name)
    found = official(board)
    if not found:
        return local, None
    name = _env_name(found[1])
    if name == local:
        name = f"{local}-{_env_name(found[0])}"
    return local, name


def _official_section(board, official_env, local) -> str:
    if not official_env:
        return (f"PlatformIO has no platform of its own for `{board.name}` named in its YAML, so "
                f"`{local}` (microbuild's platform) is the only environment.")
    pio_platform, pio_board = official(board)
    return (f"With network access you can also build with PlatformIO's own `{pio_platform}` "
            f"platform and `{pio_board}` board, as PlatformIO users do (PlatformIO downloads the "
            f"platform and its toolchain the first time):\n\n```sh\npio run -e {official_env}\n"
            f"pio run -e {official_env} -t upload     # flash it\npio device monitor"
            f"                     # its console\n```")


def _run_section(spec, local, official_env, run, tools) -> str:
    board = spec.board
    self_test = self_test_section(
        spec, f"pio run -e {local}-self-test" + (" -t exec" if run is not None else
                                                  " -t upload" if tools else ""))
    if run is not None:
        where = "as a process on this machine" if board.is_host else \
            f"in {run[0]}, the emulator of {board.name}"
        return (f"```sh\npio run -e {local} -t exec\n```\n\nruns it {where}. "
                + prints_text(spec) + self_test)
    if tools:
        text = (f"```sh\npio run -e {local} -t upload     # flashes it with {tools[0][0]}\n"
                "pio device monitor\n```\n\n")
    else:
        text = ("Flash `.pio/build/<env>/firmware.elf` (or .bin/.hex) with your usual tool, "
                "then open `pio device monitor`. ")
    return text + f"Or {console_hint(board)}. " + prints_text(spec) + self_test


class PlatformioFormat(ProjectFormat):
    name = "platformio"
    summary = "platformio.ini (microbuild's platform and the official one)"
    rank = 0

    def generate(self, spec, files: ProjectFiles) -> Instructions:
        board = spec.board
        runtime, _ = add_bare_metal_files(spec, files)
        is_table = spec.executor.name == table.TABLE
        if is_table:
            # The kernel set's thunks, the note, the slots header and the packed models, made
            # now; the extra script reads the kernel set back from generated/firmware.note.
            table.add_generated_sources(spec, files)
        files.add(EXTRA_SCRIPT, (templates_dir() / "platformio" / "extra_script.py").read_text())
        if spec.link_runtime:
            platform = f"symlink://{PLATFORM_SOURCE}"
        else:
            for path in sorted(PLATFORM_SOURCE.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    files.add(f"{PLATFORM_DIR}/{path.relative_to(PLATFORM_SOURCE).as_posix()}",
                              path.read_bytes())
            platform = "symlink://${PROJECT_DIR}/" + PLATFORM_DIR

        local, official_env = environments(board)
        default = official_env or local
        # A table firmware runs a blob given on its command line or in a slot, which `-t exec`
        # does not pass: its README says how to run it.
        run = None if is_table else run_command(board, "FIRMWARE")
        tools = flash_commands(board, "firmware.elf", "firmware.bin", "firmware.hex")
        baud = str(board.transport.get("baud", 115200))
        packages = toolchain_packages(board, spec.toolchain)
        emulator = emulator_package(board)

        sections = [
            "",
            "; microbuild's own platform (platformio/microbuild-platform/): any board a microbuild YAML",
            f"; describes, built with the toolchain installed on this machine ({packages}).",
            f"[env:{local}]",
            f"platform = {platform}",
        ]
        if spec.executor.self_test:
            sections += [
                "",
                "; src/main.c's main runs microbuild's self-test instead of your application: the",
                "; models on their embedded inputs, printing the lines microbuild compares with TFLM.",
                f"[env:{local}-self-test]",
                f"extends = env:{local}",
                "build_flags = -DMB_SELF_TEST=1",
            ]
        usage = [("pio run", f"build the default environment: {default}"),
                 (f"pio run -e {local}", "build with microbuild's platform and this machine's "
                                         "toolchain")]
        if run is not None:
            usage.append((f"pio run -e {local} -t exec",
                          "run it " + ("as a process" if board.is_host else f"in {run[0]}")))
        elif tools:
            usage.append((f"pio run -e {local} -t upload", f"flash it with {tools[0][0]}"))
        if spec.executor.self_test:
            usage.append((f"pio run -e {local}-self-test" + (" -t exec" if run is not None else ""),
                          "microbuild's self-test instead of your application (vs TFLM)"))
        if official_env:
            pio_platform, pio_board = official(board)
            sections += [
                "",
                "; PlatformIO's official platform and board (PlatformIO downloads them, with their",
                "; toolchain, the first time); microbuild's start-up code, drivers and linker script",
                "; are added by platformio/extra_script.py, so no framework is used.",
                f"[env:{official_env}]",
                f"platform = {pio_platform}",
                f"board = {pio_board}",
            ]
            usage.append((f"pio run -e {official_env}",
                          f"build with PlatformIO's {pio_platform} platform (board {pio_board})"))
            usage.append((f"pio run -e {official_env} -t upload", "flash it with PlatformIO's uploader"))
        usage.append(("pio device monitor", f"open the board's console ({baud} baud)"))
        width = max(len(command) for command, _ in usage)
        usage_text = "\n".join(f";   {command:<{width}}  {what}" for command, what in usage)
        inputs = spec.input_file or ""
        files.add("platformio.ini", template(
            "platformio", "platformio.ini",
            board=board.name, board_title=board.title, model_list=", ".join(spec.models.values()),
            version=common_values(spec)["version"], default_env=default, usage=usage_text,
            baud=baud, board_yaml=f"{BOARD_DIR}/{board.name}.yaml",
            models=" ".join(spec.models.values()), executor=spec.executor.name,
            executor_description=spec.executor.description.split(":")[0], input=inputs,
            seed=str(spec.seed), runtime=runtime, toolchain=spec.toolchain or "",
            tuning=spec.tuning or "",
            variants=" ".join(f"{k}={v}" for k, v in sorted(spec.variants.items())),
            separate_workspace=("*" if spec.separate_workspace is True
                                else " ".join(spec.separate_workspace)),
            microbuild=microbuild_runner(), regenerate_arguments=regenerate_arguments(spec),
            environments="\n".join(sections)))
        files.add_user(USER_INI, template("platformio", USER_INI, local_env=local))

        build = [f"pio run -e {local}"]
        if run is not None:
            run_lines = [f"pio run -e {local} -t exec"]
        elif official_env:
            run_lines = [f"pio run -e {official_env} -t upload", "pio device monitor"]
        elif tools:
            run_lines = [f"pio run -e {local} -t upload", "pio device monitor"]
        else:
            run_lines = []
        values = common_values(spec)
        extra = emulator or (flash_package(tools[0][0]) if tools else None)
        values.update(
            local_env=local,
            default_env=default,
            install=f"sudo apt-get install {packages}" + (f" {extra}" if extra else ""),
            official_section=_official_section(board, official_env, local),
            run_section=(rpc_run_section(
                spec, f".pio/build/{local}/firmware" + ("" if board.is_host else ".elf"),
                f".pio/build/{local}/microbuild/firmware.rpc.json")
                if spec.executor.name == "rpc"
                else table.run_section(
                    spec, f".pio/build/{local}/firmware" + ("" if board.is_host else ".elf"),
                    None, f"pio run -e {local} -t upload" if tools else None)
                if is_table else _run_section(spec, local, official_env, run, tools)),
            firmware=f".pio/build/{local}/firmware" + ("" if board.is_host else ".elf"),
            user_ini=USER_INI,
        )
        return Instructions(build=build, run=run_lines,
                            readme=template("platformio", "README.md", **values))

    def build_commands(self, manifest: dict, env: dict) -> list[list[str]]:
        try:
            import platformio  # noqa: F401
        except ImportError:
            from microbuild.errors import ToolchainError

            raise ToolchainError("building a PlatformIO project needs PlatformIO in microbuild's "
                                 f"Python: {sys.executable} -m pip install platformio") from None
        local = manifest["build"][0].split()[-1]
        return [[sys.executable, "-m", "platformio", "run", "-e", local]]

    def build_environment(self, manifest: dict, env: dict, out: Path) -> dict:
        """`pio run` with a core folder that needs no network (in the project's .pio/), unless the
        environment already names the user's own PLATFORMIO_CORE_DIR."""
        if env.get("PLATFORMIO_CORE_DIR"):
            return env
        return offline_environment(seed_offline_core(Path(out) / PROJECT_CORE), env)

    def run_build_command(self, command: list[str], cwd: Path, env: dict, timeout: float):
        """`pio run`, stopped with a message naming what it fetched when it wants the network."""
        return run_pio(command, cwd, env, timeout)
