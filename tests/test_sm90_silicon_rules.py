"""Timing rules an H200 taught us (GPU runs 5-8, docs/gpu/2026-11-27-h200-sm90.md): cubins of
ours that the emulator ran right but the GPU did not, bisected on silicon to one instruction
each by stalling single instructions (`python -m tools.gpu_check variants`):

- LDGSTS reads its source-size predicate as late as a guard (13 cycles after an ISETP/PLOP3);
  ours read it 2-7 cycles after and the copy zero-filled (Triton matmul_f16/int8/w8s4);
- R2UR's results (UR and predicate) come later than the generic uniform rule said: ours fed
  SYNCS.EXCH the UR 6 cycles after and the launch faulted (mbarrier waterfall loops);
- a DMMA issued 4 cycles after the MOV of a source computed a wrong product;
- an MMA's result lands 16-24 cycles after issue, also where nothing reads it: an ALU write
  into one of its registers meanwhile is overwritten (GPU runs 21-23: a hang, an illegal
  instruction, address faults; tests/test_fixed_latency_waw.py);
- a YIELD lets lanes waiting at a BSYNC go on without the others: a full-mask
  `match.any.sync.b64` after a loop with a YIELD whose lanes leave at different iterations
  ran with the warp split in the two groups that left apart (fuzz seed 9300296; GPU run 12:
  `activemask` there gave the two groups' masks; the same cubin with the YIELD made a NOP,
  or with `bar.warp.sync -1` before the MATCH, was right). ptxas guards every full-mask
  collective that may follow a YIELD (BRA.DIV to a WARPSYNC path); ours gets a WARPSYNC.
  The emulator still joins the warp at that BSYNC, so that rule is checked on the listing.

`tests/gpu_regressions/*.h200-rejected.cubin` are our cubins that the H200 rejected: the
emulator's hazard checker must flag each (the rules are in the latency tables it shares with
the scheduler), and today's compile of the same PTX must be clean and compute what ptxas's does.
"""
import copy
import re
from pathlib import Path

import pytest

from ptx2sass.sched.latency import model_for
from tests import triton_corpus

HERE = Path(__file__).resolve().parent / "gpu_regressions"


def test_latency_rules():
    hopper = model_for("sm_90")
    assert hopper.read_latency("ISETP", (), "P", "LDGSTS") >= hopper.GUARD_FIXED
    assert model_for("sm_89").read_latency("ISETP", (), "P", "LDGSTS") >= model_for("sm_89").GUARD_FIXED
    assert hopper.read_latency("R2UR", (), "UR", "SYNCS") >= 13
    assert hopper.read_latency("R2UR", (), "P", "PLOP3") >= 8
    assert hopper.read_latency("MOV", (), "R", "DMMA") > 4
    # a plain predicate source elsewhere keeps its short latency
    assert hopper.read_latency("ISETP", (), "P", "SEL") < hopper.GUARD_FIXED


def _hazards(result) -> list[str]:
    return [str(h) for h in result.hazards]


def _flagged(ptx_path: Path, cubin: bytes) -> bool:
    """The emulator's hazard checker flags the cubin, or the emulator refuses to run it."""
    from ptx2sass.emu import EmuFault
    try:
        return bool(_hazards(_fuzz_run(ptx_path, cubin)))
    except EmuFault:
        return True


def _fuzz_run(ptx_path: Path, cubin: bytes):
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import execute, load
    case = read_case(ptx_path.read_text())
    return execute(load(cubin, case.kernel), case, hazard_check=True)


@pytest.mark.parametrize("stem", [
    "r2ur_mbarrier_waterfall_s9300361", "dmma_source_after_mov_s9300311",
    # an MMA's unread result landing over a later ALU write (tests/test_fixed_latency_waw.py):
    # run 21 hung (9400186), raised ILLEGAL_INSTRUCTION (the probe), INVALID_ADDRESS_SPACE (9400163)
    "mma_dead_result_waw_s9400186", "mma_dead_result_waw_s9400163", "hmma_f32_probe_s9620049",
    # B2R.RESULT 1 cycle after BAR.RED.POPC (GPU run 27): the H200 gave the popc count 0
    "bar_red_b2r_s9500528", "bar_red_b2r_s9500604",
    # the next lane's R2UR overwrote UBLKCP's uniform sources 15 cycles after it (run 27: hangs)
    "ublkcp_ur_late_read_s9500785", "ublkcp_ur_late_read_s9500466"])
def test_rejected_fuzz_cubin_is_flagged_and_ours_is_clean(stem):
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ours, compile_ptxas, execute, load
    ptx = HERE / f"{stem}.ptx"
    rejected = (HERE / f"{stem}.h200-rejected.cubin").read_bytes()
    assert _flagged(ptx, rejected), "the emulator misses what the H200 rejected"
    case = read_case(ptx.read_text())
    ours = compile_ours(case)
    result = execute(load(ours, case.kernel), case, hazard_check=True)
    assert not _hazards(result)
    theirs, err = compile_ptxas(case)
    assert theirs is not None, err
    want = execute(load(theirs, case.kernel), case, hazard_check=False)
    assert result.buffers["out"] == want.buffers["out"]


_BAR_RED_PTX = """
.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 q)
{{
  .reg .u32 %r<6>; .reg .pred %p<2>; .reg .u64 %d<2>;
  ld.param.u64 %d0, [p];
  ld.param.u32 %r5, [q];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p0, %r1, %r5;
  bar.red.popc.u32 %r2, 0, %p0;
  bar.red.or.pred %p1, 1, %p0;
  selp.u32 %r3, 1, 0, %p1;
  add.u32 %r2, %r2, %r3;
  mul.wide.u32 %d1, %r1, 4;
  add.u64 %d1, %d1, %d0;
  st.global.u32 [%d1], %r2;
  ret;
}}
"""


def _bar_to_b2r_cycles(listing: str) -> list[int]:
    """Cycles from each BAR.RED to the B2R.RESULT that reads its result (stall counts of the
    instructions between, from the control words of an `nvdisasm -hex` listing)."""
    words = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);\s*/\* 0x[0-9a-f]+ \*/\s*/\* (0x[0-9a-f]+) \*/", listing)
    out, since = [], None
    for text, hi in words:
        if since is not None and "B2R" in text:
            out.append(since)
            since = None
        stall = int(hi, 16) >> 41 & 0xF
        if "BAR.RED" in text:
            since = 0
        if since is not None:
            since += stall
    return out


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_b2r_reads_a_reduction_as_late_as_ptxas(arch):
    """B2R.RESULT reads BAR.RED's result no sooner than ptxas lets it (6 cycles, 5 on sm_75:
    the tables' after_barrier); ours read it 1 cycle after and the H200 returned a popc count
    of 0 (GPU run 27, fuzz 9500528 and 9500604)."""
    import ptx2sass
    from ptx2sass import oracle
    ptx = _BAR_RED_PTX.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    want = _bar_to_b2r_cycles(oracle.nvdisasm(theirs.output))
    got = _bar_to_b2r_cycles(oracle.nvdisasm(ptx2sass.compile(ptx, arch, "k.ptx")))
    assert len(want) == len(got) == 2
    assert min(got) >= min(want), (got, want)       # ptxas's shortest distance is the floor


_BULK_PTX = """
.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q)
{{
  .reg .b32 %r<4>; .reg .b64 %d<6>; .reg .pred %p<1>;
  .shared .align 128 .b8 buf[2048];
  .shared .align 8 .b64 bar[32];
  ld.param.u64 %d0, [p];
  ld.param.u64 %d1, [q];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, buf;
  mad.lo.u32 %r1, %r0, 64, %r1;
  mov.u32 %r2, bar;
  mad.lo.u32 %r2, %r0, 8, %r2;
  mul.wide.u32 %d2, %r0, 64;
  add.u64 %d3, %d0, %d2;
  add.u64 %d4, %d1, %d2;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.shared::cta.b64 %d5, [%r2], 64;
  cp.async.bulk.prefetch.L2.global [%d3], 64;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%d3], 64, [%r2];
L:
  mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r2], 0;
  @!%p0 bra L;
  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%d4], [%r1], 64;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ret;
}}
"""


_TENSOR_PTX = """
.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 tmap)
{{
  .reg .b32 %r<3>; .reg .b64 %d<2>;
  .shared .align 128 .b8 buf[4096];
  .shared .align 8 .b64 bar[1];
  ld.param.u64 %d0, [tmap];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, buf;
  mov.u32 %r2, bar;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.shared::cta.b64 %d1, [%r2], 64;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%d0, {{%r0, %r0}}], [%r2];
  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%d0, {{%r0, %r0}}], [%r1];
  cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%d0, {{%r0, %r0}}], [%r1];
  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%d0, {{%r0, %r0}}];
  ret;
}}
"""
_ASYNC_COPIES = ("UBLKCP", "UBLKPF", "UBLKRED", "UTMALDG", "UTMASTG", "UTMAREDG", "UTMAPF")


def _bulk_read_scoreboards(listing: str) -> list[tuple[str, bool]]:
    """(opcode, sets a read scoreboard) of each bulk/tensor copy of an `nvdisasm -hex` listing."""
    words = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);\s*/\* 0x[0-9a-f]+ \*/\s*/\* (0x[0-9a-f]+) \*/", listing)
    return [(text.split()[0].split(".")[0], (int(hi, 16) >> 41 >> 8 & 7) != 7)
            for text, hi in words if text.split()[0].split(".")[0] in _ASYNC_COPIES]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_tensor_copy_sources_are_read_behind_a_scoreboard(arch):
    """The tensor copies (UTMALDG/UTMASTG/UTMAREDG/UTMAPF) read their uniform registers late
    too: ptxas gives each a read scoreboard, as it does UBLKCP (below); ours gave none."""
    import ptx2sass
    from ptx2sass import oracle
    ptx = _TENSOR_PTX.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    want = _bulk_read_scoreboards(oracle.nvdisasm(theirs.output))
    got = _bulk_read_scoreboards(oracle.nvdisasm(ptx2sass.compile(ptx, arch, "k.ptx")))
    assert len(want) == 4 and got == want and all(sb for _, sb in want)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_bulk_copy_sources_are_read_behind_a_scoreboard(arch):
    """UBLKCP/UBLKPF/UBLKRED read their uniform registers after issue (`uniform_late_readers`):
    ptxas gives each a read scoreboard that the next lane's R2UR waits on; ours gave none,
    overwrote UBLKCP's addresses 15 cycles after it, and the H200 hung (GPU run 27). Ours
    must protect them as ptxas does, and the checker flag a schedule that does not."""
    import numpy as np

    import ptx2sass
    from ptx2sass import codegen, oracle
    from ptx2sass.emu.launch import run
    ptx = _BULK_PTX.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    want = _bulk_read_scoreboards(oracle.nvdisasm(theirs.output))
    ours = ptx2sass.compile(ptx, arch, "k.ptx")
    assert _bulk_read_scoreboards(oracle.nvdisasm(ours)) == want and all(sb for _, sb in want)

    def launch(cubin):
        src, dst = np.arange(32 * 16, dtype=np.uint32), np.zeros(32 * 16, dtype=np.uint32)
        result = run(cubin, "k", (1, 1, 1), (32, 1, 1), [src, dst])
        assert (dst == src).all()
        return [str(h) for h in result.hazards]
    assert launch(ours) == [] and launch(theirs.output) == []
    if arch == "sm_90":          # the schedule of a model without the rule is flagged
        real = codegen.assign_controls

        def early(slots, lat=None, **options):
            lat = copy.copy(lat or model_for(arch))
            lat.UNIFORM_LATE_READERS = lat.UNIFORM_LATE_READERS - {"UBLKCP", "UBLKPF", "UBLKRED"}
            return real(slots, lat, **options)
        codegen.assign_controls = early
        try:
            unprotected = ptx2sass.compile(ptx, arch, "k.ptx")
        finally:
            codegen.assign_controls = real
        assert any("no read scoreboard" in h for h in launch(unprotected))


_BARRIERS = ("WARPSYNC", "BRA", "BSYNC", "BSSY", "YIELD", "EXIT", "RET", "CALL")
_COLLECTIVES = ("MATCH", "VOTE", "SHFL")     # REDUX aside: ptxas's own member-mask tests use it


def unguarded_collectives_after_yield(listing: str) -> list[str]:
    """Collectives (activemask's `VOTE.ANY R, PT, PT` aside) placed after a YIELD whose
    nearest control instruction before them is not a WARPSYNC or a BRA.DIV/BRA.CONV test."""
    bad, seen_yield, last = [], False, None
    for line in listing.splitlines():
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)(.*?);", line)
        if not m:
            continue
        op, rest = m.group(3), m.group(4)
        base = op.split(".")[0]
        if base == "YIELD":
            seen_yield = True
        if base in _COLLECTIVES and not (base == "VOTE" and rest.strip().endswith("PT, PT")):
            guarded = last is not None and (last.startswith("WARPSYNC") or ".DIV" in last or ".CONV" in last)
            if seen_yield and not guarded:
                bad.append(f"{m.group(1)} {op}{rest}")
        if base in _BARRIERS:
            last = op
    return bad


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_full_mask_collective_after_a_yield_meets_first(arch):
    """The H200's 9300296: ours must make the warp meet before the MATCH after the loop; the
    cubin the H200 got wrong had no such meeting, and ptxas's has its BRA.DIV test."""
    from ptx2sass import oracle
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ours
    ptx = HERE / "match_after_divergent_loop_s9300296.ptx"
    rejected = (HERE / "match_after_divergent_loop_s9300296.h200-rejected.cubin").read_bytes()
    assert unguarded_collectives_after_yield(oracle.nvdisasm(rejected, ())), "the checker misses it"
    case = read_case(ptx.read_text())
    case.arch = arch
    listing = oracle.nvdisasm(compile_ours(case), ())
    assert not unguarded_collectives_after_yield(listing)
    theirs = oracle.ptxas(ptx.read_text().replace("sm_89", arch), arch)
    assert theirs.ok and not unguarded_collectives_after_yield(oracle.nvdisasm(theirs.output, ()))
    # and the loop yields where ptxas's does: on sm_89, not on sm_90 (its exit does not
    # depend on the volatile load; Target.loop_yield_own_exit)
    assert ("YIELD" in listing) == ("YIELD" in oracle.nvdisasm(theirs.output, ())) == (arch == "sm_89")


def _explicit_run(cubin: bytes, case):
    from ptx2sass.fuzz.runner import execute, load
    return execute(load(cubin, case.kernel), case, hazard_check=False, reconverge="explicit")


def test_emulator_splits_the_warp_where_a_yield_released_a_bsync():
    """With explicit reconvergence the emulator now does what the H200 did to the rejected
    cubin (GPU run 12): the loop's YIELD lets the lanes waiting at the BSYNC go on, so the
    post-loop MATCH runs in the same two lane groups the GPU's activemask showed (one without
    the other, flagged as a convergence hazard); today's cubin of ours runs clean
    and computes what ptxas's does."""
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ours, compile_ptxas
    ptx = HERE / "match_after_yielding_loop_s9300296_store.ptx"
    case = read_case((HERE / "match_after_divergent_loop_s9300296.ptx").read_text())
    case.arch = "sm_90"
    rejected = (HERE / "match_after_divergent_loop_s9300296.h200-rejected.cubin").read_bytes()
    bad = _explicit_run(rejected, case)
    groups = ("0xcf5052d6", "0x30afad29")
    assert any(f"MATCH run by lanes {a} without member lanes {b}" in str(h)
               for h in bad.convergence_hazards for a, b in (groups, groups[::-1])), \
        [str(h) for h in bad.convergence_hazards]
    for source in (HERE / "match_after_divergent_loop_s9300296.ptx", ptx):
        case = read_case(source.read_text())
        case.arch = "sm_90"
        ours = _explicit_run(compile_ours(case), case)
        theirs, err = compile_ptxas(case)
        assert not [h for h in ours.convergence_hazards if "MATCH" in str(h)]
        assert ours.buffers["out"] == _explicit_run(theirs, case).buffers["out"]


def test_the_fuzzer_flags_collectives_a_yield_split():
    """The fuzzer's runner reruns our cubin with explicit reconvergence when it has warp
    collectives: the cubin the H200 got wrong (run 12) is a hazard there, though its
    optimistic run computes what ptxas's does; today's cubin of ours passes."""
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import collectives_apart, compile_ours, load, run_case
    case = read_case((HERE / "match_after_divergent_loop_s9300296.ptx").read_text())
    case.arch = "sm_90"
    rejected = (HERE / "match_after_divergent_loop_s9300296.h200-rejected.cubin").read_bytes()
    found = collectives_apart(load(rejected, case.kernel), case)
    assert found and "MATCH run by lanes" in found[0], found
    assert collectives_apart(load(compile_ours(case), case.kernel), case) is None
    outcome = run_case(case)
    assert outcome.cls == "pass", (outcome.sig, outcome.detail)


def test_guard_after_a_yielding_loop_on_sm_90():
    """9300296 with a volatile store in its loop (GPU run 13): on sm_90 both compilers now put
    a YIELD there; ours, with its WARPSYNC.ALL before the post-loop MATCH, was right on the
    H200, and the same cubin with that WARPSYNC made a NOP was wrong."""
    from ptx2sass import oracle
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ours
    ptx = HERE / "match_after_yielding_loop_s9300296_store.ptx"
    case = read_case(ptx.read_text())
    case.arch = "sm_90"
    listing = oracle.nvdisasm(compile_ours(case), ())
    theirs = oracle.nvdisasm(oracle.ptxas(ptx.read_text().replace("sm_89", "sm_90"), "sm_90").output, ())
    assert "YIELD" in listing and "YIELD" in theirs and "WARPSYNC.ALL" in listing
    assert not unguarded_collectives_after_yield(listing)
    stripped = "\n".join(x for x in listing.splitlines() if "WARPSYNC.ALL" not in x)
    assert unguarded_collectives_after_yield(stripped)


@pytest.mark.parametrize("load", ["ld.volatile.global.u32", "ld.global.u32"])
def test_collective_guard_only_where_ptxas_yields_on_sm_89(load):
    """ptxas 13.5 for sm_89: a volatile load in a loop with a per-lane exit gets a YIELD,
    and the full-mask vote after it a BRA.DIV guard; a plain loop gets neither. Ours: the
    same YIELD, a WARPSYNC only where there is one."""
    from ptx2sass import oracle
    from ptx2sass.compiler import compile as compile_ptx
    from tests.test_codegen_loop_yield import HEADER, own_exit
    ptx = HEADER + own_exit(f"{load} %r5, [%d3];\nadd.u32 %r4, %r4, %r5;", "setp.lt.u32 %p0, %r3, %r2;",
                            "vote.sync.ballot.b32 %r4, %p0, 0xffffffff;")
    theirs = oracle.nvdisasm(oracle.ptxas(ptx, "sm_89").output, ())
    ours = oracle.nvdisasm(compile_ptx(ptx, "sm_89"), ())
    yields = "YIELD" in theirs
    assert yields == ("volatile" in load) and ("BRA.DIV" in theirs) == yields
    assert ("YIELD" in ours) == yields and ("WARPSYNC" in ours) == yields
    assert not unguarded_collectives_after_yield(ours)


def test_rejected_triton_cubin_is_flagged_and_ours_is_clean():
    import ptx2sass
    entry = next(e for e in triton_corpus.manifest() if e["file"] == "matmul_f16.ptx")
    rejected = (HERE / "ldgsts_predicate_triton_matmul_f16.h200-rejected.cubin").read_bytes()
    result, _ = triton_corpus.launch(entry, rejected)
    assert any("LDGSTS" in h for h in _hazards(result))
    ours = ptx2sass.compile(open("tests/corpus/triton/matmul_f16.ptx").read(), "sm_90", "matmul_f16.ptx")
    result, ok = triton_corpus.launch(entry, ours)
    assert not _hazards(result)



@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_hmma_negated_16_bit_operand_negates_each_element(arch):
    """What an H200 computed (2026-11-27): ptxas writes the constant B = 0xbc00bc00 (-1, -1)
    of `mma.m16n8k8.f16` as `HMMA ..., -R0` with R0 = 0x3c00bc00; with A all 1.0 and C = 0
    the GPU gave D = 0 everywhere, i.e. `-R` negates each 16-bit element of (-1, +1). The
    emulator must give the same on ptxas's cubin."""
    import numpy as np
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    ptx = (HERE / "hmma_negated_b.ptx").read_text().replace("sm_90", arch)
    build = oracle.ptxas(ptx, arch)
    assert build.ok and "-R" in oracle.nvdisasm(build.output, ())
    out = np.full(128, 99.0, np.float16)
    run(build.output, "k", (1, 1, 1), (32, 1, 1), [out])
    assert set(out.tolist()) == {0.0}


def _call_relocations(cubin: bytes) -> set:
    """(type, in .rela) of the relocations of CALL.ABS targets (against FUNC symbols that are
    not kernels' own return points: the 32@lo/hi types 0x38/0x39 left out)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.relocation import RelocationSection
    import io
    elf = ELFFile(io.BytesIO(cubin))
    out = set()
    for sec in elf.iter_sections():
        if isinstance(sec, RelocationSection) and sec.name.startswith((".rel.text", ".rela.text")):
            for r in sec.iter_relocations():
                if r["r_info_type"] not in (0x38, 0x39):
                    out.add((r["r_info_type"], sec.name.startswith(".rela")))
    return out


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100", "sm_120"])
def test_call_relocation_type_is_ptxas_s(arch):
    """-g keeps `.func`s out of line, called through CALL.ABS with a relocation: its type is
    the arch's (R_CUDA_ABS47_34 in .rel up to sm_89, 0x4b in .rela from sm_90). With the sm_8x
    type our sm_90 cubins of the cuda corpus's calls.G faulted on the H200 (GPU run 14)."""
    import ptx2sass
    from ptx2sass import oracle
    ptx = Path("tests/corpus/cuda/calls.G.ptx").read_text().replace(".target sm_89", f".target {arch}")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, arch, "calls.G.ptx")
    want = _call_relocations(theirs.output)
    assert want and _call_relocations(ours) == want


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_kernel_register_count_covers_its_out_of_line_callees(arch):
    """-g keeps `.func`s out of line; they run in their caller's registers, so a kernel's
    REGCOUNT must cover every function it reaches. Ours gave call_recursive 24 registers
    while its fib_rec used 25: the H200 faulted (runs 14-18) and ran it right with 25 (run 19)."""
    import ptx2sass
    from elftools.elf.elffile import ELFFile
    import io
    from ptx2sass.encoder.cubin import read_cubin
    ptx = Path("tests/corpus/cuda/calls.G.ptx").read_text().replace(".target sm_89", f".target {arch}")
    data = ptx2sass.compile(ptx, arch, "calls.G.ptx")
    cubin = read_cubin(data)
    symbols = {s.name: i for i, s in enumerate(ELFFile(io.BytesIO(data)).get_section_by_name(".symtab").iter_symbols())}
    counts = {r.u32s()[0]: r.u32s()[1] for r in cubin.module_attributes if r.name == "REGCOUNT"}
    regs = {name: counts[i] for name, i in symbols.items() if i in counts}
    assert regs["_Z14call_recursivePKiPKjS2_Pj"] >= max(regs["_Z7fib_reci"], regs["_Z7gcd_recjj"])
    assert regs["_Z13call_noinlinePKiPi"] >= regs["_Z4mix3iii"]
    assert regs["_Z14call_many_argsPKxPKdPx"] >= regs["_Z9widen_mixxdfsh"]
