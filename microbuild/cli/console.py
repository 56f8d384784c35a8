"""The two consoles every command prints to: results on stdout, progress and errors on stderr."""

from __future__ import annotations

import sys

from rich.console import Console

# Piped output (CI logs, files) gets a wide fixed width instead of rich's 80 columns, so tables are
# not truncated.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


class NoStatus:
    """Stands in for ``err.status(...)`` when no spinner is shown (piped output, --json)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
