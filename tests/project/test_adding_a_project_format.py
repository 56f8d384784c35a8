"""docs/adding-a-project-format.md, walked through: the toy format is taken from the page as
written, registered, and a project is generated and built with it (the host board and the tiny
model: no cross compiler, no firmware build)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from microbuild.project import ProjectError, build_project, generate_project
from microbuild.cli.generate import add_parser as add_generate_parser
from microbuild.project.files import MANIFEST
from microbuild.project.formats import FORMATS, format_names

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "adding-a-project-format.md").read_text()
TINY_FC = REPO / "tests" / "models" / "tiny_fc.tflite"


@pytest.fixture(scope="module")
def toy_format(tmp_path_factory):
    """The doc's module, imported from a temporary folder; unregistered afterwards."""
    (code,) = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)
    path = tmp_path_factory.mktemp("toy") / "toy_format_from_doc.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    yield FORMATS["toy"]
    FORMATS.pop("toy", None)
    sys.modules.pop(path.stem, None)


def test_the_doc_format_registers_itself_after_the_built_in_ones(toy_format):
    assert type(toy_format).__name__ == "ToyFormat"
    assert format_names() == ("platformio", "zephyr", "scons", "make", "toy")
    generate = add_generate_parser(argparse.ArgumentParser().add_subparsers())
    assert "toy: the model's C sources and a script that lists them" in " ".join(
        generate.format_help().split())

def test_a_project_generated_with_the_doc_format_builds(toy_format, tmp_path):
    out = tmp_path / "toy-project"
    result = generate_project("host", TINY_FC, "toy", out)
    assert result.format == "toy" and result.build == ["sh build.sh"]
    assert {"build.sh", "README.md", MANIFEST, "model/tiny_fc.tflite",
            "generated/tiny_fc.c", "generated/tiny_fc.h"} <= {
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert result.user_created == ["NOTES.md"]
    assert json.loads((out / MANIFEST).read_text())["format"] == "toy"
    assert (out / "README.md").read_text().startswith("# ")

    build_project(out)
    listed = (out / "sources.txt").read_text().split()
    assert "tiny_fc.c" in listed and "tiny_fc.h" in listed

    (out / "NOTES.md").write_text("mine\n")
    again = generate_project("host", TINY_FC, "toy", out)
    assert again.user_kept == ["NOTES.md"] and (out / "NOTES.md").read_text() == "mine\n"


def test_an_unknown_format_names_the_registered_ones(toy_format, tmp_path):
    with pytest.raises(ProjectError, match="unknown project format 'toys'; choose one of: "
                                           "platformio, zephyr, scons, make, toy"):
        generate_project("host", TINY_FC, "toys", tmp_path / "p")
