"""More predicates live at once than sm_8x has (tinygrad writes every setp first, then the
selps): the allocator falls back on recomputing each compare next to its readers. The
result must match ptxas's cubin in the emulator, bit for bit, with zero hazards."""
from codegen_harness import run_both
from ptx2sass import codegen

N = 12


def _body() -> str:
    lines = [f".reg .pred %q<{N}>;", ".reg .b32 %s<2>;", "mov.b32 %s0, 0;"]
    lines += [f"setp.lt.u32 %q{k}, %a0, {k * 0x15555555};" if k % 2 else
              f"setp.ne.and.u32 %q{k}, %a1, {k}, %q{k - 1 if k else 0};" for k in range(1, N)]
    lines.insert(3, "setp.gt.s32 %q0, %a1, %a0;")
    for k in range(N):
        lines += [f"selp.b32 %s1, {1 << k}, 0, %q{k};", "add.u32 %s0, %s0, %s1;"]
    lines += ["@%q3 add.u32 %s0, %s0, 0x1000000;", "mov.b32 %o, %s0;"]
    return "\n".join(lines)


def test_many_live_predicates_match_ptxas():
    ours, theirs, _ = run_both(_body(), 32, 2, 32)
    assert (ours == theirs).all()


def test_the_fallback_is_what_made_it_fit():
    """Without the rewrite this kernel does not fit in seven predicates (so the test above
    exercises the fallback, not a lucky allocation)."""
    from codegen_harness import kernel
    from ptx2sass.isel import select_function
    from ptx2sass.encoder.arch import arch_info
    from ptx2sass.regalloc.allocate import allocate
    from ptx2sass import CompileError
    from ptx2sass.regalloc.remat_predicates import rematerialise_predicates
    import pytest
    module = codegen.lower_ptx(kernel(_body(), 32, 2, 32), "sm_89", "k.ptx")
    mf = select_function(module.functions[0], arch_info("sm_89"), "k.ptx", None)
    assert sum(1 for v in mf.vregs if v.cls == "P") > 7
    with pytest.raises(CompileError, match="out of predicate registers"):
        allocate(mf)
    assert rematerialise_predicates(mf)
    allocate(mf)
