"""An SConstruct that uses microbuild's SCons tool: the models are compiled while building
(MicroModel), the board's compiler, flags and generated files come from its YAML
(MicroBoardEnvironment), and the runtime sources are the project's own copy."""

from __future__ import annotations

import sys

from microbuild.project import table
from microbuild.project.formats.base import Instructions, ProjectFormat
from microbuild.project.files import BOARD_DIR, ProjectFiles
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
from microbuild.project.templates import template


def _run_section(spec, run, tools, firmware) -> str:
    board = spec.board
    self_test = self_test_section(spec, "scons run SELF_TEST=1" if run is not None else
                                  "scons flash SELF_TEST=1" if tools else "scons SELF_TEST=1")
    if run is not None:
        where = "as a process on this machine" if board.is_host else \
            f"in {run[0]}, the emulator of {board.name}"
        return (f"```sh\nscons run\n```\n\nruns `build/{firmware}` {where} (`{' '.join(run)}`). "
                + prints_text(spec) + self_test)
    text = (f"Flash it with {tools[0][0]}:\n\n```sh\nscons flash\n```\n\n(`{tools[0][1]}`), "
            if tools else "Flash `build/firmware.elf` (or .bin/.hex) with your usual tool, ")
    return text + f"then {console_hint(board)} to see what it prints." + self_test


class SconsFormat(ProjectFormat):
    name = "scons"
    summary = "an SConstruct using microbuild's SCons tool"
    rank = 2

    def generate(self, spec, files: ProjectFiles) -> Instructions:
        board = spec.board
        runtime, _ = add_bare_metal_files(spec, files)
        is_table = spec.executor.name == table.TABLE
        if is_table:
            # The kernel set's thunks, the note, the slots header and the packed models, made
            # now; the SConstruct's build reads the kernel set back from generated/firmware.note.
            table.add_generated_sources(spec, files)
        inputs = {next(iter(spec.models)): spec.input_file} if spec.input_file else {}
        firmware = "firmware" if board.is_host else "firmware.elf"
        run = run_command(board, f"build/{firmware}")
        if run is not None and is_table:
            run = table.run_words(board, next(iter(spec.models)), run)
        tools = flash_commands(board, "build/firmware.elf", "build/firmware.bin",
                               "build/firmware.hex")
        images = not board.is_host
        files.add("SConstruct", template(
            "scons", "SConstruct",
            title=f"SConstruct for board {board.name} ({board.title}) running "
                  f"{', '.join(spec.models.values())}",
            firmware=firmware,
            images_note=(" (+ .bin, .hex and what the board's image steps make, e.g. .uf2)"
                         if images and board.image_steps else
                         " (+ .bin and .hex)" if images else ""),
            run_note=("run it" + (" as a process" if board.is_host else f" in {run[0]}"))
            if run else "(real board: nothing to run here)",
            board_yaml=f"{BOARD_DIR}/{board.name}.yaml", toolchain=repr(spec.toolchain),
            runtime=runtime, models=repr(dict(spec.models)), inputs=repr(inputs),
            seed=str(spec.seed), executor=spec.executor.name, tuning=repr(spec.tuning),
            variants=repr(dict(sorted(spec.variants.items()))),
            separate_workspace=repr(spec.separate_workspace),
            microbuild=repr(microbuild_runner()), regenerate_arguments=repr(regenerate_arguments(spec))))

        values = common_values(spec)
        extra = emulator_package(board) or (flash_package(tools[0][0]) if tools else None)
        values.update(
            install=(f"sudo apt-get install {toolchain_packages(board, spec.toolchain)}"
                     + (f" {extra}" if extra else "")),
            firmware=f"build/{firmware}",
            run_section=(rpc_run_section(spec, f"build/{firmware}",
                                         f"build/{firmware.removesuffix('.elf')}.rpc.json")
                         if spec.executor.name == "rpc" else
                         table.run_section(spec, f"build/{firmware}",
                                           "scons run" if run else None,
                                           "scons flash" if tools else None)
                         if is_table else _run_section(spec, run, tools, firmware)))
        return Instructions(build=["scons -j4"], run=["scons run"] if run else
                            ["scons flash"] if tools else [],
                            readme=template("scons", "README.md", **values))

    def build_commands(self, manifest: dict, env: dict) -> list[list[str]]:
        return [[sys.executable, "-m", "SCons", "-Q", "-j2"]]
