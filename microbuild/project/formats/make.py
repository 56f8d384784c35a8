"""A plain Makefile and every source file: a "bag of files" that drops into any IDE and builds
with make and the cross compiler only. The model is compiled to C when the project is generated
(`make regenerate` compiles it again), and the compiler flags are the ones microbuild's own build
uses for the board (build/toolchains.py), written out."""

from __future__ import annotations

import json

import re
import shlex
from pathlib import Path

from microbuild.firmware import aot, board_files, image_steps, linker_script
from microbuild.firmware.image_steps.uf2 import standalone_script
from microbuild.firmware.toolchains import toolchain_setup
from microbuild.project import table
from microbuild.project.formats.base import Instructions, ProjectFormat
from microbuild.project.executors import (
    boot_header_c_files,
    compiled_runtime_sources,
)
from microbuild.project.files import BOARD_DIR, GENERATED_DIR, ProjectFiles
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


def _flags(flags) -> str:
    """Flags for a make variable: quoted for the shell where needed (make's own $(VAR) stays)."""
    return " ".join(f if re.fullmatch(r"[\w+=.,/:@%$()-]+", f) else shlex.quote(f)
                    for f in map(str, flags))


def generated_sources(spec, files: ProjectFiles) -> list[str]:
    """Write the model's C, the executor's table and the board's C files into
    generated/; returns the .c files among them (project-relative). Shared with the
    Zephyr generator."""
    summaries = [spec.compiled[p].summary() for p in spec.models]
    sources = []
    # The table executor's models are data (model/*.mbm), not C in the firmware.
    for model in [] if spec.executor.name == table.TABLE else spec.compiled.values():
        for name, text in sorted(model.sources.items()):
            files.add(f"{GENERATED_DIR}/{name}", text)
            if name.endswith(".c"):
                sources.append(f"{GENERATED_DIR}/{name}")
    inputs = None
    if spec.executor.embeds_inputs:
        given = {next(iter(spec.models)): str(spec.input_source)} if spec.input_source else {}
        inputs = aot.embedded_inputs(summaries, given, spec.seed)
    files.add(f"{GENERATED_DIR}/{spec.executor.table_file}",
              spec.executor.table(spec.board.name, summaries, inputs, spec.separate_workspace))
    if spec.executor.describe is not None:
        # What a host needs to drive the firmware: microbuild.connect(board, "build/firmware.elf",
        # description="generated/firmware.rpc.json").
        files.add(f"{GENERATED_DIR}/firmware.rpc.json", json.dumps(
            spec.executor.describe(spec.board.name, summaries, spec.separate_workspace),
            indent=1) + "\n")
    sources.append(f"{GENERATED_DIR}/{spec.executor.table_file}")
    files.add(f"{GENERATED_DIR}/mb_board_config.h", board_files.board_config_h(spec.board))
    return sources


def _run_section(spec, run, tools) -> str:
    board = spec.board
    self_test = self_test_section(spec, "make run SELF_TEST=1" if run is not None else
                                  "make flash SELF_TEST=1" if tools else "make SELF_TEST=1")
    if run is not None:
        where = "as a process on this machine" if board.is_host else \
            f"in {run[0]} (the emulator of {board.name})"
        return (f"```sh\nmake run\n```\n\nruns it {where}: `{' '.join(run).replace('$(FIRMWARE)', 'build/firmware' + ('' if board.is_host else '.elf'))}`. "
                + prints_text(spec) + self_test)
    command = tools[0][1].replace("$(FIRMWARE)", "build/firmware.elf").replace("$(BUILD)", "build") \
        if tools else ""
    text = ("```sh\nmake flash\n```\n\nflashes it with " + tools[0][0] + f" (`{command}`)"
            if tools else "Flash `build/firmware.elf` (or .bin/.hex) with your usual tool")
    return text + f"; then {console_hint(board)} to see what it prints." + self_test


class MakeFormat(ProjectFormat):
    name = "make"
    summary = "a Makefile and every source file"
    rank = 3

    def generate(self, spec, files: ProjectFiles) -> Instructions:
        board = spec.board
        setup = toolchain_setup(board, spec.toolchain)
        runtime, own_sources = add_bare_metal_files(spec, files)

        sources = generated_sources(spec, files)
        is_table = spec.executor.name == table.TABLE
        table_flags = table.add_table_files(spec, files) if is_table else []
        files.add(f"{GENERATED_DIR}/mb_board_init.c", board_files.board_init_c(board))
        sources.append(f"{GENERATED_DIR}/mb_board_init.c")
        sources += [f"{runtime}/{rel}" for rel in compiled_runtime_sources(board, spec.toolchain,
                                                                           spec.executor)]
        sources += own_sources  # the board's own drivers, beside its YAML in board/src/
        # A boot header (RP2040 boot2 + the boot ROM's CRC), assembled now as microbuild's own build
        # assembles it: make needs no microbuild to put it first in flash.
        for name, text in boot_header_c_files(board, setup).items():
            files.add(f"{GENERATED_DIR}/{name}", text)
            sources.append(f"{GENERATED_DIR}/{name}")
        ldflags = list(setup.linkflags)
        ld = None
        if setup.uses_linker_script:
            ld = f"{GENERATED_DIR}/{board.name}.ld"
            files.add(ld, linker_script.linker_script(board))
        elif setup.insert_after and not board.is_host:
            ld = f"{GENERATED_DIR}/{board.name}.additions.ld"
            files.add(ld, linker_script.default_script_additions(board, setup.insert_after))
        if ld:
            ldflags += [f"-T{ld}", "-Wl,-Map,$(BUILD)/firmware.map"]

        firmware = "$(BUILD)/firmware" if board.is_host else "$(BUILD)/firmware.elf"
        images = bool(setup.objcopy) and not board.is_host
        image_rules = ""
        all_targets = "$(FIRMWARE)"
        if images:
            all_targets += " $(BUILD)/firmware.bin $(BUILD)/firmware.hex"
            flags = " ".join(setup.objcopy_flags)
            flags = f" {flags}" if flags else ""
            image_rules = (f"\n$(BUILD)/firmware.bin: $(FIRMWARE)\n\t$(OBJCOPY){flags} -O binary $< $@\n"
                           f"\n$(BUILD)/firmware.hex: $(FIRMWARE)\n\t$(OBJCOPY){flags} -O ihex $< $@\n")
        uf2 = next((step for step in ([] if board.is_host else image_steps.steps(board))
                    if step.name == "uf2"), None)
        if images and uf2 is not None:
            # The .uf2 a UF2 boot loader takes, from the .bin by a script of the standard library.
            files.add(f"{GENERATED_DIR}/uf2.py", standalone_script())
            all_targets += " $(BUILD)/firmware.uf2"
            image_rules += (f"\n$(BUILD)/firmware.uf2: $(BUILD)/firmware.bin {GENERATED_DIR}/uf2.py\n"
                            f"\t$(PYTHON) {GENERATED_DIR}/uf2.py $< {board.boot_region.origin:#x} "
                            f"{int(uf2.settings['family_id']):#x} $@\n")
        run = run_command(board, "$(FIRMWARE)")
        if run is not None and is_table:
            run = table.run_words(board, next(iter(spec.models)), run)
        tools = flash_commands(board, "$(FIRMWARE)", "$(BUILD)/firmware.bin", "$(BUILD)/firmware.hex")
        if run is not None:
            run_recipe = "\t" + " ".join(run)
            run_note = ("run it as a process" if board.is_host else
                        f"boot it in {run[0]} and print what it prints")
        else:
            run_recipe = (f"\t@echo '{board.name} is a real board: make flash, then {console_hint(board)}'"
                          .replace("`", ""))
            run_note = "(real board) how to see its output"
        if tools:
            flash_recipe = "\t" + tools[0][1]
            flash_note = f"flash it with {tools[0][0]}"
            flash_prerequisite = "all"
        else:
            flash_recipe = (f"\t@echo '{board.name} is {'the host' if board.is_host else 'emulated'}: "
                            "nothing to flash; make run runs it'")
            flash_note = "(nothing to flash: make run)"
            flash_prerequisite = ""
        cc = Path(setup.cc).name
        makefile = template(
            "make", "Makefile",
            title=f"Makefile for board {board.name} ({board.title}) running "
                  f"{', '.join(spec.models.values())}",
            board=board.name, board_yaml=f"{BOARD_DIR}/{board.name}.yaml", cc=cc,
            objcopy=setup.objcopy or "objcopy", generated=GENERATED_DIR, runtime=runtime,
            cflags=_flags(setup.cflags + [f"-D{d}" for d in setup.cppdefines] + table_flags),
            post_link=("\n\t" + table.add_note_command("$(OBJCOPY)", "$@")) if is_table else "",
            asflags=_flags(setup.asflags), ldflags=_flags(ldflags),
            ldlibs=_flags(list(setup.libs) + [f"-l{lib}" for lib in setup.system_libs]),
            sources=" \\\n".join(f"    {s}" for s in sources),
            firmware=firmware, firmware_file=firmware.replace("$(BUILD)", "build"),
            images_note=(" (+ .bin, .hex and .uf2)" if images and uf2 else
                         " (+ .bin and .hex)" if images else ""),
            all_targets=all_targets, ld_dependency=f" {ld}" if ld else "", image_rules=image_rules,
            run_recipe=run_recipe, run_note=run_note, flash_recipe=flash_recipe,
            flash_note=flash_note, flash_prerequisite=flash_prerequisite,
            microbuild=microbuild_runner(), regenerate_arguments=regenerate_arguments(spec))
        files.add("Makefile", makefile)

        build = ["make"]
        run_lines = ["make run"] if run is not None else \
            ["make flash"] if tools else []
        values = common_values(spec)
        packages = toolchain_packages(board, spec.toolchain)
        emulator = emulator_package(board)
        extra = emulator or (flash_package(tools[0][0]) if tools else None)
        values.update(
            install=f"sudo apt-get install make {packages}" + (f" {extra}" if extra else ""),
            compiler=cc,
            firmware=firmware.replace("$(BUILD)", "build"),
            run_section=(rpc_run_section(spec, "build/firmware" + ("" if board.is_host else ".elf"),
                                         "generated/firmware.rpc.json")
                         if spec.executor.name == "rpc" else
                         table.run_section(spec, firmware.replace("$(BUILD)", "build"),
                                           "make run" if run is not None else None,
                                           "make flash" if tools else None)
                         if is_table else _run_section(spec, run, tools)),
        )
        return Instructions(build=build, run=run_lines, readme=template("make", "README.md", **values))

    def build_commands(self, manifest: dict, env: dict) -> list[list[str]]:
        return [["make", "-j2"]]
