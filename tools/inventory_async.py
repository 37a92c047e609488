"""Value kernels of the per-form checker for the data-movement forms that are neither plain
loads/stores nor atomics: `ldmatrix`/`stmatrix` (a warp's 8x8 b16 matrices in shared
memory, rows at permuted addresses), `cp.async` (each thread copies its own chunk from its
input row into shared memory, prefilled from the same row, then waits; with a source size
the rest of the chunk is zero-filled), `cp.async.commit_group/wait_group/wait_all` (the
wait of such a copy), `createpolicy` (the policy word, from valid fractions and ranges)
and `mov.b128`. Results are compared with ptxas's cubin in the emulator; cp.async also
with a NumPy model of the PTX semantics."""
from __future__ import annotations

import random

import numpy as np

from ptx2sass.frontend.inventory import Form

THREADS = 64
IN_SLOTS, OUT_SLOTS = 16, 8
HEAD = """.version {v0}.{v1}
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdi, %rdo, %rdt, %rdg, %pol, %d, %x<4>;
.reg .b32 %tx, %sa, %la, %w, %ln, %n, %r<4>;
.reg .f32 %f;
{b128}.shared .align 16 .b8 sbuf[{shared}];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %rdt, %tx, {in_row};
add.s64 %rdi, %rdi, %rdt;
mul.wide.u32 %rdt, %tx, {out_row};
add.s64 %rdo, %rdo, %rdt;
mov.u32 %sa, sbuf;
mad.lo.u32 %sa, %tx, 16, %sa;
"""
CP_WAITS = {"cp.async.commit_group": ("cp.async.commit_group;", "cp.async.wait_group 0;"),
            "cp.async.wait_group": ("cp.async.commit_group;", "cp.async.wait_group 0;"),
            "cp.async.wait_all": ("", "cp.async.wait_all;")}


# cp.async.bulk forms (sm_90+): each thread's 16 bytes through a bulk copy; the group forms
# wait for a shared::cta -> global copy
BULK_TO_SHARED = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
BULK_TO_GLOBAL = "cp.async.bulk.global.shared::cta.bulk_group"
BULK_WAITS = {BULK_TO_GLOBAL: ("cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"),
              "cp.async.bulk.commit_group": ("cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"),
              "cp.async.bulk.wait_group": ("cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"),
              "cp.async.bulk.wait_group.read": ("cp.async.bulk.commit_group;",
                                                "cp.async.bulk.wait_group.read 0;")}


def is_async_form(form: Form) -> bool:
    kinds = tuple(op.kind for op in form.operands)
    if form.opcode in ("ldmatrix", "stmatrix"):
        return ".m8n8" in form.modifiers
    if form.opcode == "cp":
        if form.spelling in CP_WAITS or form.spelling in BULK_WAITS:
            return True
        if form.spelling == BULK_TO_SHARED:
            return kinds == ("m", "m", "a", "m")
        return form.spelling.startswith("cp.async.c") and kinds[:3] == ("m", "m", "x")
    if form.opcode == "createpolicy":
        return kinds in (("d", "a"), ("d", "m", "a", "a"))
    return form.opcode == "mov" and form.types == (".b128",)


def _head(ptx, sm, shared=1024):
    b128 = ".reg .b128 %q<2>;\n" if ptx >= (8, 3) else ""
    return HEAD.format(v0=ptx[0], v1=ptx[1], sm=sm, shared=shared, in_row=8 * IN_SLOTS, out_row=8 * OUT_SLOTS,
                       b128=b128)


def async_kernel(form: Form, ptx: tuple[int, int], rng: random.Random, sm: int = 89):
    """(PTX text, input rows or None, output slots, model or None)."""
    data = np.array([[rng.getrandbits(64) for _ in range(IN_SLOTS)] for _ in range(THREADS)], dtype=np.uint64)
    body: list[str] = []
    model = None
    if form.opcode in ("ldmatrix", "stmatrix"):
        n = next(int(m[2:]) for m in form.modifiers if m in (".x1", ".x2", ".x4"))
        generic = not any(s.startswith(".shared") for s in form.spaces)
        # lane l of a warp names row (5 l + 3) mod 32 of the warp's 512 bytes
        body += ["ld.global.b64 %x0, [%rdi];", "ld.global.b64 %x1, [%rdi+8];",
                 "st.shared.v2.b64 [%sa], {%x0, %x1};" if form.opcode == "ldmatrix" else "",
                 "bar.sync 0;", "shr.u32 %w, %tx, 5;", "and.b32 %ln, %tx, 31;", "mad.lo.u32 %ln, %ln, 5, 3;",
                 "and.b32 %ln, %ln, 31;", "mov.u32 %la, sbuf;", "mad.lo.u32 %la, %w, 512, %la;",
                 "mad.lo.u32 %la, %ln, 16, %la;"]
        address = "[%la]"
        if generic:
            body += ["cvt.u64.u32 %rdg, %la;", "cvta.shared.u64 %rdg, %rdg;"]
            address = "[%rdg]"
        regs = "{" + ", ".join(f"%r{k}" for k in range(n)) + "}"
        if form.opcode == "ldmatrix":
            body.append(f"{form.spelling} {regs}, {address};")
            body += [f"st.global.b32 [%rdo+{8 * k}], %r{k};" for k in range(n)]
        else:
            body += [f"ld.global.b32 %r{k}, [%rdi+{16 + 4 * k}];" for k in range(n)]
            body += ["mov.b64 %x2, 0;", "st.shared.v2.b64 [%sa], {%x2, %x2};", "bar.sync 0;",
                     f"{form.spelling} {address}, {regs};", "bar.sync 0;",
                     "ld.shared.v2.b64 {%x0, %x1}, [%sa];", "st.global.v2.b64 [%rdo], {%x0, %x1};"]
    elif form.opcode == "cp" and (form.spelling in BULK_WAITS or form.spelling == BULK_TO_SHARED):
        # each thread's 16 bytes from its input row ([+16]) through shared memory to its output
        if form.spelling == BULK_TO_SHARED:
            # thread 0 sets up the mbarrier (after the copy area) and expects every thread's
            # bytes; all wait for phase 0
            body += ["mov.u32 %la, sbuf;", "add.u32 %la, %la, 1024;", "setp.ne.u32 %p, %tx, 0;",
                     "@%p bra L_init;", "mbarrier.init.shared.b64 [%la], 1;",
                     f"mbarrier.arrive.expect_tx.shared.b64 %d, [%la], {16 * THREADS};", "L_init:",
                     "bar.sync 0;", "add.s64 %rdg, %rdi, 16;", "cvta.to.global.u64 %rdg, %rdg;",
                     f"{BULK_TO_SHARED} [%sa], [%rdg], 16, [%la];", "L_wait:",
                     "mbarrier.try_wait.parity.shared.b64 %p, [%la], 0;", "@!%p bra L_wait;",
                     "ld.shared.v2.b64 {%x0, %x1}, [%sa];", "st.global.v2.b64 [%rdo], {%x0, %x1};"]
        else:
            commit, wait = BULK_WAITS[form.spelling]
            body += ["ld.global.v2.b64 {%x0, %x1}, [%rdi+16];", "st.shared.v2.b64 [%sa], {%x0, %x1};",
                     "fence.proxy.async.shared::cta;", "cvta.to.global.u64 %rdg, %rdo;",
                     f"{BULK_TO_GLOBAL} [%rdg], [%sa], 16;", commit, wait]

        def model(rows: np.ndarray) -> np.ndarray:
            out = np.zeros((THREADS, OUT_SLOTS), dtype=np.uint64)
            out[:, :2] = rows[:, 2:4]
            return out
        text = _head(ptx, sm, shared=1024 + 16).replace(".reg .f32 %f;", ".reg .f32 %f;\n.reg .pred %p;")
        return text + "\n".join(line for line in body if line) + "\nret;\n}\n", data, OUT_SLOTS, model
    elif form.opcode == "cp":
        if form.spelling in CP_WAITS:
            copy, size, src_size = "cp.async.ca.shared.global", 16, None
            commit, wait = CP_WAITS[form.spelling]
        else:
            copy, size = form.spelling, int(form.operands[2].type)
            src_size = form.operands[3] if len(form.operands) > 3 else None
            commit, wait = "", "cp.async.wait_all;"
        ops = ["[%sa]", "[%rdg]", str(size)]
        extra = []
        sizes = [t % (size + 1) for t in range(THREADS)]
        if src_size is not None and src_size.kind == "a":
            ops.append("%n")
            extra.append("ld.global.b32 %n, [%rdi+32];")
            data[:, 4] = sizes
        elif src_size is not None:               # an L2 cache policy
            ops.append("%pol")
            extra.append("createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;")
        body += ["ld.global.v2.b64 {%x0, %x1}, [%rdi+16];", "st.shared.v2.b64 [%sa], {%x0, %x1};",
                 "cvta.to.global.u64 %rdg, %rdi;"] + extra
        body += [f"{copy} {', '.join(ops)};", commit, wait,
                 "ld.shared.v2.b64 {%x0, %x1}, [%sa];", "st.global.v2.b64 [%rdo], {%x0, %x1};"]
        zfill = src_size is not None and src_size.kind == "a"

        def model(rows: np.ndarray) -> np.ndarray:
            out = np.zeros((THREADS, OUT_SLOTS), dtype=np.uint64)
            for t in range(THREADS):
                raw = rows[t].astype("<u8").tobytes()
                chunk = bytearray(raw[16:32])
                n = int(rows[t, 4]) if zfill else size
                chunk[:size] = raw[:n] + bytes(size - n)
                out[t, :2] = np.frombuffer(bytes(chunk), dtype="<u8")
            return out
    elif form.opcode == "createpolicy":
        if form.operands[1].kind == "a":
            fractions = [1.0, 0.5, 0.25, 0.75, 0.125, 0.3, 0.9, 0.0625]
            data[:, 0] = [np.float32(fractions[t % len(fractions)]).view(np.uint32) for t in range(THREADS)]
            body += ["ld.global.f32 %f, [%rdi];", f"{form.spelling} %d, %f;"]
        else:
            for t in range(THREADS):
                total = 1 << rng.randrange(12, 32)
                data[t, 1] = rng.randrange(total + 1)
                data[t, 2] = total
            body += ["ld.global.b32 %r0, [%rdi+8];", "ld.global.b32 %r1, [%rdi+16];",
                     f"{form.spelling} %d, [%rdi], %r0, %r1;"]
        body.append("st.global.b64 [%rdo], %d;")
    else:                                            # mov.b128
        kinds = tuple(op.kind for op in form.operands)
        body += ["ld.global.b64 %x0, [%rdi];", "ld.global.b64 %x1, [%rdi+8];", "mov.b128 %q0, {%x0, %x1};"]
        if kinds == ("d", "r"):
            body += ["mov.b128 %q1, %q0;", "mov.b128 {%x2, %x3}, %q1;"]
        elif kinds == ("d", "v2"):
            body += ["mov.b128 {%x2, %x3}, %q0;"]
        else:
            body += ["mov.b128 {%x2, %x3}, %q0;"]
        body += ["st.global.b64 [%rdo], %x2;", "st.global.b64 [%rdo+8], %x3;"]
    text = _head(ptx, sm) + "\n".join(line for line in body if line) + "\nret;\n}\n"
    return text, data, OUT_SLOTS, model
