"""sm_90+ `.nv.info.<k>` records of multimem and cluster kernels: EIATTR_GRID_ATTRIBUTES
(0x68, ptx2sass/grid_attributes.py), 0x5f's multimem bulk-copy bit, the cluster launch
directives' MAX_CLUSTER_RANK / EXPLICIT_CLUSTER / CTA_PER_CLUSTER, barrier.cluster's barrier 0.
Each kernel's records are ptxas 13.5's for the same module (its cubin, read back), value and
place, on sm_90, sm_100 and sm_120; records that follow from the code's layout (offsets,
the parameter bank's symbol index) aside."""
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.encoder.cubin import read_cubin

# what depends on the code's layout rather than on the module's facts
LAYOUT = {"EXIT_INSTR_OFFSETS", "INT_WARP_WIDE_INSTR_OFFSETS", "PARAM_CBANK",
          "COOP_GROUP_INSTR_OFFSETS"}
SHARED = ".shared .align 128 .b8 sm[1024];"
REGS = ".reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<4>; .reg .f32 %f<4>;"


def _kernel(body, name="k", directives=""):
    return f""".visible .entry {name}(.param .u64 p){directives}
{{
{REGS}
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
{body}
ret;
}}
"""


def _func(body, name="g"):
    return f""".func {name}(.param .b64 a)
{{
{REGS}
ld.param.b64 %rd1, [a];
mov.u32 %r1, %tid.x;
{body}
ret;
}}
"""


def _call(name="g"):
    return f"{{ .param .b64 a0; st.param.b64 [a0], %rd1; call.uni {name}, (a0); }}"


LD = "multimem.ld_reduce.global.add.u32 %r2, [%rd1]; st.global.u32 [%rd1], %r2;"
ST = "multimem.st.global.u32 [%rd1], %r1;"
BULK = ("mov.u32 %r2, sm; multimem.cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 64; "
        "cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;")
MODULES = {
    "ld_reduce": _kernel(LD),
    "ld_reduce_unread": _kernel("multimem.ld_reduce.relaxed.sys.global.add.u32 %r2, [%rd1];"),
    "ld_reduce_acquire_v4": _kernel("multimem.ld_reduce.acquire.sys.global.add.v4.f32 {%f0,%f1,%f2,%f3}, [%rd1]; "
                                    "st.global.v4.f32 [%rd1], {%f0,%f1,%f2,%f3};"),
    "st": _kernel(ST),
    "st_release_v4": _kernel("multimem.st.release.gpu.global.v4.f32 [%rd1], {%f0,%f1,%f2,%f3};"),
    "red": _kernel("multimem.red.global.add.u32 [%rd1], %r1;"),
    "cp_async_bulk": SHARED + _kernel(BULK),
    "cp_reduce_async_bulk": SHARED + _kernel(BULK.replace("multimem.cp.async.bulk.global.shared::cta.bulk_group",
                                                          "multimem.cp.reduce.async.bulk.global.shared::cta"
                                                          ".bulk_group.add.u32")),
    "ld_reduce_and_st": _kernel(LD + ST),
    "func_ld_reduce": _func(LD) + _kernel(_call()),
    "func_st": _func(ST) + _kernel(_call()),
    "func_bulk": SHARED + _func(BULK) + _kernel(_call()),
    "func_of_func": _func(ST, "h") + _func(_call("h")) + _kernel(_call()),
    "uncalled_func": _func(ST) + _kernel("st.global.u32 [%rd1], %r1;"),
    "two_kernels": _func(ST) + _kernel(_call(), "k1") + _kernel("st.global.u32 [%rd1], %r1;", "k2"),
    "two_funcs": _func(ST) + _func(LD, "h") + _kernel(_call() + _call("h"), "k1") + _kernel(_call("h"), "k2"),
    "unreachable": _kernel("ret; " + ST),
    "never_taken": _kernel("setp.eq.u32 %p1, 1, 0; @%p1 " + ST),
    # no record: other sm_90+ features (probed, ptxas writes none for these)
    "plain_st": _kernel("st.global.u32 [%rd1], %r1;"),
    "shfl_sync": _kernel("shfl.sync.bfly.b32 %r2, %r1, 1, 31, 0xffffffff; st.global.u32 [%rd1], %r2;"),
    "cp_async_bulk_plain": SHARED + _kernel(BULK.replace("multimem.", "")),
    "elect": _kernel("elect.sync %r2|%p1, 0xffffffff; st.global.u32 [%rd1], %r2;"),
    "griddepcontrol": _kernel("griddepcontrol.wait; st.global.u32 [%rd1], %r1; griddepcontrol.launch_dependents;"),
    "cluster": _kernel("mov.u32 %r2, %cluster_ctarank; mov.u32 %r3, %clusterid.x; add.u32 %r2, %r2, %r3; "
                       "st.global.u32 [%rd1], %r2;"),
    # cluster launch directives and barriers (no GRID_ATTRIBUTES)
    "reqnctapercluster": _kernel(ST.replace("multimem.", ""), directives="\n.reqnctapercluster 3, 1, 2\n.maxntid 128"),
    "explicitcluster": _kernel(ST.replace("multimem.", ""), directives="\n.explicitcluster\n.reqnctapercluster 2, 2"),
    "maxclusterrank": _kernel(ST.replace("multimem.", ""),
                              directives="\n.explicitcluster\n.maxclusterrank 8\n.reqntid 32"),
    "barrier_cluster": _kernel("barrier.cluster.arrive; barrier.cluster.wait; " + ST.replace("multimem.", "")),
    "barrier_cluster_aligned": _kernel("barrier.cluster.arrive.relaxed.aligned; barrier.cluster.wait.aligned; "
                                       + ST),
}


def _records(cubin):
    return {k.name: [(r.name, r.value if r.fmt.name in ("HVAL", "BVAL", "NVAL") else r.payload)
                     for r in k.attributes if r.name not in LAYOUT]
            for k in read_cubin(cubin).kernels}


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", list(MODULES))
def test_kernel_records_are_ptxas_s(arch, name):
    ptx = f".version 9.1\n.target {arch}\n.address_size 64\n" + MODULES[name]
    ref = oracle.ptxas(ptx.encode(), arch)
    assert ref.ok, ref.stderr
    theirs = _records(ref.output)
    assert _records(compile_ptx(ptx, arch)) == theirs
    # the rule, as read off ptxas's answers (the table must not pass by having no multimem)
    grid = {k: [v for n, v in recs if n == "GRID_ATTRIBUTES"] for k, recs in theirs.items()}
    if name.startswith(("plain", "shfl", "elect", "grid", "cluster", "uncalled", "cp_async_bulk_plain", "reqn",
                        "explicit", "maxcluster")) or name == "barrier_cluster":
        assert all(v == [] for v in grid.values())
    elif name == "two_funcs":
        assert grid == {"k1": [0xC], "k2": [0x4]}
    elif "ld_reduce" in name and "st" not in name.replace("ld_reduce", ""):
        assert all(v == [0x4] for v in grid.values())


def test_debug_functions_carry_their_own():
    """-g keeps `.func`s as functions: each has its record, the kernel its callees' bits."""
    arch = "sm_90"
    ptx = f".version 9.1\n.target {arch}\n.address_size 64\n" + MODULES["func_st"]
    ref = oracle.ptxas(ptx.encode(), arch, options=("-g",))
    assert ref.ok, ref.stderr
    grid = lambda c: {k.name: [r.value for r in k.attributes if r.name == "GRID_ATTRIBUTES"]  # noqa: E731
                      for k in read_cubin(c).kernels}
    assert grid(compile_ptx(ptx, arch, debug=True)) == grid(ref.output) == {"k": [0xC], "g": [0xC]}
