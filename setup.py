"""Build hook: a wheel carries microbuild's non-Python folders inside the package.

``runtime/`` (the C runtime), ``board_defs/`` (built-in boards) and ``project_templates/`` live
beside the package in the repository; ``build_py`` copies them to ``microbuild/<folder>`` in the
build tree, where ``microbuild.paths`` looks for them when they are not beside the package. An
editable install keeps using the checkout's folders. Everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_FOLDERS = ("runtime", "board_defs", "project_templates")


class BuildPyWithDataFolders(build_py):
    def run(self):
        super().run()
        here = Path(__file__).resolve().parent
        for folder in DATA_FOLDERS:
            target = Path(self.build_lib) / "microbuild" / folder
            if target.exists():
                shutil.rmtree(target)
            # Links (runtime/LICENSE -> ../LICENSE) are copied as the files they point at.
            shutil.copytree(here / folder, target, symlinks=False,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithDataFolders})
