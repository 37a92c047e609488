"""SSA construction: every corpus kernel lowers to verified SSA, and the phis on hand-analysed
CFGs are exactly the ones minimal, pruned SSA needs."""
import os
import subprocess
import sys

import pytest

from ptx2sass import CompileError, frontend, ir, oracle
from ptx2sass.frontend.to_ssa import lower_module
from tools.corpora import corpus_dirs, ptx_files

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"


def lower(body: str, params: str = ".param .u64 out, .param .u32 n") -> ir.Function:
    text = f"{HEADER}.visible .entry k({params})\n{{\n{body}\n}}\n"
    module = frontend.parse(text, "t.ptx")
    return lower_module(module).functions[0]


def block(fn, name):
    return next(b for b in fn.blocks if b.name == name)


LOOP = """
  .reg .u32 %i, %s, %n, %t;
  .reg .pred %p;
  .reg .u64 %a;
  ld.param.u32 %n, [n];
  mov.u32 %i, 0;
  mov.u32 %s, 0;
LOOP:
  add.u32 %s, %s, %i;
  @!%p add.u32 %t, %t, 1;
  add.u32 %i, %i, 1;
  setp.lt.u32 %p, %i, %n;
  @%p bra LOOP;
  ld.param.u64 %a, [out];
  st.global.u32 [%a+4], %s;
  ret;
"""


def test_loop_gets_phis_for_loop_carried_registers_only():
    fn = lower(LOOP)
    ir.verify(fn)
    loop = block(fn, "LOOP")
    assert [p.name for p in loop.preds] == [fn.entry.name, "LOOP"]
    # %s, %i are carried; %t (predicated update) and %p (read by the guard before its
    # definition) too. %n is defined once before the loop: no phi.
    assert sorted(phi.dest.name for phi in loop.phis) == ["%i", "%p", "%s", "%t"]
    exit_block = fn.blocks[-1]
    assert exit_block.phis == []
    store = exit_block.instrs[-2]
    assert store.opcode == "st" and store.space == "global"
    assert store.srcs[0].offset == 4
    # The stored value is the sum computed in the loop body, not a phi.
    add_s = loop.instrs[0]
    assert add_s.opcode == "add" and store.srcs[1] is add_s.dests[0]


def test_predicated_definition_merges_with_previous_value():
    fn = lower(LOOP)
    loop = block(fn, "LOOP")
    guarded = next(i for i in loop.instrs if i.guard is not None and i.dests)
    phi_t = next(p for p in loop.phis if p.dest.name == "%t")
    assert guarded.guard_negated
    assert guarded.merge == [phi_t.dest]
    assert guarded.srcs[0] is phi_t.dest


DIAMOND = """
  .reg .u32 %x, %y, %n;
  .reg .pred %p;
  .reg .u64 %a;
  ld.param.u32 %n, [n];
  mov.u32 %y, 7;
  setp.eq.u32 %p, %n, 0;
  @%p bra ELSE;
  mov.u32 %x, 1;
  mov.u32 %y, 3;
  bra.uni JOIN;
ELSE:
  mov.u32 %x, 2;
JOIN:
  ld.param.u64 %a, [out];
  st.global.u32 [%a], %x;
  ret;
"""


def test_diamond_phi_only_for_value_read_after_join():
    fn = lower(DIAMOND)
    ir.verify(fn)
    join = block(fn, "JOIN")
    # %x is read after the join: one phi. %y differs on the two paths but is dead: pruned.
    assert [phi.dest.name for phi in join.phis] == ["%x"]
    consts = sorted(v.srcs[0].value for _, v in join.phis[0].incoming
                    for v in [next(i for b in fn.blocks for i in b.instrs if v in i.dests)])
    assert consts == [1, 2]


def test_branch_to_missing_label_is_a_compile_error():
    with pytest.raises(CompileError) as e:
        lower("  .reg .pred %p;\n  @%p bra NOWHERE;\n  ret;")
    assert e.value.line is not None and "NOWHERE" in e.value.message


def test_unreachable_code_is_dropped_and_first_label_loop_gets_an_entry():
    fn = lower("  .reg .u32 %i;\nTOP:\n  add.u32 %i, %i, 1;\n  bra.uni TOP;\n  add.u32 %i, %i, 2;\n  ret;")
    ir.verify(fn)
    assert fn.entry.name == "entry" and not fn.entry.preds
    assert [b.name for b in fn.blocks] == ["entry", "TOP"]


@pytest.mark.parametrize("corpus", list(corpus_dirs()))
def test_every_accepted_corpus_file_lowers_to_verified_ssa(corpus):
    failures, count = [], 0
    for path in ptx_files(corpus):
        text = path.read_text(errors="replace")
        if not oracle.ptxas(text, "sm_89", name=path.name).ok:
            continue
        count += 1
        try:
            module = frontend.parse(text, path.name)
            frontend.check(module, "sm_89")
            for fn in lower_module(module).functions:
                ir.verify(fn)
        except Exception as e:  # report every file, not just the first
            failures.append(f"{path.name}: {type(e).__name__}: {e}")
    assert count > 0
    assert failures == [], f"{len(failures)}/{count} failed:\n" + "\n".join(failures[:20])


def test_ir_dump_is_identical_across_hash_seeds():
    paths = [p for c in corpus_dirs() for p in ptx_files(c)[:3]]
    script = ("import sys\nfrom ptx2sass import frontend, ir\n"
              "from ptx2sass.frontend.to_ssa import lower_module\n"
              "for p in sys.argv[1:]:\n"
              "    t = open(p, errors='replace').read()\n"
              "    try: print(ir.dump_module(lower_module(frontend.parse(t, p))))\n"
              "    except Exception as e: print(type(e).__name__, e)\n")
    dumps = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", script, *map(str, paths)], env=env,
                             capture_output=True, text=True, check=True).stdout
        assert "phi" in out or "ret" in out
        dumps.add(out)
    assert len(dumps) == 1


def test_labels_are_scoped_to_their_block():
    # The same label name in two nested blocks names two different places (ptxas accepts it).
    fn = lower("""
  .reg .u32 %i;
  .reg .pred %p;
  mov.u32 %i, 0;
  {
  L:
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, 4;
    @%p bra L;
  }
  {
  L:
    add.u32 %i, %i, 2;
    setp.lt.u32 %p, %i, 9;
    @%p bra L;
  }
  ret;""")
    ir.verify(fn)
    loops = [b for b in fn.blocks if b.name.split(".")[0] == "L"]
    # two blocks, named apart: block names are the function's labels downstream (both named L,
    # every `bra L` went to the last: tests/test_scoped_labels.py)
    assert [b.name for b in loops] == ["L", "L.1"]
    for b in loops:
        assert b in b.succs and b in b.preds      # each branch loops to its own block
    assert loops[0].preds == [fn.entry, loops[0]]
    assert loops[1].preds == [loops[0], loops[1]]  # the first loop falls through into the second


def _diamonds(n: int) -> str:
    body = "".join(f"setp.lt.u32 %p, %r1, {k};\n@%p bra L{k};\nadd.u32 %r1, %r1, 1;\nL{k}:\n"
                   for k in range(n))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u32 a)\n{\n.reg .u32 %r<2>;\n.reg .pred %p;\n"
            "ld.param.u32 %r1, [a];\n" + body + "ret;\n}\n")


def test_lowering_is_linear_in_the_number_of_blocks():
    """Sealing a block after each block is filled looked at every block of the function
    (1000 diamonds: 2.5 s of lowering). Counted, not timed: the Python calls made while
    lowering 4x the blocks stay near 4x."""
    import sys
    from ptx2sass import codegen
    counts = []
    for n in (150, 600):
        ptx = _diamonds(n)
        calls = [0]

        def count(frame, event, arg):
            if event == "call" and frame.f_code.co_filename.endswith("to_ssa.py"):
                calls[0] += 1
        sys.setprofile(count)
        try:
            codegen.lower_ptx(ptx, "sm_89", "d.ptx")
        finally:
            sys.setprofile(None)
        counts.append(calls[0])
    assert counts[1] <= 5 * counts[0], counts
