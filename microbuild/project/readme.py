"""Pieces of the projects' README.md and build files: what the models are, what the firmware
prints, how to regenerate, and the values every format's templates share."""

from __future__ import annotations

import shlex
import sys

from microbuild import __version__
from microbuild.paths import runtime_dir
from microbuild.project.files import BOARD_DIR, RUNTIME_DIR


def models_text(spec) -> str:
    """The model (or a nested Markdown list of models): file, C prefix, inputs and outputs."""
    lines = []
    for prefix, rel in spec.models.items():
        model = spec.compiled[prefix]

        def tensors(specs) -> str:
            return ", ".join(f"{s.dtype} {list(s.shape)}" for s in specs)
        lines.append(f"`{rel}`: C prefix `{prefix}`, input {tensors(model.inputs)}, output "
                     f"{tensors(model.outputs)}; {model.workspace_bytes:,} bytes of workspace, "
                     f"{model.weights_bytes:,} bytes of weights")
    if len(lines) == 1:
        return lines[0]
    return "".join(f"\n  - {line}" for line in lines)


def input_text(spec) -> str:
    if spec.executor.name == "table":
        return ("none: the model is a blob (`model/*.mbm`), run on the inputs in "
                "`model/*.inputs.bin`" if spec.board.is_host else
                "none: the model is a blob in a model slot (`model/*.mbm`), run on a fixed "
                "input pattern (byte i of input k is i * 37 + k + 5)")
    if not spec.executor.embeds_inputs:
        return "none embedded: the host sends inputs"
    if spec.input_file:
        return f"`{spec.input_file}`"
    return (f"random, seeded with {spec.seed} (the input `microbuild build --seed {spec.seed}` "
            "embeds)")


# The variable (Make, SCons argument, environment) that overrides how a project's `regenerate`
# runs microbuild.
MICROBUILD_VARIABLE = "MICROBUILD"


def microbuild_runner() -> str:
    """How a project's `regenerate` runs microbuild: the interpreter that ran `generate`, by its
    absolute path (`<python> -m microbuild`), so it works where no `microbuild` is on PATH (a
    venv not activated, setup.sh's .venv); MICROBUILD overrides it."""
    return shlex.join([sys.executable, "-m", "microbuild"])


def regenerate_arguments(spec) -> str:
    """The arguments after `microbuild` that regenerate this project from inside it."""
    parts = ["generate", "--board", f"{BOARD_DIR}/{spec.board.name}.yaml"]
    for rel in spec.models.values():
        parts += ["--model", rel]
    parts += ["--format", spec.fmt, "--executor", spec.executor.name]
    if spec.toolchain:
        parts += ["--toolchain", spec.toolchain]
    if spec.input_file:
        parts += ["--input", spec.input_file]
    elif spec.seed:
        parts += ["--seed", str(spec.seed)]
    if spec.link_runtime:
        parts.append("--link-runtime")
    # The kernel choice too: the tuning log copied into the project, every forced variant.
    if spec.tuning:
        parts += ["--tuning", spec.tuning]
    for key, name in sorted(spec.variants.items(), key=lambda kv: str(kv[0])):
        parts += ["--variant", f"{key}={name}"]
    separate = getattr(spec, "separate_workspace", ())
    for model in (["*"] if separate is True else list(separate or ())):
        parts += ["--separate-workspace", model]
    return shlex.join(parts + ["-o", "."])


def regenerate_command(spec) -> str:
    """The whole command that regenerates this project from inside it (for READMEs)."""
    return f"{microbuild_runner()} {regenerate_arguments(spec)}"


def common_values(spec) -> dict[str, str]:
    """Placeholders every format's README uses."""
    board = spec.board
    first = next(iter(spec.models.values()))
    runtime_note = (f"(not copied: the build uses microbuild's runtime in place, from "
                    f"`{runtime_dir()}`, because of `--link-runtime`)" if spec.link_runtime else
                    "the part of microbuild's C runtime this board needs (kernels, drivers, "
                    "start-up code), copied in")
    return {
        "board": board.name,
        "board_title": board.title,
        "board_yaml": f"{BOARD_DIR}/{board.name}.yaml",
        "executor": spec.executor.name,
        "executor_description": spec.executor.description,
        "models": models_text(spec),
        "first_model": first,
        "input": input_text(spec),
        "regenerate": regenerate_command(spec),
        "runtime_note": runtime_note,
        "version": __version__,
        "main_note": ("your application: fills the input from your sensor (`read_sensor`), "
                      "runs the model" + ("s" if len(spec.models) > 1 else "") + ", prints the "
                      "top class" if spec.executor.skeleton else
                      "your application: the executor's `main`"),
    }


def prints_text(spec) -> str:
    """What the firmware prints when it runs, for a README's Run section."""
    if spec.executor.skeleton:
        return ("It runs your application (`src/main.c`): as generated, it prints the top class "
                "of the scores and the timer ticks the inference took.")
    return ("It prints one `mb-aot` line per output (hex bytes), the timer ticks per inference, "
            "and exits with status 0 when every model returned 0.")


def self_test_section(spec, commands: str) -> str:
    """The README's "Self-test against TFLM" section (the AOT executor): ``commands`` build
    with MB_SELF_TEST=1 and run (or flash) the result."""
    if not spec.executor.self_test:
        return ""
    return ("\n\n## Self-test against TFLM\n\n"
            f"```sh\n{commands}\n```\n\n"
            "builds with `MB_SELF_TEST=1`, so that `src/main.c`'s `main` runs microbuild's "
            f"self-test (`{RUNTIME_DIR}/{spec.executor.self_test}`) instead of your "
            "application. Each model runs on the input embedded at build time, "
            f"{input_text(spec)}; it prints one `mb-aot` line per output (hex bytes) and the "
            "timer ticks per inference, exit status 0 when every model returned 0. TFLM gives "
            "the same outputs bit for bit (`microbuild build --run` prints them as a table). "
            "Building without it again gives your application back.")


def rpc_run_section(spec, elf: str, description: str) -> str:
    """The README's "Run" section for an RPC firmware: it waits for a host, so running it means
    connecting to it from Python."""
    board = spec.board
    prefix = next(iter(spec.models))
    model = spec.compiled[prefix]
    shape = ", ".join(f"{s.dtype} {list(s.shape)}" for s in model.inputs)
    starts = ("connect() starts it as a process" if board.is_host else
              "connect() boots it in QEMU" if board.is_emulated else
              "connect() flashes it with the board's first flash runner and opens its serial port "
              "(found from the board's USB ids, or pass port=)")
    return (
        "The firmware is an RPC server (docs/rpc-protocol.md in microbuild): it waits for a host "
        f"to drive it over its console. {starts}; from this folder, in the Python environment "
        "microbuild is installed in:\n\n"
        "```python\n"
        "import numpy as np, microbuild\n"
        f"with microbuild.connect(\"{BOARD_DIR}/{board.name}.yaml\", \"{elf}\",\n"
        f"                        description=\"{description}\") as dev:\n"
        f"    x = np.zeros(dev.specs(\"{prefix}\")[0].shape, np.int8)   # input: {shape}\n"
        f"    print(dev.run(\"{prefix}\", x))                  # the outputs\n"
        f"    for op in dev.profile(\"{prefix}\", x).ops:      # timer ticks per operator\n"
        "        print(op.index, op.opcode, op.ticks)\n"
        "```\n")
