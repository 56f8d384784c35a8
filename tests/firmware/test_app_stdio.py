"""A new user's own main() (executor 'app'): the C library's stdio is the board's console with
newlib (mps2-an500, newlib-nano) and picolibc (riscv32-virt), the console is open before main
(no mb_console_init call), a last printf without "\\n" is written out when main returns, and a
source set with no main is one clear error naming the sources, not the linker's."""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from microbuild.device.runners import runner_for
from microbuild.errors import MicrobuildError
from microbuild.firmware.build import build_firmware

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "models" / "tiny_fc.tflite"

# What a newcomer writes first: no microbuild call at all before printing.
HELLO_C = r"""
#include <stdio.h>

#include "microbuild/platform.h"

int main(void)
{
    char name[32];
    int n = 0, c, number = 0;
    mb_print("mb_print first\n");
    printf("hello %d\n", 42);
    puts("what is your name?");
    while ((c = getchar()) != EOF && c != '\n' && n < (int)sizeof name - 1) {
        name[n++] = (char)c;
    }
    name[n] = '\0';
    if (scanf("%d", &number) != 1) {
        return 3;
    }
    printf("hi %s, twice %d is %d\n", name, number, 2 * number);
    fputs("error stream\n", stderr);
    printf("no newline at the end");
    return 7;
}
"""

HELPER_C = "int helper(int x);\nint helper(int x) { return x + 1; }\n"


def _read_until(process: subprocess.Popen, text: bytes, deadline: float) -> bytes:
    """What the process printed, up to and including ``text`` (or all of it once it exits)."""
    got = b""
    fd = process.stdout.fileno()
    while text not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r} within the time limit; printed {got!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            got += chunk
    return got


def _converse(elf: Path, board, timeout: float = 60.0) -> tuple[int, bytes]:
    """Boots the firmware, answers its prompt as a user at a terminal would (after it asks:
    bytes sent before the firmware is up are lost on a real UART too), returns (status,
    everything printed)."""
    command = runner_for(board).command(elf)
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        printed = _read_until(process, b"what is your name?\n", deadline)
        process.stdin.write(b"Ada\n21\n")
        process.stdin.flush()
        printed += _read_until(process, b"\xff-never-printed", deadline)
        return process.wait(timeout=max(1.0, deadline - time.monotonic())), printed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("app")
    (folder / "src").mkdir()
    (folder / "src" / "hello.c").write_text(HELLO_C)
    (folder / "lib").mkdir()
    (folder / "lib" / "helper.c").write_text(HELPER_C)
    return folder


@pytest.mark.parametrize("board", ["mps2-an500", "riscv32-virt"])
def test_printf_puts_getchar_scanf_on_the_console(app_dir, board):
    build = build_firmware(board, [TINY], app_dir / board, executor="app",
                           sources=[app_dir / "src" / "hello.c"])
    status, printed = _converse(build.elf, build.board)
    assert printed == (b"mb_print first\nhello 42\nwhat is your name?\nhi Ada, twice 21 is 42\n"
                       b"error stream\nno newline at the end"), printed
    assert status == 7  # main's return value is the exit status, after the flush

    # Sources without main, built where the runtime is already up to date: one error that
    # names the files, before the link (no "undefined reference to `main'").
    with pytest.raises(MicrobuildError) as caught:
        build_firmware(board, [TINY], app_dir / board, executor="app",
                       sources=[app_dir / "lib" / "helper.c"])
    message = str(caught.value)
    assert "no main() in your sources" in message
    assert str(app_dir / "lib" / "helper.c") in message
    assert "undefined reference" not in message
