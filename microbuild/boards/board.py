"""The resolved, validated board: what every other room reads instead of raw YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microbuild.boards.sizes import parse_size

SECTIONS = ("text", "rodata", "data", "bss", "stack", "heap", "workspace", "weights")
# Sections that are written at run time and so need a writable region.
WRITABLE_SECTIONS = ("data", "bss", "stack", "heap", "workspace")
# Interrupt entries in a Cortex-M vector table when the board does not say (cpu.irq_count).
DEFAULT_IRQ_COUNT = 32


@dataclass(frozen=True)
class ModelSlot:
    """A byte range a table-executor firmware reads a model blob from (docs/model-blob.md)."""

    region: str
    address: int
    size: int


@dataclass(frozen=True)
class MemoryRegion:
    name: str
    origin: int
    length: int
    access: str  # "rx", "r", "rw" or "rwx"
    external: bool = False  # a separate device (QSPI/OSPI flash) needing an external loader
    window_of: str | None = None  # one window onto a device other regions also map (ESP32)

    @property
    def end(self) -> int:
        return self.origin + self.length

    @property
    def writable(self) -> bool:
        return "w" in self.access

    @property
    def executable(self) -> bool:
        return "x" in self.access


def boot_candidates(regions) -> list[MemoryRegion]:
    """Regions a firmware image can be stored in to survive a reset: not writable (flash, ROM
    windows) and not on an external device (which the boot ROM does not start from)."""
    return [r for r in regions if not r.writable and not r.external]


@dataclass(frozen=True)
class Toolchain:
    family: str
    libc: str
    prefix: str = ""
    cflags: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()


@dataclass(frozen=True)
class FlashRunner:
    runner: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Board:
    """One board after ``extends:`` is resolved and the result validated."""

    data: dict[str, Any]  # the resolved definition, as ``boards show`` prints it
    files: list[Path]  # the file that defines it, then the files it extends, in order
    # The board's own C sources, absolute, by kind (console, timer, exit, init): the drivers and
    # init code it names as files instead of built-in drivers (see boards/drivers.py).
    local_sources: dict[str, Path] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def title(self) -> str:
        return self.data["title"]

    @property
    def vendor(self) -> str:
        return self.data["vendor"]

    @property
    def cpu(self) -> dict[str, Any]:
        return self.data["cpu"]

    @property
    def arch(self) -> str:
        return self.cpu["arch"]

    @property
    def core(self) -> str:
        return self.cpu["core"]

    @property
    def fpu(self) -> str:
        return self.cpu.get("fpu", "none")

    @property
    def float_abi(self) -> str:
        return self.cpu.get("float_abi", "soft")

    @property
    def irq_count(self) -> int:
        """External interrupts the Cortex-M vector table has entries for (``cpu.irq_count``)."""
        return int(self.cpu.get("irq_count", DEFAULT_IRQ_COUNT))

    @property
    def is_host(self) -> bool:
        """Runs as a process on the build machine; no memory map, no flashing."""
        return self.arch == "x86_64"

    @property
    def is_emulated(self) -> bool:
        return "qemu" in self.data or self.default_runner in ("qemu", "simavr")

    @property
    def regions(self) -> dict[str, MemoryRegion]:
        regions = self.data.get("memory", {}).get("regions", {})
        return {name: MemoryRegion(name, int(r["origin"]), parse_size(r["length"]), r["access"],
                                   bool(r.get("external", False)), r.get("window_of"))
                for name, r in regions.items()}

    @property
    def boot_region(self) -> MemoryRegion | None:
        """Where the firmware image is stored and the core starts: ``memory.boot``, else the
        text region, or (text in RAM) the one non-volatile, non-external region. None when text
        is in RAM and that is ambiguous (the loader refuses such a board, naming the choices)."""
        regions = self.regions
        if not regions:
            return None
        named = self.data.get("memory", {}).get("boot")
        if named:
            return regions.get(named)
        text = regions.get(self.placement.get("text", ""))
        if text is None or not text.writable:
            return text
        stores = boot_candidates(regions.values())
        if len(stores) == 1:
            return stores[0]
        return text if not stores else None

    @property
    def image_steps(self) -> list[dict[str, Any]]:
        """The post-link steps of ``image:`` (microbuild/firmware/image_steps/), in order."""
        return [dict(step) for step in self.data.get("image", [])]

    @property
    def placement(self) -> dict[str, str]:
        placement = dict(self.data.get("memory", {}).get("placement", {}))
        placement.pop("model_slots", None)  # byte ranges, not a section's region: model_slots
        # `workspace` may list regions in order of preference (workspace_regions); everything
        # that reads the placement as one region per section sees the first, where a workspace
        # that fits goes whole.
        if isinstance(placement.get("workspace"), list):
            placement["workspace"] = placement["workspace"][0]
        # Models' state (recurrent/streaming variables) goes with the workspace unless the board
        # says otherwise.
        if "workspace" in placement:
            placement.setdefault("state", placement["workspace"])
        return placement

    @property
    def workspace_regions(self) -> list[str]:
        """The regions the model workspace may use, in order of preference: one, or several
        when ``placement.workspace`` is a list (a workspace larger than the first region's free
        space is split across them; see microbuild/compiler/workspace_split.py)."""
        named = self.data.get("memory", {}).get("placement", {}).get("workspace")
        if named is None:
            return []
        return list(named) if isinstance(named, list) else [named]

    @property
    def model_slots(self) -> list[ModelSlot]:
        """Where a table-executor firmware reads model blobs (``memory.placement.model_slots``;
        the loader has checked that each lies inside its region and that none overlap)."""
        slots = self.data.get("memory", {}).get("placement", {}).get("model_slots", [])
        regions = self.regions
        return [ModelSlot(s["region"], regions[s["region"]].origin + parse_size(s.get("offset", 0)),
                          parse_size(s["size"])) for s in slots]

    def region_for(self, section: str) -> MemoryRegion | None:
        name = self.placement.get(section)
        return self.regions.get(name) if name else None

    @property
    def stack_size(self) -> int:
        return parse_size(self.data.get("memory", {}).get("stack_size", "4K"))

    @property
    def heap_size(self) -> int:
        return parse_size(self.data.get("memory", {}).get("heap_size", 0))

    @property
    def flash_bytes(self) -> int:
        """Bytes of non-writable (code) memory; 0 for the host. Windows onto one device
        (``window_of``) count once, as the device's size (its largest window)."""
        plain = sum(r.length for r in self.regions.values() if not r.writable and not r.window_of)
        devices: dict[str, int] = {}
        for r in self.regions.values():
            if not r.writable and r.window_of:
                devices[r.window_of] = max(devices.get(r.window_of, 0), r.length)
        return plain + sum(devices.values())

    @property
    def ram_bytes(self) -> int:
        return sum(r.length for r in self.regions.values() if r.writable)

    @property
    def toolchain(self) -> Toolchain:
        return self._toolchain(self.data["toolchain"])

    @property
    def toolchains(self) -> list[Toolchain]:
        """The default toolchain first, then the alternatives the board lists. An alternative
        without its own cflags/ldflags uses the default's (usually just the -O level)."""
        tc = self.data["toolchain"]
        inherited = {k: tc[k] for k in ("cflags", "ldflags") if k in tc}
        return [self._toolchain(tc)] + [self._toolchain({**inherited, **alt})
                                        for alt in tc.get("alternatives", [])]

    @staticmethod
    def _toolchain(tc: dict[str, Any]) -> Toolchain:
        return Toolchain(family=tc["family"], libc=tc["libc"], prefix=tc.get("prefix", ""),
                         cflags=tuple(tc.get("cflags", ())), ldflags=tuple(tc.get("ldflags", ())))

    @property
    def init(self) -> str:
        return self.data.get("init", "")

    @property
    def transport_init(self) -> str:
        """The console's clock and pin set-up (``transport.init:``), run after ``init:``: apart
        from it so that a board extending another on other console pins keeps the parent's
        clock code instead of repeating it."""
        return self.data.get("transport", {}).get("init", "")

    @property
    def transport(self) -> dict[str, Any]:
        return self.data["transport"]

    @property
    def timer(self) -> dict[str, Any]:
        return self.data["timer"]

    @property
    def exit(self) -> dict[str, Any]:
        """How a firmware stops; the process exits on the host, a real board halts."""
        default = {"driver": "process" if self.is_host else "halt"}
        return self.data.get("exit", default)

    @property
    def runners(self) -> list[FlashRunner]:
        return [FlashRunner(f["runner"], dict(f.get("args", {}))) for f in self.data["flash"]]

    @property
    def default_runner(self) -> str:
        return self.data["flash"][0]["runner"]

    @property
    def qemu(self) -> dict[str, Any] | None:
        return self.data.get("qemu")

    @property
    def platformio(self) -> dict[str, Any] | None:
        return self.data.get("platformio")

    @property
    def zephyr(self) -> dict[str, Any] | None:
        return self.data.get("zephyr")
