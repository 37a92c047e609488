"""SSA optimisations before instruction selection, one pass per module.

tinygrad, Triton and NVVM all write PTX that names every constant in a register (`mov.b32 %c,
3; shl.b32 %x, %y, %c`) and copies values between registers of different types. Selecting
that literally costs a register and an instruction per constant and hides immediates from
the selector's folding into operands (`SHF ... 0x3`, `LOP3 ... 0x7f`)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.address import fold_address_offsets
from ptx2sass.opt.contract import contract_multiply_add
from ptx2sass.opt.cse import eliminate_common_subexpressions
from ptx2sass.opt.dce import remove_dead_code
from ptx2sass.opt.dead_local_stores import remove_dead_local_stores
from ptx2sass.opt.dead_loops import remove_dead_loops
from ptx2sass.opt.exit_guards import propagate_exit_guards
from ptx2sass.opt.fold import fold_constants
from ptx2sass.opt.fold_compares import fold_compares
from ptx2sass.opt.forward_local_stores import forward_local_stores
from ptx2sass.opt.local_tables import promote_local_tables
from ptx2sass.opt.intmad import fuse_integer_multiply_add
from ptx2sass.opt.fuse import fuse_wide_multiply_add, narrow_wide_products
from ptx2sass.opt.hoist_invariants import hoist_loop_invariants
from ptx2sass.opt.hoist_loads import hoist_read_only_loads
from ptx2sass.opt.if_convert import MAX_BODY, if_convert_loads
from ptx2sass.opt.inline_marks import take_inline_marks
from ptx2sass.opt.merge_blocks import merge_blocks
from ptx2sass.opt.propagate import propagate_copies
from ptx2sass.opt.reassociate import reassociate_offsets
from ptx2sass.opt.repack import repack
from ptx2sass.opt.split_exit_edges import split_exit_edges
from ptx2sass.opt.unguard_expansions import unguard_expansions
from ptx2sass.opt.vectorize import vectorize_shared_loads
from ptx2sass.opt.vectorize_stores import vectorize_shared_stores
from ptx2sass.opt import unroll
from ptx2sass.opt.unroll import unroll_counted_loops
from ptx2sass.opt.runtime_unroll import unroll_runtime_loops

MAX_ROUNDS = 4      # each round only shrinks the function; real kernels settle in two


def optimise(fn: ir.Function, contract: bool = True, shared_aligns: dict[str, int] | None = None,
             predicated_body_limit: int = MAX_BODY) -> None:
    """`contract`: fuse float multiplies into adds as ptxas does unless `--fmad=false`.
    Guarded operations selected as sequences run unguarded and select their result. What a
    guarded exit decided holds past it; what loops recompute from values defined outside
    them moves before them, and loops left computing nothing go. Counted loops are unrolled
    once their induction arithmetic is simplified, and the unrolled code is simplified
    again; one-block loops counted at run time then run 4 copies per exit test (ptxas's
    shape). Branches around a few loads become predicated loads (and their blocks one);
read-only loads move up into the dominator of a block that runs whenever it runs. Last,
    loop exits get their own phi-copy blocks. `shared_aligns`: the alignment of the kernel's
    own shared variables as laid out (`variables.own_shared_alignments`), where it is known:
    adjacent stores to them become vector stores. `predicated_body_limit`: the largest branch
    body to predicate (`Target.predicated_body_limit`). Blocks that only a label no branch names
    splits (Triton's and NVVM's `$L__tmp` debug labels) are joined first: scheduling works
    within blocks (a Welford reduction's shuffles were one step at a time)."""
    merge_blocks(fn)
    _simplify(fn, contract)
    take_inline_marks(fn)
    if unguard_expansions(fn):
        _simplify(fn, contract)
    if propagate_exit_guards(fn):
        merge_blocks(fn)
        _simplify(fn, contract)
    if hoist_loop_invariants(fn):
        _simplify(fn, contract)
    if remove_dead_loops(fn):
        merge_blocks(fn)
        _simplify(fn, contract)
    if if_convert_loads(fn, predicated_body_limit):
        merge_blocks(fn)
        _simplify(fn, contract)
    if unroll_counted_loops(fn):
        merge_blocks(fn)
        # each round folds one more step of the unrolled induction chains
        _simplify(fn, contract, 4 * (MAX_ROUNDS + unroll.MAX_TRIPS))
    if unroll_runtime_loops(fn):
        merge_blocks(fn)
        _simplify(fn, contract)
    if vectorize_shared_loads(fn):
        _simplify(fn, contract)
    if shared_aligns and vectorize_shared_stores(fn, shared_aligns):
        _simplify(fn, contract)
    hoist_read_only_loads(fn)
    split_exit_edges(fn)


def _simplify(fn: ir.Function, contract: bool, rounds: int = MAX_ROUNDS) -> None:
    for _ in range(rounds):
        changed = propagate_copies(fn)
        if fold_constants(fn):
            # what folded is mostly unread now: gone before the other passes look at it
            remove_dead_code(fn)
            changed = True
        if fold_compares(fn):
            # decided branches leave straight-line chains and unread compares
            merge_blocks(fn)
            remove_dead_code(fn)
            changed = True
        changed |= eliminate_common_subexpressions(fn)
        if contract:
            changed |= contract_multiply_add(fn)
        changed |= narrow_wide_products(fn)
        changed |= fuse_wide_multiply_add(fn)
        changed |= fold_address_offsets(fn)
        changed |= fuse_integer_multiply_add(fn)
        changed |= reassociate_offsets(fn)
        changed |= repack(fn)
        changed |= forward_local_stores(fn)
        changed |= remove_dead_local_stores(fn)
        changed |= promote_local_tables(fn)
        changed |= remove_dead_code(fn)
        if not changed:
            return
