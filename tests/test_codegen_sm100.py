"""sm_100 family (B200 and kin) and sm_120: local-window addresses, CREDUX, the newer
Blackwell targets (issue 18 phase 2). Expected values come from ptxas 13.5's cubins and
NumPy; our own output is never the reference."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

REPO = Path(__file__).resolve().parent.parent

# A local array reached through its generic address (`cvta.local`), as LLVM's debug code and
# calls write: each thread stores its values through the generic pointer and reads them
# back with ld.local; the generic base of the local window is a per-target driver word.
LOCAL_GENERIC = """.version 8.7
.target {target}
.address_size 64
.visible .entry lg(.param .u64 pout){{
 .local .align 8 .b8 buf[32];
 .reg .b32 r<8>; .reg .b64 d<8>;
 ld.param.u64 d0,[pout]; cvta.to.global.u64 d0,d0;
 mov.u32 r1,%tid.x; mov.u64 d1,buf; cvta.local.u64 d2,d1;
 mad.lo.u32 r2,r1,3,7; st.u32 [d2],r2; add.u32 r3,r2,r1; st.u32 [d2+12],r3;
 ld.local.u32 r4,[buf]; ld.local.u32 r5,[buf+12];
 cvta.to.local.u64 d3,d2; ld.local.u32 r6,[d3+12];
 add.u32 r4,r4,r5; add.u32 r4,r4,r6;
 mul.wide.u32 d4,r1,4; add.s64 d5,d0,d4; st.global.u32 [d5],r4; ret; }}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100", "sm_120"])
def test_cvta_local_uses_the_targets_window_word(arch):
    """cvta.local adds the local window's generic base, which the driver keeps at a
    per-target constant-bank word (sm_100/sm_120: not sm_8x's 0x20): ours = ptxas's = exact."""
    ptx = LOCAL_GENERIC.format(target=arch)
    tid = np.arange(64, dtype=np.uint32)
    want = (tid * 3 + 7) + 2 * (tid * 4 + 7)
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        out = np.zeros(64, dtype=np.uint32)
        res = run(cubin, "lg", (1, 1, 1), (64, 1, 1), [out])
        assert not res.hazards, res.hazards[:3]
        assert (out == want).all()


# redux.sync min/max on each type PTX has (f32 forms: sm_100a/sm_103a only); ptxas writes
# CREDUX for all of them on sm_100a.
REDUX_ALL = """.version 8.8
.target {target}
.address_size 64
.visible .entry rx(.param .u64 pin, .param .u64 pout){{
 .reg .b32 r<20>; .reg .f32 f<12>; .reg .b64 d<8>;
 ld.param.u64 d0,[pin]; ld.param.u64 d1,[pout]; cvta.to.global.u64 d0,d0; cvta.to.global.u64 d1,d1;
 mov.u32 r1,%tid.x; mul.wide.u32 d2,r1,4; add.s64 d3,d0,d2; ld.global.u32 r2,[d3];
 mov.b32 f1, r2;
 redux.sync.min.u32 r3, r2, 0xffffffff;
 redux.sync.max.u32 r4, r2, 0xffffffff;
 redux.sync.min.s32 r5, r2, 0xffffffff;
 redux.sync.max.s32 r6, r2, 0xffffffff;
 redux.sync.min.f32 f2, f1, 0xffffffff;
 redux.sync.max.f32 f3, f1, 0xffffffff;
 redux.sync.min.abs.f32 f4, f1, 0xffffffff;
 redux.sync.max.abs.f32 f5, f1, 0xffffffff;
 redux.sync.min.NaN.f32 f6, f1, 0xffffffff;
 redux.sync.max.abs.NaN.f32 f7, f1, 0xffffffff;
 mul.wide.u32 d4,r1,48; add.s64 d5,d1,d4;
 st.global.v4.u32 [d5],{{r3,r4,r5,r6}};
 st.global.v4.f32 [d5+16],{{f2,f3,f4,f5}};
 st.global.v2.f32 [d5+32],{{f6,f7}};
 ret; }}
"""


def _redux_inputs() -> np.ndarray:
    """Three warps: random words; floats with a NaN and both zeros; NaNs but for -0 and +0."""
    rng = np.random.default_rng(3)
    a = np.zeros(96, dtype=np.uint32)
    a[:32] = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    f = rng.standard_normal(32).astype(np.float32) * 100
    f[3], f[4], f[5], f[6] = np.nan, -0.0, 0.0, -np.inf
    a[32:64] = f.view(np.uint32)
    g = np.full(32, np.nan, dtype=np.float32)
    g[7], g[9] = -0.0, 0.0
    a[64:] = g.view(np.uint32)
    return a


def _float_pick(words, smallest: bool, absolute: bool, nan: bool) -> int:
    """PTX redux.sync's f32 min/max of one warp, as bits (exact: Python floats hold f32)."""
    vals = np.asarray(words, dtype=np.uint32)
    if absolute:
        vals = vals & np.uint32(0x7FFFFFFF)
    floats = [float(x) for x in vals.view(np.float32)]
    if all(x != x for x in floats) or (nan and any(x != x for x in floats)):
        return 0x7FFFFFFF                   # the canonical NaN
    # order by value, -0 before +0
    pairs = sorted((x, int(w) >> 31 == 0, int(w)) for x, w in zip(floats, vals) if x == x)
    return pairs[0][2] if smallest else pairs[-1][2]


def _redux_reference(a: np.ndarray) -> np.ndarray:
    want = np.zeros((96, 12), dtype=np.uint32)
    for w in range(3):
        v = a[32 * w:32 * w + 32]
        s = v.view(np.int32)
        row = [int(v.min()), int(v.max()), int(s.min()) & 0xFFFFFFFF, int(s.max()) & 0xFFFFFFFF,
               _float_pick(v, True, False, False), _float_pick(v, False, False, False),
               _float_pick(v, True, True, False), _float_pick(v, False, True, False),
               _float_pick(v, True, False, True), _float_pick(v, False, True, True), 0, 0]
        want[32 * w:32 * w + 32] = row
    return want


def _redux_all(arch: str) -> str:
    """REDUX_ALL for `arch` (sm_107's targets need PTX 9.4)."""
    ptx = REDUX_ALL.format(target=arch)
    return ptx.replace(".version 8.8", ".version 9.4") if arch.startswith("sm_107") else ptx


@pytest.mark.parametrize("target,arch", [("sm_100a", "sm_100a"), ("sm_107a", "sm_107a"), ("sm_107f", "sm_107f"),
                                         ("sm_100f", "sm_107f")])
@pytest.mark.parametrize("who", ["ptxas", "ours"])
def test_credux_min_max_equal_numpy(who, target, arch):
    """CREDUX (ptxas's sm_100a code for redux.sync min/max of u32, s32 and f32 with .abs and
    .NaN) in the emulator: each warp's result is the exact minimum/maximum, -0 below +0,
    NaNs left out unless .NaN, the canonical NaN for an all-NaN warp. Ours selects CREDUX for
    the f32 forms (an integer REDUX gave wrong results) and must match too. ptxas 13.5.37
    writes CREDUX on sm_107a/f too, and for `.target sm_100f` PTX compiled for sm_107f (our
    frontend refused the f32 forms on sm_107a/f before, and code generation for sm_107f had
    no CREDUX)."""
    ptx = _redux_all(target)
    cubin = oracle.ptxas(ptx, arch).output if who == "ptxas" else compile_ptx(ptx, arch)
    assert "CREDUX.MINABS.F32" in oracle.cuobjdump_sass(cubin)
    a = _redux_inputs()
    out = np.zeros((96, 12), dtype=np.uint32)
    res = run(cubin, "rx", (1, 1, 1), (96, 1, 1), [a, out])
    assert not res.hazards, res.hazards[:3]
    want = _redux_reference(a)
    assert (out == want).all(), np.argwhere(out != want)[:5]


@pytest.mark.parametrize("arch", ["sm_100", "sm_90a", "sm_120a", "sm_107"])
def test_float_redux_refused_where_ptxas_refuses(arch, tmp_path):
    """redux.sync .f32 needs sm_100a/f, sm_103a/f or sm_107a/f: elsewhere ptxas's message at
    each line (we compiled it as an integer reduction before)."""
    from ptx2sass.errors import CompileError
    ptx = _redux_all(arch)
    theirs = oracle.ptxas(ptx, arch)
    assert not theirs.ok and "Instruction 'redux.f32' not supported" in theirs.stderr
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, arch)
    assert f"Instruction 'redux.f32' not supported on .target '{arch}'" in str(err.value)


# --- sm_103, sm_121 and the a/f variants ptxas 13.5 accepts ---------------------------------
import functools  # noqa: E402
import os  # noqa: E402
import io  # noqa: E402

from elftools.elf.elffile import ELFFile  # noqa: E402

from ptx2sass.encoder.cubin import read_cubin  # noqa: E402
from tools.emu_testing import ZLUDA_DIR, zluda_manifest, zluda_ptx  # noqa: E402

NEW_TARGETS = ["sm_100f", "sm_103", "sm_103a", "sm_103f", "sm_110", "sm_110a", "sm_110f",
               "sm_120f", "sm_121", "sm_121a", "sm_121f"]


def _cubin_facts(cubin: bytes) -> dict:
    """What the driver reads off a cubin: ELF flags, sections (Mercury ones aside: ours has
    none), symbols, each kernel's `.nv.info` records (exit offsets aside) and the module's."""
    c = read_cubin(cubin)
    elf = ELFFile(io.BytesIO(cubin))

    def rec(r):
        return r.name, r.value.hex() if isinstance(r.value, bytes) else r.value
    return dict(e_flags=c.e_flags,
                sections=[s.name for s in elf.iter_sections() if "merc" not in s.name],
                symbols=[s.name for s in elf.get_section_by_name(".symtab").iter_symbols()],
                kernels=[[rec(r) for r in k.attributes if r.name != "EXIT_INSTR_OFFSETS"] for k in c.kernels],
                module=[r.name for r in c.module_attributes])


_ZLUDA = [e for e in zluda_manifest() if "ptxas_error" not in e] if (ZLUDA_DIR / "manifest.json").is_file() else []
_FACT_SAMPLE = _ZLUDA[::30]


def _source(name: str) -> str:
    if name == "vecadd":
        return (REPO / "examples" / "vecadd.ptx").read_text()
    return zluda_ptx(next(e for e in _ZLUDA if e["name"] == name))


@functools.cache
def _base_facts_match(name: str, base: str) -> bool:
    ptx = _source(name)
    return _cubin_facts(compile_ptx(ptx, base)) == _cubin_facts(oracle.ptxas(ptx, base).output)


@pytest.mark.parametrize("arch", NEW_TARGETS)
def test_new_targets_cubin_facts_are_ptxas_s(arch):
    """vecadd and a ZLUDA sample: e_flags, sections, symbols and `.nv.info` records of our
    cubin equal ptxas's for the same `-arch` (sm_103 is sm_100's, sm_121 sm_120's), on every
    kernel whose cubin facts we already match on the base arch (others differ by code:
    callees kept, collectives' registers; tracked on sm_100/sm_120)."""
    base = "sm_120" if arch.startswith("sm_12") else "sm_100"
    sources = ["vecadd"] + [e["name"] for e in _FACT_SAMPLE]
    compared = 0
    for name in sources:
        ptx = _source(name)
        theirs = oracle.ptxas(ptx, arch)
        if not theirs.ok:
            continue
        if not _base_facts_match(name, base):
            continue
        assert _cubin_facts(compile_ptx(ptx, arch)) == _cubin_facts(theirs.output), name
        compared += 1
    assert compared >= len(sources) - 3, compared


_ZLUDA_STRIDE = 1 if os.environ.get("PTX2SASS_SAMPLE") == "all" else 12


def _new_target_cases():
    for arch, start in (("sm_103", 0), ("sm_110", 3), ("sm_121", 6)):
        for e in _ZLUDA[start % _ZLUDA_STRIDE::_ZLUDA_STRIDE]:
            yield pytest.param(e, arch, id=f"{e['name']}-{arch}")


@pytest.mark.parametrize("entry, arch", list(_new_target_cases()))
def test_zluda_on_new_targets_with_our_cubin(entry, arch):
    """tests/test_codegen_zluda.py's bar on sm_103 and sm_121: nvdisasm (for that arch) reads
    back exactly our instructions and control codes; the emulator gives the hardware's
    output with no hazard."""
    from test_codegen_zluda import PTXAS_REJECTS, test_zluda_kernel_with_our_cubin as check
    if entry["name"] in PTXAS_REJECTS or not oracle.ptxas(zluda_ptx(entry), arch).ok:
        pytest.skip(f"ptxas rejects it for {arch}")
    check(entry, arch)


def _block_reduce_hazards(mutate=None) -> list[str]:
    """ptxas's sm_100 cubin of the llvm corpus's block_reduce_debug (`@!P0 LDG R6` then
    `@P0 IMAD.MOV.U32 R6, RZ, RZ, RZ` before the wait), run with the hazard check."""
    import llvm_corpus as lc
    from ptx2sass.emu.loader import load_program
    entry = next(k for k in lc.manifest() if k["file"] == "block_reduce_debug.ptx")
    cubin = oracle.ptxas((lc.LLVM_DIR / entry["file"]).read_text(), "sm_100").output
    program = load_program(cubin, entry["entry"])
    if mutate:
        program.instructions = mutate(list(program.instructions))
    data = lc.inputs(entry)
    params = [data[p["name"]] if p["kind"] == "buffer" else lc._scalar(p) for p in entry["params"]]
    res = run(cubin, entry["entry"], tuple(entry["grid"]), tuple(entry["block"]), params, program=program)
    return [str(h) for h in res.hazards]


def test_exclusive_guards_do_not_overwrite_each_other():
    """A write guarded by @P0 does not overwrite the pending result of an `@!P0` load (no lane
    in common, P0 unchanged): no hazard on ptxas's code; with both guarded by @!P0 (the same
    lanes) the overwrite is caught."""
    assert _block_reduce_hazards() == []

    def same_sense(instructions):
        from dataclasses import replace as dc_replace
        out = []
        for off, ins in instructions:
            if ins.opcode == "IMAD" and ins.guard is not None and not ins.guard.inv and ins.guard.file == "P" \
                    and ins.operands[0].file == "R" and ins.operands[0].index == 6:
                ins = dc_replace(ins, guard=dc_replace(ins.guard, inv=True))
            out.append((off, ins))
        return out
    hazards = _block_reduce_hazards(same_sense)
    assert any("overwrites R6 while LDG" in h for h in hazards), hazards


# --- sm_100's own latency table, audited on ptxas's sm_100 cubins ---------------------------
# ZLUDA plus the triton/llvm kernels whose rows differ from sm_120's table (tensor cores,
# IMAD.WIDE addends, uniform sources, FP64, CREDUX, guarded writes)
_AUDIT_NAMES = {"triton": {"matmul_tf32", "flash_attn_fwd", "transpose", "float64_ops", "libdevice_math",
                           "matmul_int8"},
                "llvm": {"block_reduce_debug", "safe_checks", "atomics", "int64_rows", "divide", "calls"}}


@pytest.fixture(scope="module")
def sm100_audit():
    from tools import latency_audit as la
    a = la.run_audit(("zluda", "triton", "llvm"), names={"zluda": None, **_AUDIT_NAMES}, arch="sm_100")
    if a.kernels < 150:
        pytest.skip(f"only {a.kernels} launches audited (corpus or oracle missing)")
    return a


def test_sm100_latency_table_passes_ptxas_s_cubins(sm100_audit):
    """sched/latency/blackwell_sm100.json: no hazard in ptxas's sm_100 cubins (sm_120's table
    flagged HMMA/IMMA/LEA/IMAD/uniform-register distances there) and every opcode ptxas
    scoreboards is variable. (Nothing lower than ptxas's minimum distance holds over the
    whole corpora, `python -m tools.latency_audit --arch sm_100 --corpus zluda --corpus
    triton --corpus llvm`; a sample's minimum can be higher than the corpora's.)"""
    from tools import latency_audit as la
    assert not sm100_audit.skipped, sm100_audit.skipped[:3]
    assert not sm100_audit.hazards, sm100_audit.hazards[:5]
    fixed_sb, var_nosb = la.scoreboard_findings(sm100_audit)
    assert not fixed_sb, fixed_sb
    assert not [r for r in var_nosb if r[3]], var_nosb
