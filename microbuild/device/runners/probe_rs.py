"""probe-rs (https://probe.rs): ``probe-rs download --chip <chip> --verify --reset
<firmware.elf>`` through any probe it supports (CMSIS-DAP, ST-LINK, J-Link, ESP USB-JTAG...).

Runner args:
  chip      probe-rs's chip name (`probe-rs chip list`), e.g. STM32F746NGHx, nRF52840_xxAA, RP2040
  probe     VID:PID[:serial] of the probe, when several are connected (--probe)
  speed_khz SWD/JTAG clock (--speed)
  protocol  swd or jtag (--protocol)
  reset     reset and run the chip after writing (--reset, probe-rs 0.32 and later; default
            true; false for an older probe-rs, which leaves the core halted)
  program   the probe-rs executable (name or path)
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import (
    PROBE_VENDORS,
    Diagnosis,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    board_usb,
)


class ProbeRsRunner(FlashToolRunner):
    name = "probe-rs"
    arguments = (
        RunnerArg("chip", (str,), "probe-rs's chip name, e.g. STM32F746NGHx"),
        RunnerArg("probe", (str,), "VID:PID[:serial] of the probe"),
        RunnerArg("speed_khz", (int,), "SWD/JTAG clock (--speed)"),
        RunnerArg("protocol", (str,), "swd or jtag"),
        RunnerArg("reset", (bool,), "reset and run the chip after writing"),
    )
    program = "probe-rs"
    install_hint = ("install probe-rs: `cargo install probe-rs-tools --locked`, or the "
                    "prebuilt binary from https://probe.rs/docs/getting-started/installation/")
    udev_hint = ("install probe-rs's udev rules (https://probe.rs/files/69-probe-rs.rules) into "
                 "/etc/udev/rules.d/, then `sudo udevadm control --reload-rules && sudo udevadm "
                 "trigger`, and unplug and replug the probe")
    failure_patterns = (
        (r"No (?:connected )?probes? (?:were |was )?found|no probe was found", "no-probe"),
        (r"[Tt]he chip '?([^'\s]+)'? (?:was not found|is not known)|No chip description",
         "unknown-chip"),
        (r"[Pp]ermission denied|Access denied \(insufficient permissions\)", "usb-permission"),
        (r"Failed to attach|Connecting to the chip was unsuccessful|Probe could not be created"
         r"|target did not respond|SWD error|JtagNoDeviceConnected", "target"),
        (r"unexpected argument '--reset'", "old-probe-rs"),
    )

    @property
    def chip(self) -> str:
        chip = self.args.get("chip")
        if not chip:
            raise FlashError(
                f"board '{self.board.name}': runner probe-rs has no `chip` (probe-rs's name for "
                f"the chip, from `probe-rs chip list`); add it to its entry in the board YAML's "
                f"`flash:`, e.g. `args: {{chip: STM32F746NGHx}}`{self._others_hint()}")
        return str(chip)

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "download", "--chip", self.chip]
        for arg, flag in (("probe", "--probe"), ("speed_khz", "--speed"),
                          ("protocol", "--protocol")):
            if self.args.get(arg):
                command += [flag, str(self.args[arg])]
        command.append("--verify")
        if self.args.get("reset", True):
            command.append("--reset")
        return command + [str(image.elf.resolve())]

    def write_command(self, data: Path, address: int) -> list[str]:
        command = self.flash_command(FirmwareImage(Path(data)))[:-1]
        return command + ["--binary-format", "bin", "--base-address", f"{address:#x}",
                          str(Path(data).resolve())]

    def probe_description(self) -> str:
        if self.args.get("probe"):
            return f"the probe {self.args['probe']} (the runner's `probe` arg)"
        ids = board_usb(self.board)
        if ids:
            return f"{PROBE_VENDORS[int(ids[:4], 16)]} (USB {ids})"
        return "any debug probe probe-rs supports (CMSIS-DAP, ST-LINK, J-Link) on the SWD header"

    def describe(self, kind, image, match):
        if kind == "unknown-chip":
            return Diagnosis(kind, f"probe-rs does not know the chip {match.group(1) or self.chip}",
                             "check the `chip` arg against `probe-rs chip list`")
        if kind == "old-probe-rs":
            return Diagnosis(kind, "this probe-rs is older than 0.32 and has no download --reset",
                             "update probe-rs, or set `reset: false` in the runner's args and "
                             "press the board's reset button after flashing")
        return super().describe(kind, image, match)
