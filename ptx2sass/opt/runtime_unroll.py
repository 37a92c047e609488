"""Loops whose trip count is known only at run time, unrolled K times with a remainder.

A copy loop `for (k = lane; k < 256; k += 32) s[k] = g[k]` (nvcc has often unrolled it 4x
already) runs as a one-block loop whose exit test waits on nothing, but each iteration's loads
still issue only after the previous iteration's branch: few loads are in flight. ptxas 13.5
(sm_89, measured on the cuda corpus's ldmatrix_raw) runs such a do-while loop as a 4-copy
loop entered while at least 4 iterations remain, then a 2-copy block if at least 2 remain,
then one copy: 16 loads in flight per exit test.

Here the same shape, with tests that are exact whatever the arithmetic (wrapping, signed or
unsigned compares, any step): the loop's exit predicate must be computed in the loop only from
its phis, loop invariants and constants by pure operations (its `control slice`). "At least
s iterations remain" is then "the exit tests of the next s-1 iterations all continue", which
the slice computes ahead (clones of it, starting from the current phis) without running the
body. Loops whose exit depends on a load or a call keep their shape, and so do loops whose
trip count is a constant (`unroll_counted_loops` already gave them ptxas's copies), loops
whose loads all read one address (loaded once before the loop, nothing stays in flight) and
bodies above ptxas's copy budget (MAX_COST).

A loop that stops on an ordered compare (`<`, `<=`, `>`, `>=`) takes ptxas's shape
(_unroll_predicated): E tests whether 4 iterations run; M runs 4 copies and loops while 4 more
follow; R then runs 2 copies if 2 remain and 1 if one does, with a flag for "nothing ran yet"
(the do-while's first iteration runs whatever its test says). Where the exit is the same in
every lane the remainders are copies under a guard (`@P1 LDG`: no branch, no join), else
blocks the guard branches around (sm_89 probes: ptxas branches on every lane-varying exit
tried, and guards the remainders of some uniform ones, not all; its rule is not known). A signed
counter stepped by a constant against a loop invariant is tested as ptxas tests it
(_Closed: `i < n - 3` once a trip, as if the counter did not wrap, as ptxas's `n - i > 3`);
other counters keep the exact tests. Loops that stop on `!=` (ptxas branches to their
remainders, after a separate loop for counters that never meet their bound) take the shape
below:

    C:  phis; ok = tests 0..K-2 continue;  @!ok bra S_{K/2}
    M:  K copies; @continue bra C  (else -> X)
    S_s (s = K/2 .. 2): ok = tests 0..s-2 continue; @!ok bra S_{s/2}
    T_s: s copies; @!continue bra X  (else fall into S_{s/2})
    S_1: one copy (exactly one iteration is left); -> X
    X:  phis of the loop's values read after it; -> the loop's exit
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.divergence import divergent_values
from ptx2sass.opt.dce import CARRY, PURE, is_strong_load
from ptx2sass.opt.fold import signed_value
from ptx2sass.opt.unroll import MAX_LOADED_WORDS, MAX_SIMULATED, _clone, _loaded_words, _trip_count
from ptx2sass.opt.uses import substitute

ENABLED = True                # switch for A/B runs (tools.tree_ab --set)
PREDICATED = True             # switch for A/B runs: remainders as guarded copies (ptxas's)
CLOSED_FORM = True            # switch for A/B runs: signed counters tested once per step
BRANCH_DIVERGENT = True       # switch for A/B runs: remainders of lane-varying exits branched around
COPIES = 4                    # ptxas's factor for such loops (ldmatrix_raw: 4, then 2, then 1;
                              # spmv_ell's NVVM-unrolled 4 steps: 16 per exit test)
# ptxas 13.5's budget for a body it copies (sm_89, measured on generated loops of k loads and
# adds plus m multiplies, and of s gather steps `x[col[j]] * v[j]`, guarded or not): a body of
# cost at most MAX_COST is copied 4 times, a costlier one not at all; a load costs 2, a 64-bit
# add nothing (ptxas folds it into addresses), any other instruction 1 (a branch nothing).
# The boundaries, PTX counted without the exit counter's add and compare: 15 loads + 16
# others (46) copied, 17 others not; 4 loads + 38 others copied, 39 not; 4 gather steps + 14
# multiplies copied, + 15 not; guarded, + 6 copied, + 7 not. With the counter's add and
# compare, 48 (tests/test_opt_runtime_unroll.py checks these and six predicted pairs).
MAX_COST = 48
# what a body may hold to be copied: pure operations and memory accesses (no calls, barriers
# or warp collectives: copies of one iteration run in different blocks for different threads)
# Operations selected as long sequences (division, roots, transcendentals) make each copy
# large: the real-world corpus's softmax_rows grew from 766 to 3394 instructions (its loop
# divides with `div.rn`, which ptxas does not copy either). Their f32 `.approx` and `.full`
# forms are a MUFU with at most a few fix-ups, and ptxas copies such bodies; their cost in its
# budget (sm_89, measured as MAX_COST's boundary moves with two of them in a one-load body):
# (opcode, rounding, ftz) -> cost. fused_fast's Welford loop (`div.approx.ftz.f32`) is one.
EXPANDED = frozenset({"div", "rem", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"})
MUFU_COST = {
    ("div", "approx", True): 2, ("div", "approx", False): 7,
    ("div", "full", True): 8, ("div", "full", False): 12,
    ("rcp", "approx", True): 1, ("rcp", "approx", False): 7,
    ("sqrt", "approx", True): 1, ("sqrt", "approx", False): 6,
    ("rsqrt", "approx", True): 1, ("rsqrt", "approx", False): 6,
    ("ex2", "approx", True): 1, ("ex2", "approx", False): 6,
    ("lg2", "approx", True): 1, ("lg2", "approx", False): 6,
    ("sin", "approx", True): 1, ("sin", "approx", False): 1,
    ("cos", "approx", True): 1, ("tanh", "approx", False): 1,
}
MUFU_FORMS = True             # switch for A/B runs: bodies with MUFU_COST forms copied
NC_UNORDERED = True           # switch for A/B runs: `ld.global.nc` loads beside stores copied
BODY_OPCODES = (PURE - {"stacksave"} - EXPANDED) | {"ld", "ldu", "st", "atom", "red", "undef"}
# (`undef`: the else-value of a guarded load whose guarded readers need none, opt/if_convert.py)

# the exit test: counters stepped by constants, compared (ptxas 13.5 keeps loops stepped by a
# register or by a multiply as they are, and those whose body stores, reduces or
# atomically updates the space it loads from: the next copy's loads would wait anyway)
SLICE_OPCODES = frozenset({"add", "sub", "setp", "mov", "cvt", "and", "or", "xor", "not"})


def _mufu_cost(ins: ir.Instr) -> int | None:
    """ptxas's budget cost of an EXPANDED f32 form it copies (MUFU_COST), else None."""
    if not MUFU_FORMS or ins.opcode not in EXPANDED or ins.type != "f32":
        return None
    kind = "approx" if "approx" in ins.modifiers else "full" if "full" in ins.modifiers else None
    return MUFU_COST.get((ins.opcode, kind, "ftz" in ins.modifiers))


def _phi_value(phi: ir.Phi, block: ir.Block):
    return dict((id(b), v) for b, v in phi.incoming)[id(block)]


def _control_slice(h: ir.Block, back: ir.Block) -> list[ir.Instr] | None:
    """The instructions of h (in order) its exit predicate depends on, or None when one is
    not pure or depends on a value h computes otherwise (a load)."""
    defs = {d.id: ins for ins in h.instrs for d in ins.dests}
    phis = {phi.dest.id: phi for phi in h.phis}
    need, seen_phis, todo = set(), set(), [h.instrs[-1].guard]
    while todo:
        v = todo.pop()
        if not isinstance(v, ir.Value):
            continue
        if v.id in phis:
            if v.id not in seen_phis:
                seen_phis.add(v.id)
                todo.append(_phi_value(phis[v.id], back))
            continue
        ins = defs.get(v.id)
        if ins is None or id(ins) in need:
            continue
        if (ins.opcode not in SLICE_OPCODES or ins.guard is not None or CARRY[0] in ins.modifiers
                or len(ins.dests) != 1):
            return None
        need.add(id(ins))
        todo.extend(s.base if isinstance(s, ir.Address) else s for s in ins.srcs)
    for vid in seen_phis:               # each a counter with a constant step
        step = defs.get(getattr(_phi_value(phis[vid], back), "id", None))
        if (step is None or step.opcode not in ("add", "sub") or len(step.srcs) != 2
                or not isinstance(step.srcs[1], ir.Const) or getattr(step.srcs[0], "id", None) != vid):
            return None
    return [ins for ins in h.instrs[:-1] if id(ins) in need]


def _shape(fn: ir.Function, h: ir.Block):
    """(preheader, exit, back-edge block) of a one-block loop this pass unrolls, or None. The
    back edge may pass through a block holding only a `bra` (a loop tested at its bottom
    whose exit is the taken branch)."""
    if h.nounroll or h is fn.entry or len(h.succs) != 2 or len(h.preds) != 2:
        return None
    branch = h.instrs[-1] if h.instrs else None
    if branch is None or branch.opcode != "bra" or not isinstance(branch.guard, ir.Value):
        return None
    if h in h.succs:
        back = h
    else:
        latches = [s for s in h.succs if s.preds == [h] and s.succs == [h] and not s.phis
                   and len(s.instrs) == 1 and s.instrs[0].opcode == "bra" and s.instrs[0].guard is None]
        if len(latches) != 1 or latches[0] not in h.preds:
            return None
        back = latches[0]
    (pre,) = [p for p in h.preds if p is not back] or [None]
    (exit_,) = [s for s in h.succs if s is not back] or [None]
    if pre is None or exit_ is None or pre is h or exit_ is h:
        return None
    if _trip_count(h, pre, back, None if back is h else back, MAX_SIMULATED) is not None:
        return None             # counted: `unroll_counted_loops` decided its copies (ptxas's)
    body = h.instrs[:-1]
    if any(i.opcode not in BODY_OPCODES and _mufu_cost(i) is None for i in body):
        return None
    # `ld.global.nc` reads memory that is read-only while the kernel runs: no store aliases it
    loads = {i.space for i in body if i.opcode in ("ld", "ldu")
             and not (NC_UNORDERED and i.opcode == "ld" and "nc" in i.modifiers)}
    if not _varying_load(h) or any(is_strong_load(i) for i in body):
        return None             # nothing to keep in flight (volatile/strong loads run in order)
    writes = {i.space for i in body if i.opcode in ("st", "atom", "red")}
    if writes & loads or ((writes or loads) & {None, "generic"} and writes):
        return None             # the next copy's loads wait for this one's writes
    loaded = _loaded_words(body)
    if COPIES * loaded > MAX_LOADED_WORDS or _cost(h) > MAX_COST:
        return None
    return pre, exit_, back


def _cost(h: ir.Block) -> int:
    """h's body's size as ptxas weighs it for copying (MAX_COST). A `mad.wide` of loop-invariant
    factors is the 64-bit add of an invariant step that NVVM wrote (our fusion made it one)."""
    inside = {phi.dest.id for phi in h.phis} | {d.id for ins in h.instrs for d in ins.dests}
    undefined = {d.id for ins in h.instrs if ins.opcode == "undef" for d in ins.dests}

    def weight(ins):
        if ins.opcode in ("ld", "ldu"):
            return 2
        if ins.opcode == "undef":
            return 0
        if ins.guard is not None and any(isinstance(m, ir.Value) and m.id not in undefined for m in ins.merge):
            return 2        # a guarded accumulation: its arithmetic, and the merge (a selp before)
        if ins.opcode in EXPANDED:
            return _mufu_cost(ins)
        if ins.opcode == "add" and ins.type in ("s64", "u64", "b64"):
            return 0
        if ins.opcode == "mad" and "wide" in ins.modifiers and not any(
                isinstance(f, ir.Value) and f.id in inside for f in ins.srcs[:2]):
            return 0
        return 1
    return sum(map(weight, h.instrs[:-1]))


def _varying_load(h: ir.Block) -> bool:
    """Whether a load of h reads an address that changes from one iteration to the next (one
    of fixed address is loaded once before the loop: ptxas keeps such a loop as it is)."""
    varying = {phi.dest.id for phi in h.phis}
    for ins in h.instrs[:-1]:
        srcs = [s.base if isinstance(s, ir.Address) else s for s in ins.srcs]
        moves = any(isinstance(s, ir.Value) and s.id in varying for s in (*srcs, ins.guard))
        if moves and ins.opcode in ("ld", "ldu"):
            return True
        if moves:
            varying.update(d.id for d in ins.dests)
    return False


class _Copier:
    def __init__(self, fn: ir.Function, h: ir.Block, back: ir.Block):
        self.fn, self.h, self.back = fn, h, back
        branch = h.instrs[-1]
        # the loop continues when p == self.continues_on
        self.continues_on = (h.succs[0] is back) != branch.guard_negated

    def advance(self, out: list[ir.Instr], env: dict[int, object]) -> None:
        """Phis of the next iteration, from `env`'s values of this one."""
        nxt = []
        for phi in self.h.phis:
            v = _phi_value(phi, self.back)
            nxt.append(env.get(v.id, v) if isinstance(v, ir.Value) else v)
        for phi, v in zip(self.h.phis, nxt):
            d = self.fn.new_value(phi.dest.type, phi.dest.name)
            out.append(ir.Instr("mov", dests=[d], srcs=[v], type=phi.dest.type))
            env[phi.dest.id] = d

    def carried(self, env: dict[int, object]) -> dict[int, object]:
        """The phis' values for the iteration after `env`'s (their back-edge inputs)."""
        out = {}
        for phi in self.h.phis:
            v = _phi_value(phi, self.back)
            out[phi.dest.id] = env.get(v.id, v) if isinstance(v, ir.Value) else v
        return out

    def copies(self, out: list[ir.Instr], env: dict[int, object], n: int) -> ir.Value:
        """n iterations into `out` from `env`'s phis; the last one's exit predicate."""
        for k in range(n):
            if k:
                self.advance(out, env)
            for ins in self.h.instrs[:-1]:
                out.append(_clone(self.fn, ins, env))
        return env[self.h.instrs[-1].guard.id]

    def remain(self, out: list[ir.Instr], env: dict[int, object], s: int, slice_: list[ir.Instr]):
        """A predicate that equals `continues_on` when at least s iterations run from `env`'s
        phis (the and, or the or, of the next s-1 exit tests). Only the control slice is
        cloned: the body does not run."""
        env = dict(env)
        preds = []
        for k in range(s - 1):
            if k:
                self.advance(out, env)
            for ins in slice_:
                out.append(_clone(self.fn, ins, env))
            preds.append(env[self.h.instrs[-1].guard.id])
        acc = preds[0]
        for p in preds[1:]:
            d = self.fn.new_value("pred")
            out.append(ir.Instr("and" if self.continues_on else "or", dests=[d], srcs=[acc, p],
                                type="pred"))
            acc = d
        return acc


    def guarded_copies(self, out: list[ir.Instr], state: dict, lasts: dict, g: ir.Value, n: int,
                       outside: list[ir.Value]):
        """n iterations from `state`'s phis under guard g: what each writes that later
        iterations or the code after the loop read keeps its previous value where g is
        false (its merge), loads and stores run only where g holds, other arithmetic runs
        unguarded. Returns the next (state, lasts): the phis' values, and the last values
        of `outside`."""
        fn = self.fn
        back_of = {_phi_value(phi, self.back).id: phi.dest.id for phi in self.h.phis}
        out_ids = {v.id for v in outside}
        phi_ids = {phi.dest.id for phi in self.h.phis}
        start_state, start_lasts = state, lasts
        # earlier copies' arithmetic runs unguarded (the stage's pointer steps join into one
        # add, as ptxas's), except where the body guards some itself: its merges are the
        # previous copy's values, which must be the stage's own where g is false
        tracked = set(back_of) | out_ids
        own = any(ins.guard is not None and any(d.id in tracked for d in ins.dests)
                  for ins in self.h.instrs[:-1])
        for k in range(n):
            env = dict(state)
            final = own or k == n - 1
            for ins in self.h.instrs[:-1]:
                c = _clone(fn, ins, env)
                keep = [start_state[back_of[d.id]] if d.id in back_of
                        else start_lasts[d.id] if d.id in out_ids else None for d in ins.dests]
                if g is not None and (ins.opcode in ("ld", "ldu", "st", "atom", "red") or (
                        final and any(k is not None for k in keep))):
                    if c.guard is None:
                        c.guard, c.guard_negated = g, False
                        c.merge = [k if k is not None else self._undef(out, d.type)
                                   for k, d in zip(keep, c.dests)]
                    else:               # its own guard too (its merges are its phis', _predicable)
                        q = _op(fn, out, "not", c.guard) if c.guard_negated else c.guard
                        c.guard, c.guard_negated = _op(fn, out, "and", g, q), False
                out.append(c)
            new_lasts = {}
            for vid in out_ids:
                if vid in phi_ids:      # the phi's value of the iteration that ran last
                    if g is None:
                        new_lasts[vid] = state[vid]
                    elif final:
                        d = fn.new_value(state[vid].type)
                        out.append(ir.Instr("mov", dests=[d], srcs=[state[vid]], type=d.type, guard=g,
                                            merge=[start_lasts[vid]]))
                        new_lasts[vid] = d
                    else:
                        new_lasts[vid] = state[vid]
                else:
                    new_lasts[vid] = env[vid]
            state = {phi.dest.id: env[_phi_value(phi, self.back).id] for phi in self.h.phis}
            lasts = new_lasts
        return state, lasts

    def _undef(self, out: list[ir.Instr], ty: str) -> ir.Value:
        u = self.fn.new_value(ty)
        out.append(ir.Instr("undef", [u], type=ty))
        return u


def _branch(guard=None, negated=False) -> ir.Instr:
    return ir.Instr("bra", guard=guard, guard_negated=negated)


def _unroll(fn: ir.Function, h: ir.Block, divergent) -> bool:
    shape = _shape(fn, h)
    if shape is None:
        return False
    pre, exit_, back = shape
    slice_ = _control_slice(h, back)
    if slice_ is None:
        return False
    cp = _Copier(fn, h, back)
    outside = _read_outside(fn, h)
    if PREDICATED and _ordered_exit(h) and _predicable(h, back, outside):
        _unroll_predicated(fn, h, pre, exit_, back, slice_, cp, outside, divergent)
    else:
        _unroll_branching(fn, h, pre, exit_, back, slice_, cp, outside)
    return True


def _unroll_branching(fn, h, pre, exit_, back, slice_, cp, outside) -> None:
    """The shape of the module docstring: remainders entered by branches, joined at X."""
    on = cp.continues_on
    name = h.name
    c, m, mx = ir.Block(f"{name}$ru_c"), ir.Block(f"{name}$ru_m"), ir.Block(f"{name}$ru_mx")
    x = ir.Block(f"{name}$ru_x")
    # C: the phis; at least COPIES iterations left?
    env_c: dict[int, object] = {}
    for phi in h.phis:
        d = fn.new_value(phi.dest.type, phi.dest.name)
        c.phis.append(ir.Phi(d, []))
        env_c[phi.dest.id] = d
    ok = cp.remain(c.instrs, env_c, COPIES, slice_)
    # M: COPIES iterations, back to C while the last continues
    env_m = dict(env_c)
    p = cp.copies(m.instrs, env_m, COPIES)
    m.instrs.append(_branch(p, not on))
    mx.instrs.append(_branch())
    exits = [(mx, env_m)]                       # (block into X, its env)
    stages = []                                 # (S_s, T_s or None)
    s = COPIES // 2
    skip_env, prev_skip, prev_run, run_env = env_c, c, None, None
    while True:
        sb = ir.Block(f"{name}$ru_s{s}")
        if prev_run is None:                    # entered from C only: C's phis
            env_s = dict(skip_env)
        else:
            env_s = {}
            for phi in h.phis:
                d = fn.new_value(phi.dest.type, phi.dest.name)
                sb.phis.append(ir.Phi(d, [(prev_skip, _lookup(skip_env, phi.dest)),
                                          (prev_run, cp.carried(run_env)[phi.dest.id])]))
                env_s[phi.dest.id] = d
        if s == 1:                              # exactly one iteration is left
            env_1 = dict(env_s)
            cp.copies(sb.instrs, env_1, 1)
            sb.instrs.append(_branch())
            exits.append((sb, env_1))
            stages.append((sb, None))
            break
        enough = cp.remain(sb.instrs, env_s, s, slice_)
        sb.instrs.append(_branch(enough, on))   # fewer than s left: to the next stage
        tb = ir.Block(f"{name}$ru_t{s}")
        run_env = dict(env_s)
        pt = cp.copies(tb.instrs, run_env, s)
        tb.instrs.append(_branch(pt, on))       # the loop stops: to X
        exits.append((tb, run_env))
        stages.append((sb, tb))
        skip_env, prev_skip, prev_run = env_s, sb, tb
        s //= 2
    c.instrs.append(_branch(ok, on))            # fewer than COPIES left: to the first stage
    # edges: taken first, then fall-through
    c.preds.append(pre)
    _set_edges(c, [stages[0][0], m])
    _set_edges(m, [c, mx])
    _set_edges(mx, [x])
    order = [c, m, mx]
    for k, (sb, tb) in enumerate(stages):
        order.append(sb)
        if tb is None:
            _set_edges(sb, [x])
        else:
            _set_edges(sb, [stages[k + 1][0], tb])
            _set_edges(tb, [x, stages[k + 1][0]])
            order.append(tb)
    order.append(x)
    # C's phis: from the preheader, and from M's last copy
    for phi, cphi in zip(h.phis, c.phis):
        cphi.incoming = [(pre, _phi_value(phi, pre)), (m, cp.carried(env_m)[phi.dest.id])]
    # X: the loop's values read after it, per path
    subst = {}
    for v in outside:
        d = fn.new_value(v.type, v.name)
        x.phis.append(ir.Phi(d, [(b, _lookup(env, v)) for b, env in exits]))
        subst[v.id] = d
    x.instrs.append(_branch())
    x.succs = [exit_]
    # splice: pre -> C, X -> exit, in h's place
    pre.succs = [c if s is h else s for s in pre.succs]
    exit_.preds = [x if p is h else p for p in exit_.preds]
    for phi in exit_.phis:
        phi.incoming = [(x if b is h else b, v) for b, v in phi.incoming]
    at = fn.blocks.index(h)
    fn.blocks[at:at + 1] = order
    if back is not h:
        fn.blocks.remove(back)
    substitute(_Except(fn, set(map(id, order))), subst)


def _ordered_exit(h: ir.Block) -> bool:
    """Whether h's exit test is an ordered compare (`<`, `<=`, `>`, `>=`): ptxas predicates the
    remainders of such loops, whose trip count it can compute; a loop that stops on `!=`
    keeps branches to them (and a loop for counters that never meet the bound)."""
    g = h.instrs[-1].guard
    setp = next((i for i in h.instrs if i.opcode == "setp" and i.dests and i.dests[0] is g), None)
    return setp is not None and bool(setp.modifiers) and setp.modifiers[0] in (
        "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")


def _predicable(h: ir.Block, back: ir.Block, outside: list[ir.Value]) -> bool:
    """Whether h's copies can run under a guard: each phi's next value is a result of the
    body (no two phis share one) and no value kept across iterations or read after the loop
    is a predicate (a guarded write keeps its old value through its merge; predicates have
    no such merge here); a guarded instruction writing such a value keeps its phi's value
    where its guard is false, as the copy's guard needs."""
    if any(m in CARRY for ins in h.instrs[:-1] for m in ins.modifiers):
        return False            # a carry chain guarded in part would read a stale carry
    body_defs = {d.id for ins in h.instrs[:-1] for d in ins.dests}
    back_of: dict[int, int] = {}
    for phi in h.phis:
        v = _phi_value(phi, back)
        if (phi.dest.type == "pred" or not isinstance(v, ir.Value) or v.id not in body_defs
                or v.id in back_of):
            return False
        back_of[v.id] = phi.dest.id
    if any(v.type == "pred" for v in outside):
        return False
    out_ids = {v.id for v in outside}
    for ins in h.instrs[:-1]:
        if ins.guard is None:
            continue
        for k, d in enumerate(ins.dests):
            if d.id in back_of:
                m = ins.merge[k] if k < len(ins.merge) else None
                if not (isinstance(m, ir.Value) and m.id == back_of[d.id]):
                    return False
            elif d.id in out_ids:
                return False
    return True


SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}


class _Closed:
    """A signed counter i stepped by a constant c and compared with a loop-invariant n:
    the loop continues while `i + c REL n`. ptxas tests such loops once per step, against
    bounds computed ahead (`i < n - 3` for 4 copies), as if the counter did not wrap (its
    loops compare the signed difference `n - i`, which wrapping would break the same way)."""

    def __init__(self, fn, phi_id: int, step: int, rel: str, bound, ty: str):
        self.fn, self.phi_id, self.step, self.rel, self.bound, self.ty = fn, phi_id, step, rel, bound, ty

    def ahead(self, out: list[ir.Instr], i, k: int) -> ir.Value:
        """`i + k*c REL n`: the next k exit tests from counter i all continue."""
        if isinstance(i, ir.Const):
            return self.compare(out, ir.Const(self._bits(i.value + k * self.step), self.ty), self.bound)
        t = self.fn.new_value(self.ty)
        out.append(ir.Instr("add", dests=[t], srcs=[i, ir.Const(self._bits(k * self.step), self.ty)],
                            type=self.ty))
        return self.compare(out, t, self.bound)

    def compare(self, out: list[ir.Instr], a, b) -> ir.Value:
        """`a REL b` (an immediate a compared second: `nb > 0`, as ptxas writes it)."""
        p = self.fn.new_value("pred")
        rel = self.rel
        if isinstance(a, ir.Const):
            a, b, rel = b, a, SWAPPED[rel]
        out.append(ir.Instr("setp", dests=[p], srcs=[a, b], modifiers=(rel,), type=self.ty))
        return p

    def _bits(self, v: int) -> int:
        return v & ((1 << int(self.ty[1:])) - 1)


def _closed_form(fn: ir.Function, h: ir.Block, back: ir.Block, slice_: list[ir.Instr],
                 cp: "_Copier") -> _Closed | None:
    """The exit test as a _Closed counter, when it is one (signed compares only: ptxas keeps
    exact tests for unsigned and equality compares)."""
    if len(slice_) != 2 or slice_[0].opcode != "add" or slice_[1].opcode != "setp":
        return None
    add, setp = slice_
    phis = {phi.dest.id: phi for phi in h.phis}
    i, c = add.srcs if len(add.srcs) == 2 else (None, None)
    if (not isinstance(i, ir.Value) or i.id not in phis or not isinstance(c, ir.Const)
            or _phi_value(phis[i.id], back) is not add.dests[0] or add.guard is not None):
        return None
    if setp.type not in ("s32", "s64") or add.type[1:] != setp.type[1:] or len(setp.modifiers) != 1:
        return None
    rel = setp.modifiers[0]
    if rel not in SWAPPED or len(setp.srcs) != 2 or setp.dests[0] is not h.instrs[-1].guard:
        return None
    inside = set(phis) | {d.id for ins in h.instrs for d in ins.dests}
    a, b = setp.srcs

    def invariant(v):
        return isinstance(v, ir.Const) or (isinstance(v, ir.Value) and v.id not in inside)
    if a is add.dests[0] and invariant(b):
        bound = b
    elif b is add.dests[0] and invariant(a):
        bound, rel = a, SWAPPED[rel]
    else:
        return None
    if not cp.continues_on:
        rel = NEGATED[rel]
    step = signed_value(c.value, int(setp.type[1:]))
    if step == 0 or (step > 0) != (rel in ("lt", "le")):
        return None
    return _Closed(fn, i.id, step, rel, bound, setp.type)


def _unroll_predicated(fn, h, pre, exit_, back, slice_, cp, outside, divergent) -> None:
    """ptxas's shape: E tests whether COPIES iterations run; M runs COPIES copies while
    another COPIES follow; R runs 2 copies, then 1, each under its predicate (_Stage: guarded
    copies, or blocks branched around where the exit differs between lanes): the loop's
    values after it are the last stage's."""
    closed = _closed_form(fn, h, back, slice_, cp) if CLOSED_FORM else None
    branched = h.instrs[-1].guard.id in divergent
    name = h.name
    e, m, r = ir.Block(f"{name}$ru_e"), ir.Block(f"{name}$ru_m"), ir.Block(f"{name}$ru_r")
    pre_env = {phi.dest.id: _phi_value(phi, pre) for phi in h.phis}
    nb = None
    # E: at least COPIES iterations from the entry (the first runs whatever its test)?
    if closed is not None:                  # the counter against n - (COPIES-1)*c, as in M
        nb = fn.new_value(closed.ty)
        e.instrs.append(ir.Instr("add", dests=[nb], srcs=[
            closed.bound, ir.Const(closed._bits(-(COPIES - 1) * closed.step), closed.ty)], type=closed.ty))
        ok = closed.compare(e.instrs, pre_env[closed.phi_id], nb)
    else:
        ok = _continues(fn, e.instrs, cp, cp.remain(e.instrs, dict(pre_env), COPIES, slice_))
    undef_e = {}
    for v in outside:                       # nothing ran yet: no last values
        u = fn.new_value(v.type, v.name)
        e.instrs.append(ir.Instr("undef", [u], type=v.type))
        undef_e[v.id] = u
    e.instrs.append(_branch(ok, True))      # fewer: to R
    # M: COPIES copies, again while another COPIES follow
    env_m: dict[int, object] = {}
    for phi in h.phis:
        d = fn.new_value(phi.dest.type, phi.dest.name)
        m.phis.append(ir.Phi(d, []))
        env_m[phi.dest.id] = d
    env4 = dict(env_m)
    last = cp.copies(m.instrs, env4, COPIES)
    nxt = cp.carried(env4)
    live = None
    if closed is not None:
        again = closed.compare(m.instrs, nxt[closed.phi_id], nb)
    else:
        live = _continues(fn, m.instrs, cp, last)
        ahead = _continues(fn, m.instrs, cp, cp.remain(m.instrs, dict(nxt), COPIES, slice_))
        again = _op(fn, m.instrs, "and", live, ahead)
    m.instrs.append(_branch(again))
    for phi, mphi in zip(h.phis, m.phis):
        mphi.incoming = [(e, pre_env[phi.dest.id]), (m, nxt[phi.dest.id])]
    # R: the state where fewer than COPIES follow (from E, or after M's last copies)
    state, lasts = {}, {}
    for phi in h.phis:
        d = fn.new_value(phi.dest.type, phi.dest.name)
        r.phis.append(ir.Phi(d, [(e, pre_env[phi.dest.id]), (m, nxt[phi.dest.id])]))
        state[phi.dest.id] = d
    for v in outside:
        d = fn.new_value(v.type, v.name)
        r.phis.append(ir.Phi(d, [(e, undef_e[v.id]), (m, _lookup(env4, v))]))
        lasts[v.id] = d
    # `first`: nothing ran yet (the iteration at hand runs, whatever its test says)
    flag = fn.new_value("pred")
    r.phis.append(ir.Phi(flag, [(e, ir.Const(1, "pred")), (m, ir.Const(0, "pred") if closed else live)]))
    if closed is not None:
        two = closed.ahead(r.instrs, state[closed.phi_id], 1)
    else:                                   # flag: the iteration at hand runs
        t0 = _continues(fn, r.instrs, cp, cp.remain(r.instrs, dict(state), 2, slice_))
        t01 = _continues(fn, r.instrs, cp, cp.remain(r.instrs, dict(state), 3, slice_))
        two = _op(fn, r.instrs, "and", flag, t0)
    stage = _Stage(fn, cp, outside, r, branched)
    flags = {"cleared": (flag, ir.Const(0, "pred"))} if closed is not None else {}
    state, lasts, flags = stage.run(two, 2, state, lasts, flags)
    cur = stage.block
    if closed is not None:                  # a third ran, or the first has not
        more = closed.compare(cur.instrs, state[closed.phi_id], closed.bound)
        one = _op(fn, cur.instrs, "or", more, flags["cleared"])
    else:
        one = _op(fn, cur.instrs, "and", flag, _op(fn, cur.instrs, "or", t01, _op(fn, cur.instrs, "not", t0)))
    state, lasts, _ = stage.run(one, 1, state, lasts, {})
    last_block = stage.block
    last_block.instrs.append(_branch())
    # edges
    e.preds.append(pre)
    _set_edges(e, [r, m])
    _set_edges(m, [m, r])
    last_block.succs = [exit_]
    pre.succs = [e if s is h else s for s in pre.succs]
    exit_.preds = [last_block if p is h else p for p in exit_.preds]
    for phi in exit_.phis:
        phi.incoming = [(last_block if b is h else b, v) for b, v in phi.incoming]
    order = [e, m] + stage.blocks
    at = fn.blocks.index(h)
    fn.blocks[at:at + 1] = order
    if back is not h:
        fn.blocks.remove(back)
    substitute(_Except(fn, set(map(id, order))), {v.id: lasts[v.id] for v in outside})


class _Stage:
    """The remainders one after another from block `start`: each as copies under its guard
    (uniform exits), or, where the exit test differs between lanes, as a block the guard
    branches around, its values joined after it (ptxas's code in both cases). `flags`:
    predicates {name: (value where the copies did not run, where they ran)}."""

    def __init__(self, fn, cp: "_Copier", outside, start: ir.Block, branched: bool):
        self.fn, self.cp, self.outside, self.branched = fn, cp, outside, branched
        self.block, self.blocks = start, [start]

    def run(self, g, n: int, state: dict, lasts: dict, flags: dict):
        fn, cur = self.fn, self.block
        if not self.branched:
            state, lasts = self.cp.guarded_copies(cur.instrs, state, lasts, g, n, self.outside)
            out = {}
            for name, (skipped, ran) in flags.items():     # ptxas's `@P1 PLOP3.LUT P0, ..., 0x8`
                d = fn.new_value("pred")
                cur.instrs.append(ir.Instr("mov", dests=[d], srcs=[ran], type="pred", guard=g,
                                           merge=[skipped]))
                out[name] = d
            return state, lasts, out
        name = cur.name.split("$ru_")[0]
        t, j = ir.Block(f"{name}$ru_t{n}"), ir.Block(f"{name}$ru_j{n}")
        cur.instrs.append(_branch(g, True))
        _set_edges(cur, [j, t])
        new_state, new_lasts = self.cp.guarded_copies(t.instrs, state, lasts, None, n, self.outside)
        t.instrs.append(_branch())
        _set_edges(t, [j])
        out_state, out_lasts, out = {}, {}, {}
        for key, before, after, into in [(k, state[k], new_state[k], out_state) for k in state] + \
                [(k, lasts[k], new_lasts[k], out_lasts) for k in lasts] + \
                [(k, a, b, out) for k, (a, b) in flags.items()]:
            ty = before.type if isinstance(before, ir.Value) else after.type
            d = fn.new_value(ty)
            j.phis.append(ir.Phi(d, [(cur, before), (t, after)]))
            into[key] = d
        self.block = j
        self.blocks += [t, j]
        return out_state, out_lasts, out


def _continues(fn, out, cp: "_Copier", p: ir.Value) -> ir.Value:
    """p as a predicate that holds when the loop continues."""
    return p if cp.continues_on else _op(fn, out, "not", p)


def _op(fn, out, opcode: str, *srcs) -> ir.Value:
    d = fn.new_value("pred")
    out.append(ir.Instr(opcode, dests=[d], srcs=list(srcs), type="pred"))
    return d


def _lookup(env: dict[int, object], v: ir.Value):
    return env.get(v.id, v)


def _set_edges(b: ir.Block, succs: list[ir.Block]) -> None:
    b.succs = list(succs)
    for s in succs:
        s.preds.append(b)


def _read_outside(fn: ir.Function, h: ir.Block) -> list[ir.Value]:
    """h's values (phis and results) that other blocks read."""
    mine = {phi.dest.id: phi.dest for phi in h.phis}
    mine.update((d.id, d) for ins in h.instrs for d in ins.dests)
    found: dict[int, ir.Value] = {}

    def see(v):
        if isinstance(v, ir.Address):
            v = v.base
        if isinstance(v, ir.Value) and v.id in mine:
            found[v.id] = mine[v.id]
    for b in fn.blocks:
        if b is h:
            continue
        for phi in b.phis:
            for _, v in phi.incoming:
                see(v)
        for ins in b.instrs:
            for s in (*ins.srcs, ins.guard, *ins.merge):
                see(s)
    return list(found.values())


class _Except:
    """The blocks of `fn` other than some, for `substitute`."""

    def __init__(self, fn: ir.Function, skip: set[int]):
        self.blocks = [b for b in fn.blocks if id(b) not in skip]


class _Divergent:
    """`divergent_values(fn)`, computed at the first question (asked before any rewrite)."""

    def __init__(self, fn: ir.Function):
        self.fn, self.ids = fn, None

    def __contains__(self, vid: int) -> bool:
        if not BRANCH_DIVERGENT:
            return False
        if self.ids is None:
            self.ids = divergent_values(self.fn)
        return vid in self.ids


def unroll_runtime_loops(fn: ir.Function) -> bool:
    if not ENABLED:
        return False
    changed = False
    divergent = _Divergent(fn)
    for h in list(fn.blocks):
        if _unroll(fn, h, divergent):
            changed = True
    return changed
