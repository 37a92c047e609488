"""Statements of the sm_90+ feature groups (`newarch.GROUPS`). Each is defined by the PTX
manual and deterministic in the emulator:

- cluster: the cluster's shared words `g_cl` (program.py) have two halves. The first is
  written by every thread before a cluster barrier in the prelude and only read after it
  (by any CTA of the cluster, through mapa); thread t writes (st, atom, red) only word t of
  the second half of the next CTA, nobody else touches that word until `cluster_gather`
  (the body's last statement) reads it back after a cluster barrier; the epilogue's
  cluster barrier keeps every CTA's shared memory alive until all are done.
- bulk: each thread's own mbarrier and 16 bytes of its g_sq, waited for with
  try_wait.parity before they are read; bulk stores to its private global bytes, waited
  for with wait_group.
- stmatrix: the warp's own shared scratch, read back after bar.warp.sync.
"""
from __future__ import annotations

from ptx2sass.fuzz.program import FULL_MASK, Reg

CLUSTER_SPECIALS = ("%cluster_ctarank", "%cluster_nctarank", "%clusterid.x", "%clusterid.y",
                    "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_nctaid.x", "%nclusterid.x")
CLUSTER_ATOMS = ("add.u32", "exch.b32", "min.u32", "max.u32", "min.s32", "and.b32", "or.b32", "xor.b32",
                 "inc.u32", "dec.u32")


def _build(b, text: str, key: str, **kw):
    if not b.g.own_target_has(text):
        return None
    return b.build(text, key, **kw)


def _cluster_rank(b, rng) -> tuple[str, str]:
    """(lines, register) of a CTA rank in the cluster: this CTA's, the next one's, or one
    picked by a value."""
    pick = rng.choice(("own", "next", "value"))
    if pick == "own":
        return "", "$crk"
    if pick == "next":
        return "", "$cnx"
    t = b.tmp("b32")
    n = b.tmp("b32")
    return (f"mov.u32 {n}, %cluster_nctarank;\nrem.u32 {t}, {b.src('b32', 'u32')}, {n};\n", t)


def op_cluster(g, ctx):
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    tpb = g.block_threads
    form = rng.choice(("special", "special", "explicit", "load", "load", "generic", "store", "atom", "red"))
    if form == "special":
        sreg = rng.choice(CLUSTER_SPECIALS)
        d = b.dst("b32")
        return _build(b, f"mov.u32 {d}, {sreg};", f"mov.special.{sreg[1:].split('.')[0]}")
    if form == "explicit":
        p = b.dst("pred")
        return _build(b, f"mov.pred {p}, %is_explicit_cluster;", "mov.special.is_explicit_cluster")
    if form in ("load", "generic"):
        # a word of some CTA's first half (written before the prelude's cluster barrier)
        idx, base = b.tmp("b32"), b.tmp("b32")
        lines, rank = _cluster_rank(b, rng)
        lines += (f"rem.u32 {idx}, {b.src('b32', 'u32')}, {tpb};\nmov.u32 {base}, $clu;\n"
                  f"mad.lo.u32 {idx}, {idx}, 4, {base};\n")
        width = rng.choice(("u32", "u32", "u16", "u8", "s8"))
        offset = rng.choice((0, 1, 2, 3)) if width in ("u8", "s8") else rng.choice((0, 2)) if width == "u16" else 0
        d = b.dst("b32" if width == "u32" else "b16")
        if form == "load":
            remote = b.tmp("b32")
            lines += f"mapa.shared::cluster.u32 {remote}, {idx}, {rank};\n"
            space = rng.choice((".shared::cluster", ".shared::cluster"))
            lines += f"ld{space}.{width} {d}, [{remote}+{offset}];"
            key = f"ld{space}.{width}"
        else:
            a, remote = b.tmp("b64"), b.tmp("b64")
            lines += (f"cvt.u64.u32 {a}, {idx};\ncvta.shared.u64 {a}, {a};\n"
                      f"mapa.u64 {remote}, {a}, {rank};\nld.{width} {d}, [{remote}+{offset}];")
            key = f"ld.{width}"
        if rng.random() < 0.4:
            r = b.dst("b32")
            ref = remote
            lines += f"\ngetctarank{'.shared::cluster.u32' if form == 'load' else '.u64'} {r}, {ref};"
        return _build(b, lines, key, guard_ok=False, uniform_ok=False, spaces=("shared::cluster",))
    # this thread's word of the next CTA's second half
    own, remote = b.tmp("b32"), b.tmp("b32")
    lines = f"add.u32 {own}, $clb, {4 * tpb};\nmapa.shared::cluster.u32 {remote}, {own}, $cnx;\n"
    if form == "store":
        t = rng.choice(("u32", "b32", "u16", "u8"))
        offset = rng.choice((0, 2)) if t == "u16" else rng.choice((0, 1, 3)) if t == "u8" else 0
        src = b.src("b32" if t in ("u32", "b32") else "b16")
        return _build(b, lines + f"st.shared::cluster.{t} [{remote}+{offset}], {src};", f"st.shared::cluster.{t}",
                      guard_ok=False, spaces=("shared::cluster",))
    op = rng.choice(CLUSTER_ATOMS)
    sem = rng.choice(("", "", ".relaxed.cluster", ".acq_rel.cluster", ".relaxed.cta"))
    if form == "atom":
        d = b.dst("b32")
        key = f"atom{sem}.shared::cluster.{op}"
        return _build(b, lines + f"{key} {d}, [{remote}], {b.src('b32')};", key, guard_ok=False, uniform_ok=False,
                      spaces=("shared::cluster",))
    if op.startswith("exch"):
        op = "add.u32"
    sem = sem.replace("acq_rel", "release")      # red's semantics: relaxed or release
    key = f"red{sem}.shared::cluster.{op}"
    return _build(b, lines + f"{key} [{remote}], {b.src('b32')};", key, guard_ok=False, spaces=("shared::cluster",))


def cluster_gather(g, ctx):
    """The body's last statement: after a cluster barrier, this thread's word of its own
    CTA's second half (what the previous CTA's thread of its number wrote there)."""
    from ptx2sass.fuzz.generator import Builder
    b = Builder(g, ctx)
    a = b.tmp("b32")
    d = b.dst("b32")
    arrive = g.rng.choice(("barrier.cluster.arrive.release.aligned;", "barrier.cluster.arrive;",
                           "barrier.cluster.arrive.aligned;"))
    wait = g.rng.choice(("barrier.cluster.wait.acquire.aligned;", "barrier.cluster.wait;"))
    text = f"{arrive}\n{wait}\nadd.u32 {a}, $clb, {4 * g.block_threads};\nld.shared.u32 {d}, [{a}];"
    return b.build(text, "ld.shared.u32.cluster_gather", barrier=True, guard_ok=False, uniform_ok=False)


def op_elect(g, ctx):
    from ptx2sass.fuzz.generator import Builder
    if ctx.func is not None or not ctx.masked:
        return None
    b = Builder(g, ctx)
    p = b.dst("pred")
    d = b.dst("b32") if g.rng.random() < 0.7 else "_"
    return _build(b, f"elect.sync {d}|{p}, $m;", "elect.sync", collective=True, guard_ok=False, uniform_ok=False)


FENCES = ("fence.proxy.async;", "fence.proxy.async.global;", "fence.proxy.async.shared::cta;",
          "fence.proxy.async.shared::cluster;", "fence.proxy.alias;", "fence.acq_rel.cluster;", "fence.sc.cluster;",
          "fence.mbarrier_init.release.cluster;", "fence.proxy.tensormap::generic.release.gpu;",
          "fence.proxy.tensormap::generic.release.cta;", "griddepcontrol.launch_dependents;",
          "griddepcontrol.wait;")


def op_fences(g, ctx):
    """Fences and grid-dependency controls (no value of their own: what matters is that both
    compilers take them and the values around them stay), and an L2 bulk prefetch."""
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    b = Builder(g, ctx)
    if rng.random() < 0.25 and ctx.func is None:
        a = b.tmp("b64")
        text = (f"add.s64 {a}, $inb, {16 * rng.randrange(64)};\n"
                f"cp.async.bulk.prefetch.L2.global [{a}], {rng.choice((16, 32, 256))};")
        return _build(b, text, "cp.async.bulk.prefetch.L2.global", guard_ok=False)
    text = rng.choice(FENCES)
    return _build(b, text, text.rstrip(";"), guard_ok=False)


def op_bulk(g, ctx):
    """A bulk copy of 16 bytes, waited for before its bytes are read."""
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    n = rng.choice((1, 2, 4))
    if rng.random() < 0.6:
        # global -> this thread's g_sq bytes 0..15, completing its mbarrier's transaction count
        mb, st, p = b.tmp("b32"), b.tmp("b64"), b.tmp("pred")
        text = (f"add.u32 {mb}, $sq, 24;\nmbarrier.init.shared::cta.b64 [{mb}], 1;\n"
                f"{rng.choice(('fence.proxy.async.shared::cta;', 'fence.mbarrier_init.release.cluster;'))}\n")
        if rng.random() < 0.5:
            text += f"mbarrier.arrive.expect_tx.shared::cta.b64 {st}, [{mb}], 16;\n"
        else:
            text += (f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{mb}], 16;\n"
                     f"mbarrier.arrive.shared::cta.b64 {st}, [{mb}];\n")
        # the CTA's own shared window where ptxas would make the cluster copy a system call
        # that a two-result `.func` (no ABI) rules out (newarch.BULK_CLUSTER_COPY_SYSCALL_SM)
        from ptx2sass.fuzz.newarch import bulk_cluster_copy_is_a_syscall
        space = "shared::cta" if bulk_cluster_copy_is_a_syscall(g.arch) and \
            any(len(f.rets) > 1 for f in g.funcs) else "shared::cluster"
        key = f"cp.async.bulk.{space}.global.mbarrier::complete_tx::bytes"
        text += (f"{key} [$sq], [$inp], 16, [{mb}];\n"
                 f"$lbl0:\nmbarrier.try_wait.parity.shared::cta.b64 {p}, [{mb}], 0;\n@!{p} bra $lbl0;\n")
        tail = f"\nmbarrier.inval.shared::cta.b64 [{mb}];"
        ds = [b.dst("b32") for _ in range(n)]
        if n == 1:
            text += f"ld.shared.u32 {ds[0]}, [$sq+{4 * rng.randrange(4)}];"
        else:
            text += f"ld.shared.v{n}.u32 {{{', '.join(ds)}}}, [$sq+{0 if n == 4 else 8 * rng.randrange(2)}];"
        return _build(b, text + tail, key, guard_ok=False, uniform_ok=False, spaces=("shared", "global"))
    # values -> g_sq -> this thread's private global bytes (bulk group), read back
    a = b.tmp("b64")
    srcs = [b.src("b32") for _ in range(4)]
    offset = 16 * rng.randrange(4)
    text = (f"st.shared.v4.u32 [$sq], {{{', '.join(srcs)}}};\nfence.proxy.async.shared::cta;\n"
            f"add.s64 {a}, $priv, {offset};\n"
            f"cp.async.bulk.global.shared::cta.bulk_group [{a}], [$sq], 16;\ncp.async.bulk.commit_group;\n"
            f"cp.async.bulk.wait_group 0;\nfence.proxy.async.global;\n")
    ds = [b.dst("b32") for _ in range(n)]
    if n == 1:
        text += f"ld.global.u32 {ds[0]}, [{a}+{4 * rng.randrange(4)}];"
    else:
        text += f"ld.global.v{n}.u32 {{{', '.join(ds)}}}, [{a}+{0 if n == 4 else 8 * rng.randrange(2)}];"
    return _build(b, text, "cp.async.bulk.global.shared::cta.bulk_group", guard_ok=False, uniform_ok=False,
                  spaces=("shared", "global"))


def op_stmatrix(g, ctx):
    """stmatrix of 1, 2 or 4 8x8 b16 matrices into the warp's shared scratch, each lane
    reading back words of it; or movmatrix's transpose."""
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    if ctx.func is not None or not ctx.masked or not ctx.full:
        return None
    b = Builder(g, ctx)
    kw = dict(collective=True, full_warp=True, guard_ok=False, uniform_ok=False)
    if rng.random() < 0.3:
        d = b.dst("b32")
        return _build(b, f"movmatrix.sync.aligned.m8n8.trans.b16 {d}, {b.src('b32')};",
                      "movmatrix.sync.aligned.m8n8.trans.b16", **kw)
    n = rng.choice((1, 2, 4))
    trans = ".trans" if rng.random() < 0.4 else ""
    space = rng.choice((".shared", ".shared::cta"))
    a, r = b.tmp("b32"), b.tmp("b32")
    srcs = [b.src("b32") for _ in range(n)]
    key = f"stmatrix.sync.aligned.m8n8.x{n}{trans}{space}.b16"
    text = (f"and.b32 {a}, $lane, {8 * n - 1};\nmad.lo.u32 {a}, {a}, 16, $wss;\nbar.warp.sync {FULL_MASK};\n"
            f"{key} [{a}], {{{', '.join(srcs)}}};\nbar.warp.sync {FULL_MASK};\n"
            f"mad.lo.u32 {r}, $lane, 4, $wss;")
    for j in range(n):
        d = b.dst("b32")
        text += f"\nld.shared.u32 {d}, [{r}+{128 * j}];"
    return _build(b, text, key, spaces=("shared",), **kw)


def op_reduxf(g, ctx):
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    if ctx.func is not None or not ctx.masked:
        return None
    b = Builder(g, ctx)
    op = rng.choice(("min", "max"))
    mods = (".abs" if rng.random() < 0.4 else "") + (".NaN" if rng.random() < 0.4 else "")
    d = b.dst("b32", "f32")
    key = f"redux.sync.{op}{mods}.f32"
    return _build(b, f"{key} {d}, {b.src('b32', 'f32')}, $m;", key, collective=True, guard_ok=False,
                  uniform_ok=False)


def op_fp6(g, ctx):
    """Conversions to and from the fp6, fp4 and ue8m0 pairs (and fp8 from bf16x2)."""
    from ptx2sass.fuzz.corners import ue8m0_positive
    from ptx2sass.fuzz.generator import Builder, canonical_nan
    rng = g.rng
    b = Builder(g, ctx)
    relu = ".relu" if rng.random() < 0.3 else ""
    form = rng.choice(("to6", "from6", "to4", "from4", "ue8", "ue8bf", "from_ue8", "half_to"))
    if form == "to6":
        e = rng.choice(("e2m3x2", "e3m2x2"))
        d = b.dst("b16")
        key = f"cvt.rn.satfinite{relu}.{e}.f32"
        return _build(b, f"{key} {d}, {b.src('b32', 'f32')}, {b.src('b32', 'f32')};", key)
    if form == "from6":
        e = rng.choice(("e2m3x2", "e3m2x2"))
        t = b.tmp("b16")
        d = b.dst("b32", "f16x2")
        key = f"cvt.rn{relu}.f16x2.{e}"
        return _build(b, f"and.b16 {t}, {b.src('b16')}, 0x3f3f;\n{key} {d}, {t};", key, guard_ok=False)
    if form in ("to4", "from4"):
        q = f"$t{len(b.temps)}"
        b.temps.append(Reg("b8", "b8", role="temp"))
        if form == "to4":
            d = b.dst("b16")
            key = f"cvt.rn.satfinite{relu}.e2m1x2.f32"
            text = f"{key} {q}, {b.src('b32', 'f32')}, {b.src('b32', 'f32')};\ncvt.u16.u8 {d}, {q};"
        else:
            d = b.dst("b32", "f16x2")
            key = f"cvt.rn{relu}.f16x2.e2m1x2"
            text = f"cvt.u8.u16 {q}, {b.src('b16')};\n{key} {d}, {q};"
        return _build(b, text, key, guard_ok=False)
    if form == "ue8":
        rnd = rng.choice((".rz", ".rp"))
        sat = rng.choice(("", ".satfinite"))
        d = b.dst("b16")
        key = f"cvt{rnd}{sat}.ue8m0x2.f32"
        # zero, negatives and values below 2^-127 into ue8m0: the manual leaves them open
        la, a = ue8m0_positive(b, b.src('b32', 'f32'), False)
        lb, c = ue8m0_positive(b, b.src('b32', 'f32'), False)
        return _build(b, f"{la}{lb}@@{key} {d}, {a}, {c};", key)
    if form == "ue8bf":
        rnd = rng.choice((".rz", ".rp"))
        sat = rng.choice(("", ".satfinite"))
        d = b.dst("b16")
        key = f"cvt{rnd}{sat}.ue8m0x2.bf16x2"
        la, a = ue8m0_positive(b, b.src('b32', 'bf16x2'), True)
        return _build(b, f"{la}@@{key} {d}, {a};", key)
    if form == "from_ue8":
        # the NaN code 0xff widens to a NaN whose bits the manual leaves open
        d = b.dst("b32", "bf16x2")
        return _build(b, f"@@cvt.rn.bf16x2.ue8m0x2 {d}, {b.src('b16')};" + canonical_nan(b, d, "bf16x2"),
                      "cvt.rn.bf16x2.ue8m0x2")
    src_t = rng.choice(("bf16x2", "f16x2"))
    e = rng.choice(("e2m3x2", "e3m2x2", "e4m3x2", "e5m2x2") if src_t == "bf16x2" else ("e2m3x2", "e3m2x2"))
    d = b.dst("b16")
    key = f"cvt.rn.satfinite{relu}.{e}.{src_t}"
    return _build(b, f"{key} {d}, {b.src('b32', src_t)};", key)


# st.async's types (the manual: .v4 only of 32-bit ones) and red.async's operations
ASYNC_STORE_TYPES = ("b32", "u32", "s32", "f32", "b64", "f64")
ASYNC_RED_OPS = (("add", "u32"), ("inc", "u32"), ("dec", "u32"), ("min", "u32"), ("max", "u32"),
                 ("add", "s32"), ("min", "s32"), ("max", "s32"), ("add", "u64"),
                 ("and", "b32"), ("or", "b32"), ("xor", "b32"))


def op_async(g, ctx):
    """st.async / red.async into a thread's 16 g_sq bytes (the same thread number's in the
    next CTA of the cluster, or its own), completing the transaction its mbarrier (g_sq
    bytes 24..31) expects. The receiver initialises the mbarrier and arrives expecting the
    bytes before a cluster barrier (red.async: it stores the word the operation reads
    first), the sender writes after it, the receiver waits for the phase and reads the bytes
    back. The cluster barrier needs every thread of the cluster: uniform context only."""
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    if ctx.func is not None or not ctx.uniform:
        return None
    b = Builder(g, ctx)
    mb, remote, rbar, st, p = b.tmp("b32"), b.tmp("b32"), b.tmp("b32"), b.tmp("b64"), b.tmp("pred")
    lines = [f"add.u32 {mb}, $sq, 24;", f"mbarrier.init.shared::cta.b64 [{mb}], 1;"]
    if rng.random() < 0.6:
        t = rng.choice(ASYNC_STORE_TYPES)
        wide = t.endswith("64")
        kind = "b64" if wide else "b32"
        n = rng.choice((1, 2) if wide else (1, 2, 4))
        nbytes = n * (8 if wide else 4)
        vec = f".v{n}" if n > 1 else ""
        key = f"st.async.shared::cluster.mbarrier::complete_tx::bytes{vec}.{t}"
        srcs = [b.src(kind, "f32" if t == "f32" else "f64" if t == "f64" else None) for _ in range(n)]
        value = srcs[0] if n == 1 else "{" + ", ".join(srcs) + "}"
        reads = [(kind, 0 if n == 1 else (8 if wide else 4) * rng.randrange(n))]
    else:
        op, t = rng.choice(ASYNC_RED_OPS)
        kind = "b64" if t == "u64" else "b32"
        nbytes = 8 if kind == "b64" else 4
        key = f"red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.{op}.{t}"
        value = b.src(kind)
        lines.append(f"st.shared.{kind} [$sq], {b.src(kind)};")       # the word red.async reads
        reads = [(kind, 0)]
    if rng.random() < 0.5:
        lines.append(f"mbarrier.arrive.expect_tx.shared::cta.b64 {st}, [{mb}], {nbytes};")
    else:
        lines += [f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{mb}], {nbytes};",
                  f"mbarrier.arrive.shared::cta.b64 {st}, [{mb}];"]
    lines += ["fence.mbarrier_init.release.cluster;", "barrier.cluster.arrive.release.aligned;",
              "barrier.cluster.wait.acquire.aligned;"]
    target = rng.choice(("next", "next", "own", "direct"))
    if target == "direct":          # its own bytes by their shared::cta address
        lines.append(f"{key} [$sq], {value}, [{mb}];")
    else:
        rank = "$cnx" if target == "next" else "$crk"
        lines += [f"mapa.shared::cluster.u32 {remote}, $sq, {rank};",
                  f"mapa.shared::cluster.u32 {rbar}, {mb}, {rank};", f"{key} [{remote}], {value}, [{rbar}];"]
    lines += ["$lbl0:", f"mbarrier.try_wait.parity.shared::cta.b64 {p}, [{mb}], 0;", f"@!{p} bra $lbl0;"]
    for kind_r, offset in reads:
        lines.append(f"ld.shared.{kind_r} {b.dst(kind_r)}, [$sq+{offset}];")
    lines.append(f"mbarrier.inval.shared::cta.b64 [{mb}];")
    return _build(b, "\n".join(lines), key, barrier=True, guard_ok=False, uniform_ok=False,
                  spaces=("shared", "shared::cluster"))


def op_maxnreg(g, ctx):
    """setmaxnreg.dec to a count below the kernel's `.maxnreg`, work, then setmaxnreg.inc
    back to it: every warp gives registers to the CTA's pool before it asks for as many
    back, so an .inc never waits on registers nobody gives (the manual: .inc blocks until
    the pool has them). Each is followed by a CTA barrier (the manual: the warps of a
    warpgroup synchronise before the next setmaxnreg); uniform context, whole warps."""
    from ptx2sass.fuzz.generator import Builder
    rng = g.rng
    top = g.maxnreg
    if ctx.func is not None or not ctx.uniform or not ctx.full or not top:
        return None
    b = Builder(g, ctx)
    low = rng.choice(range(24, top, 8))
    d = b.dst("b32")
    text = (f"setmaxnreg.dec.sync.aligned.u32 {low};\nbar.sync 0;\n"
            f"xor.b32 {d}, {b.src('b32')}, {b.src('b32')};\n"
            f"setmaxnreg.inc.sync.aligned.u32 {top};\nbar.sync 0;")
    return _build(b, text, "setmaxnreg.dec.sync.aligned.u32", barrier=True, guard_ok=False, uniform_ok=False)


def op_corner(g, ctx):
    from ptx2sass.fuzz.corners import op_corner as corner
    return corner(g, ctx)


def op_sparse(g, ctx):
    from ptx2sass.fuzz.forms import op_sparse as sparse
    return sparse(g, ctx)


# each group's statement (generator.OPS weighs them; drawn only where a program has the group)
NEW_OPS = {"cluster": op_cluster, "elect": op_elect, "fences": op_fences, "bulk": op_bulk,
           "stmatrix": op_stmatrix, "reduxf": op_reduxf, "fp6": op_fp6, "async": op_async,
           "maxnreg": op_maxnreg, "sparse": op_sparse, "corner": op_corner}
