"""OpenOCD (Debian package `openocd`): ``openocd -f <config>... -c "program <elf> verify reset
exit"``.

Runner args (board YAML ``flash: - runner: openocd, args: {...}``):
  config             OpenOCD scripts, in order (board/..., or interface/... then target/...)
  transport          `transport select` after the interface script; default swd after
                     interface/jlink.cfg (OpenOCD picks JTAG there, and Cortex-M targets such as
                     target/nrf52.cfg then fail with "missing IR length"); "" for none
  adapter_speed_khz  `adapter speed` after the scripts
  search             extra script folders (-s)
  external_loader    an OpenOCD script declaring the external (QSPI/OSPI) flash bank, e.g. with
                     OpenOCD's stmqspi driver; run after `config`, so `program` writes the bytes
                     placed in a region marked `external: true` too. A path relative to the
                     board file, or a script name OpenOCD finds
  program            the openocd executable (name or path)
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from microbuild.device.runners.base import Capability, RunnerArg
from microbuild.device.runners.flash_tool import (
    Diagnosis,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    board_usb,
)

# interface script -> (what to call the probe, its USB vendor id, ids to name when the board
# does not say which one it has)
_INTERFACES = {
    "stlink": ("an ST-LINK", 0x0483, "0483:3748, 374b, 374e, 374f or 3753"),
    "stlink-dap": ("an ST-LINK", 0x0483, "0483:3748, 374b, 374e, 374f or 3753"),
    "jlink": ("a SEGGER J-Link", 0x1366, "vendor 1366"),
    "cmsis-dap": ("a CMSIS-DAP probe", None, "any CMSIS-DAP adapter, e.g. a Raspberry Pi Debug "
                  "Probe 2e8a:000c"),
}
_INTERFACE_IN_SCRIPT = re.compile(r"interface/([\w.-]+?)\.cfg")


def _tcl_word(path: Path) -> str:
    """A path as one Tcl word (braced when it has spaces or Tcl's special characters)."""
    text = path.as_posix()
    return f"{{{text}}}" if re.search(r"[\s$\[\]\\;\"{}]", text) else text


class OpenocdRunner(FlashToolRunner):
    name = "openocd"
    capabilities = FlashToolRunner.capabilities | {Capability.GDB_SERVER}
    arguments = (
        RunnerArg("config", (str, list), "OpenOCD scripts, in order"),
        RunnerArg("transport", (str,), "`transport select` after the interface script; \"\" for none"),
        RunnerArg("adapter_speed_khz", (int,), "`adapter speed` after the scripts"),
        RunnerArg("search", (list,), "extra script folders (-s)"),
        RunnerArg("external_loader", (str,), "an OpenOCD script declaring the external flash bank"),
    )
    debian_packages = ("openocd",)
    external_loader_help = ("an OpenOCD script that declares the external flash bank (e.g. "
                            "`flash bank qspi stmqspi 0x90000000 0 0 0 $_TARGETNAME 0xA0001000` "
                            "for an STM32's QUADSPI), run after the `config` scripts")
    program = "openocd"
    install_hint = "install OpenOCD: sudo apt-get install openocd"
    failure_patterns = (
        (r"Can't find ([\w./+-]+\.(?:cfg|tcl))", "config-missing"),
        (r"LIBUSB_ERROR_ACCESS|libusb_open\(\) failed|insufficient permissions", "usb-permission"),
        (r"Error: open failed|unable to find a matching CMSIS-DAP device|No J-Link device found"
         r"|unable to open ftdi device|No CMSIS-DAP device found|Error: no device found",
         "no-probe"),
        (r"couldn't open (\S+)", "file-not-found"),
        (r"init mode failed|unable to connect to the target|Error connecting DP|Target not examined"
         r"|target voltage may be too low|UNEXPECTED idcode|Could not find MEM-AP"
         r"|Failed to read memory|timed out while waiting for target halted"
         r"|DP initialisation failed|cannot read IDR|JTAG scan chain interrogation failed",
         "target"),
        (r"verify failed|checksum mismatch|contents differ", "verify"),
    )

    @property
    def configs(self) -> list[str]:
        configs = self.args.get("config") or []
        return [configs] if isinstance(configs, str) else [str(c) for c in configs]

    def transport(self) -> str | None:
        if "transport" in self.args:
            return self.args["transport"] or None
        return "swd" if "interface/jlink.cfg" in self.configs else None

    def flash_command(self, image: FirmwareImage) -> list[str]:
        return self.script_command() + ["-c", f"program {_tcl_word(Path(image.elf).resolve())} "
                                              "verify reset exit"]

    def write_command(self, data: Path, address: int) -> list[str]:
        # `program` takes a raw binary's load address as its last word.
        return self.script_command() + ["-c", f"program {_tcl_word(Path(data).resolve())} "
                                              f"verify reset exit {address:#x}"]

    def script_command(self) -> list[str]:
        """openocd with the board's scripts (probe and chip), nothing done yet."""
        if not self.configs:
            raise FlashError(
                f"board '{self.board.name}': runner openocd has no `config` (the OpenOCD scripts "
                f"that select the probe and the chip). Add them to its entry in the board YAML's "
                f"`flash:`, e.g. `args: {{config: [board/stm32f7discovery.cfg]}}` or "
                f"`[interface/cmsis-dap.cfg, target/rp2040.cfg]`{self._others_hint()}")
        command = [self.program_name]
        for folder in self.args.get("search") or []:
            command += ["-s", str(folder)]
        transport = self.transport()
        for config in self.configs:
            command += ["-f", config]
            if transport and config.startswith("interface/"):
                command += ["-c", f"transport select {transport}"]
        if self.args.get("external_loader"):
            command += ["-f", self.external_loader_script()]
        if self.args.get("adapter_speed_khz"):
            command += ["-c", f"adapter speed {int(self.args['adapter_speed_khz'])}"]
        return command

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        # OpenOCD serves GDB once its scripts have run; the telnet and Tcl ports are not needed.
        return self.script_command() + ["-c", f"gdb_port {port}", "-c", "telnet_port disabled",
                                        "-c", "tcl_port disabled", "-c", "init", "-c",
                                        "reset halt"]

    def external_loader_script(self) -> str:
        """The `external_loader` script: beside the board file when it is there, else as given
        (a script on OpenOCD's search path)."""
        given = str(self.args["external_loader"])
        beside = Path(self.board.files[0]).parent / given if self.board.files else None
        return str(beside.resolve()) if beside is not None and beside.is_file() else given

    # --- the probe the scripts select ---------------------------------------------------------

    def scripts_dirs(self) -> list[Path]:
        dirs = [Path(d) for d in self.args.get("search") or []]
        found = shutil.which(self.program_name)
        if found:
            dirs.append(Path(found).resolve().parent.parent / "share" / "openocd" / "scripts")
        return dirs + [Path("/usr/share/openocd/scripts"), Path("/usr/local/share/openocd/scripts")]

    def installed_scripts(self) -> Path:
        """The folder of the scripts that come with this OpenOCD."""
        dirs = self.scripts_dirs()[len(self.args.get("search") or []):]
        return next((d for d in dirs if d.is_dir()), dirs[-2])

    def interface(self) -> tuple[str | None, str | None]:
        """(interface name, the script that selects it), from the configs or the board script
        they source."""
        for config in self.configs:
            match = _INTERFACE_IN_SCRIPT.fullmatch(config)
            if match:
                return match.group(1), config
        for config in self.configs:
            for folder in self.scripts_dirs():
                script = folder / config
                if script.is_file():
                    match = _INTERFACE_IN_SCRIPT.search(script.read_text(errors="replace"))
                    if match:
                        return match.group(1), config
                    break
        return None, None

    def probe_description(self) -> str:
        name, script = self.interface()
        if name is None:
            return f"the debug probe its scripts select ({', '.join(self.configs)})"
        what, vendor, default_ids = _INTERFACES.get(name, (f"a {name} adapter", None, None))
        ids = board_usb(self.board, vendor) if vendor is not None else board_usb(self.board)
        ids = f"USB {ids}" if ids else default_ids
        return f"{what} ({ids}), as {script} selects" if ids else f"{what}, as {script} selects"

    def target_text(self) -> str:
        targets = [c for c in self.configs if c.startswith(("target/", "board/"))]
        return f"the chip {' + '.join(targets)} describes" if targets else super().target_text()

    def describe(self, kind, image, match):
        if kind == "config-missing":
            return Diagnosis(kind, f"OpenOCD has no script {match.group(1)}",
                             f"check the `config` list of the openocd runner in the board YAML "
                             f"({', '.join(self.configs)}): the scripts this OpenOCD has are "
                             f"under {self.installed_scripts()} (board/, interface/, target/); a "
                             f"script from a newer OpenOCD needs that version, or its folder in "
                             f"the runner's `search` args")
        if kind == "verify":
            return Diagnosis(kind, "the flash did not verify: what OpenOCD read back differs "
                             "from the image",
                             "run again; if it repeats, the flash may be write- or "
                             "read-protected (option bytes) and needs a mass erase, or the SWD "
                             "link is unreliable: lower `adapter_speed_khz` in the runner's args")
        return super().describe(kind, image, match)
