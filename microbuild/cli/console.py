"""The two consoles every command prints to: results on stdout, progress and errors on stderr."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text


class MessageConsole(Console):
    """A rich console that never breaks a message into lines.

    A message (plain text or markup) is printed soft-wrapped: one logical line stays one line, and
    the terminal, the CI log viewer or the editor pane wraps it for display. A path or a command
    in an error can then be copied and searched whole, under ``| tee`` as on a terminal. Tables and
    other renderables keep rich's layout (columns wrap inside their cells)."""

    def print(self, *objects, soft_wrap=None, **options):  # noqa: A003 - rich's name
        if soft_wrap is None:
            soft_wrap = all(isinstance(obj, (str, Text)) for obj in objects)
        super().print(*objects, soft_wrap=soft_wrap, **options)


# Piped output (CI logs, files) gets a wide fixed width instead of rich's 80 columns, so tables are
# not truncated; messages are not wrapped at any width (MessageConsole).
out = MessageConsole(highlight=False, width=None if sys.stdout.isatty() else 160)
err = MessageConsole(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


class NoStatus:
    """Stands in for ``err.status(...)`` when no spinner is shown (piped output, --json)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
