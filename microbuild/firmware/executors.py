"""The executors: how a firmware runs its models (AOT: standalone on embedded inputs; RPC:
driven by a host), one table shared by microbuild's own build (firmware/scons_tool.py) and the
generated projects (microbuild/project/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from microbuild.firmware import aot, rpc_table


@dataclass(frozen=True)
class Executor:
    """How a firmware runs its models: one entry here is all a generator needs to know.

    ``main`` (relative to runtime/) seeds the user's src/main.c in bare-metal projects, unless
    ``skeleton``: then src/main.c is a real application (project/app_skeleton.py), and
    ``self_test`` (relative to runtime/), compiled in, is what it runs instead when built with
    MB_SELF_TEST=1;
    ``zephyr_main`` (in project_templates/zephyr/) seeds it in a Zephyr application. The
    firmware also links ``runtime_sources`` (relative to runtime/), and ``table(summaries,
    inputs)`` writes the generated C file ``table_file`` that tells main which models are linked
    (``inputs`` holds the arrays embedded per model and input when ``embeds_inputs``; else it is
    None). ``describe(board name, summaries)``, when set, is the JSON a host needs to drive the
    firmware (the RPC description, written as <firmware>.rpc.json). ``zephyr_kconfig`` are
    prj.conf lines the Zephyr main needs beyond the common ones."""

    name: str
    description: str
    main: str
    zephyr_main: str
    runtime_sources: tuple[str, ...]
    table_file: str
    # table(board, summaries, inputs, separate=(), pool=...): ``separate`` names the models that
    # do not share the one workspace (microbuild/firmware/workspaces.py); ``pool`` is the RPC
    # arena's bytes beyond the workspaces (describe takes it too).
    table: Callable[..., str]
    embeds_inputs: bool
    zephyr_kconfig: tuple[tuple[str, str, str], ...] = ()
    describe: Callable[..., dict[str, Any]] | None = None
    formats: tuple[str, ...] | None = None  # the project formats it suits; None: every one
    skeleton: bool = False
    self_test: str | None = None

    @property
    def sources(self) -> list[str]:
        """Every runtime/ C file of the executor a firmware links: main, the self-test and the
        runtime sources, in name order."""
        return sorted([self.main, *([self.self_test] if self.self_test else []),
                       *self.runtime_sources])


EXECUTORS: dict[str, Executor] = {
    "aot": Executor(
        name="aot",
        description="standalone: runs each model on an input embedded at build time, prints the "
                    "outputs and the timer ticks per inference on the console, and stops",
        main="aot/main.c",
        zephyr_main="main_aot.c",
        runtime_sources=(),
        table_file="mb_aot_models.c",
        table=lambda board, models, inputs, separate=(), pool=None: aot.aot_models_c(
            models, inputs, separate),
        embeds_inputs=True,
        skeleton=True,
        self_test="aot/self_test.c",
    ),
    "rpc": Executor(
        name="rpc",
        description="host-driven: an RPC server on the console UART; `microbuild.connect` "
                    "uploads inputs, runs the model or single operators, times them and reads "
                    "the outputs (docs/rpc-protocol.md)",
        main="rpc/main.c",
        zephyr_main="main_rpc.c",
        runtime_sources=tuple(s for s in rpc_table.runtime_sources() if s != "rpc/main.c"),
        table_file="mb_rpc_models.c",
        table=lambda board, models, inputs, separate=(), pool=rpc_table.DEFAULT_POOL_BYTES:
            rpc_table.rpc_models_c(board, models, pool, separate),
        embeds_inputs=False,
        describe=lambda board, models, separate=(), pool=rpc_table.DEFAULT_POOL_BYTES:
            rpc_table.describe(board, models, pool, separate),
    ),
}
