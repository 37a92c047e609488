"""Build configuration that pyproject.toml cannot state on its own.

1. Packages: the distribution's subpackages are mapped from top-level folders
   (`ptx2sass.frontend` <- `frontend/`, see DESIGN.md). Every package under each mapped
   folder is found here, so a new subpackage can never be left out of the wheel.
2. Derived data: the PLY lexer/parser tables and the encoding tables' marshal form are
   built into the wheel (`build_py`), so an installed ptx2sass neither derives them at run
   time nor writes into its own folder.
"""
from __future__ import annotations

import os
import subprocess
import sys

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

# distribution package -> source folder
MAPPED = {
    "ptx2sass": "ptx2sass",
    "ptx2sass.frontend": "frontend",
    "ptx2sass.regalloc": "regalloc",
    "ptx2sass.sched": "sched",
    "ptx2sass.encoder": "encoder",
    "ptx2sass.emu": "emu",
}


def discover() -> tuple[list[str], dict[str, str]]:
    """Every package under each mapped folder, with its folder; data folders (the encoding
    tables) count as packages, as setuptools wants them."""
    packages, package_dir = [], {}
    for package, folder in MAPPED.items():
        packages.append(package)
        package_dir[package] = folder
        for sub in find_namespace_packages(where=folder, exclude=["__pycache__", "*.__pycache__"]):
            name = f"{package}.{sub}"
            packages.append(name)
            package_dir[name] = os.path.join(folder, *sub.split("."))
    return packages, package_dir


class BuildWithDerivedData(build_py):
    """`build_py`, then the derived tables written into the built package."""

    def run(self):
        super().run()
        if self.editable_mode:
            return      # an editable tree derives them on first use (see frontend/tables.py)
        root = os.path.abspath(self.build_lib)
        script = (
            "import sys; from pathlib import Path\n"
            "from ptx2sass.frontend import tables\n"
            "from ptx2sass.encoder import table_cache\n"
            "root = Path(sys.argv[1]) / 'ptx2sass'\n"
            "tables.generate(root / 'frontend')\n"
            "for j in sorted((root / 'encoder' / 'tables').glob('*.json')):\n"
            "    table_cache.generate(str(j))\n")
        env = dict(os.environ, PYTHONPATH=root, PYTHONDONTWRITEBYTECODE="1")
        subprocess.run([sys.executable, "-c", script, root], check=True, env=env, cwd=root)


packages, package_dir = discover()
setup(packages=packages, package_dir=package_dir,
      package_data={"": ["*.json", "*.spec", "data/*.npz"]},   # encoding tables, PTX inventory, latencies, measured MUFU tables
      cmdclass={"build_py": BuildWithDerivedData})
