"""Our compiler on the ZLUDA conformance suite: every kernel it supports must give the
hardware-verified output bytes in the emulator with zero hazards, and nvdisasm must read our
cubin back as exactly the instructions we meant; on sm_89, on sm_90 (Hopper: its own
opcode choices, cubin layout, latencies and encoding table) and on sm_120 (RTX 50). Kernels using constructs not supported
yet are listed with the reason (strict xfail: supporting one makes its entry fail until it
is removed from the list)."""
import os

import pytest

from codegen_harness import with_hopper
from ptx2sass import CompileError, codegen, oracle
from tools.emu_testing import ZLUDA_DIR, _parseable, run_zluda, zluda_manifest, zluda_ptx
from ptx2sass.encoder.model import Label
from ptx2sass.encoder.sass_text import format_instruction, parse_listing

MANIFEST = zluda_manifest() if (ZLUDA_DIR / "manifest.json").is_file() else []
# ptxas rejects these for sm_89 and sm_90 too (see the manifest's ptxas_error): nothing to compare.
PTXAS_REJECTS = {"vector8", "vector8_extract", "vote_ballot_nosync"}
# Kernels using constructs the code generator does not support yet: the CompileError's
# message (regenerate with the compiler's own errors when support grows).
UNSUPPORTED = {
}
# sm_120 (RTX 50): our choices whose sm_120 encoding the blackwell table lacks (ptxas writes
# other instructions there: VIADD.S32.ISAT for add.sat, I2F.U32.RP of a register)
BLACKWELL_UNENCODABLE: dict[str, str] = {}
# sm_100 (B200): the same, for forms neither ptxas's sm_100 ZLUDA code nor sm_120's table has
SM100_UNENCODABLE = {
}
SM100_STRIDE = 5            # sm_100 on every fifth kernel (PTX2SASS_SAMPLE=all: all)
BLACKWELL_STRIDE = 3        # sm_120 on every third kernel (PTX2SASS_SAMPLE=all: all)


def _cases():
    runnable = [e for e in MANIFEST if e["name"] not in PTXAS_REJECTS]
    for e, arch in with_hopper(runnable):     # sm_90 on a sample (PTX2SASS_SAMPLE=all: all)
        marks = ()
        if e["name"] in UNSUPPORTED:
            marks = pytest.mark.xfail(strict=True, raises=CompileError, reason=UNSUPPORTED[e["name"]])
        yield pytest.param(e, arch, id=f"{e['name']}-{arch}", marks=marks)
    stride = 1 if os.environ.get("PTX2SASS_SAMPLE") == "all" else BLACKWELL_STRIDE
    for e in runnable[::stride]:
        marks = ()
        if e["name"] in BLACKWELL_UNENCODABLE:
            marks = pytest.mark.xfail(strict=True, raises=AssertionError, reason=BLACKWELL_UNENCODABLE[e["name"]])
        yield pytest.param(e, "sm_120", id=f"{e['name']}-sm_120", marks=marks)
    stride = 1 if os.environ.get("PTX2SASS_SAMPLE") == "all" else SM100_STRIDE
    for e in runnable[1::stride]:
        marks = ()
        if e["name"] in SM100_UNENCODABLE:
            marks = pytest.mark.xfail(strict=True, raises=AssertionError, reason=SM100_UNENCODABLE[e["name"]])
        yield pytest.param(e, "sm_100", id=f"{e['name']}-sm_100", marks=marks)


def _normalised(ins) -> str:
    """nvdisasm names labels itself: compare branch targets by offset."""
    ops = tuple(Label("L", op.offset) if isinstance(op, Label) else op for op in ins.operands)
    return format_instruction(type(ins)(ins.opcode, ins.modifiers, ops, ins.guard, ins.control))


@pytest.mark.parametrize("entry, arch", list(_cases()))
def test_zluda_kernel_with_our_cubin(entry, arch):
    try:
        cubin, codes = codegen.generate_module(codegen.lower_ptx(zluda_ptx(entry), arch, entry["ptx"]),
                                               arch, filename=entry["ptx"])
    except CompileError as e:
        assert "not supported yet" in e.message, e.message
        raise
    # nvdisasm reads back exactly what we meant, control codes included.
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    for code in codes:
        (fn,) = [f for f in listing.functions if f.section == f".text.{code.name}"]
        theirs = [_normalised(e.instruction) for e in fn.entries]
        ours = [_normalised(i) for i in code.instructions]
        assert theirs == ours
        assert [e.instruction.control for e in fn.entries] == [i.control for i in code.instructions]
    # Diverged lanes meet only at our BSYNCs/WARPSYNCs (explicit reconvergence): every warp
    # collective must still run with all its members.
    outcome = run_zluda(entry, hazard_check=True, cubin=cubin, reconverge="explicit", arch=arch)
    assert outcome.passed, outcome.reason
    assert not outcome.result.hazards, [str(h) for h in outcome.result.hazards[:5]]
    assert not outcome.result.convergence_hazards, [str(h) for h in outcome.result.convergence_hazards]
