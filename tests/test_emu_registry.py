"""Every opcode has one semantics whatever order the ops_* modules are imported in: a test
module that imported `emu.ops_bulk` (and with it ops_memory) before the registry loaded the
rest let ops_int's no-op DEPBAR replace ops_memory's, so cp.async copies never landed and
every later cp.async launch in that process read zeros. The only opcodes two modules
register are ops_blackwell's, which load_all imports last on purpose."""
import subprocess
import sys

BLACKWELL_OVERRIDES = {"MOV", "UMOV", "IMNMX", "UIMNMX", "VIADD"}


def _owners(first: str) -> dict:
    code = (f"import ptx2sass.emu.{first}\n" if first else "") + (
        "from ptx2sass.emu import registry\n"
        "handlers, _ = registry.load_all()\n"
        "print({k: v.__module__ for k, v in sorted(handlers.items())})\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return eval(out.stdout)


def test_handlers_do_not_depend_on_import_order():
    plain = _owners("")
    assert plain["DEPBAR"].endswith("ops_memory") and plain["UCGABAR_WAIT"].endswith("ops_cluster")
    for first in ("ops_bulk", "ops_memory", "ops_syncs", "ops_cluster", "ops_int"):
        owners = _owners(first)
        assert {k: v for k, v in owners.items() if k not in BLACKWELL_OVERRIDES} == \
            {k: v for k, v in plain.items() if k not in BLACKWELL_OVERRIDES}, first
