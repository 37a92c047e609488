"""ptx2sass installed from a wheel into a fresh virtual environment, offline: what a user
gets from `pip install .`, for tests/test_packaging.py and bench/compile_speed.py.

The wheel is built from a copy of the working tree's package files (tracked or new, not
ignored: what a commit would hold, never a stale `build/`), without build isolation, with
this environment's setuptools. It is installed with `--no-deps`; the new environment reaches
the dependencies (ply, numpy, pyelftools) through a `.pth` line naming this environment's
site-packages folder, which Python appends to sys.path without running that folder's own
`.pth` files, so the editable install's finder stays out.

    python -m tools.wheel_env DEST     # prints DEST/venv/bin/python
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# source folder -> its path inside the installed distribution (see setup.py)
MAPPED = {"ptx2sass": "ptx2sass", "frontend": "ptx2sass/frontend",
          "regalloc": "ptx2sass/regalloc", "sched": "ptx2sass/sched",
          "encoder": "ptx2sass/encoder", "emu": "ptx2sass/emu"}
BUILD_FILES = ("pyproject.toml", "setup.py", "README.md")


def source_files() -> list[str] | None:
    """The working tree's files (tracked, or new and not ignored), or None without git."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return [f for f in out.stdout.splitlines() if (REPO / f).is_file()]


def build_wheel(dest: Path) -> Path:
    files = source_files()
    if files is None:
        raise RuntimeError("not a git checkout: cannot tell the package's files")
    src = dest / "src"
    for f in files:
        if f.split("/")[0] in MAPPED or f in BUILD_FILES:
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, src / f)
    wheels = dest / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation",
                    "--no-deps", "--no-index", "-w", str(wheels), str(src)],
                   check=True, env=_env(), cwd=dest)
    (wheel,) = wheels.glob("ptx2sass-*.whl")
    return wheel


def install(wheel: Path, dest: Path) -> dict:
    """A fresh venv at dest/venv with `wheel` installed (bytecode compiled by pip)."""
    venv = dest / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, env=_env(), cwd=dest)
    purelib = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "_ptx2sass_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return {"venv": venv, "python": python, "purelib": purelib, "bin": venv / "bin"}


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


if __name__ == "__main__":
    target = Path(sys.argv[1]).resolve()
    target.mkdir(parents=True, exist_ok=True)
    print(install(build_wheel(target), target)["python"])
