"""A compiled-object cache shared between builds: ``MICROBUILD_CACHE_DIR``.

Every firmware compiles microbuild's C runtime (about 90 files) for its board, and most of those
objects are the same from one model or output folder to the next. With ``MICROBUILD_CACHE_DIR``
set, SCons keeps each object file in that folder under its build signature (the source's and its
headers' contents and the compiler command, include paths aside) and copies it back instead of
compiling it again: a CI matrix or a test suite that builds hundreds of firmwares compiles each
distinct object once.

Only object files are cached. microbuild's own build steps (code generation, fit report, images)
are Python actions that print reports and write files beside their targets; replaying them from a
cache would skip both, so they always run. Entries are written to a temporary file and renamed,
so parallel builds may share the folder."""

from __future__ import annotations

import os

import SCons.CacheDir

ENV_VAR = "MICROBUILD_CACHE_DIR"


class ObjectCache(SCons.CacheDir.CacheDir):
    """SCons' CacheDir restricted to compiled objects."""

    @staticmethod
    def _is_object(node) -> bool:
        return str(node).endswith((".o", ".obj"))

    def retrieve(self, node) -> bool:
        return self._is_object(node) and super().retrieve(node)

    def push(self, node):
        if self._is_object(node):
            return super().push(node)
        return None


def use_object_cache(env) -> None:
    """Share compiled objects through ``$MICROBUILD_CACHE_DIR`` when it is set (a no-op
    otherwise). `microbuild build` runs SCons with ``--cache-show``, so a retrieved object's
    compile command is printed as if it had been compiled and a build log reads the same."""
    folder = os.environ.get(ENV_VAR, "").strip()
    if not folder:
        return
    env.CacheDir(os.path.abspath(os.path.expanduser(folder)), ObjectCache)
