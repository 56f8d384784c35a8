"""A complete minimal board file without its `flash:` list, for tests that add one (the board
tests' bad-input cases, docs/adding-a-runner.md's walk-through). Its lines are counted by the
expected messages (file:line), so keep new keys at the end."""

MINIMAL_BOARD = """\
name: myboard
title: My board
vendor: me
cpu:
  arch: armv7e-m
  core: cortex-m4
  endian: little
  clock_hz: 48000000
memory:
  regions:
    flash: {origin: 0x08000000, length: 256K, access: rx}
    ram: {origin: 0x20000000, length: 64K, access: rwx}
  placement: {text: flash, rodata: flash, weights: flash, data: ram, bss: ram, stack: ram, heap: ram, workspace: ram}
toolchain:
  family: gcc-arm-none-eabi
  libc: newlib-nano
init: "/* nothing */"
transport: {kind: serial, driver: stm32_usart, base: 0x40011000, baud: 115200}
timer: {driver: dwt, frequency_hz: 48000000}
"""
