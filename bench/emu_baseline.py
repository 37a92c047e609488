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
    if _urz_is_63(Path(root)):
        mods["testing"].cubin_listing_decoder = _urz_as_63(mods["testing"].cubin_listing_decoder)
    # Older emulators tell control-flow handlers by their module's name.
    program = mods["program"]
    if hasattr(program, "CONTROL_MODULES"):
        program.CONTROL_MODULES = {f"{NAME}.ops_control"}
    return SimpleNamespace(**mods)


def _urz_is_63(root: Path) -> bool:
    """Whether the baseline's emulator takes URZ as UR63 (before the model named it UR255 on
    every family): it then reads UR255 past its 64 uniform registers."""
    import re
    pattern = re.compile(r"index\s*[!=]=\s*63\b")
    return any(pattern.search(f.read_text()) for f in (root / "emu").glob("*.py"))


def _urz_as_63(make_decoder):
    """`make_decoder` whose decoders give URZ as UR63, as the old model did."""
    from dataclasses import fields, is_dataclass, replace
    from ptx2sass.encoder.model import Reg

    def old(value):
        if isinstance(value, Reg):
            return replace(value, index=63) if value.file == "UR" and value.index == 255 else value
        if isinstance(value, tuple):
            return tuple(old(v) for v in value)
        if is_dataclass(value) and not isinstance(value, type):
            changed = {f.name: old(getattr(value, f.name)) for f in fields(value)}
            changed = {k: v for k, v in changed.items() if v is not getattr(value, k)}
            return replace(value, **changed) if changed else value
        return value

    def make(*args, **kw):
        decode = make_decoder(*args, **kw)
        return lambda *a, **k: [(offset, old(ins)) for offset, ins in decode(*a, **k)]
    return make


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
