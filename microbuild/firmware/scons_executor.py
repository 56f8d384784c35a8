"""The executor's generated table as an SCons command: one for microbuild's own build
(scons_tool.MicroFirmware) and the generated SCons and PlatformIO projects (project/buildtime.py),
driven by the executors table (executors.py), so a new executor needs no code here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import SCons.Action

from microbuild.errors import MicrobuildError
from microbuild.firmware import aot, rpc_table
from microbuild.firmware.executors import EXECUTORS, Executor
from microbuild.firmware.scons_env import report_error

# Construction variables the table command carries for its action.
_EXECUTOR, _INPUTS, _SEED = "MICROBUILD_EXECUTOR", "MICROBUILD_TABLE_INPUTS", "MICROBUILD_TABLE_SEED"
_BOARD, _POOL, _SEPARATE = ("MICROBUILD_TABLE_BOARD", "MICROBUILD_TABLE_POOL",
                            "MICROBUILD_SEPARATE_WORKSPACE")


def side_file_suffix(executor: Executor) -> str | None:
    """What goes beside the firmware with the table: the embedded inputs (.input.npz) or the
    description a host drives it with (.rpc.json); None when neither."""
    if executor.embeds_inputs:
        return ".input.npz"
    return ".rpc.json" if executor.describe is not None else None


def _table_action(target, source, env):
    executor = EXECUTORS[env[_EXECUTOR]]
    summaries = [json.loads(Path(str(s)).read_text()) for s in source
                 if str(s).endswith(".json")]
    board, pool, separate = env[_BOARD], env[_POOL], env[_SEPARATE]
    try:
        inputs = (aot.embedded_inputs(summaries, env[_INPUTS], env[_SEED])
                  if executor.embeds_inputs else None)
        # e.g. the RPC table refusing a split workspace
        table = executor.table(board, summaries, inputs, separate, pool=pool)
    except MicrobuildError as err:
        report_error(err, target[0])
        return 1
    Path(str(target[0])).write_text(table)
    if len(target) > 1 and executor.embeds_inputs:
        np.savez(str(target[1]), **aot.saved_inputs(summaries, inputs))
    elif len(target) > 1 and executor.describe is not None:
        Path(str(target[1])).write_text(json.dumps(
            executor.describe(board, summaries, separate, pool=pool), indent=1) + "\n")
    return 0


def executor_table(env, folder, firmware, executor: Executor, summaries: list,
                   inputs: dict[str, str], seed: int, board: str,
                   separate: list[str] | bool = (),
                   pool: int = rpc_table.DEFAULT_POOL_BYTES) -> list:
    """An SCons command writing ``executor``'s table (e.g. mb_aot_models.c) into ``folder``
    from the models' summaries (MicroModel's .json), embedding ``inputs`` (prefix -> .npy/.npz)
    or seeded random inputs; and next to ``firmware`` (its path without suffix) the side file
    (:func:`side_file_suffix`). ``pool``: the RPC arena's bytes beyond the workspaces. Returns
    the command's targets: the table, then the side file if any."""
    targets = [env.Dir(folder).File(executor.table_file)]
    suffix = side_file_suffix(executor)
    if suffix is not None:
        base = env.File(firmware)
        targets.append(base.dir.File(base.name + suffix))
    separate = True if separate is True else sorted(separate or ())
    value = env.Value(json.dumps({"executor": executor.name, "inputs": inputs, "seed": seed,
                                  "board": board, "pool": pool, "separate_workspace": separate}))
    return env.Command(targets, list(summaries) + [env.File(p) for p in inputs.values()] + [value],
                       SCons.Action.Action(_table_action, "$MICROAOTCOMSTR"),
                       **{_EXECUTOR: executor.name, _INPUTS: dict(inputs), _SEED: seed,
                          _BOARD: board, _POOL: pool, _SEPARATE: separate})
