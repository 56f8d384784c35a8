"""Errors a user can cause and fix.

Every stage raises a subclass of :class:`MicrobuildError` for a user's mistake (a bad board file, a
model with an unsupported operator, a missing toolchain). The CLI prints its message and exits with
``exit_code``; it never shows a traceback for these. Anything else is a bug in microbuild and is
allowed to show its traceback.
"""

import difflib


class MicrobuildError(Exception):
    """A problem the user can fix; the message says what, where, and what to do."""

    exit_code = 1


class BoardError(MicrobuildError):
    """A board definition is missing, malformed or inconsistent."""


class ModelError(MicrobuildError):
    """A .tflite file is unreadable or uses something the compiler does not support."""


class ToolchainError(MicrobuildError):
    """A compiler, emulator or flash tool the job needs is not installed or failed."""


class FitError(MicrobuildError):
    """The linked firmware does not fit in the board's memory regions; the message says which
    region, by how many bytes, and what uses it."""


class BuildError(MicrobuildError):
    """Compiling or linking a firmware failed; the message carries the compiler's output."""


class DeviceError(MicrobuildError):
    """A board or emulator did not behave: it faulted, timed out, or printed something else."""


def did_you_mean(word: str, choices) -> str:
    """" (did you mean X or Y?)" for a misspelt name among ``choices``, or "" when none is close:
    the wording every "no such name" message shares."""
    close = difflib.get_close_matches(str(word), list(choices), n=3, cutoff=0.5)
    return f" (did you mean {' or '.join(close)}?)" if close else ""
