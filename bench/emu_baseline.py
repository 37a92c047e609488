"""Another checkout's emulator, importable beside this one, so that a benchmark can time the
old and the new emulator in the same run (same machine load) and compare their results.

`load(root)` imports `root/emu` as the package `ptx2sass.emu_base` (its relative imports
resolve inside it; `ptx2sass.encoder` and the rest come from this checkout). Make a
baseline with e.g. `git worktree add --detach /tmp/base main` or
`git archive main | tar -x -C /tmp/base`.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

NAME = "ptx2sass.emu_base"


def load(root: str | Path) -> SimpleNamespace:
    """The baseline's modules: launch, loader, testing, hazards."""
    pkg = Path(root) / "emu"
    if not (pkg / "__init__.py").is_file():
        raise SystemExit(f"{root}: no emu/ package there")
    if NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(NAME, pkg / "__init__.py",
                                                      submodule_search_locations=[str(pkg)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module
        spec.loader.exec_module(module)
    mods = {m: importlib.import_module(f"{NAME}.{m}") for m in ("launch", "loader", "hazards", "program")}
    _own_latency_table(Path(root), mods["hazards"])
    if (pkg / "testing.py").is_file():
        mods["testing"] = importlib.import_module(f"{NAME}.testing")
    else:                    # later layouts keep the corpus runners in tools/emu_testing.py
        source = (Path(root) / "tools" / "emu_testing.py").read_text().replace("ptx2sass.emu.", f"{NAME}.")
        module = type(sys)(f"{NAME}_testing")
        module.__file__ = str(Path(root) / "tools" / "emu_testing.py")
        sys.modules[module.__name__] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        mods["testing"] = module
    # Older emulators tell control-flow handlers by their module's name.
    program = mods["program"]
    if hasattr(program, "CONTROL_MODULES"):
        program.CONTROL_MODULES = {f"{NAME}.ops_control"}
    return SimpleNamespace(**mods)


def _own_latency_table(root: Path, hazards) -> None:
    """Older layouts keep the latency table in `root/sched/latency.py`, whose functions the
    baseline's hazard model calls (some since renamed here): give it its own copy."""
    source = root / "sched" / "latency.py"
    if not source.is_file() or not hasattr(hazards, "lat"):
        return
    spec = importlib.util.spec_from_file_location(f"{NAME}_latency", source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    hazards.lat = module
