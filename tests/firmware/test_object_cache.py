"""MICROBUILD_CACHE_DIR: compiled objects shared between builds, and nothing else cached.

The suite itself runs with one cache for all its builds (tests/conftest.py); here each test has a
folder of its own, so the counts are not disturbed by builds running in parallel."""

from __future__ import annotations

from pathlib import Path

from elftools.elf.elffile import ELFFile

from microbuild import api

MODELS = Path(__file__).resolve().parent.parent / "models"


def _entries(cache: Path) -> list[Path]:
    # SCons' CacheDir keeps a config file and a CACHEDIR.TAG at the top, entries in subfolders.
    return [p for p in cache.rglob("*") if p.is_file() and p.parent != cache]


def test_a_second_build_elsewhere_compiles_nothing_new_and_is_the_same_firmware(
        tmp_path, monkeypatch):
    cache = tmp_path / "objects"
    monkeypatch.setenv("MICROBUILD_CACHE_DIR", str(cache))
    model = MODELS / "tiny_fc.tflite"
    first = api.build_firmware("mps2-an385", [model], tmp_path / "one")
    entries = _entries(cache)
    # The runtime and the model's generated C: dozens of objects, and only objects (ELF
    # relocatable files): no ELF, image or report is ever replayed from the cache.
    assert len(entries) > 40
    for entry in entries:
        with open(entry, "rb") as f:
            assert ELFFile(f).header["e_type"] == "ET_REL", entry
    second = api.build_firmware("mps2-an385", [model], tmp_path / "two")
    assert sorted(_entries(cache)) == sorted(entries)  # every object came from the cache
    assert second.binary.read_bytes() == first.binary.read_bytes()
    # The log still lists each compile (scons --cache-show), as the uncached build's does.
    def compiles(log: str) -> list[str]:  # sorted: SCons compiles in parallel
        return sorted(line for line in log.splitlines() if line.lstrip().startswith(("CC", "AS")))
    assert len(compiles(first.log)) >= 40
    assert compiles(second.log) == compiles(first.log)


def test_without_the_variable_nothing_is_cached(tmp_path, monkeypatch):
    monkeypatch.delenv("MICROBUILD_CACHE_DIR", raising=False)
    build = api.build_firmware("host", [MODELS / "tiny_fc.tflite"], tmp_path / "out")
    sconstruct = (tmp_path / "out" / "SConstruct").read_text()
    assert "use_object_cache(env)" in sconstruct
    assert build.elf.is_file()
    assert not any(p.name == "CACHEDIR.TAG" for p in tmp_path.rglob("*"))
