"""Calibration microbenchmarks for the timing model (issue 20), written as PTX: what a GPU's
cycles and nanoseconds for these kernels say about its latencies, pipe throughputs, memory
hierarchy and occupancy, as the published microbenchmark studies measure them (Jia et al.,
"Dissecting the NVIDIA Volta/Turing GPU architecture via microbenchmarking", 2018/2019;
Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", 2024).

Kinds of kernel (each a `Benchmark`; `tools/fit_timing.py` turns their timings into figures):
- `chain`: one warp runs a dependent chain of one operation (FFMA, IMAD, MUFU, DFMA, LDS,
  SHFL, HMMA ...); two iteration counts, so the slope is the latency with the loop's fixed
  cost cancelled;
- `throughput`: every SM runs 32 warps of eight independent chains: operations per SM cycle;
- `chase`: one thread follows a random cyclic pointer chain through a footprint of global
  memory (`ld.global.ca` and `.cg`): cycles per load at each footprint, L1/L2/DRAM plateaus;
- `bank`: one warp chases shared-memory self-pointers with lane stride 0..33 words: bank
  conflict cost per extra way;
- `occupancy`: the FFMA chain with 1..64 warps per SM: how many warps hide its latency;
- `stream`: a grid-stride read of 4 MiB .. 1 GiB: L2 and DRAM bandwidth;
- `empty`: launch overhead, the floor under every kernel time in the report.

Every kernel's thread 0 of each CTA writes four u64 words at `out + 32 * ctaid.x`: the
%clock64 cycles and %globaltimer nanoseconds between two CTA barriers around the measured
loop, %smid, and a value the loop computed; other threads store their result only when it
equals `magic` (never), so no chain is dead code. Sizes given as "sms" are the device's SM
count, resolved at run time (`resolve_dims`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

OUT_WORDS = 4                       # u64 words each CTA's thread 0 writes
UNROLL = 64                         # dependent operations per loop iteration (chains)
CHAIN_ITERS = (32, 96)              # two iteration counts: their difference gives the slope
EMU_CHAIN_ITERS = (2, 4)            # the emulator runs the same kernels, fewer iterations
THROUGHPUT_ILP = 8                  # independent chains per thread
THROUGHPUT_UNROLL = 16              # steps of each chain per iteration
MAGIC = 0x9E3779B9                  # `magic` parameter: no thread's result equals it in practice
CHASE_STRIDE = 128                  # bytes between chain elements (one L1/L2 line)
CHASE_STEPS = 4096                  # timed loads per chase launch
CHASE_WARM_MAX = 32768              # warm-up loads at most (a full pass over small footprints)
KIB = 1024
CHASE_FOOTPRINTS_KIB = (4, 16, 32, 64, 128, 192, 256, 384, 512, 1024, 4096, 16384, 32768,
                        49152, 65536, 131072, 262144)
CHASE_CG_FOOTPRINTS_KIB = (4, 256, 4096, 32768, 65536, 262144)
BANK_STRIDES = (0, 1, 2, 4, 8, 16, 32, 33)
OCCUPANCY_WARPS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
STREAM_MIB = (4, 32, 1024)


@dataclass
class Op:
    """One step of a chain: PTX that reads and writes `%x` (the chain's value) and may read
    `%y`, `%z` (loop-invariant values) and `%lane`; `sass` names the opcode(s) it should
    become, counted in ptxas's loop body at prepare time."""
    name: str
    reg: str                         # PTX type of %x/%y/%z
    init: str                        # sets %x, %y, %z from %tid (u32 %t) and %f (f32 from tid)
    step: str
    sass: tuple[str, ...]
    sink: str                        # u32 %s from %x
    regs: int = 1                    # %x as a vector of this many registers (mma accumulators)
    also: tuple[str, ...] = ()       # other chains whose one step is part of this one's step


_F32_INIT = ("cvt.rn.f32.u32 %f, %t; mul.f32 %x, %f, 0f3A83126F; "
             "mov.f32 %y, 0f3F7FBE77; add.f32 %z, %f, 0f3F000000;")
_U32_INIT = "add.u32 %x, %t, 7; or.b32 %y, %m, 1; add.u32 %z, %t, 12345;"
_F64_INIT = ("cvt.rn.f64.u32 %x, %t; mul.f64 %x, %x, 0d3F50624DD2F1A9FC; "
             "mov.f64 %y, 0d3FEFF7CED916872B; cvt.rn.f64.u32 %z, %m;")

OPS: dict[str, Op] = {op.name: op for op in [
    Op("ffma", ".f32", _F32_INIT, "fma.rn.f32 %x, %x, %y, %z;", ("FFMA",), "mov.b32 %s, %x;"),
    Op("fadd", ".f32", _F32_INIT, "add.f32 %x, %x, %z;", ("FADD",), "mov.b32 %s, %x;"),
    Op("fmul", ".f32", _F32_INIT, "mul.f32 %x, %x, %y;", ("FMUL",), "mov.b32 %s, %x;"),
    Op("hfma2", ".b32", "cvt.rn.f32.u32 %f, %t; mul.f32 %f, %f, 0f3A83126F; "
       "cvt.rn.f16x2.f32 %x, %f, %f; mov.b32 %y, 0x3BFF3BFF; cvt.rn.f16x2.f32 %z, %f, %f;",
       "fma.rn.f16x2 %x, %x, %y, %z;", ("HFMA2",), "mov.b32 %s, %x;"),
    Op("imad", ".u32", _U32_INIT, "mad.lo.u32 %x, %x, %y, %z;", ("IMAD",), "mov.b32 %s, %x;"),
    Op("iadd3", ".u32", _U32_INIT, "add.u32 %x, %x, %y; add.u32 %x, %x, %z;", ("IADD3",),
       "mov.b32 %s, %x;"),
    Op("lop3_shf", ".u32", _U32_INIT, "lop3.b32 %x, %x, %y, %z, 0x96; shf.l.wrap.b32 %x, %x, %x, 3;",
       ("LOP3", "SHF"), "mov.b32 %s, %x;"),
    Op("popc", ".u32", _U32_INIT, "popc.b32 %x, %x;", ("POPC",), "mov.b32 %s, %x;"),
    Op("mufu_rsq", ".f32", _F32_INIT, "rsqrt.approx.ftz.f32 %x, %x;", ("MUFU",), "mov.b32 %s, %x;"),
    Op("mufu_ex2", ".f32", _F32_INIT, "neg.f32 %x, %x; ex2.approx.ftz.f32 %x, %x;", ("MUFU",),
       "mov.b32 %s, %x;"),
    # f2i(i2f(x)) is idempotent, and ptxas folds the repeats: an add keeps each step new
    Op("cvt_i2f_f2i", ".u32", _U32_INIT,
       "cvt.rn.f32.u32 %f, %x; cvt.rzi.u32.f32 %x, %f; add.u32 %x, %x, %y;",
       ("I2F", "I2FP", "F2I"), "mov.b32 %s, %x;", also=("iadd3",)),
    Op("dfma", ".f64", _F64_INIT, "fma.rn.f64 %x, %x, %y, %z;", ("DFMA",), "cvt.rzi.u32.f64 %s, %x;"),
    Op("dadd", ".f64", _F64_INIT, "add.f64 %x, %x, %y;", ("DADD",), "cvt.rzi.u32.f64 %s, %x;"),
    Op("shfl", ".u32", _U32_INIT, "shfl.sync.idx.b32 %x, %x, %lane, 0x1f, 0xffffffff;", ("SHFL",),
       "mov.b32 %s, %x;"),
    Op("lds", ".u32", "mov.u32 %x, %self;", "ld.shared.u32 %x, [%x];", ("LDS",), "mov.b32 %s, %x;"),
    Op("hmma", ".f32", "", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
       "{%x0, %x1, %x2, %x3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%x0, %x1, %x2, %x3};",
       ("HMMA",), "mov.b32 %s, %x0;", regs=4),
]}
CHAIN_OPS = tuple(OPS)
THROUGHPUT_OPS = ("ffma", "fadd", "hfma2", "imad", "iadd3", "lop3_shf", "mufu_rsq",
                  "cvt_i2f_f2i", "dfma", "shfl", "lds", "hmma")


@dataclass
class Benchmark:
    """One calibration launch. Dimensions and buffer sizes may name "sms" (see module doc);
    `emu` holds the parameters of a smaller launch of the same kernel for the emulator's
    estimate (None: the model has nothing to say about this kind yet)."""
    id: str
    kind: str
    kernel: str
    ptx: str
    grid: list
    block: list
    params: list
    buffers: dict
    meta: dict = field(default_factory=dict)
    dynamic_shared_bytes: int = 0
    emu: dict | None = None


def resolve(value, sms: int) -> int:
    """An int, or "sms" / "sms*K": the device's SM count (times K)."""
    if isinstance(value, int):
        return value
    text = str(value).replace(" ", "")
    if text == "sms":
        return sms
    if text.startswith("sms*"):
        return sms * int(text[4:])
    raise ValueError(f"cannot resolve launch size {value!r}")


def resolve_dims(dims, sms: int) -> list[int]:
    return [resolve(d, sms) for d in dims]


# --------------------------------------------------------------------------- PTX pieces

def _header(arch: str) -> str:
    return f".version 8.0\n.target {arch}\n.address_size 64\n\n"


def _op_decls(op: Op, ilp: int) -> str:
    """Registers of `ilp` chains (%x<k>, with %x0.. for vector chains) and the shared values."""
    lines = [f".reg {op.reg} %y, %z;", ".reg .f32 %f;", ".reg .u32 %lane, %self;"]
    if op.name == "hmma":
        lines += [".reg .b32 %a<4>, %b<2>;"]
        lines += [f".reg .f32 %x{k}_<4>;" for k in range(ilp)]
    else:
        lines += [f".reg {op.reg} %x{k};" for k in range(ilp)]
    return "\n".join(lines)


def _chain_text(text: str, k: int, op: Op) -> str:
    """`text` for chain k: %x → %x<k> (%x0..%x3 → %x<k>_0..3 for vector chains)."""
    if op.regs > 1:
        return re.sub(r"%x(\d)\b", lambda m: f"%x{k}_{m.group(1)}", text)
    return re.sub(r"%x\b", f"%x{k}", text)


def _init(op: Op, ilp: int) -> str:
    """Distinct starting values per chain (chain k starts from %t + k), so that no two
    chains are the same computation (ptxas would merge them)."""
    if op.name == "hmma":
        out = ["cvt.rn.f32.u32 %f, %t;", "mul.f32 %f, %f, 0f3A83126F;",
               "cvt.rn.f16x2.f32 %a0, %f, %f;", "mov.b32 %a1, %a0;", "mov.b32 %a2, %a0;",
               "mov.b32 %a3, %a0;", "mov.b32 %b0, 0x3C003C00;", "mov.b32 %b1, %a0;"]
        for k in range(ilp):
            out += [f"add.f32 %x{k}_{j}, %f, 0f{0x3F800000 + (k * 4 + j << 16):08X};"
                    for j in range(4)]
        return "\n".join(out)
    if op.name == "lds":
        return "\n".join(f"add.u32 %x{k}, %self, {4 * k};" for k in range(ilp))
    out = []
    for k in range(ilp):
        out.append("add.u32 %t, %t, 1;" if k else "")
        out.append(_chain_text(op.init, k, op))
    return "\n".join(out)


def _sink(op: Op, ilp: int) -> str:
    """%s: the chains' results combined (xor), the value stored when it equals magic."""
    out = ["mov.u32 %s, 0;"]
    for k in range(ilp):
        out.append(_chain_text(op.sink.replace("%s", "%sk"), k, op))
        out.append("xor.b32 %s, %s, %sk;")
    return "\n".join(out)


_PROLOGUE = """{{
.reg .pred %p<4>;
.reg .u32 %t, %m, %iters, %i, %s, %sk, %cta;
.reg .u64 %out, %c0, %c1, %g0, %g1, %a, %w;
{decls}
ld.param.u64 %out, [out];
ld.param.u32 %iters, [iters];
ld.param.u32 %m, [magic];
cvta.to.global.u64 %out, %out;
mov.u32 %t, %tid.x;
mov.u32 %cta, %ctaid.x;
mov.u32 %lane, %laneid;
"""

_EPILOGUE = """bar.sync 0;
mov.u64 %c1, %clock64;
mov.u64 %g1, %globaltimer;
{sink}
setp.eq.u32 %p1, %s, %m;
@%p1 st.global.u32 [%out], %s;
mov.u32 %t, %tid.x;
setp.ne.u32 %p2, %t, 0;
@%p2 bra DONE;
mul.wide.u32 %a, %cta, 32;
add.s64 %a, %out, %a;
sub.s64 %w, %c1, %c0;
st.global.u64 [%a], %w;
sub.s64 %w, %g1, %g0;
st.global.u64 [%a+8], %w;
mov.u32 %sk, %smid;
cvt.u64.u32 %w, %sk;
st.global.u64 [%a+16], %w;
cvt.u64.u32 %w, %s;
st.global.u64 [%a+24], %w;
DONE:
ret;
}}
"""


def _loop(body: str) -> str:
    return f"""bar.sync 0;
mov.u64 %c0, %clock64;
mov.u64 %g0, %globaltimer;
mov.u32 %i, 0;
LOOP:
.pragma "nounroll";
{body}
add.u32 %i, %i, 1;
setp.lt.u32 %p0, %i, %iters;
@%p0 bra LOOP;
"""


def _shared_setup(op: Op, ilp: int, stride_param: bool) -> tuple[str, str]:
    """Shared memory for LDS chains: each chain's word holds its own address (a chain that
    reads the same word again and again): thread t's chain k uses word t * ilp + k; with
    `stride` (one chain), lane l uses word l * stride."""
    if op.name != "lds":
        return "", ""
    decl = ".shared .align 16 .b32 smem[8192];\n"
    where = "ld.param.u32 %self, [stride];\nmul.lo.u32 %self, %lane, %self;\n" if stride_param \
        else f"mul.lo.u32 %self, %t, {ilp};\n"
    code = where + "shl.b32 %self, %self, 2;\nmov.u32 %s, smem;\nadd.u32 %self, %self, %s;\n"
    code += "".join(f"add.u32 %s, %self, {4 * k};\nst.shared.u32 [%s], %s;\n" for k in range(ilp))
    return decl, code + "bar.sync 0;\n"


def op_kernel(op: Op, name: str, arch: str, ilp: int, unroll: int, stride_param: bool = False) -> str:
    """A kernel running `ilp` independent chains of `op`, `unroll` steps each per iteration."""
    decl_shared, shared = _shared_setup(op, ilp, stride_param)
    params = ".param .u64 out, .param .u32 iters, .param .u32 magic"
    if stride_param:
        params += ", .param .u32 stride"
    steps = []
    for _ in range(unroll):
        for k in range(ilp):
            steps.append(_chain_text(op.step, k, op))
    return (_header(arch) + decl_shared + f".visible .entry {name}({params})\n"
            + _PROLOGUE.format(decls=_op_decls(op, ilp)) + shared + _init(op, ilp) + "\n"
            + "mov.u32 %t, %tid.x;\n" + _loop("\n".join(steps))
            + _EPILOGUE.format(sink=_sink(op, ilp)))


def chase_kernel(name: str, arch: str, cache: str) -> str:
    """One thread follows `p = *p` through the chain buffer: `warm` loads, then `steps`
    (a multiple of 16) timed ones; `cache` is the ld.global cache operator (ca or cg)."""
    unrolled = "\n".join(f"ld.global.{cache}.u64 %a, [%a];" for _ in range(16))
    return (_header(arch) + f".visible .entry {name}(.param .u64 out, .param .u32 iters, "
            ".param .u32 magic, .param .u64 chain, .param .u32 warm)\n"
            + _PROLOGUE.format(decls=".reg .u32 %lane, %warm;")
            + "ld.param.u64 %a, [chain];\nld.param.u32 %warm, [warm];\nmov.u32 %i, 0;\n"
            "setp.eq.u32 %p0, %warm, 0;\n@%p0 bra WARMED;\n"
            f"WARM:\n.pragma \"nounroll\";\nld.global.{cache}.u64 %a, [%a];\nadd.u32 %i, %i, 1;\n"
            "setp.lt.u32 %p0, %i, %warm;\n@%p0 bra WARM;\nWARMED:\n"
            + _loop(unrolled)
            + _EPILOGUE.format(sink="cvt.u32.u64 %s, %a;"))


def stream_kernel(name: str, arch: str) -> str:
    """Grid-stride read of `iters` 16-byte vectors (`iters` here is the vector count)."""
    return (_header(arch) + f".visible .entry {name}(.param .u64 out, .param .u32 iters, "
            ".param .u32 magic, .param .u64 data)\n"
            + _PROLOGUE.format(decls=".reg .u32 %lane, %v<4>, %nt;\n.reg .u64 %base, %idx, %n, %step;")
            + "ld.param.u64 %base, [data];\ncvta.to.global.u64 %base, %base;\n"
            "mov.u32 %s, 0;\nmov.u32 %nt, %ntid.x;\nmad.lo.u32 %v0, %cta, %nt, %t;\n"
            "cvt.u64.u32 %idx, %v0;\nmov.u32 %v1, %nctaid.x;\nmul.wide.u32 %step, %v1, %nt;\n"
            "cvt.u64.u32 %n, %iters;\n"
            "bar.sync 0;\nmov.u64 %c0, %clock64;\nmov.u64 %g0, %globaltimer;\n"
            "LOOP:\n.pragma \"nounroll\";\nsetp.ge.u64 %p0, %idx, %n;\n@%p0 bra END;\n"
            "shl.b64 %w, %idx, 4;\nadd.s64 %w, %base, %w;\n"
            "ld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%w];\n"
            "xor.b32 %s, %s, %v0;\nxor.b32 %s, %s, %v1;\nxor.b32 %s, %s, %v2;\nxor.b32 %s, %s, %v3;\n"
            "add.s64 %idx, %idx, %step;\nbra LOOP;\nEND:\n"
            + _EPILOGUE.format(sink=""))


def empty_kernel(name: str, arch: str) -> str:
    return (_header(arch) + f".visible .entry {name}(.param .u64 out, .param .u32 iters, "
            ".param .u32 magic)\n{\nret;\n}\n")


# --------------------------------------------------------------------------- the suite

def _out_buffer(ctas) -> dict:
    return {"size": {"per_cta": OUT_WORDS * 8, "ctas": ctas}, "fill": 0}


def _params(iters: int, *extra) -> list:
    return [{"buffer": "out"}, {"type": "u32", "value": iters}, {"type": "u32", "value": MAGIC},
            *extra]


def suite(arch: str, kinds: tuple[str, ...] | None = None) -> list[Benchmark]:
    """Every calibration launch for `arch` (or those of `kinds`)."""
    out: list[Benchmark] = []
    want = set(kinds) if kinds else None

    def keep(kind):
        return want is None or kind in want

    if keep("empty"):
        out.append(Benchmark("empty", "empty", "empty", empty_kernel("empty", arch), [1, 1, 1],
                             [32, 1, 1], _params(0), {"out": _out_buffer(1)}))
    if keep("chain"):
        for name in CHAIN_OPS:
            op = OPS[name]
            kernel = f"chain_{name}"
            ptx = op_kernel(op, kernel, arch, ilp=1, unroll=UNROLL)
            for iters, emu_iters in zip(CHAIN_ITERS, EMU_CHAIN_ITERS):
                out.append(Benchmark(
                    f"chain/{name}/{iters}", "chain", kernel, ptx, [1, 1, 1], [32, 1, 1],
                    _params(iters), {"out": _out_buffer(1)},
                    meta={"op": name, "sass": list(op.sass), "also": list(op.also), "iterations": iters,
                          "ops_per_iteration": UNROLL, "emu_iterations": emu_iters},
                    emu={"params": _params(emu_iters)}))
    if keep("throughput"):
        for name in THROUGHPUT_OPS:
            op = OPS[name]
            kernel = f"throughput_{name}"
            ilp = 4 if name == "hmma" else THROUGHPUT_ILP
            iters = 8 if name in ("dfma", "mufu_rsq", "cvt_i2f_f2i") else 32
            out.append(Benchmark(
                f"throughput/{name}", "throughput", kernel,
                op_kernel(op, kernel, arch, ilp=ilp, unroll=THROUGHPUT_UNROLL),
                ["sms", 1, 1], [1024, 1, 1], _params(iters), {"out": _out_buffer("sms")},
                meta={"op": name, "sass": list(op.sass), "iterations": iters, "ilp": ilp,
                      "ops_per_iteration": ilp * THROUGHPUT_UNROLL, "threads_per_cta": 1024}))
    if keep("chase"):
        for cache, footprints in (("ca", CHASE_FOOTPRINTS_KIB), ("cg", CHASE_CG_FOOTPRINTS_KIB)):
            kernel = f"chase_{cache}"
            ptx = chase_kernel(kernel, arch, cache)
            for kib in footprints:
                size = kib * KIB
                warm = min(size // CHASE_STRIDE, CHASE_WARM_MAX)
                out.append(Benchmark(
                    f"chase/{cache}/{kib}K", "chase", kernel, ptx, [1, 1, 1], [1, 1, 1],
                    _params(CHASE_STEPS // 16, {"buffer": "chain"}, {"type": "u32", "value": warm}),
                    {"out": _out_buffer(1),
                     "chain": {"size": size, "chase": {"stride": CHASE_STRIDE, "seed": kib}}},
                    meta={"cache": cache, "footprint": size, "stride": CHASE_STRIDE,
                          "loads": CHASE_STEPS, "warm": warm},
                    emu=None if kib > 64 else {
                        "params": _params(4, {"buffer": "chain"}, {"type": "u32", "value": 0})}))
    if keep("bank"):
        op = OPS["lds"]
        ptx = op_kernel(op, "bank_lds", arch, ilp=1, unroll=UNROLL, stride_param=True)
        for stride in BANK_STRIDES:
            out.append(Benchmark(
                f"bank/{stride}", "bank", "bank_lds", ptx, [1, 1, 1], [32, 1, 1],
                _params(CHAIN_ITERS[1], {"type": "u32", "value": stride}), {"out": _out_buffer(1)},
                meta={"stride_words": stride, "iterations": CHAIN_ITERS[1],
                      "ops_per_iteration": UNROLL},
                emu={"params": _params(EMU_CHAIN_ITERS[0], {"type": "u32", "value": stride})}))
    if keep("occupancy"):
        op = OPS["ffma"]
        ptx = op_kernel(op, "occupancy_ffma", arch, ilp=1, unroll=UNROLL)
        for warps in OCCUPANCY_WARPS:
            per_cta = min(warps, 32)
            ctas = warps // per_cta
            grid = "sms" if ctas == 1 else f"sms*{ctas}"
            out.append(Benchmark(
                f"occupancy/{warps}", "occupancy", "occupancy_ffma", ptx, [grid, 1, 1],
                [per_cta * 32, 1, 1], _params(CHAIN_ITERS[1]), {"out": _out_buffer(grid)},
                meta={"warps_per_sm": warps, "ctas_per_sm": ctas, "iterations": CHAIN_ITERS[1],
                      "ops_per_iteration": UNROLL, "threads_per_cta": per_cta * 32}))
    if keep("stream"):
        ptx = stream_kernel("stream_read", arch)
        for mib in STREAM_MIB:
            size = mib * KIB * KIB
            out.append(Benchmark(
                f"stream/{mib}M", "stream", "stream_read", ptx, ["sms*4", 1, 1], [512, 1, 1],
                _params(size // 16, {"buffer": "data"}),
                {"out": _out_buffer("sms*4"), "data": {"size": size, "fill": 1}},
                meta={"bytes": size}))
    return out
