"""The real-world corpus (tests/corpus/realworld, built by tools/harvest_realworld.py from
CUDA C++ through PyPI's nvcc + CCCL and from Numba): every module that ptxas accepts either
compiles with ptx2sass, and then each launchable kernel writes ptxas's bytes in the emulator
on the same random inputs (or still differs, for the bugs listed in WRONG_RESULTS), or is
refused with a clean ptxas-style message listed in GAPS (what we do not support yet) or BUGS
(internal errors, run as strict xfails). A module ptxas refuses must be refused by us too.

PTX2SASS_SAMPLE bounds the module sweep: default SAMPLE_DEFAULT modules spread over the
sm_89 modules (the arch the emulator runs); a number N: N modules; `all`: every module.
Figures for the whole corpus, tuning and held-back parts apart: tools/realworld_report.py.
"""
from __future__ import annotations

import os
import re

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.errors import CompileError
from tools import realworld as rw
from tools.corpora import held_back

MODULES = rw.manifest()
SAMPLE_DEFAULT = 13

# Module key (source without `src/`; a Numba kernel as `numba_kernels.py:name`), optionally
# `@arch` -> (text our refusal must contain, why). Looked up with the arch first.
GAPS: dict[str, tuple[str, str]] = {
}

# Internal errors (bugs) on modules ptxas accepts: strict xfails until fixed.
BUGS: dict[str, str] = {
}

# Kernels whose results in the emulator differ from ptxas's cubin's (bugs): the test asserts
# they still differ, so it fails once fixed (then remove the entry).
WRONG_RESULTS: dict[str, str] = {
}

# Kernels whose ptxas cubin the emulator cannot run (emulator gaps, issue 16 item 2): the
# comparison is skipped, and the test fails once the emulator runs them (update the table).
EMU_GAPS = {
}

CLEAN_MESSAGE = re.compile(r"^(\S+\.ptx(, line \d+)?; )?(error|fatal) +: \S")


def module_key(m: dict) -> str:
    return m["source"].removeprefix("src/")


def _lookup(table: dict, m: dict):
    key = module_key(m)
    return table.get(f"{key}@{m['arch']}", table.get(key))


def _entry_gap(entry: str, arch: str = ""):
    """Why `entry`'s ptxas cubin cannot run (keys: a kernel name, or `name@arch` for one arch)."""
    for key, why in EMU_GAPS.items():
        name, _, only = key.partition("@")
        if (not only or only == arch) and (entry == name or re.search(rf"\d{name}B\d", entry)):
            return why
    return None


def _sample() -> list[dict]:
    setting = os.environ.get("PTX2SASS_SAMPLE", "")
    ordered = sorted(MODULES, key=lambda m: (m["arch"] != "sm_89", rw.module_id(m)))
    if setting == "all":
        return ordered
    count = int(setting) if setting.isdigit() else SAMPLE_DEFAULT
    pool = [m for m in ordered if m["arch"] == "sm_89"] if count <= len(ordered) // 4 else ordered
    stride = max(1, len(pool) // count)
    return pool[::stride][:count]


def test_manifest_matches_files():
    listed = {m["ptx"] for m in MODULES if m["ptx"]}
    on_disk = {str(p.relative_to(rw.CORPUS)) for p in rw.CORPUS.rglob("*.ptx")}
    assert listed == on_disk
    assert len(MODULES) >= 100 and sum(len(m.get("kernels", [])) for m in MODULES) >= 200


def test_held_back_split_is_the_content_hash():
    for m in MODULES:
        if m["frontend"] == "nvcc":
            assert m["held_back"] == held_back(rw.CORPUS / m["source"]), m["source"]
    assert any(m["held_back"] for m in MODULES) and not all(m["held_back"] for m in MODULES)


def test_tables_name_real_modules():
    keys = {module_key(m) for m in MODULES} | {f"{module_key(m)}@{m['arch']}" for m in MODULES}
    assert set(GAPS) <= keys and set(BUGS) <= keys
    entries = {k["entry"] for m in MODULES for k in m.get("kernels", [])}
    assert set(WRONG_RESULTS) <= entries
    for name in (key.partition("@")[0] for key in EMU_GAPS):
        assert any(e == name or re.search(rf"\d{name}B\d", e) for e in entries), name


@pytest.mark.slow
@pytest.mark.parametrize("module", [
    pytest.param(m, id=rw.module_id(m),
                 marks=[pytest.mark.xfail(strict=True, reason=_lookup(BUGS, m))] if _lookup(BUGS, m) else [])
    for m in _sample()])
def test_module_compiles_and_matches_ptxas(module):
    outcome = rw.measure(module)
    assert outcome.ours != "bug", outcome.message
    if outcome.ptxas == "refused":
        assert outcome.ours != "accepted", outcome.message
        return
    assert outcome.ptxas == "accepted", module.get("refused_by_nvcc")
    gap = _lookup(GAPS, module)
    if gap is not None:
        assert outcome.ours == "gap", f"listed as a gap ({gap[1]}) but {outcome.ours}: remove it from GAPS"
        assert gap[0] in outcome.message and CLEAN_MESSAGE.match(outcome.message), outcome.message
        return
    assert outcome.ours == "accepted", outcome.message
    for k in outcome.kernels:
        why = _entry_gap(k.entry, module["arch"])
        if why is not None and k.emu != "not-run":
            assert k.emu == "ptxas-fault", f"{k.entry}: the emulator now runs it ({k.emu}): remove it from EMU_GAPS"
            continue
        if k.entry in WRONG_RESULTS and k.emu != "not-run":
            assert k.emu == "differ", f"{k.entry}: now {k.emu}: remove it from WRONG_RESULTS"
            continue
        assert k.emu in ("match", "not-run"), f"{k.entry}: {k.emu} {k.detail}"


SURFACE_STORE = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 s)
{
  .reg .b16 %rs<2>; .reg .b32 %r<3>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [s];
  mov.b32 %r1, 0; mov.b32 %r2, 0; mov.b16 %rs1, 1;
  OP
  ret;
}
"""


@pytest.mark.parametrize("op", ["sust.b.2d.v4.b8.trap [%rd1, {%r1, %r2}], {%rs1, %rs1, %rs1, %rs1};",
                                "sured.b.add.2d.u32.trap [%rd1, {%r1, %r2}], %r1;"])
def test_surface_stores_compile_as_ptxas_writes_them(op):
    """sust/sured have no destination: their first operand is the surface address. Before,
    the frontend took it for a destination and refused 'destination operand must be a
    register', which ptxas (accepting the module) contradicts; with a handle in a register
    they now compile to the opcode ptxas writes (isel/texture.py)."""
    ptx = SURFACE_STORE.replace("OP", op)
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    opcode = lambda cubin: sorted(set(re.findall(r"\b(SUST|SURED)\b", oracle.nvdisasm(cubin))))   # noqa: E731
    assert opcode(codegen.compile_ptx(ptx, "sm_89", "surf.ptx")) == opcode(theirs.output) != []


BALLOT = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 inp, .param .u64 outp)
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [inp]; ld.param.u64 %rd2, [outp];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  and.b32 %r6, %r2, 1;
  setp.ne.s32 %p1, %r6, 0;
  vote.sync.ballot.b32 %r7, %p1, 255;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r7;
  ret;
}
"""


def test_ballot_with_a_constant_partial_mask_is_ptxas_s():
    """With every lane active, `vote.sync.ballot` under mask 0xff holds every active lane's
    bit in ptxas's cubin (a plain VOTE.ANY); ours ANDed the ballot with the mask (found while
    tracing the real-world `tile_shuffle_ops` difference)."""
    import numpy as np
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    x = (np.arange(32, dtype=np.uint32) * 7 + 3)
    outs = []
    for cubin in (oracle.ptxas(BALLOT, "sm_89").output, codegen.compile_ptx(BALLOT, "sm_89", "b.ptx")):
        out = np.zeros(32, np.uint32)
        run(cubin, "k", (1, 1, 1), (32, 1, 1), [x.copy(), out])
        outs.append(out)
    assert outs[0][0] == sum(1 << i for i in range(32) if x[i] & 1)     # the meaning, from ptxas
    assert (outs[1] == outs[0]).all(), [hex(v) for v in outs[1][:4]]


def _module(key: str) -> dict:
    name, _, arch = key.partition("@")
    return next(m for m in MODULES if module_key(m) == name and m["arch"] == arch)


def test_sm90_collective_warpsync_runs_as_ptxas_s_tiles():
    """ptxas's sm_90 cubin of cooperative groups' 8-lane tile ballot/any/all brackets the
    diverged path's VOTE in `WARPSYNC.COLLECTIVE R2, label` ... `ENDCOLLECTIVE`: the emulator
    read the label as the mask operand (a fault). It now runs each mask's lanes apart, as for
    WARPSYNC.EXCLUSIVE, and ptxas's cubin writes what ours (checked against a NumPy model of
    the tile vote in tests/test_warp_runtime_mask.py) writes."""
    outcome = rw.measure(_module("coop_groups.cu@sm_90"), emu_archs=("sm_90",))
    ran = {k.entry: (k.emu, k.detail) for k in outcome.kernels}
    tile = next(e for e in ran if "tile_shuffle_ops" in e)
    assert ran[tile][0] == "match", ran[tile]
    assert all(v[0] == "match" for v in ran.values()), ran


def test_sm90_lepc_with_a_label_is_the_return_address():
    """ptxas's sm_90 calls to malloc/free (Thrust's `per_thread_sort`) set the return
    address with `LEPC R20, label` (the label's address, no add after it); the emulator took
    LEPC's own address, so `malloc` returned into the call again and the next one asked for
    127 TiB. ptxas's cubin now runs and writes what ours writes."""
    outcome = rw.measure(_module("thrust_device.cu@sm_90"), emu_archs=("sm_90",))
    ran = {k.entry: (k.emu, k.detail) for k in outcome.kernels}
    assert ran["per_thread_sort"][0] == "match", ran
    assert all(v[0] == "match" for v in ran.values()), ran


def test_sm120_uniform_clock_read_runs():
    """ptxas's sm_120 code reads `%globaltimer` into a uniform register pair (`CS2UR UR10,
    SR_GLOBALTIMERLO`: `cuda::barrier`'s timed wait in async_copy.cu, retargeted from sm_89);
    the emulator had no CS2UR. ptxas's cubin now runs and writes what ours writes."""
    module = next(m for m in rw.retargeted("sm_120") if module_key(m) == "async_copy.cu")
    outcome = rw.measure(module, emu_archs=("sm_120",))
    assert outcome.ptxas == outcome.ours == "accepted", outcome.message
    ran = {k.entry: (k.emu, k.detail) for k in outcome.kernels}
    assert all(v[0] == "match" for v in ran.values()) and ran, ran


@pytest.mark.parametrize("source", ["shared_mem.cu", "warp_intrinsics.cu"])
def test_sm120_retargeted_modules_compile_and_match_ptxas(source):
    """The sm_89 PTX retargeted to sm_120: our selector's LEA.HI.X.SX32 (a sign-extended
    index's high address word) had no sm_120 form (ptxas's sm_120 code never showed one;
    sm_120's nvdisasm reads the word: tools/isa_seeds/lea_hi_x_sx32_sm120.words), and
    `__vabsdiffu4` selected VABSDIFF4, which sm_120 lacks: both internal errors."""
    module = next(m for m in rw.retargeted("sm_120") if module_key(m) == source)
    outcome = rw.measure(module, emu_archs=("sm_120",))
    assert outcome.ptxas == "accepted"
    assert outcome.ours == "accepted", outcome.message
    ran = {k.entry: (k.emu, k.detail) for k in outcome.kernels}
    assert ran and all(v[0] == "match" for v in ran.values()), ran


@pytest.mark.parametrize("key,entry", [("complex_fft.cu@sm_89", "complex_double_ops"),
                                       ("complex_fft.cu@sm_90", "complex_double_ops"),
                                       ("norm_half2.cu@sm_90", "half2_math_functions"),
                                       ("norm_half2.cu@sm_120", "half2_math_functions"),
                                       ("complex_fft.cu@sm_75", "complex_double_ops"),
                                       ("int8_dot.cu@sm_75", "quantize_int8"),
                                       ("stencil3d_params.cu@sm_75", "scalar_widths"),
                                       ("graph_hash.cu@sm_75", "spin_lock_ledger"),
                                       ("atomic_widths.cu@sm_120", "half_pairs"),
                                       ("intrinsics_misc.cu@sm_89", "k_halfmath"),
                                       ("intrinsics_misc.cu@sm_90", "k_half_atomics"),
                                       ("intrinsics_misc.cu@sm_86", "k_halfmath"),
                                       ("batched_linalg.cu@sm_80", "pcr_tridiag_smem"),
                                       ("batched_linalg.cu@sm_89", "pcr_tridiag_smem"),
                                       ("batched_linalg.cu@sm_75", "pcr_tridiag_smem"),
                                       ("cub_block_more.cu@sm_90", "merge_sort_partial_tile")])
def test_ptxas_forms_the_tables_lacked_decode(key, entry):
    """ptxas writes `LEA.X R3, R25, 0x3ff00000, 0x14, P2` (cuda::std::complex<double>'s
    division) on sm_80..90 and `HSET2.BF.EQ.AND R, R, imm, imm, PT` (h2log2) on sm_90 and
    sm_120 (the sm_89 PTX retargeted), and on sm_75 (retargeted) also `FFMA R, R, UR4, RZ`
    and `F2F.F64.F32 R, c[0x0][0x180]`, and `STG.E.64.STRONG.SYS [UR4], R2` (a volatile store
    to a module variable, graph_hash.cu), and on sm_120 `QSPC.E.S P0, RZ, [R4.64+UR10]` (a generic
__half2 atomicAdd's space test, atomic_widths.cu); the tables had no such forms, so the emulator could
    not run ptxas's cubin (tools/isa_seeds/lea_x_immediate.words, realworld_open9_sm*.words, turing_stg_ur.words, realworld31_sm120.words).
    intrinsics_misc.cu: `HFMA2 R5, R2.reuse.H1_H1, R2.H0_NH1, R5` (__hcmadd) on sm_89 and
    `HADD2.BF16_V2 R4, R5, 2, 2`, `F2FP.BF16.F32.PACK_AB R0, R0, 1` (bf16 atomicAdd) on sm_90
    (realworld32_*.words); on sm_86 the emulator read `.H0_NH1` as no selector: a mismatch.
    batched_linalg.cu: `@!UP0 ULEA UR6, UR4, 0x400, 0x8` (a shared double buffer's half picked
    by a uniform predicate) on sm_80/86/89 and sm_75 (retargeted; realworld36_{ampere,turing}.words).
    cub_block_more.cu: `VIADDMNMX R9, R16, R8, UR5, PT` (BlockMergeSort's partial tile) on sm_90
    (realworld37_hopper.words)."""
    name, _, arch = key.partition("@")
    module = _module(key) if arch not in ("sm_75", "sm_120") else \
        next(m for m in rw.retargeted(arch) if module_key(m) == name)
    outcome = rw.measure(module, emu_archs=(module["arch"],))
    ran = {k.entry: (k.emu, k.detail) for k in outcome.kernels}
    assert ran[entry][0] == "match", ran[entry]


def test_annotations_reach_kernels_behind_attribute_macros(tmp_path):
    """`extern "C" __global__ void CLUSTER_OF_2 name(` (a `__cluster_dims__` only sm_90 gets,
    hopper_cluster_pdl.cu) was not read as a kernel: its annotation went to the next kernel,
    whose own then replaced it, so `dsmem_histogram` ran nowhere. Now the macro is skipped,
    and two annotations landing on one kernel are an error."""
    from tools.harvest_realworld import HarvestError, cuda_runs
    src = tmp_path / "k.cu"
    src.write_text('//@run {"grid": 1}\nextern "C" __global__ void CLUSTER_OF_2 first(int* p) {}\n'
                   '//@run {"grid": 2}\nextern "C" __global__ void __launch_bounds__(64) second(int* p) {}\n')
    assert cuda_runs(src) == {"first": {"grid": 1}, "second": {"grid": 2}}
    src.write_text('//@run {"grid": 1}\nextern "C" __global__ void lower_macro first(int* p) {}\n'
                   '//@run {"grid": 2}\nextern "C" __global__ void second(int* p) {}\n')
    with pytest.raises(HarvestError, match="second annotation for second"):
        cuda_runs(src)
    annotated = {k["entry"] for m in MODULES if m["source"] == "src/hopper_cluster_pdl.cu"
                 for k in m["kernels"] if k["run"]}
    assert "dsmem_histogram" in annotated


def test_quality_bench_launches_the_annotated_cluster():
    """bench/quality.py's real-world launches dropped the annotation's `"cluster"`: sm_90
    cluster kernels ran as clusters of one CTA (cluster_dsmem's, measured so) or faulted
    (hopper_cluster_pdl's cluster_split_barrier reads its partner CTA's tile: skipped)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("quality_bench", rw.REPO / "bench" / "quality.py")
    quality = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quality)
    corpus = quality.Realworld()
    corpus.arch = "sm_90"
    entry = next(e for e in corpus.entries() if e["entry"] == "cluster_split_barrier")
    _, ptx, name, filename = corpus.describe(entry)
    result, outputs = corpus.launch(entry, codegen.compile_ptx(ptx, "sm_90", filename))
    assert result is not None, outputs


def test_splicing_new_sources_keeps_every_other_module():
    """`harvest_realworld --only STEM`'s manifest: the committed one with STEM's modules
    replaced, in source order (rebuilt from the committed manifest, it is that manifest)."""
    import json
    from tools.harvest_realworld import splice
    manifest = json.loads((rw.CORPUS / "manifest.json").read_text())
    stems = ["flash_tile", "async_ring"]
    fresh = [dict(m) for m in manifest["modules"] if m["source"] in ("src/flash_tile.cu", "src/async_ring.cu")]
    assert len(fresh) == 8
    assert splice(manifest, fresh[::-1], stems) == manifest
    without = splice(manifest, [], stems)
    assert len(without["modules"]) == len(manifest["modules"]) - 8
