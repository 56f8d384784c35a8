"""A connected device, as the user sees it (the API of `microbuild.connect`):

    with microbuild.connect("mps2-an500", firmware) as dev:
        y = dev.run("ds_cnn", x)          # outputs, one array per model output
        prof = dev.profile("ds_cnn", x)   # ticks per operator, run from the host

It boots or flashes the firmware, opens the transport, starts a session, checks that the device
runs the very build the host has the description of, and then moves tensors to and from the
models' workspace slots over RPC.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from microbuild.boards import Board, resolve_board
from microbuild.compiler.compiled_model import TensorSpec
from microbuild.device.errors import ProtocolError
from microbuild.device.rpc.client import RpcClient
from microbuild.device.rpc.protocol import DeviceInfo, FunctionInfo, TimedEntry
from microbuild.device.runners import runner_for
from microbuild.device.transports.base import Transport
from microbuild.device.transports.process import SocketTransport
from microbuild.device.transports.serial_port import find_port, SerialTransport
from microbuild.errors import DeviceError, MicrobuildError
from microbuild.firmware.build import FirmwareBuild
from microbuild.tensor_files import check_arrays


def slot_offset(summary: dict[str, Any], tensor: int) -> int:
    """Where the plan keeps ``tensor`` in the model's workspace."""
    for buffer in summary["plan"]["buffers"]:
        if tensor in buffer["tensors"]:
            return buffer["offset"]
    raise ProtocolError(f"model {summary['prefix']}: tensor {tensor} has no slot in the plan")


@dataclass
class OpTime:
    index: int  # position in execution order (the function's operator index)
    op_index: int  # the operator's index in the model
    opcode: str
    ticks: int
    seconds: float


@dataclass
class Profile:
    """A model run operator by operator from the host, next to the whole-model timed run."""

    model: str
    board: str
    timer_hz: int
    ops: list[OpTime]
    model_ticks: int  # the whole model in one RUN on the same input
    outputs: list[np.ndarray] = field(default_factory=list)
    rounds: int = 1  # timed rounds; each figure is the fastest of them

    @property
    def op_ticks(self) -> int:
        return sum(o.ticks for o in self.ops)

    @property
    def ratio(self) -> float:
        """Sum of the operators over the whole-model run (1.0: the profile accounts for it all)."""
        return self.op_ticks / self.model_ticks if self.model_ticks else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "board": self.board, "timer_hz": self.timer_hz,
                "rounds": self.rounds, "model_ticks": self.model_ticks,
                "op_ticks": self.op_ticks, "ratio": self.ratio,
                "ops": [o.__dict__ for o in self.ops]}


@dataclass
class _Model:
    index: int
    summary: dict[str, Any]
    workspace_offset: int
    ops: list[FunctionInfo]


class Device:
    def __init__(self, client: RpcClient, board: Board, description: dict[str, Any],
                 runner: str = ""):
        self.client = client
        self.board = board
        self.description = description
        self.runner = runner
        self.info: DeviceInfo = client.info  # type: ignore[assignment]
        self._models: dict[str, _Model] = {}
        for m in description["models"]:
            try:
                mi = self.info.model(m["prefix"])
            except KeyError:
                raise ProtocolError(f"the device has no model '{m['prefix']}'") from None
            self._models[m["prefix"]] = _Model(mi.index, m, mi.workspace_offset,
                                               self.info.functions_of(mi.index))
        for prefix, model in self._models.items():
            if model.summary.get("state_bytes"):
                self.reset(prefix)

    # ---- models -------------------------------------------------------------------------------
    @property
    def models(self) -> list[str]:
        return list(self._models)

    def _model(self, model: str | Path | None) -> _Model:
        if model is None:
            if len(self._models) != 1:
                raise MicrobuildError(f"the firmware has several models ({', '.join(self.models)}); "
                                      "say which")
            return next(iter(self._models.values()))
        name = str(model)
        if name.endswith(".tflite"):
            from microbuild.compiler.c_names import model_prefix
            name = model_prefix(name)
        if name not in self._models:
            raise MicrobuildError(f"the firmware has no model '{name}'; it has: "
                                  f"{', '.join(self.models)}")
        return self._models[name]

    def specs(self, model: str | Path | None = None, kind: str = "inputs"):
        return [TensorSpec(**{k: (tuple(v) if k == "shape" else v) for k, v in s.items()})
                for s in self._model(model).summary[kind]]

    def reset(self, model: str | Path | None = None) -> None:
        """Set a stateful model's state (its variable tensors) back to the model's start, as
        ``<prefix>_reset`` and TFLM's ResetVariableTensors do; connecting does it for every model.
        Each run after it continues from the state the previous run left."""
        m = self._model(model)
        state = self.description["arena"].get("states", {}).get(m.summary["prefix"])
        if not state:
            return
        image = bytearray(state["bytes"])
        for t in m.summary["state"]:
            value = (bytes.fromhex(t["initial"]) if "initial" in t
                     else bytes([t["fill"]]) * t["bytes"])
            image[t["offset"]:t["offset"] + t["bytes"]] = value
        self.client.write(state["offset"], bytes(image))

    def write_inputs(self, model: str | Path | None, x) -> None:
        m = self._model(model)
        arrays = check_arrays(x, self.specs(m.summary["prefix"]))
        for spec, array in zip(m.summary["inputs"], arrays):
            self.client.write(m.workspace_offset + slot_offset(m.summary, spec["tensor"]),
                              array.tobytes())

    def read_outputs(self, model: str | Path | None = None) -> list[np.ndarray]:
        m = self._model(model)
        outputs = []
        for spec in m.summary["outputs"]:
            data = self.client.read(m.workspace_offset + slot_offset(m.summary, spec["tensor"]),
                                    spec["bytes"])
            outputs.append(np.frombuffer(data, dtype=spec["dtype"]).reshape(spec["shape"]).copy())
        return outputs

    # ---- running ------------------------------------------------------------------------------
    def run(self, model: str | Path | None, x) -> list[np.ndarray]:
        """Run the model on ``x`` (one array, or one per input) and return its outputs."""
        return self.run_timed(model, x)[0]

    def run_timed(self, model: str | Path | None, x) -> tuple[list[np.ndarray], int]:
        m = self._model(model)
        self.write_inputs(m.summary["prefix"], x)
        status, ticks = self.client.run(m.index)
        if status != 0:
            raise DeviceError(f"model {m.summary['prefix']} returned {status} on the device")
        return self.read_outputs(m.summary["prefix"]), ticks

    def profile(self, model: str | Path | None, x, repeat: int = 1, warmup: int = 0) -> Profile:
        """Run the model operator by operator from the host and time each operator, next to the
        whole model's timed run on the same input.

        ``repeat`` rounds, each a whole-model RUN and then every operator once in order (one
        batched TIMED_CALL), after ``warmup`` untimed rounds; the fastest of the rounds is
        reported, as timeit does: on a shared host, interference only ever adds time. (Under
        -icount every round is the same.) Interleaving the two keeps a drifting clock from
        favouring either. The first round's operator-by-operator outputs must equal RUN's."""
        m = self._model(model)
        prefix = m.summary["prefix"]
        model_ticks: list[int] = []
        op_ticks: list[list[int]] = [[] for _ in m.ops]
        outputs: list[np.ndarray] = []
        # A stateful model (an audio front end's noise estimate, an LSTM's cell) runs its
        # operators from the state the whole-model run started from, so both give the same.
        state = self.description["arena"].get("states", {}).get(prefix)
        for round_ in range(warmup + max(1, repeat)):
            before = self.client.read(state["offset"], state["bytes"]) if state else None
            got, ticks = self.run_timed(prefix, x)
            if before is not None:
                self.client.write(state["offset"], before)
            self.write_inputs(prefix, x)
            entries = [TimedEntry(f.index, warmup=0, repeat=1) for f in m.ops]
            self.client.timed_call(entries)
            for f, e in zip(m.ops, entries):
                if e.status != 0:
                    raise DeviceError(f"operator {f.name} returned {e.status} on the device")
            if round_ == 0:
                outputs = got
                by_ops = self.read_outputs(prefix)
                for k, (a, b) in enumerate(zip(got, by_ops)):
                    if not np.array_equal(a, b):
                        raise ProtocolError(f"model {prefix}: output {k} differs between the "
                                            "whole-model run and the operator-by-operator run")
            if round_ >= warmup:
                model_ticks.append(ticks)
                for k, e in enumerate(entries):
                    op_ticks[k].append(e.ticks[0])
        hz = self.info.timer_hz or 1
        ops = []
        for k, (f, samples) in enumerate(zip(m.ops, op_ticks)):
            best = min(samples)
            ops.append(OpTime(k, f.op_index, f.name.rsplit(".", 1)[-1], best, best / hz))
        return Profile(prefix, self.info.board, hz, ops, min(model_ticks), outputs,
                       rounds=len(model_ticks))

    # ---- life cycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self.client.transport.close()

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _description_for(firmware) -> tuple[dict[str, Any], Path]:
    """(rpc description, ELF) from a FirmwareBuild or the path of an RPC firmware's ELF."""
    if isinstance(firmware, FirmwareBuild):
        return firmware.rpc_description, firmware.elf
    path = Path(firmware)
    candidates = [path.with_suffix(".rpc.json"), path.parent / f"{path.name}.rpc.json"]
    if path.is_dir():
        candidates = sorted(path.glob("*.rpc.json"))
    for c in candidates:
        if c.is_file():
            import json
            elf = c.parent / c.name[:-len(".rpc.json")]
            elf = elf if elf.is_file() else elf.with_suffix(".elf")
            return json.loads(c.read_text()), elf
    raise MicrobuildError(f"{firmware}: no RPC firmware description (<name>.rpc.json) next to it; "
                          "build the firmware with --executor rpc")


def connect(board: str | Path | Board, firmware, runner: str | None = None,
            port: str | None = None, timeout: float = 5.0, retries: int = 4,
            flash: bool = True, on_log: Callable[[str], None] | None = None,
            transport: Transport | None = None, boot_timeout: float = 20.0,
            description: str | Path | dict[str, Any] | None = None) -> Device:
    """Start ``firmware`` (a FirmwareBuild from ``build_firmware(..., executor="rpc")`` or the
    path of its ELF) on ``board`` and return a connected Device. Emulated boards and the host boot
    it here; a real board is flashed with ``runner`` (default: the board's first) unless
    ``flash=False``, then reached on ``port`` (default: found from the board's USB ids).
    ``description``: the firmware's .rpc.json when it is not next to the ELF (a generated
    Make project keeps it in generated/)."""
    board = resolve_board(board)
    if description is None:
        description, elf = _description_for(firmware)
    else:
        import json

        elf = Path(getattr(firmware, "elf", firmware))
        if not isinstance(description, dict):
            description = json.loads(Path(description).read_text())
    if description["board"] != board.name:
        raise MicrobuildError(f"{elf} was built for board '{description['board']}', not "
                              f"'{board.name}'")
    chosen = runner_for(board, runner) if transport is None else None
    if transport is None:
        assert chosen is not None
        if board.is_host or board.is_emulated:
            transport = chosen.start(elf)
        else:
            transport = _real_board_transport(board, chosen, elf, port, flash)
    client = RpcClient(transport, timeout=timeout, retries=retries, on_log=on_log)
    try:
        client.wait_for_boot(boot_timeout)
        info = client.open_session()
        expected = description["build_id"]
        if info.build_id.hex() != expected:
            raise ProtocolError(
                f"{transport.describe()} runs firmware build {info.build_id.hex()} for board "
                f"'{info.board}', not the build {expected} described next to {elf}; flash this "
                "firmware again (or pass the firmware that is on the board)")
        return Device(client, board, description, runner=chosen.name if chosen else "")
    except BaseException:
        transport.close()
        raise


def _real_board_transport(board: Board, runner, elf: Path, port: str | None,
                          flash: bool) -> Transport:
    if flash:
        from microbuild.device.runners.flash_tool import FirmwareImage

        binary, hexfile = elf.with_suffix(".bin"), elf.with_suffix(".hex")
        runner.flash(FirmwareImage(elf=elf, binary=binary if binary.is_file() else None,
                                   hex=hexfile if hexfile.is_file() else None))
        time.sleep(0.2)  # the board resets after programming; let its USB serial settle
    return open_console(board, port)


def open_console(board: Board, port: str | None = None) -> Transport:
    """A real board's console: ``port`` (a serial device, or HOST:PORT for a TCP bridge), or the
    serial port found from the board's USB ids (transport.usb)."""
    kind = board.transport.get("kind", "serial")
    if kind == "tcp" or (port and ":" in port and not port.startswith("/")):
        if not port or ":" not in port:
            raise MicrobuildError(f"board '{board.name}' is reached over TCP: pass --port "
                                  "HOST:PORT")
        host, _, number = port.rpartition(":")
        return SocketTransport.connect(host, int(number))
    return SerialTransport(port or find_port(board), int(board.transport.get("baud", 115200)))


__all__ = ["Device", "OpTime", "Profile", "connect", "open_console", "slot_offset"]
