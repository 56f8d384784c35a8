"""microbuild's PlatformIO development platform: the build script PlatformIO runs (in SCons).

An environment using this platform names its board by a microbuild YAML file instead of a
PlatformIO board:

    [env:my-board]
    platform = symlink://${PROJECT_DIR}/platformio/microbuild-platform
    custom_microbuild_board = board/my-board.yaml      ; required
    custom_microbuild_toolchain = clang                 ; optional: another family the board lists
    custom_microbuild_runtime = runtime                 ; optional: default, microbuild's own

From the YAML come the compiler (installed on this machine, e.g. arm-none-eabi-gcc from Debian)
and its flags, mb_board_config.h, mb_board_init.c and the linker script, the start-up code and
the console, timer and exit drivers; src/ is compiled as usual. After linking, the firmware is
checked against the board's memory regions (firmware.size.json) and .bin/.hex are written.
Targets: `pio run -t exec` runs it (emulated boards in QEMU or simavr, the host as a process);
`pio run -t upload` flashes a real board with the first flash tool its YAML lists.

microbuild must be importable from PlatformIO's Python (install PlatformIO into microbuild's
environment: `python -m pip install platformio`); this script only hands over to it.
"""

import sys

from SCons.Script import DefaultEnvironment

env = DefaultEnvironment()

try:
    from microbuild.project import buildtime
except ImportError:
    sys.stderr.write(
        "Error: the microbuild platform needs microbuild in PlatformIO's Python (%s), which "
        "cannot import it. Install PlatformIO into the Python environment microbuild is "
        "installed in (`python -m pip install platformio` there, then use its `pio`), or "
        "install microbuild into PlatformIO's: `%s -m pip install microbuild`.\n"
        % (sys.executable, sys.executable))
    env.Exit(1)

buildtime.pio_platform(env)
