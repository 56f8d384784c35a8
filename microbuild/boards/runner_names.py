"""The names a board file may give a flash runner (``flash: - runner: <name>``).

The runners themselves are classes in the device room (microbuild.device.runners), which imports
the boards room to read a board; the board loader checks the names against this list instead of
importing those classes, so the boards room stays below the device room.
tests/test_layers.py keeps this list equal to the device room's registry (device.runners.RUNNERS).
"""

RUNNER_NAMES = (
    "qemu", "host", "simavr",
    "openocd", "pyocd", "stlink", "jlink", "avrdude", "platformio",
    "esptool", "picotool", "uf2", "nrfjprog", "nrfutil", "probe-rs",
    "dfu-util", "stm32cubeprogrammer",
)
