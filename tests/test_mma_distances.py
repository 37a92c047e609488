"""ptxas 13.5.37's least distances around the tensor core and the packed-half compare, per
arch, read off hand-written kernels where nothing else can be scheduled between the producer
and its reader (ptxas pads the gap with its stall count or an `@!UPT UIADD3`), against what the
arch's latency table gives the hazard checker and our scheduler. Each family's json records
ptxas's distances it was checked against (`ptxas_mma_distances`: arch -> case -> cycles; the
cases an arch lists are those its PTX accepts: sm_75 has no tf32, m16n8k16 or f16x2 min/max).
The table's figure must be ptxas's: higher flags ptxas's own code (sm_100 campaign 16's
28001138/28001139/28001193 were), lower lets our code read sooner than ptxas ever does.

Distances are stall sums (each instruction `max(stall, 1)`) from the producer's issue to the
first instruction that reads its result."""
import json
import re

import pytest

from ptx2sass import oracle
from ptx2sass.emu.loader import load_program
from ptx2sass.encoder.model import Reg
from ptx2sass.sched.latency import DATA, model_for

HEAD = """.version 9.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .pred %p<3>;
    .reg .b32 %a<4>, %b<4>, %c<4>, %d<4>, %f<4>, %t, %s, %r, %e, %k;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %rd3, %t, 4;
    add.u64 %rd2, %rd2, %rd3;
{loads}
{body}
    add.u64 %rd1, %rd1, %rd3;
    st.global.b32 [%rd1], %r;
{keep}
    ret;
}}
"""

# shape -> (mma shape, A/B types, A registers, B registers)
SHAPES = {"1684": ("m16n8k4", "tf32.tf32", 2, 1), "1688.TF32": ("m16n8k8", "tf32.tf32", 4, 2),
          "1688": ("m16n8k8", "f16.f16", 2, 1), "16816": ("m16n8k16", "f16.f16", 4, 2)}
READERS = {"IDP": "dp4a.s32.u32 %r, %d3, %s, %s;", "IDP.2A": "dp2a.hi.s32.u32 %r, %d3, %s, %s;",
           "IMAD": "mad.lo.u32 %r, %d3, %s, %s;", "FADD": "add.f32 %r, %d3, %s;",
           "LOP3": "xor.b32 %r, %d3, %s;", "PRMT": "prmt.b32 %r, %d3, %s, 0x3210;"}


def _kernel(regs: list[str], body: str, keep: str = "") -> str:
    """`keep`: a register also stored (an mma's first result register: its other registers
    then stay live, so no later write of them waits for the mma's result to land)."""
    loads = "\n".join(f"    ld.global.b32 {r}, [%rd2+{128 * n}];" for n, r in enumerate(regs + ["%s"]))
    return HEAD.format(arch="{arch}", loads=loads, body=body, keep=f"    st.global.b32 [%rd1+128], {keep};" if keep else "")


def _mma(shape: str, c: str, d: str = "%d") -> str:
    m, types, na, nb = SHAPES[shape]
    a = ", ".join(f"%a{i}" for i in range(na))
    b = ", ".join(f"%b{i}" for i in range(nb))
    return (f"    mma.sync.aligned.{m}.row.col.f32.{types}.f32 {{{d}0, {d}1, {d}2, {d}3}}, {{{a}}}, {{{b}}}, "
            f"{{{c}0, {c}1, {c}2, {c}3}};")


def _operands(shape: str) -> list[str]:
    _, _, na, nb = SHAPES[shape]
    return [f"%a{i}" for i in range(na)] + [f"%b{i}" for i in range(nb)] + [f"%c{i}" for i in range(4)]


def mma_result_kernel(shape: str, reader: str) -> str:
    """An mma whose result's last register is read by `reader` (or by the next mma as its C);
    a second `reader` of its first register keeps the others live (no store of the result
    comes first: ptxas's sm_8x/sm_90 code stores a kept register before any ALU read)."""
    if reader == "HMMA":
        return _kernel(_operands(shape), _mma(shape, "%c") + "\n" + _mma(shape, "%d", "%f")
                       + "\n    mov.b32 %r, %f3;", "%f0")
    second = READERS[reader].replace("%r,", "%k,", 1).replace("%d3", "%d0")
    return _kernel(_operands(shape), "\n    ".join([_mma(shape, "%c"), READERS[reader], second,
                                                    "xor.b32 %r, %r, %k;"]))


def fmul_to_mma_kernel(shape: str, operand: str) -> str:
    """FMUL writes the last register of the mma's A, B or C fragment."""
    regs = _operands(shape)
    target = [r for r in regs if r[1] == operand.lower()][-1]
    body = f"    mul.rm.sat.f32 {target}, {target}, %s;\n{_mma(shape, '%c')}\n    mov.b32 %r, %d3;"
    return _kernel(regs, body, "%d0")


def sparse_chain_kernel(types: str) -> str:
    """Two m16n8k32 sparse mma (ordered metadata: no reordering call between), the second
    accumulating on the first's result."""
    c = 4 if types.startswith("f32") else 2
    frag = lambda v: "{" + ", ".join(f"%{v}{i}" for i in range(c)) + "}"  # noqa: E731
    regs = [f"%a{i}" for i in range(4)] + [f"%b{i}" for i in range(4)] + [f"%c{i}" for i in range(c)]
    mma = "    mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.{t} {d}, {{%a0, %a1, %a2, %a3}}, " \
          "{{%b0, %b1, %b2, %b3}}, {c}, %e, 0x0;"
    body = "\n".join(["    mov.b32 %e, 0x44444444;", mma.format(t=types, d=frag("d"), c=frag("c")),
                      mma.format(t=types, d=frag("f"), c=frag("d")), "    mov.b32 %r, %f1;"])
    return _kernel(regs, body, "%f0")


def half_compare_kernel(op: str, ty: str) -> str:
    """A packed-half `op` whose result is compared by setp (HSETP2) at once."""
    body = f"""    {op} %c0, %a0, %a1;
    setp.gtu.{ty} %p1|%p2, %c0, %c0;
    selp.b32 %r, 3, 5, %p1;
    selp.b32 %r, %r, 9, %p2;"""
    return _kernel(["%a0", "%a1"], body)


# the registers of an HMMA's A and B fragments, by its shape (and TF32): (A, B); C is its result's size
FRAGMENTS = {("1684", True): (2, 1), ("1688", True): (4, 2), ("1688", False): (2, 1), ("16816", False): (4, 2),
             ("16832", False): (4, 4)}


def _result_size(ins) -> int:
    return (2 if "F16" in ins.modifiers else 4) if ins.opcode == "HMMA" else 1


def _reads(ins, result: range) -> list[int]:
    """The registers of `result` that `ins` reads (an HMMA reads whole fragments)."""
    if ins.opcode == "HMMA":
        shape = next(m for m in ins.modifiers if m[0].isdigit())
        sizes = (*FRAGMENTS[shape, "TF32" in ins.modifiers], _result_size(ins))
        spans = [range(o.index, o.index + n) for o, n in zip(ins.operands[1:4], sizes)]
    else:
        first = 0 if ins.opcode == "HSETP2" else 1       # HSETP2's first operands are its predicate results
        spans = [range(o.index, o.index + 1) for o in ins.operands[first:] if isinstance(o, Reg) and o.file == "R"]
    return [r for span in spans for r in span if r in result]


def _computes(ins) -> bool:
    """Not one of ptxas's constant moves (HFMA2.MMA R, -RZ, RZ, imm): it reads a register."""
    return any(isinstance(o, Reg) and o.file == "R" and o.index != 255 for o in ins.operands[1:])


def ptxas_distance(ptx: str, producer: str, arch: str) -> tuple:
    """(producer instruction, reader instruction, ptxas's stall distance, the result register's
    place in the producer's result) for the first instruction of a `producer` opcode ("A|B": either;
    sm_8x adds f16x2 with HADD2, sm_90 with HFMA2.MMA) in ptxas's cubin for `arch`."""
    from ptx2sass.frontend.instructions import TARGET_MIN_VERSION
    need = TARGET_MIN_VERSION.get(arch, (0, 0))      # (sm_107: PTX 9.4)
    ptx = re.sub(r"\.version (\d+)\.(\d+)", lambda m: ".version %d.%d" % max((int(m[1]), int(m[2])), need), ptx, count=1)
    build = oracle.ptxas(ptx.replace("{arch}", arch), arch)
    assert build.ok, build.stderr
    ins = [i for _, i in load_program(build.output, "k").instructions]
    at = next(n for n, i in enumerate(ins) if i.opcode in producer.split("|") and _computes(i))
    dest = ins[at].operands[0]
    result = range(dest.index, dest.index + _result_size(ins[at]))
    distance = 0
    for later in ins[at:]:
        read = _reads(later, result) if later is not ins[at] else []
        if read:
            return ins[at], later, distance, min(read[-1] - dest.index, 3)
        distance += max(later.control.stall, 1)
    raise AssertionError(f"nothing reads the {producer} result")


def table_distance(producer, reader, part: int, arch: str) -> int:
    lat = model_for(arch)
    return lat.read_latency(producer.opcode, lat.latency_modifiers(producer), "R", reader.opcode, False, part, False)


# case name -> (kernel, producer opcode)
KERNELS = {f"HMMA.{s} -> {r}": (mma_result_kernel(s, r), "HMMA") for s in SHAPES for r in (*READERS, "HMMA")}
KERNELS |= {f"FMUL -> HMMA.{s} {o}": (fmul_to_mma_kernel(s, o), "FMUL") for s in SHAPES for o in "ABC"}
KERNELS |= {f"HMMA.SP.16832 {t} -> HMMA": (sparse_chain_kernel(t), "HMMA")
            for t in ("f32.f16.f16.f32", "f32.bf16.bf16.f32", "f16.f16.f16.f16")}
KERNELS |= {f"{o} -> HSETP2": (half_compare_kernel(o, t), p)
            for o, t, p in (("max.f16x2", "f16x2", "HMNMX2"), ("min.NaN.f16x2", "f16x2", "HMNMX2"),
                            ("max.bf16x2", "bf16x2", "HMNMX2"), ("min.f16x2", "f16x2", "HMNMX2"),
                            ("add.f16x2", "f16x2", "HFMA2|HADD2"), ("mul.f16x2", "f16x2", "HFMA2|HMUL2"))}


def recorded() -> list[tuple[str, str, int]]:
    """(arch, case, ptxas's distance) as each family's json records them."""
    out = []
    for path in sorted(DATA.glob("*.json")):
        for arch, cases in json.loads(path.read_text()).get("ptxas_mma_distances", {}).items():
            out += [(arch, name, d) for name, d in cases.items()]
    return out


CASES = recorded()


def test_every_family_records_its_archs():
    """Turing, the sm_8x, sm_90, sm_100 and sm_120 tables each carry ptxas's distances for all
    their cases that the arch's PTX accepts."""
    archs = {a for a, _, _ in CASES}
    assert archs >= {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}
    assert all(n in KERNELS for _, n, _ in CASES)
    assert len([c for c in CASES if c[0] == "sm_90"]) == len(KERNELS)


@pytest.mark.parametrize("arch,name,expected", CASES, ids=[f"{a} {n}" for a, n, _ in CASES])
def test_table_distance_is_ptxas_least(arch, name, expected):
    ptx, producer = KERNELS[name]
    prod, reader, distance, part = ptxas_distance(ptx, producer, arch)
    assert distance == expected, f"ptxas 13.5.37 placed {reader.opcode} {distance} after {prod.opcode} on {arch}"
    assert table_distance(prod, reader, part, arch) == distance
