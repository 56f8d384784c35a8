"""The host board: the firmware is an ordinary executable; its console is stdin/stdout."""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import Capability, Runner
from microbuild.device.transports.process import ProcessStdioTransport


class HostRunner(Runner):
    name = "host"
    capabilities = frozenset({Capability.RUN, Capability.CONSOLE})

    def command(self, firmware: Path) -> list[str]:
        return [str(Path(firmware).resolve())]

    def start(self, firmware: Path) -> ProcessStdioTransport:
        return ProcessStdioTransport(self.command(firmware), what=f"firmware {Path(firmware).name}")
