"""ptxas's cache-operator options (`-dlcm`, `-flcm`, `-dscm`, `-fscm`) as a rewrite of the
IR's global and generic loads and stores, so that the back end selects them as it selects
the same operators written in the PTX.

Measured with ptxas 13.5.37 (sm_89, `tests/test_cache_operator_options.py`):
- only weak accesses take them: `.volatile`, `.relaxed`/`.acquire`/`.release` and `.mmio`
  ones keep their code; so does any access with an L1 eviction priority (`.L1::...`, even
  `.L1::evict_normal`). `.weak`, `.L2::...`, vectors and `ldu` are rewritten;
- a default (`-dlcm`/`-dscm`) applies where no cache operator is written, a forced one
  (`-flcm`/`-fscm`) replaces any written one;
- `ld.global.nc` keeps `.nc` and takes `.ca`/`.cg`/`.cs`; with `lu` or `cv` it is a plain
  `.nc` load (a forced one drops a written `.cs` then);
- shared, local and parameter accesses are left alone.
"""
from __future__ import annotations

from ptx2sass import ir

LOAD_OPERATORS = ("ca", "cg", "cs", "lu", "cv")
STORE_OPERATORS = ("wb", "cg", "cs", "wt")
NON_COHERENT_OPERATORS = ("ca", "cg", "cs")        # those `.nc` loads take
STRONG = frozenset(("volatile", "relaxed", "acquire", "release", "mmio"))
SPACES = ("global", "generic", None)

# codegen option -> (loads?, forced?)
OPTIONS = {"def_load_cache": (True, False), "force_load_cache": (True, True),
           "def_store_cache": (False, False), "force_store_cache": (False, True)}


def chosen(options: dict) -> tuple[tuple[str, bool] | None, tuple[str, bool] | None]:
    """(operator, forced) for loads and for stores; a forced one wins over a default."""
    picks: list = [None, None]
    for name, (load, forced) in OPTIONS.items():
        value = options.get(name)
        if value and (picks[not load] is None or forced):
            picks[not load] = (str(value), forced)
    return picks[0], picks[1]


def _rewrite(modifiers: tuple[str, ...], operator: str, forced: bool, load: bool) -> tuple[str, ...]:
    known = LOAD_OPERATORS if load else STORE_OPERATORS
    written = [m for m in modifiers if m in known]
    if written and not forced:
        return modifiers
    if load and "nc" in modifiers and operator not in NON_COHERENT_OPERATORS:
        operator = ""
    kept = [m for m in modifiers if m not in known]
    # the operator where PTX writes it: after `.nc`, else first
    at = kept.index("nc") + 1 if "nc" in kept else 0
    return tuple(kept[:at] + ([operator] if operator else []) + kept[at:])


def _takes(ins: ir.Instr) -> bool:
    return (ins.space in SPACES and STRONG.isdisjoint(ins.modifiers)
            and not any(m.startswith("L1::") for m in ins.modifiers))


def apply(module: ir.Module, options: dict) -> None:
    """Rewrite the module's weak global/generic loads and stores as the options ask."""
    load, store = chosen(options)
    if load is None and store is None:
        return
    for fn in module.functions:
        for block in fn.blocks:
            for ins in block.instrs:
                if ins.opcode in ("ld", "ldu") and load is not None and _takes(ins):
                    ins.modifiers = _rewrite(ins.modifiers, load[0], load[1], True)
                elif ins.opcode == "st" and store is not None and _takes(ins):
                    ins.modifiers = _rewrite(ins.modifiers, store[0], store[1], False)
