"""The formats' templates (project_templates/<format>/) and filling in their {{placeholders}}."""

from __future__ import annotations

import re
from pathlib import Path

from microbuild.paths import project_templates_dir


def templates_dir() -> Path:
    """project_templates/: beside the package in a checkout, inside it in a wheel."""
    return project_templates_dir()


_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


def render(text: str, values: dict[str, str]) -> str:
    """``{{name}}`` placeholders replaced by ``values[name]`` (every one must be given)."""
    missing = sorted({m for m in _PLACEHOLDER.findall(text) if m not in values})
    if missing:
        raise KeyError(f"template placeholders without a value: {', '.join(missing)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def template(fmt: str, name: str, **values: str) -> str:
    return render((templates_dir() / fmt / name).read_text(), values)
