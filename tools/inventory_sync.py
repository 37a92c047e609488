"""Value kernels of the per-form checker for the forms that compute no register result of
their own: barriers, fences, cache hints, control flow, the vector `mov` packs, brkpt/trap,
stackrestore.

- barriers (`bar`/`barrier` `.sync`/`.arrive`, `bar.warp.sync`; `barrier.cluster.arrive/wait`
  as a pair in a cluster launch of one CTA): each thread writes a value
  to its shared slot and reads its partner's (the other warp's; the neighbour lane for
  bar.warp.sync) after the barrier. The first warp computes its value through a loop first,
  so a reader that does not wait sees the slot's old contents. An `.arrive` form is the
  first warp's (the producer's); the second warp waits with `bar.sync` on the same barrier.
  A non-aligned `barrier` form is reached by the first warp's lanes apart (even and odd
  lanes at two copies of it), the second warp coming last (`_diverged_barrier_body`).
- ordering and hints (fence, membar, prefetch[u], applypriority, discard, nanosleep, pmevent,
  griddepcontrol, brkpt/trap under a predicate that is false when run): the form among loads, stores and
  arithmetic on the thread's input row; the results must be the same as ptxas's cubin's,
  and the instructions ptxas writes for the form (its kernel's opcodes that its kernel
  without the form lacks) must be in ours (`form_opcodes_present`).
- control flow (`bra`, `brx.idx`, `call`, `ret`, `exit`, `.uni` with a value all threads
  share): each path writes a distinct value, chosen by the thread's input.
- `mov` of a vector to or from one register: the elements in and out by way of memory.
- `stackrestore`: the distance between an alloca before it and one after it (stacksave
  before the first).
"""
from __future__ import annotations

import random
import re

import numpy as np

from ptx2sass.frontend.inventory import Form

THREADS = 64
IN_SLOTS, OUT_SLOTS = 8, 16          # out rows of 128 bytes: discard/applypriority take one
BARRIERS = ("bar", "barrier")
ORDERING = ("fence", "membar", "prefetch", "prefetchu", "applypriority", "discard",
            "nanosleep", "pmevent", "brkpt", "trap", "griddepcontrol")
CONTROL = ("bra", "brx", "call", "ret", "exit")

HEAD = """.version {v0}.{v1}
.target sm_{sm}
.address_size 64
{funcs}.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdi, %rdo, %rdt, %rdi0;
.reg .b32 %tx, %sa, %pa, %v<8>, %ix, %n;
.reg .b16 %h<4>;
.reg .pred %pz, %pw, %pl;
.shared .align 16 .b8 sbuf[{shared}];
.local .align 16 .b8 lbuf[16];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u64 %rdi0, %rdi;
mov.u32 %tx, %tid.x;
mul.wide.u32 %rdt, %tx, {in_row};
add.s64 %rdi, %rdi, %rdt;
mul.wide.u32 %rdt, %tx, {out_row};
add.s64 %rdo, %rdo, %rdt;
ld.global.u32 %v0, [%rdi];
ld.global.u32 %v1, [%rdi+8];
setp.eq.u32 %pz, %tx, 1000;
"""
TAIL = "ret;\n}\n"
# a value that takes a 40-step loop to compute (%v0 from %v0 and %v1): the warps that run it
# reach the barrier long after the others
SLOW_VALUE = ["mov.u32 %n, 40;", "L_loop:", "mad.lo.u32 %v0, %v0, 3, %v1;", "sub.u32 %n, %n, 1;",
              "setp.ne.u32 %pl, %n, 0;", "@%pl bra L_loop;"]


def _kind(form: Form) -> str | None:
    if form.arch_specific:
        return None
    kinds = tuple(op.kind for op in form.operands)
    if form.opcode in BARRIERS and form.spelling.split(".")[1:2] in (["sync"], ["arrive"], ["cta"], ["warp"]):
        if form.spelling in ("bar.warp.sync",) or kinds in (("a", "a"),):
            return "barrier"
    if form.spelling.startswith("barrier.cluster.") and kinds == ():
        return "cluster_barrier"
    if form.opcode in ORDERING:
        if kinds in ((), ("m",), ("m", "x"), ("a",), ("x",)):
            return "ordering"
    if form.opcode in CONTROL and kinds in ((), ("l",), ("r", "L"), ("f",)):
        return "control"
    if form.opcode == "stackrestore" and kinds == ("r",):
        return "stack"
    if form.opcode == "mov" and kinds in (("d", "v2"), ("d", "v4"), ("v2", "r"), ("v4", "r")):
        return "pack"
    return None


def is_sync_form(form: Form) -> bool:
    return _kind(form) is not None


def _head(form: Form, ptx, sm: int, funcs: str = "") -> str:
    return HEAD.format(v0=ptx[0], v1=ptx[1], sm=sm, funcs=funcs, shared=4 * THREADS,
                       in_row=8 * IN_SLOTS, out_row=8 * OUT_SLOTS)


def _barrier_body(form: Form, keep: bool) -> str:
    """Writer loop, own slot, the barrier, the partner's slot."""
    warp = form.spelling == "bar.warp.sync"
    partner = "xor.b32 %ix, %tx, 1;" if warp else "xor.b32 %ix, %tx, 32;"
    if warp:
        line = f"{form.spelling} 0xffffffff;"
    else:
        line = f"{form.spelling} 1, {THREADS};" if len(form.operands) == 2 else f"{form.spelling} 1;"
    body = [
        "mov.u32 %sa, sbuf;",
        "mad.lo.u32 %pa, %tx, 4, %sa;",
        # the first warp's value (for bar.warp.sync: the even lanes') takes a loop to compute
        ("and.b32 %n, %tx, 1;\nsetp.ne.u32 %pw, %n, 0;" if warp else "setp.ge.u32 %pw, %tx, 32;"),
        "@%pw bra L_store;",
        *SLOW_VALUE,
        "L_store:",
        "st.shared.u32 [%pa], %v0;",
    ]
    if keep:
        if ".arrive" in form.spelling:
            body += ["@%pw bra L_consumer;", line, "bra.uni L_read;", "L_consumer:",
                     f"bar.sync 1, {THREADS};", "L_read:"]
        else:
            body.append(line)
    body += [partner, "mad.lo.u32 %ix, %ix, 4, %sa;", "ld.shared.u32 %v2, [%ix];",
             "st.global.u32 [%rdo], %v0;", "st.global.u32 [%rdo+8], %v2;"]
    return "\n".join(body) + "\n"


def _diverged(form: Form) -> bool:
    """A non-aligned `barrier` (the PTX ISA lets a warp's threads reach it apart)."""
    return form.opcode == "barrier" and ".aligned" not in form.spelling and len(form.operands) == 2


def _diverged_barrier_body(form: Form, keep: bool) -> str:
    """The first warp's lanes reach the form apart (even lanes at one copy, odd ones at
    another) after storing their values; the second warp computes its values through a
    loop first, stores them and waits with `bar.sync` (an `.arrive` form) or the form
    itself, then reads the first warp's slots (and the first warp, for a `.sync` form, the
    second's). Each warp must count once: counted twice, the barrier completes before the
    second warp comes (a wrong read, then a deadlock)."""
    line = f"{form.spelling} 1, {THREADS};"
    arrive = ".arrive" in form.spelling
    body = [
        "mov.u32 %sa, sbuf;",
        "mad.lo.u32 %pa, %tx, 4, %sa;",
        "setp.ge.u32 %pw, %tx, 32;",
        "@%pw bra L_consumer;",
        "st.shared.u32 [%pa], %v0;",
        "and.b32 %n, %tx, 1;",
        "setp.ne.u32 %pl, %n, 0;",
        "@%pl bra L_odd;",
        line if keep else "",
        "bra.uni L_met;",
        "L_odd:",
        line if keep else "",
        "L_met:",
        ("st.global.u32 [%rdo], %v0;\nbra.uni L_done;" if arrive else "bra.uni L_read;"),
        "L_consumer:",
        *SLOW_VALUE,
        "st.shared.u32 [%pa], %v0;",
        f"bar.sync 1, {THREADS};" if arrive else (line if keep else ""),
        "L_read:",
        "xor.b32 %ix, %tx, 32;",
        "mad.lo.u32 %ix, %ix, 4, %sa;",
        "ld.shared.u32 %v2, [%ix];",
        "st.global.u32 [%rdo], %v0;",
        "st.global.u32 [%rdo+8], %v2;",
        "L_done:",
    ]
    return "\n".join(x for x in body if x) + "\n"


def _cluster_barrier_body(form: Form, keep: bool) -> str:
    """barrier.cluster.arrive/.wait in place of a CTA barrier: the first warp's values take
    a loop, every thread stores its value, arrives, waits and reads the other warp's (the
    form's counterpart is the plain aligned one). Launched as a cluster of one CTA
    (`cluster_shape`), so ptxas's cluster path (UCGABAR_*) runs, not its BAR.SYNC 0."""
    arrive = form.spelling.startswith("barrier.cluster.arrive")
    line = f"{form.spelling};" if keep else ""
    body = [
        "mov.u32 %sa, sbuf;",
        "mad.lo.u32 %pa, %tx, 4, %sa;",
        "setp.ge.u32 %pw, %tx, 32;",
        "@%pw bra L_store;",
        *SLOW_VALUE,
        "L_store:",
        "st.shared.u32 [%pa], %v0;",
        line if arrive else "barrier.cluster.arrive.aligned;",
        "barrier.cluster.wait.aligned;" if arrive else line,
        "xor.b32 %ix, %tx, 32;", "mad.lo.u32 %ix, %ix, 4, %sa;", "ld.shared.u32 %v2, [%ix];",
        "st.global.u32 [%rdo], %v0;", "st.global.u32 [%rdo+8], %v2;",
    ]
    return "\n".join(x for x in body if x) + "\n"


def cluster_shape(form: Form):
    """The cluster a form's kernel is launched as (None: a plain launch)."""
    return (1, 1, 1) if _kind(form) == "cluster_barrier" else None


def _ordering_line(form: Form) -> str:
    kinds = tuple(op.kind for op in form.operands)
    s = form.spelling
    if kinds == ():
        return f"@%pz {s};" if form.opcode in ("brkpt", "trap") else f"{s};"
    if kinds == ("a",):                     # nanosleep: a few ns from the input
        return f"and.b32 %v3, %v1, 15;\n{s} %v3;"
    if kinds == ("x",):
        return f"{s} 1;"
    space = ".local" in form.spaces
    if kinds == ("m",):
        return f"{s} [lbuf];" if space else f"{s} [%rdi];"
    return f"{s} [%rdo], 128;"              # discard/applypriority: the thread's out row


def _ordering_body(form: Form, keep: bool) -> str:
    """Loads, a local and a shared round trip, the form, arithmetic, stores."""
    discard = form.opcode in ("discard", "applypriority")
    local = ".local" in form.spaces
    body = [
        "mov.u32 %sa, sbuf;",
        "mad.lo.u32 %pa, %tx, 4, %sa;",
        "st.local.u32 [lbuf], %v1;" if local else "",
        "st.shared.u32 [%pa], %v0;",
    ]
    if not discard:
        body.append("st.global.u32 [%rdo+16], %v1;")
    if keep:
        body.append(_ordering_line(form))
    body += [
        "ld.shared.u32 %v2, [%pa];",
        "ld.local.u32 %v3, [lbuf];" if local else "add.u32 %v3, %v1, 5;",
        "xor.b32 %v4, %v2, %v3;",
        "mad.lo.u32 %v5, %v0, %v1, %v4;",
        "st.global.u32 [%rdo], %v4;",
        "st.global.u32 [%rdo+8], %v5;",
    ]
    if discard:
        body.append("st.global.u32 [%rdo+16], %v1;")
    return "\n".join(body) + "\n"


def _control(form: Form, ptx, sm: int) -> str:
    s = form.spelling
    uni = s.endswith(".uni")
    # a value all threads share (row 0's word), or the thread's own
    sel = "ld.global.u32 %v6, [%rdi0+16];" if uni else "ld.global.u32 %v6, [%rdi+16];"
    if form.opcode == "bra":
        body = [sel, "setp.ne.u32 %pl, %v6, 0;", "mov.u32 %v2, 7;",
                f"@%pl {s} L_taken;" if not uni else f"@%pl {s} L_taken;",
                "add.u32 %v2, %v0, %v1;", "L_taken:", "st.global.u32 [%rdo], %v2;"]
        return _head(form, ptx, sm) + "\n".join(body) + "\n" + TAIL
    if form.opcode == "brx":
        body = [sel, "and.b32 %ix, %v6, 3;", "L_tab: .branchtargets L_0, L_1, L_2, L_3;",
                f"{s} %ix, L_tab;"]
        for k, expr in enumerate(("add.u32 %v2, %v0, %v1;", "xor.b32 %v2, %v0, %v1;",
                                  "mul.lo.u32 %v2, %v0, %v1;", "sub.u32 %v2, %v0, %v1;")):
            body += [f"L_{k}:", expr, "bra.uni L_join;"]
        body += ["L_join:", "st.global.u32 [%rdo], %v2;"]
        return _head(form, ptx, sm) + "\n".join(body) + "\n" + TAIL
    if form.opcode == "call":
        funcs = (".func (.param .b32 r) fsum(.param .b32 a, .param .b32 b)\n{\n.reg .b32 %x<3>;\n"
                 "ld.param.b32 %x0, [a];\nld.param.b32 %x1, [b];\nmul.lo.u32 %x2, %x0, %x1;\n"
                 "add.u32 %x2, %x2, %x0;\nst.param.b32 [r], %x2;\nret;\n}\n")
        body = ["{", ".param .b32 pa;", ".param .b32 pb;", ".param .b32 pr;",
                "st.param.b32 [pa], %v0;", "st.param.b32 [pb], %v1;",
                f"{s} (pr), fsum, (pa, pb);", "ld.param.b32 %v2, [pr];", "}",
                "st.global.u32 [%rdo], %v2;"]
        return _head(form, ptx, sm, funcs) + "\n".join(body) + "\n" + TAIL
    if form.opcode == "ret":
        # a function returning early for some threads (all or none for .uni)
        funcs = (".func (.param .b32 r) fpick(.param .b32 a, .param .b32 b, .param .b32 c)\n{\n"
                 ".reg .b32 %x<4>;\n.reg .pred %xp;\nld.param.b32 %x0, [a];\nld.param.b32 %x1, [b];\n"
                 "ld.param.b32 %x3, [c];\nst.param.b32 [r], %x0;\nsetp.ne.u32 %xp, %x3, 0;\n"
                 f"@%xp {s};\nxor.b32 %x2, %x0, %x1;\nst.param.b32 [r], %x2;\n{s};\n}}\n")
        body = [sel, "{", ".param .b32 pa;", ".param .b32 pb;", ".param .b32 pc;", ".param .b32 pr;",
                "st.param.b32 [pa], %v0;", "st.param.b32 [pb], %v1;", "st.param.b32 [pc], %v6;",
                "call (pr), fpick, (pa, pb, pc);", "ld.param.b32 %v2, [pr];", "}",
                "st.global.u32 [%rdo], %v2;"]
        return _head(form, ptx, sm, funcs) + "\n".join(body) + "\n" + TAIL
    # exit: some threads leave before their stores
    body = [sel, "st.global.u32 [%rdo+8], %v1;", "setp.ne.u32 %pl, %v6, 0;", f"@%pl {s};",
            "st.global.u32 [%rdo], %v0;"]
    return _head(form, ptx, sm) + "\n".join(body) + "\n" + TAIL


def _pack(form: Form, ptx, sm: int) -> str:
    d, v = form.operands if form.operands[0].kind == "d" else form.operands[::-1]
    n = int(v.kind[1:])
    w = {".b32": 32, ".b64": 64, ".b128": 128}[d.type]
    ew = w // n
    names = [f"%e{j}" for j in range(n)]
    decl = f".reg .b{ew} %e<{n}>;\n.reg .b{w} %whole;\n"
    if form.operands[0].kind == "d":         # pack: elements in, one register out
        body = [f"ld.global.b{ew} {e}, [%rdi+{8 * j}];" for j, e in enumerate(names)]
        body += [f"{form.spelling} %whole, {{{', '.join(names)}}};", f"st.global.b{w} [%rdo], %whole;"]
    else:
        body = [f"ld.global.b{w} %whole, [%rdi];", f"{form.spelling} {{{', '.join(names)}}}, %whole;"]
        body += [f"st.global.b{ew} [%rdo+{8 * j}], {e};" for j, e in enumerate(names)]
    return _head(form, ptx, sm) + decl + "\n".join(body) + "\n" + TAIL


def _stack(form: Form, ptx, sm: int) -> str:
    """stacksave, an alloca, the form, a second alloca: with the stack restored the second
    lies above the first (the stack grows down), without it below. (No access through the
    pointer: ptxas 13.5 reads an `st.local`/`ld.local` round trip through an alloca's
    pointer back as the stored value only where the pointer is 0, another register's
    otherwise.)"""
    w = form.operands[0].type[2:]
    body = [f".reg .b{w} %stks, %stka, %stkb, %stkd;", f"stacksave.u{w} %stks;", f"alloca.u{w} %stka, 64, 16;",
            f"{form.spelling} %stks;", f"alloca.u{w} %stkb, 32, 16;", f"sub.s{w} %stkd, %stkb, %stka;",
            f"st.global.u{w} [%rdo], %stkd;"]
    return _head(form, ptx, sm) + "\n".join(body) + "\n" + TAIL


def sync_kernel(form: Form, ptx: tuple[int, int], rng: random.Random, sm: int = 89):
    """(PTX text, input rows, output slots, the same kernel without the form or None): the
    last is given where the checker also asks for the form's instructions in our cubin."""
    kind = _kind(form)
    data = np.array([[rng.getrandbits(32) for _ in range(IN_SLOTS)] for _ in range(THREADS)],
                    dtype=np.uint64)
    data[:, 2] &= 3                          # selectors (brx.idx's index, bra/exit/ret's)
    data[::3, 2] = 0
    if kind == "control":
        return _control(form, ptx, sm), data, OUT_SLOTS, None
    if kind == "stack":
        return _stack(form, ptx, sm), data, OUT_SLOTS, None
    if kind == "pack":
        return _pack(form, ptx, sm), data, OUT_SLOTS, None
    if kind == "cluster_barrier":
        body = _cluster_barrier_body
    else:
        body = (_diverged_barrier_body if _diverged(form) else _barrier_body) if kind == "barrier" else _ordering_body
    text = _head(form, ptx, sm) + body(form, True) + TAIL
    without = _head(form, ptx, sm) + body(form, False) + TAIL
    return text, data, OUT_SLOTS, without


# the kernel's own code, which moves when the form comes or goes (ptxas forwards a local
# store to the load after it unless a generic access lies between, folds an unused
# predicate, wraps a guarded trap in a convergence region): not the form's instructions
SURROUNDINGS = frozenset("IADD3 VIADD IMAD LOP3 SHF LEA MOV HFMA2 SEL ISETP PLOP3 S2R S2UR ULDC UMOV "
                         "UIADD3 ULOP3 UP2UR UR2UP R2UR LDC LDL STL LDS STS LDG STG BSSY BSYNC BRA "
                         "EXIT NOP WARPSYNC".split())
_REGISTER = re.compile(r"\b(UR|R|UP|P)(\d+|Z|T)\b")
# a subroutine's symbol in its kernel's text: ptxas's `$__internal_N_$name`, ours `$k$$name`
_SUBROUTINE = re.compile(r"\$(?:__internal_\d+_|[A-Za-z_]\w*\$)(?=\$__)")


def instruction_keys(cubin: bytes) -> set[str]:
    """A cubin's instructions as nvdisasm reads them, register numbers and the kernel
    prefix of a subroutine's symbol left out (which registers two compilers pick differs,
    and how they name a kernel's copy of a routine; opcode, modifiers, immediates, operand
    shapes and the routine's name do not), outside SURROUNDINGS."""
    from ptx2sass import oracle
    from ptx2sass.encoder.sass_text import format_instruction, parse_listing
    from tools.emu_testing import _parseable
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    keys = set()
    for fn in listing.functions:
        for e in fn.entries:
            ins = e.instruction
            if ins.opcode in SURROUNDINGS:
                continue
            text = format_instruction(type(ins)(ins.opcode, ins.modifiers, ins.operands, None, None))
            text = _SUBROUTINE.sub("", _REGISTER.sub(lambda m: m.group(1), text))
            keys.add(text.strip().rstrip(";").strip())
    return keys


def form_instructions_missing(ours: bytes, theirs: bytes, theirs_without: bytes) -> list[str]:
    """The instructions ptxas writes for the form (in its kernel, not in its kernel without
    the form) that our cubin lacks."""
    return sorted((instruction_keys(theirs) - instruction_keys(theirs_without)) - instruction_keys(ours))
