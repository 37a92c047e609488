"""Generic atomics whose operation the shared unit lacks (f32/f64/f16x2 add, 64-bit
add/min/max/logic). A generic ATOM does them on global memory only: on a shared or local
address it does nothing and clears its predicate, and ptxas then runs a compare-and-swap loop
(shared, found with QSPC.E.S) or a load, the operation and a store (local). Ours wrote a plain
ATOM with PT, so an atomicAdd through a generic pointer into shared memory did nothing. The
emulator models the ATOM as the hardware does (also with a PT predicate), so ours and
ptxas's cubin are compared on global, shared and local targets, with exact sums checked."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

THREADS = 64
OPS = {   # name: (register type, statement on generic address %rd9 with value %v, result %o)
    "add_f32": ("f32", "atom.add.f32 %o, [%rd9], %v;"),
    "red_add_f32": ("f32", "red.add.f32 [%rd9], %v; mov.b32 %o, 0;"),
    "add_f64": ("f64", "atom.add.f64 %o, [%rd9], %v;"),
    "add_u64": ("u64", "atom.add.u64 %o, [%rd9], %v;"),
    "max_s64": ("u64", "atom.max.s64 %o, [%rd9], %v;"),
    "and_b64": ("u64", "atom.and.b64 %o, [%rd9], %v;"),
    "add_f16x2": ("b32", "atom.add.noftz.f16x2 %o, [%rd9], %v;"),
    "add_bf16x2": ("b32", "atom.add.noftz.bf16x2 %o, [%rd9], %v;"),      # sm_90+
}
SM90_ONLY = {"add_bf16x2"}
WHERE = ["global", "shared", "local"]


def _ptx(ty: str, stmt: str, where: str) -> str:
    wide = ty in ("f64", "u64")
    reg = {"f32": "%f", "f64": "%fd", "u64": "%rd", "b32": "%r"}[ty]
    decl = {"f32": ".f32", "f64": ".f64", "u64": ".b64", "b32": ".b32"}[ty]
    stmt = stmt.replace("%o", f"{reg}20").replace("%v", f"{reg}21")
    size = 8 if wide else 4
    load = f"ld.global{'.b64' if wide else '.b32'}"
    target = {"global": "mov.u64 %rd9, %rd2;",
              "shared": "mov.u64 %rd9, sh; cvta.shared.u64 %rd9, %rd9;",
              "local": "mov.u64 %rd9, lo; cvta.local.u64 %rd9, %rd9;"}[where]
    return f""".version 8.3
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 cell)
{{
  .reg .pred %p<2>; .reg .b32 %r<24>; .reg .f32 %f<24>; .reg .f64 %fd<24>; .reg .b64 %rd<24>;
  .shared .align 8 .b8 sh[8];
  .local .align 8 .b8 lo[8];
  ld.param.u64 %rd0, [out]; ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [cell];
  cvta.to.global.u64 %rd0, %rd0; cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd3, %r0, 8; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd0, %rd3;
  {load} {decl.replace('.b64', '%rd').replace('.f64', '%fd').replace('.f32', '%f').replace('.b32', '%r')}21, [%rd4];
  ld.global{'.b64' if wide else '.b32'} {reg}22, [%rd2];
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra START;
  st.shared{'.b64' if wide else '.b32'} [sh], {reg}22;
START:
  st.local{'.b64' if wide else '.b32'} [lo], {reg}22;
  bar.sync 0;
  {target}
  {stmt}
  st.global{'.b64' if wide else '.b32'} [%rd5], {reg}20;
  bar.sync 0;
  @%p0 bra END;
  ld{'.b64' if wide else '.b32'} {reg}23, [%rd9];
  st.global{'.b64' if wide else '.b32'} [%rd0+{THREADS * 8}], {reg}23;
END:
  ret;
}}
""".replace("{size}", str(size))


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("name", [n for n in OPS if n not in SM90_ONLY])
def test_generic_atomics_reach_every_space(name, where):
    _compare(name, where, "sm_89")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("name", list(OPS))
def test_generic_atomics_reach_every_space_sm90(name, where):
    """sm_90's fallbacks add a distributed-shared-memory path (QSPC.E.D, a generic
    compare-and-swap loop) for the float adds: ptxas's cubin faulted on it for a local
    target (the emulator did not know QSPC.E.D); bf16x2 add had no fallback at all."""
    _compare(name, where, "sm_90")


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
@pytest.mark.parametrize("name", ["add_f32", "add_f64", "add_bf16x2"])
def test_generic_float_atomics_into_local_on_blackwell(name, arch):
    _compare(name, "local", arch)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", list(OPS))
def test_generic_atomic_paths_as_ptxas(name, arch):
    """Which fallbacks ptxas writes for each operation (counted in its cubin): the ATOM with
    a predicate, QSPC.E.S and ATOMS.CAST.SPIN (this CTA's shared memory), QSPC.E.D and
    ATOM.E.CAST.SPIN (another CTA's, sm_90+ clusters: only the f32/f64 adds), LD/ST (local)."""
    import re
    ty, stmt = OPS[name]
    ptx = _ptx(ty, stmt, "global").replace(".target sm_89", f".target {arch}").replace(".version 8.3", ".version 8.8")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    keys = ("QSPC.E.S", "QSPC.E.D", "ATOMS.CAST.SPIN", "ATOM.E.CAST.SPIN", "ST.E")

    def paths(cubin):
        text = oracle.nvdisasm(cubin)
        return {k: len(re.findall(re.escape(k) + r"[ .]", text)) for k in keys}
    expected = paths(theirs.output)
    assert expected["QSPC.E.S"] == 1
    assert paths(ptx2sass.compile(ptx, arch, "k.ptx")) == expected


@pytest.mark.parametrize("arch", ["sm_75", "sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", ["add_f32", "max_s64"])
def test_generic_atomics_into_shared_on_other_archs(name, arch):
    _compare(name, "shared", arch)


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
def test_shared_bf16x2_add(arch):
    """`atom.shared.add.noftz.bf16x2`: ptxas's compare-and-swap loop (ours refused it)."""
    OPS["shared_add_bf16x2"] = ("b32", "atom.shared.add.noftz.bf16x2 %o, [sh], %v;")
    try:
        _compare("shared_add_bf16x2", "shared", arch)
    finally:
        del OPS["shared_add_bf16x2"]


def _compare(name: str, where: str, arch: str) -> None:
    ty, stmt = OPS[name]
    ptx = _ptx(ty, stmt, where).replace(".target sm_89", f".target {arch}").replace(".version 8.3", ".version 8.8")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, arch, "k.ptx")
    rng = np.random.default_rng(3)
    if ty == "f32":
        data = np.zeros(THREADS, np.uint64)
        data[:] = rng.integers(1, 64, THREADS).astype(np.float32).view(np.uint32)
    elif ty == "f64":
        data = rng.integers(1, 64, THREADS).astype(np.float64).view(np.uint64)
    elif ty == "b32":
        data = np.zeros(THREADS, np.uint64)
        one = 0x3F803F80 if "bf16" in name else 0x3C003C00           # 1.0, 1.0 in bf16 / f16
        data[:] = np.array([one] * THREADS, np.uint32)
    else:
        data = rng.integers(0, 1 << 40, THREADS, dtype=np.uint64)
    results = []
    for cubin in (theirs.output, ours):
        out = np.zeros(THREADS + 1, np.uint64)
        cell = np.zeros(1, np.uint64)
        run(cubin, "k", 1, THREADS, [out, data.copy(), cell], hazard_check=cubin is ours)
        results.append((out[THREADS], cell[0]))
    assert results[1] == results[0], [hex(int(x)) for pair in results for x in pair]
    final = results[1][0] if where != "global" else results[1][1]
    if name == "add_u64" and where == "shared":      # every lane's value arrived
        assert int(final) == int(data.sum())
    if name in ("add_f16x2", "add_bf16x2", "shared_add_bf16x2") and where == "shared":    # 64 ones added to 0
        assert int(final) == (0x54005400 if name == "add_f16x2" else 0x42804280)


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100", "sm_120"])
def test_cas_spin_result_where_ptxas_puts_it(arch):
    """ATOMS.CAST.SPIN's result: a register compared with 1 up to sm_90, a predicate from
    sm_100 (Target.cas_spin_predicate; ours wrote the register form there too)."""
    import re
    ptx = _ptx("f32", "atom.shared.add.f32 %o, [sh], %v;", "shared")
    ptx = ptx.replace(".target sm_89", f".target {arch}").replace(".version 8.3", ".version 8.8")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr

    def kinds(cubin):
        return {re.sub(r"\d+", "#", m) for m in re.findall(r"ATOMS\.CAST\.SPIN (\w)\d", oracle.nvdisasm(cubin))}
    assert kinds(ptx2sass.compile(ptx, arch, "k.ptx")) == kinds(theirs.output) != set()


def test_generic_windows_tell_this_ctas_shared_memory_from_another_ctas():
    """QSPC.E.S / QSPC.E.D on sm_90+: a shared-window address's low word is a shared::cluster
    address, the CTA's rank from bit 24 (ptxas's cvta.shared: SR_SWINHI:(SR_CgaCtaId << 24 |
    offset), mapa replaces that byte with PRMT); the emulator's CTAs are rank 0."""
    from ptx2sass.emu.memory import LOCAL_WINDOW, SHARED_WINDOW
    from ptx2sass.emu.ops_memory import generic_windows
    addrs = np.array([SHARED_WINDOW + 0x400, SHARED_WINDOW + (1 << 24) + 0x400,
                      SHARED_WINDOW + (15 << 24), LOCAL_WINDOW + 8, 0x7F00_0000_0000], np.uint64)
    own, other, local = generic_windows(addrs)
    assert own.tolist() == [True, False, False, False, False]
    assert other.tolist() == [False, True, True, False, False]
    assert local.tolist() == [False, False, False, True, False]
