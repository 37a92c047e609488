"""The Tensor Memory Accelerator's copies on sm_90 and the blackwell archs (issues 15, 18):
`cp.async.bulk.tensor` (UTMALDG / UTMASTG), `cp.reduce.async.bulk.tensor` (UTMAREDG),
`cp.async.bulk.prefetch.tensor` (UTMAPF.L2), refused before (isel/tensor_copy.py).

The emulator cannot run the copies (the tensor map's format is not public: EmuFault), so
each test records what every issue of a UTMA* instruction names, lane by lane, in ptxas's
cubin and in ours: its mnemonic with modifiers and the values of its uniform operands by
role (the shared address and mbarrier, the coordinates, the packed im2col offsets and
multicast mask, the tensor map's address, the cache policy). ptxas's registers differ
from ours; the values in each role must not."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu import ops_bulk, registry
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.lanes import PerWarp
from ptx2sass.emu.launch import Param, forget_programs, run
from codegen_harness import assert_refused_in_ptxas_words

HEAD = """.version {v}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 tmap, .param .u32 c0, .param .u64 pol)
{{
.reg .b64 %rd<8>, %pol;
.reg .b32 %r<16>, %sa, %sb, %bar, %tx;
.reg .b16 %h<4>;
.reg .pred %p;
.shared .align 128 .b8 sbuf[8192];
.shared .align 8 .b64 mbar;
ld.param.u64 %rd1, [tmap];
ld.param.u32 %r1, [c0];
ld.param.u64 %pol, [pol];
mov.u32 %tx, %tid.x;
mov.u32 %sa, sbuf;
mov.u32 %bar, mbar;
and.b32 %r6, %tx, 3;
add.s32 %r2, %r6, 3;
add.s32 %r3, %tx, 5;
add.s32 %r4, %r6, 7;
add.s32 %r5, %tx, 9;
cvt.u16.u32 %h1, %r6;
add.u16 %h2, %h1, 2;
mad.lo.u32 %sb, %r6, 128, %sa;
mul.wide.u32 %rd2, %r6, 0;
add.s64 %rd3, %rd1, %rd2;
setp.lt.u32 %p, %tx, 20;
"""
TAIL = "ret;\n}\n"
L = "cp.async.bulk.tensor"
LOAD = ".shared::cluster.global"
MB = ".mbarrier::complete_tx::bytes"


def _coords(n: int, per_lane: bool) -> str:
    regs = ["%r1", "%r2", "%r3", "%r4", "%r5"] if per_lane else ["%r1", "7", "9", "11", "13"]
    return "{" + ", ".join((regs[1:] + regs[:1])[:n] if n < 5 else regs) + "}"


CASES = {
    # loads: dims 1-5, tile, uniform and per-lane operands
    **{f"load{n}d": f"{L}.{n}d{LOAD}{MB} [sbuf], [%rd1, {_coords(n, False)}], [mbar];" for n in range(1, 6)},
    **{f"load{n}d_lane": f"{L}.{n}d{LOAD}.tile{MB} [%sb], [%rd3, {_coords(n, True)}], [%bar];"
       for n in range(1, 6)},
    "load_hint": f"{L}.2d{LOAD}{MB}.L2::cache_hint [%sa], [%rd1, {{%r2, %r3}}], [%bar], %pol;",
    "load_multicast": f"{L}.2d{LOAD}{MB}.multicast::cluster [%sa], [%rd1, {{%r2, %r3}}], [%bar], %h2;",
    "load_multicast_hint": f"{L}.3d{LOAD}{MB}.multicast::cluster.L2::cache_hint [%sb], [%rd1, {{%r2, %r3, %r4}}], [%bar], %h1, %pol;",
    "load_im2col3": f"{L}.3d{LOAD}.im2col{MB} [%sa], [%rd1, {{%r2, %r3, %r4}}], [%bar], {{%h1}};",
    "load_im2col4": f"{L}.4d{LOAD}.im2col{MB} [%sa], [%rd1, {{%r2, %r3, %r4, %r5}}], [%bar], {{%h1, %h2}};",
    "load_im2col5": f"{L}.5d{LOAD}.im2col{MB} [%sb], [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%bar], {{%h2, %h1, %h2}};",
    # offsets past their 5 bits: ptxas's sum (off0 + off1 << 5 + off2 << 10), not masked
    # fields (found by tools/tensor_copy_variants, branch tensor33)
    "load_im2col5_wide": f"{L}.5d{LOAD}.im2col{MB} [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar], {{0x31f4, 6433, 29762}};",
    "load_im2col_multicast": f"{L}.4d{LOAD}.im2col{MB}.multicast::cluster [%sa], [%rd1, {{%r2, %r3, %r4, %r5}}], [%bar], {{%h1, %h2}}, %h2;",
    # guarded (%p: threads 0-19, none of the second warp's): a branch around, as ptxas
    "load_guarded": f"@%p {L}.2d{LOAD}{MB} [%sa], [%rd1, {{%r2, %r3}}], [%bar];",
    "store_guarded": f"@%p {L}.2d.global.shared::cta.bulk_group [%rd1, {{%r2, %r3}}], [%sa];",
    "reduce_guarded": f"@!%p cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%rd1, {{%r2, %r3, %r4}}], [%sb];",
    # stores, reductions
    **{f"store{n}d": f"{L}.{n}d.global.shared::cta.bulk_group [%rd1, {_coords(n, n % 2 == 0)}], [sbuf];"
       for n in range(1, 6)},
    "store_im2col": f"{L}.3d.global.shared::cta.im2col_no_offs.bulk_group [%rd1, {{%r2, %r3, %r4}}], [%sb];",
    "store_hint": f"{L}.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%rd1, {{%r2, %r3}}], [%sa], %pol;",
    **{f"reduce_{op}": f"cp.reduce.async.bulk.tensor.{n}d.global.shared::cta.{op}.tile.bulk_group [%rd1, {_coords(n, True)}], [%sa];"
       for n, op in ((1, "add"), (2, "min"), (3, "max"), (4, "inc"), (5, "dec"), (2, "and"), (2, "or"), (3, "xor"))},
    "reduce_im2col_hint": "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.im2col_no_offs.bulk_group.L2::cache_hint [%rd1, {%r2, %r3, %r4}], [%sb], %pol;",
    # prefetches
    **{f"prefetch{n}d": f"cp.async.bulk.prefetch.tensor.{n}d.L2.global [%rd1, {_coords(n, n > 2)}];" for n in range(1, 6)},
    "prefetch_im2col": "cp.async.bulk.prefetch.tensor.4d.L2.global.im2col [%rd1, {%r2, %r3, %r4, %r5}], {%h1, %h2};",
    "prefetch_hint": "cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint [%rd1, {%r2, %r3}], %pol;",
    "prefetch_guarded": "@%p cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r2, %r3}];",
}
ARCHS = {"sm_90": "8.0", "sm_100": "8.7", "sm_120": "8.7", "sm_100a": "8.7", "sm_120a": "8.7",
         "sm_103a": "9.0", "sm_110a": "9.0", "sm_100f": "9.0"}
G4 = ".tile::gather4"
# the sm_100a modes (PTX 8.6; refused by name before branch tensor33): gather4 / scatter4 (a
# column and four rows), im2col::w[::128] ({wHalo, wOffset}), cta_group::1/2
CASES_100A = {
    "gather4": f"{L}.2d{LOAD}{G4}{MB} [sbuf], [%rd1, {{%r1, 7, 9, 11, 13}}], [mbar];",
    "gather4_lane": f"{L}.2d{LOAD}{G4}{MB} [%sb], [%rd3, {{%r1, %r2, %r3, %r4, %r5}}], [%bar];",
    "gather4_cta": f"{L}.2d.shared::cta.global{G4}{MB} [%sb], [%rd1, {{%r5, %r2, %r3, %r4, %r1}}], [%bar];",
    "gather4_multicast": f"{L}.2d{LOAD}{G4}{MB}.multicast::cluster [%sa], [%rd1, {{%r1, %r2, 3, %r4, 5}}], [%bar], %h2;",
    "gather4_hint": f"{L}.2d{LOAD}{G4}{MB}.L2::cache_hint [%sb], [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%bar], %pol;",
    "gather4_pair": f"{L}.2d{LOAD}{G4}{MB}.cta_group::2 [%sb], [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%bar];",
    "gather4_one": f"{L}.2d{LOAD}{G4}{MB}.cta_group::1 [%sb], [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%bar];",
    "gather4_guarded": f"@%p {L}.2d{LOAD}{G4}{MB} [%sb], [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%bar];",
    "scatter4": f"{L}.2d.global.shared::cta.tile::scatter4.bulk_group [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%sb];",
    "scatter4_uniform": f"{L}.2d.global.shared::cta.tile::scatter4.bulk_group [%rd1, {{%r1, 2, 3, 4, 5}}], [sbuf];",
    "scatter4_hint": f"{L}.2d.global.shared::cta.tile::scatter4.bulk_group.L2::cache_hint [%rd1, {{%r1, %r2, %r3, %r4, %r5}}], [%sb], %pol;",
    "scatter4_add": "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile::scatter4.bulk_group [%rd1, {%r1, 2, 3, 4, 5}], [sbuf];",
    "scatter4_xor": "cp.reduce.async.bulk.tensor.2d.global.shared::cta.xor.tile::scatter4.bulk_group [%rd1, {%r1, %r2, %r3, %r4, %r5}], [%sb];",
    **{f"w{n}d": f"{L}.{n}d{LOAD}.im2col::w{MB} [%sb], [%rd1, {_coords(n, True)}], [%bar], {{%h1, %h2}};"
       for n in (3, 4, 5)},
    "w_constant": f"{L}.4d{LOAD}.im2col::w{MB} [sbuf], [%rd1, {{1, 2, 3, 4}}], [mbar], {{0xffff, 0x1f}};",
    "w_mixed": f"{L}.3d{LOAD}.im2col::w{MB} [sbuf], [%rd1, {{1, 2, 3}}], [mbar], {{9, %h2}};",
    "w128": f"{L}.4d{LOAD}.im2col::w::128{MB} [%sb], [%rd1, {{%r1, %r2, %r3, %r4}}], [%bar], {{%h2, %h1}};",
    "w_multicast": f"{L}.4d{LOAD}.im2col::w{MB}.multicast::cluster [%sa], [%rd1, {{%r1, %r2, %r3, %r4}}], [%bar], {{%h1, %h2}}, %h2;",
    "w_pair": f"{L}.4d{LOAD}.im2col::w{MB}.cta_group::2 [%sa], [%rd1, {{%r1, %r2, %r3, %r4}}], [%bar], {{%h1, 3}};",
    "w_cta": f"{L}.3d.shared::cta.global.im2col::w{MB} [%sb], [%rd1, {{%r1, %r2, %r3}}], [%bar], {{%h1, %h2}};",
    "tile_pair": f"{L}.1d{LOAD}{MB}.cta_group::2 [%sb], [%rd1, {{%r3}}], [%bar];",
    "tile_one": f"{L}.2d{LOAD}{MB}.cta_group::1 [%sb], [%rd1, {{%r3, %r1}}], [%bar];",
    "tile_multicast_pair": f"{L}.2d{LOAD}{MB}.multicast::cluster.cta_group::2 [%sa], [%rd1, {{%r2, %r3}}], [%bar], %h1;",
    "im2col_pair": f"{L}.3d{LOAD}.im2col{MB}.cta_group::2 [%sa], [%rd1, {{%r2, %r3, %r4}}], [%bar], {{%h1}};",
    "prefetch_gather4": f"cp.async.bulk.prefetch.tensor.2d.L2.global{G4} [%rd1, {{%r1, %r2, %r3, %r4, %r5}}];",
    "prefetch_gather4_hint": f"cp.async.bulk.prefetch.tensor.2d.L2.global{G4}.L2::cache_hint [%rd1, {{%r1, 2, 3, 4, 5}}], %pol;",
    "prefetch_w": "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col::w [%rd1, {%r1, %r2, %r3}], {%h1, %h2};",
    "prefetch_w128": "cp.async.bulk.prefetch.tensor.5d.L2.global.im2col::w::128 [%rd1, {%r1, %r2, %r3, %r4, %r5}], {%h2, 7};",
}
CASES.update(CASES_100A)


def kernel(case: str, arch: str = "sm_90") -> str:
    return HEAD.format(v=ARCHS[arch], arch=arch) + CASES[case] + "\n" + TAIL


def issues(cubin: bytes, params=None) -> list[tuple]:
    """(mnemonic, block values, extra, map address, policy) per issue of a UTMA* copy,
    sorted (the ELECT loop's order of lanes is ptxas's too, but a per-lane loop's is free)."""
    seen = []
    handlers, _ = registry.load_all()

    def record(w, s, active, mask):
        if not w.per_warp:
            raise PerWarp()
        lanes = np.nonzero(np.broadcast_to(mask, (w.width,)))[0]
        if not len(lanes):          # (not issued: its guard holds in no lane)
            return None
        lane = int(lanes[0])
        ins = s.ins
        dims = int(next(m for m in ins.modifiers if m.endswith("D"))[0])
        if {"GATHER4", "SCATTER4"} & set(ins.modifiers):      # a column and four rows
            dims = 5
        first = {"UTMALDG": 2, "UTMAPF": 0}.get(ins.opcode, 1)
        block = ops_bulk._ureg(ins.operands[0])
        values = [ops_bulk._uvalue(w, type(block)("UR", block.index + k), lane)
                  for k in range(first + dims)]
        values[:first] = [v & 0xFFFFFF for v in values[:first]]    # (shared: the CTA rank's bits off)
        extra = policy = None
        for op in ins.operands[2:]:
            if getattr(op, "file", None) == "UR":
                extra = ops_bulk._uvalue(w, op, lane)
            elif getattr(op, "desc", None) is not None:
                policy = ops_bulk._upair(w, op.desc, lane)
        tmap = ops_bulk._upair(w, ops_bulk._ureg(ins.operands[1]), lane)
        seen.append((".".join((ins.opcode,) + tuple(ins.modifiers)), tuple(values), extra, tmap, policy))
        return None

    registry.VECTOR.add(record)
    saved = {op: handlers.get(op) for op in ("UTMALDG", "UTMASTG", "UTMAREDG", "UTMAPF")}
    # a program `run` kept binds the handlers of its first load: the same cubin again (two
    # spellings ptxas writes alike) would reach an earlier call's recorder, and a later
    # plain launch this one's (branch isa34: such a spelling recorded no issue)
    forget_programs()
    try:
        for op in saved:
            handlers[op] = record
        run(cubin, "k", 1, 64, params or [np.uint64(0x7000_0000_1000), np.uint32(0x123),
                                           np.uint64(0x1000_0000_0000_abcd)])
    finally:
        handlers.update(saved)
        forget_programs()
    return sorted(seen)


def _check(case: str, arch: str):
    ptx = kernel(case, arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    want = issues(theirs.output)
    assert want, "ptxas's cubin issued no tensor copy"
    assert issues(ours) == want


@pytest.mark.parametrize("case", sorted(set(CASES) - set(CASES_100A)))
def test_tensor_copy_roles_match_ptxas_sm90(case):
    _check(case, "sm_90")


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
@pytest.mark.parametrize("case", ["load2d_lane", "load_im2col5", "load_multicast_hint", "store_hint",
                                  "reduce_xor", "prefetch_im2col", "load_guarded"])
def test_tensor_copy_roles_match_ptxas_blackwell(case, arch):
    if "multicast" in case and arch == "sm_120":
        pytest.skip("refused on sm_120: test_multicast_refused_on_sm120")
    _check(case, arch)


@pytest.mark.parametrize("case", sorted(CASES_100A))
def test_sm100a_modes_roles_match_ptxas(case):
    """gather4, scatter4 (copy and reduction), im2col::w[::128], cta_group: ptxas's mnemonic
    and modifiers (`.GATHER4`, `.SCATTER4`, `.W`, `.W128`, `.2CTA`), and the values in each
    role (the five coordinates, wHalo + (wOffset << 11) | mask << 16 ...), issue by issue."""
    _check(case, "sm_100a")


@pytest.mark.parametrize("arch", ["sm_103a", "sm_110a", "sm_100f"])
@pytest.mark.parametrize("case", ["gather4_pair", "w128", "scatter4_add", "tile_multicast_pair"])
def test_sm100a_modes_on_the_other_sm100a_like_targets(case, arch):
    """ptxas takes the modes on sm_103a/f and sm_110a/f too (PTX 9.0), with the same SASS."""
    _check(case, arch)


@pytest.mark.parametrize("case", ["gather4_cta", "w_cta"])
def test_sm120a_shared_cta_modes_roles_match_ptxas(case):
    """gather4 and im2col::w into the CTA's own shared memory are taken on sm_120a too."""
    _check(case, "sm_120a")


def test_emulator_faults_by_name_on_tensor_copies():
    """The tensor map's layout is the driver's, not public: the emulator names the copy."""
    ours = codegen.compile_ptx(kernel("load2d_lane"), "sm_90")
    with pytest.raises(EmuFault, match="UTMALDG .*tensor map"):
        run(ours, "k", 1, 32, [np.uint64(0x7000_0000_1000), np.uint32(0), np.uint64(0)])


@pytest.mark.parametrize("case,opcode", [("gather4_lane", "UTMALDG"), ("w128", "UTMALDG"),
                                         ("scatter4", "UTMASTG"), ("scatter4_add", "UTMASTG")])
def test_emulator_faults_by_name_on_sm100a_modes(case, opcode):
    """gather4's four rows, scatter4's, im2col::w's window: what they read and write is the
    tensor map's box, layout and element size, in the driver's undocumented 128 bytes; the
    PTX ISA names the rows but not the map, so the emulator refuses these copies by name too."""
    ours = codegen.compile_ptx(kernel(case, "sm_100a"), "sm_100a")
    with pytest.raises(EmuFault, match=f"{opcode} .*tensor map"):
        run(ours, "k", 1, 32, [np.uint64(0x7000_0000_1000), np.uint32(0), np.uint64(0)])


FENCES = """.version {v}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 tmap, .param .u32 c0, .param .u64 pol)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<2>;
ld.param.u64 %rd1, [tmap];
mov.u32 %r1, %tid.x;
and.b32 %r1, %r1, 1;
mul.wide.u32 %rd2, %r1, 128;
add.s64 %rd2, %rd1, %rd2;
fence.proxy.tensormap::generic.release.cta;
fence.proxy.tensormap::generic.release.cluster;
fence.proxy.tensormap::generic.release.gpu;
fence.proxy.tensormap::generic.release.sys;
fence.proxy.tensormap::generic.acquire.cta [%rd1], 128;
fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;
fence.proxy.tensormap::generic.acquire.sys [%rd1], 128;
ret;
}}
"""
FENCE_OPS = ("MEMBAR", "ERRBAR", "CGAERRBAR", "DEPBAR", "UTMACCTL", "UTMACMDFLUSH")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_proxy_tensormap_fences_as_ptxas(arch, monkeypatch):
    """fence.proxy.tensormap::generic: release = MEMBAR.ALL.GPU (.SYS for .sys), ERRBAR,
    CGAERRBAR; acquire = DEPBAR of every scoreboard, UTMACCTL.IV of the map's address (each
    lane's distinct one), UTMACMDFLUSH; ptxas's sequence of these, and the addresses each
    UTMACCTL.IV names in the emulator."""
    ptx = FENCES.format(arch=arch, v="8.3" if arch == "sm_90" else "8.7")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)

    def sequence(cubin):
        words = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\d\s+)?([A-Z][A-Z0-9_.]*)([^;]*);",
                           oracle.nvdisasm(cubin), re.M)
        return [(m, args.strip()) for m, args in words if m.split(".")[0] in FENCE_OPS]

    want, got = sequence(theirs.output), sequence(ours)
    assert [m for m, _ in got] == [m for m, _ in want]
    assert [a for m, a in got if m.startswith("DEPBAR")] == [a for m, a in want if m.startswith("DEPBAR")]

    def addresses(cubin):
        seen = []
        handlers, _ = registry.load_all()

        def record(w, s, active, mask):
            for lane in np.nonzero(np.broadcast_to(active, (w.width,)))[0]:
                seen.append((tuple(s.ins.modifiers), ops_bulk._upair(w, ops_bulk._ureg(s.ins.operands[0]), int(lane))))
            return None
        registry.VECTOR.add(record)
        monkeypatch.setitem(handlers, "UTMACCTL", record)
        run(cubin, "k", 1, 32, [np.uint64(0x7000_0000_1000), np.uint32(0), np.uint64(0)])
        return sorted(set(seen))
    assert addresses(ours) == addresses(theirs.output)
    assert len(addresses(ours)) == 2         # [%rd1] (twice) and [%rd2]'s second address


REFUSALS = [
    # (instruction, target, ptxas's first message)
    ("cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [sbuf], [%rd1, {%r1, %r2}], [mbar], {%h1};",
     "sm_90", "Modifier '.2d' cannot be combined with modifier '.im2col'"),
    ("cp.async.bulk.tensor.2d.global.shared::cta.im2col_no_offs.bulk_group [%rd1, {%r1, %r2}], [sbuf];",
     "sm_90", "Modifier '.2d' cannot be combined with modifier '.im2col_no_offs'"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [sbuf], [%rd1, {%r1, %r2, %r3}], [mbar];",
     "sm_90", "Argument 2 of instruction 'cp.async.bulk.tensor': Argument vector size mismatch"),
    ("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [sbuf], [%rd1, {%r1, %r2, %r3}], [mbar], {%h1, %h2};",
     "sm_90", "Argument 4 of instruction 'cp.async.bulk.tensor': Argument vector size mismatch"),
    ("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [sbuf], [%rd1, {%r1, %r2, %r3}], [mbar];",
     "sm_90", "Arguments mismatch for instruction 'cp.async.bulk.tensor'"),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1}], [sbuf];",
     "sm_90", "Argument 1 of instruction 'cp.reduce.async.bulk.tensor': Argument vector size mismatch"),
    ("cp.async.bulk.prefetch.tensor.4d.L2.global [%rd1, {%r1, %r2}];",
     "sm_90", "Argument 1 of instruction 'cp.async.bulk.prefetch.tensor': Argument vector size mismatch"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [sbuf], [%rd1, {%r1, %r2}], [mbar];",
     "sm_80", "Feature 'cp.async.bulk.tensor' requires .target sm_90 or higher"),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1, %r2}], [sbuf];",
     "sm_80", "Feature 'cp.reduce.async.bulk.tensor' requires .target sm_90 or higher"),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r1, %r2}];",
     "sm_80", "Feature 'cp.async.bulk.prefetch.tensor' requires .target sm_90 or higher"),
    ("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [sbuf], [tmap, {%r1}], [mbar];",
     "sm_90", "State space mismatch between instruction and address in instruction 'cp.async.bulk.tensor'"),
    ("tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;",
     "sm_90", "Instruction 'tensormap.replace' not supported on .target 'sm_90'"),
    ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [sbuf], [mbar];",
     "sm_90", "Feature 'clusterlaunchcontrol.try_cancel.async' requires .target sm_100 or higher"),
]
REFUSAL_KERNEL = """.version {v}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 tmap)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<8>;
.reg .b16 %h<4>;
.shared .align 128 .b8 sbuf[1024];
.shared .align 8 .b64 mbar;
ld.param.u64 %rd1, [tmap];
{line}
ret;
}}
"""


@pytest.mark.parametrize("line,arch,message", REFUSALS)
def test_refusals_in_ptxas_words(line, arch, message):
    ptx = REFUSAL_KERNEL.format(v="8.6" if "clusterlaunch" in line else "8.3", arch=arch, line=line)
    theirs = oracle.ptxas(ptx, arch)
    first = [l for l in theirs.stderr.splitlines() if "error" in l][0]
    assert not theirs.ok and first.endswith(message), theirs.stderr
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, arch)
    assert str(e.value).splitlines()[0].endswith(message)


def test_multicast_refused_on_sm120():
    """sm_120's ptxas writes the plain UTMALDG and a call that checks the CTA mask for a
    multicast load (not the UTMALDG.MULTICAST of sm_90/sm_100): refused honestly."""
    ptx = kernel("load_multicast", "sm_120")
    assert oracle.ptxas(ptx, "sm_120").ok
    assert "MULTICAST" not in oracle.nvdisasm(oracle.ptxas(ptx, "sm_120").output)
    with pytest.raises(CompileError, match="not supported yet"):
        codegen.compile_ptx(ptx, "sm_120")


GRID_CONSTANT = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 c0, .param .align 64 .b8 tmap[128])
{
.reg .b64 %rd<4>;
.reg .b32 %r<4>;
.shared .align 128 .b8 sbuf[1024];
.shared .align 8 .b64 mbar;
mov.u64 %rd1, tmap;
cvta.param.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
ld.param.u32 %r2, [c0];
cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [sbuf], [%rd2, {%r1, %r2}], [mbar];
cp.async.bulk.prefetch.tensor.1d.L2.global [%rd2, {%r2}];
ret;
}
"""


def test_grid_constant_tensor_map():
    """The map as a by-value kernel parameter (`__grid_constant__ const CUtensorMap`, as
    CUTLASS and Triton pass it) through cvta.param: its generic address in the parameter
    window, the same in ours as in ptxas's."""
    theirs = oracle.ptxas(GRID_CONSTANT, "sm_90")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(GRID_CONSTANT, "sm_90")
    params = [np.uint32(7), Param(type="bytes", value=bytes(range(128)))]
    want = issues(theirs.output, params)
    assert len(want) == 66           # a load per thread (64), a prefetch per warp (2)
    assert issues(ours, params) == want


GUARDED_BULK = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<4>;
.reg .pred %p;
.shared .align 128 .b8 sbuf[4096];
.shared .align 8 .b64 mbar;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
setp.ge.u32 %p, %r1, 60;
mul.wide.u32 %rd2, %r1, 16;
add.s64 %rd3, %rd1, %rd2;
@%p cp.async.bulk.global.shared::cta.bulk_group [%rd3], [sbuf], 16;
@%p cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [sbuf], [%rd3], 16, [mbar];
@%p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd3], [sbuf], 16;
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
def test_guarded_bulk_copies_skip_warps_without_a_guarded_lane(arch, monkeypatch):
    """isel/bulk_copy.py's loops had the tensor copies' flaw: a warp where no lane's guard
    held (here the first: threads 60-63 copy) issued one UBLKCP/UBLKRED with stale operands.
    A guarded bulk copy is now a branch around (guard_branches.py); each issue's operands
    (the uniform pairs it names, lane by lane) are ptxas's."""
    ptx = GUARDED_BULK.format(arch=arch)
    if arch != "sm_90":
        ptx = ptx.replace(".version 8.0", ".version 8.7")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr

    def issues(cubin):
        seen = []
        handlers, _ = registry.load_all()

        def record(w, s, active, mask):
            if not w.per_warp:
                raise PerWarp()
            lanes = np.nonzero(np.broadcast_to(mask, (w.width,)))[0]
            if len(lanes):
                ins, lane = s.ins, int(lanes[0])
                dst, src = ops_bulk._ureg(ins.operands[0]), ops_bulk._ureg(ins.operands[1])
                seen.append((ins.opcode, tuple(ins.modifiers), ops_bulk._uvalue(w, dst, lane) & 0xFFFFFF,
                             ops_bulk._uvalue(w, src, lane) & 0xFFFFFF))
            return None
        registry.VECTOR.add(record)
        for op in ("UBLKCP", "UBLKRED"):
            monkeypatch.setitem(handlers, op, record)
        run(cubin, "k", 1, 64, [np.zeros(1024, np.uint8)])
        return sorted(seen)
    want = issues(theirs.output)
    assert len(want) == 12              # 4 threads x 3 copies
    assert issues(codegen.compile_ptx(ptx, arch)) == want


W_MODES = [
    "cp.async.bulk.tensor.4d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes "
    "[%r1], [%rd1, {%r1, %r2, %r3, %r4}], [%r2], {%h1, %h2};",
    "cp.async.bulk.tensor.4d.shared::cluster.global.im2col::w::128.mbarrier::complete_tx::bytes "
    "[%r1], [%rd1, {%r1, %r2, %r3, %r4}], [%r2], {%h1, %h2};",
    "cp.async.bulk.prefetch.tensor.4d.L2.global.im2col::w [%rd1, {%r1, %r2, %r3, %r4}], {%h1, %h2};",
    "cp.async.bulk.tensor.4d.shared::cta.global.im2col::w.mbarrier::complete_tx::bytes "
    "[%r1], [%rd1, {%r1, %r2, %r3, %r4}], [%r2], {%h1, %h2};"]


@pytest.mark.parametrize("line", W_MODES)
def test_w_mode_im2col_is_not_the_plain_im2col(line):
    """ptxas 13.5 writes UTMALDG.4D.W / .W128 (UTMAPF ... .W) for the w-mode im2col, with the
    offsets {wHalo, wOffset}; ours wrote UTMALDG.4D.IM2COL for the 4d forms (two offsets, as
    a 4d im2col's) until branch inv32's audit found it (refused by name then), and writes
    ptxas's mnemonic since branch tensor33."""
    ptx = (".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
           ".reg .b64 %rd<4>; .reg .b32 %r<6>; .reg .b16 %h<3>;\nld.param.u64 %rd1, [p];\n"
           "mov.u32 %r1, 0; mov.u32 %r2, 8; mov.b16 %h1, 1; mov.b16 %h2, 2;\n" + line + "\nret;\n}\n")
    theirs = oracle.ptxas(ptx, "sm_100a")
    assert theirs.ok
    mnemonic = re.compile(r"UTMA(?:LDG|PF)\S*")
    want = mnemonic.findall(oracle.nvdisasm(theirs.output))
    assert want and all(re.search(r"\.W(128)?\b", m) for m in want)
    assert mnemonic.findall(oracle.nvdisasm(codegen.compile_ptx(ptx, "sm_100a"))) == want


TARGET_REFUSALS = [
    # (line of tensor33's probe, target): ptxas 13.5.37's messages by target, all of them
    (f"{L}.2d{LOAD}{G4}{MB} [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar];", "sm_90a"),
    (f"{L}.2d{LOAD}{G4}{MB} [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar];", "sm_120a"),
    (f"{L}.2d{LOAD}{G4}{MB} [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar];", "sm_100"),
    (f"{L}.2d.shared::cta.global{G4}{MB} [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar];", "sm_90a"),
    (f"{L}.2d{LOAD}{G4}{MB}.cta_group::1 [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar];", "sm_120a"),
    (f"{L}.2d{LOAD}{MB}.cta_group::2 [sbuf], [%rd1, {{1, 2}}], [mbar];", "sm_90a"),
    (f"{L}.2d.global.shared::cta.tile::scatter4.bulk_group [%rd1, {{1, 2, 3, 4, 5}}], [sbuf];", "sm_120a"),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.tile::scatter4.bulk_group [%rd1, {1, 2, 3, 4, 5}], [sbuf];", "sm_90a"),
    (f"{L}.3d{LOAD}.im2col::w{MB} [sbuf], [%rd1, {{1, 2, 3}}], [mbar], {{6, 7}};", "sm_120a"),
    (f"{L}.3d.shared::cta.global.im2col::w{MB} [sbuf], [%rd1, {{1, 2, 3}}], [mbar], {{6, 7}};", "sm_90a"),
    (f"{L}.3d.shared::cta.global.im2col::w::128{MB} [sbuf], [%rd1, {{1, 2, 3}}], [mbar], {{6, 7}};", "sm_120a"),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4 [%rd1, {1, 2, 3, 4, 5}];", "sm_120a"),
    ("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col::w [%rd1, {1, 2, 3}], {6, 7};", "sm_90a"),
    ("cp.async.bulk.prefetch.tensor.4d.L2.global.im2col::w::128 [%rd1, {1, 2, 3, 4}], {6, 7};", "sm_120a"),
    ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd1], [sbuf], 256, 0x1234;", "sm_90a"),
    # a multicast into shared::cta (main compiled these; found by tools/tensor_copy_variants)
    (f"{L}.2d.shared::cta.global{MB}.multicast::cluster [sbuf], [%rd1, {{1, 2}}], [mbar], %h1;", "sm_100a"),
    (f"{L}.2d.shared::cta.global{G4}{MB}.multicast::cluster [sbuf], [%rd1, {{1, 2, 3, 4, 5}}], [mbar], %h1;", "sm_90a"),
    (f"{L}.3d.shared::cta.global.im2col::w{MB}.multicast::cluster [sbuf], [%rd1, {{1, 2, 3}}], [mbar], {{6, 7}}, 5;", "sm_100a"),
    ("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster [sbuf], [%rd1], 256, [mbar], 5;", "sm_90a"),
]


@pytest.mark.parametrize("line,arch", TARGET_REFUSALS)
def test_sm100a_modes_refused_by_target_in_ptxas_words(line, arch):
    """Where ptxas refuses a mode by target, ours refuses it with the same messages (it
    compiled none of them before, "not supported yet" on every target)."""
    ptx = REFUSAL_KERNEL.format(v="8.7", arch=arch, line=line)
    assert_refused_in_ptxas_words(ptx, arch)


@pytest.mark.parametrize("seed", range(0, 100, 10))
def test_random_sm100a_mode_spellings_match_ptxas(seed):
    """A sample of tools/tensor_copy_variants (random spellings of the sm_100a modes: the
    verdict, a refusal's messages, each issue's roles), seeds 0:100 step 10."""
    import random

    from tools import tensor_copy_variants as tcv
    status, detail = tcv.check(tcv.variant(random.Random(seed)), "sm_100a")
    assert status in ("match", "both-refused"), detail


def test_issues_of_one_cubin_twice():
    """`issues` of the same cubin twice (ptxas writes `.tile` and no mode, or `.cta_group::1`
    and none, alike) records both times: `run` keeps a program with the handlers of its first
    load, and the second call had recorded nothing (branch isa34)."""
    ptx = HEAD.format(v="8.7", arch="sm_100a") + (
        f"{L}.2d{LOAD}{MB} [sbuf], [%rd1, {{7, 9}}], [mbar];\n") + TAIL
    cubin = oracle.ptxas(ptx, "sm_100a").output
    first = issues(cubin)
    assert first and issues(cubin) == first
