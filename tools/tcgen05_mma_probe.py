"""tcgen05.mma probe forms (branch tcgen28: `.ws`, `.sp`, `.ashift`, collector usage, and ptxas's
refusals of their near misses) compiled by ptxas 13.5 and by us on sm_100a: ours = ptxas's
UTC*MMA line (uniform register numbers aside) or ptxas's error lines; and every UTC*MMA word
of ptxas's cubins decodes (the blackwell table) to nvdisasm's text.

    py -m tools.tcgen05_mma_probe
"""
from __future__ import annotations

import re

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.encoder import codec
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.errors import CompileError

KERNEL = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 da, .param .u64 db, .param .u32 id, .param .u32 taddr)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [da];
  ld.param.u64 %rd2, [db];
  ld.param.u32 %r4, [id];
  ld.param.u32 %r2, [taddr];
  mov.b64 %rd5, 0x12345678;
  setp.ne.u32 %p1, %r4, 0;
  tcgen05.mma.{mma};
  ret;
}
"""
FORMS = """
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16 [%r2], [%r4], %rd2, %r4, %p1
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %rd5
ws.cta_group::1.kind::f16 [%r2], [%r4], %rd2, %r4, %p1, %rd1
ws.cta_group::1.kind::tf32 [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::i8 [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, 0
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, 1
ws.cta_group::1.kind::f16.collector::b0::fill [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b0::use [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b0::lastuse [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b0::discard [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b1::fill [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b2::use [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b3::lastuse [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b3::discard [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b1::use [%r2], [%r4], %rd2, %r4, %p1, %rd1
ws.cta_group::2.kind::f16 [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, 2
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %r4
ws.cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b4::fill [%r2], %rd1, %rd2, %r4, %p1
ws.cta_group::1.kind::f16.collector::b0::fill.collector::b1::use [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::use [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::lastuse [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::discard [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::fill [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::use [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::lastuse [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::discard [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.ashift [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.ashift [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.ashift.collector::a::discard [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1, 3
cta_group::2.kind::f16.collector::a::use [%r2], %rd1, %rd2, %r4, %p1
cta_group::2.kind::f16.ashift [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::b0::fill [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %rd5
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %rd5, 3
ws.cta_group::1.kind::f16 [%r2], [%r4+32], %rd2, %r4, %p1
ws.cta_group::1.kind::f16.ashift [%r2], [%r4], %rd2, %r4, %p1
ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4
ws.cta_group::1.kind::f16.collector::b0::bogus [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::bogus [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::fill.collector::a::use [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f16.ashift.ashift [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::i8.collector::a::use [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f8f6f4.ashift [%r2], [%r4], %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1
ws.cta_group::1.kind::i8.collector::b2::lastuse [%r2], [%r4], %rd2, %r4, 0, %rd5
ws.cta_group::1.kind::f8f6f4.collector::b1::fill [%r2], %rd1, %rd2, %r4, 1, 0
ws.cta_group::1.kind::tf32 [%r2], %rd1, %rd2, %r4, %p1, -1
cta_group::1.kind::f16.ashift.collector::a::use [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.ashift.collector::a::lastuse [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::fill.ashift [%r2], [%r4], %rd2, %r4, %p1
cta_group::1.kind::f16.collector::a::fill.ashift [%r2], %rd1, %rd2, %r4, %p1
cta_group::1.kind::f8f6f4.ashift [%r2], [%r4], %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1
sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1
sp.cta_group::1.kind::f16 [%r2], [%r4], %rd2, [%r2+64], %r4, %p1
ws.sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1
sp.cta_group::1.kind::i8 [%r2], %rd1, %rd2, [%r2], %r4, %p1
sp.cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, [%r2], %r4, {%r1, %r1, %r1, %r1}, %p1
sp.cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, [%r2], %r4, %p1, 2
ws.sp.cta_group::1.kind::tf32.collector::b1::use [%r2], %rd1, %rd2, [%r2], %r4, %p1, %rd5
sp.cta_group::2.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1
sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r2, %r4, %p1
sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1
sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1, 16
sp.cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, [%r2], %r4, %p1, 1
sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1, %r3
ws.sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1, %r3
sp.sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1
""".strip().splitlines()


def _lines(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    return [re.sub(r"UR\d+", "UR", " ".join(t.split("*/", 1)[1].split(";")[0].split()))
            for t in text.splitlines() if "MMA" in t]


def _decoded(cubin: bytes) -> tuple[int, int]:
    """(UTC*MMA words, those whose decoding = nvdisasm's text)."""
    listing = oracle.nvdisasm(cubin, ("-c",)).splitlines()
    text = read_cubin(cubin).kernels[0].text
    words = same = 0
    for i in range(0, len(text), 16):
        line = next((t.split("*/", 1)[1] for t in listing if f"/*{i:04x}*/" in t), "")
        if "MMA" not in line:
            continue
        words += 1
        try:
            ours = codec.decode_text(int.from_bytes(text[i:i + 16], "little"), "sm_100")
        except Exception:       # noqa: BLE001 - counted as a wrong reading
            continue
        same += " ".join(ours.split()).rstrip(";") == " ".join(line.split()).rstrip(";").strip()
    return words, same


def main() -> int:
    agree = words = read = 0
    for form in FORMS:
        ptx = KERNEL.replace("{mma}", form)
        r = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
        if r.ok:
            theirs = _lines(r.output)
            w, s = _decoded(r.output)
            words, read = words + w, read + s
        else:
            theirs = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", r.stderr)]
        try:
            mine = _lines(compile_ptx(ptx, "sm_100a"))
        except CompileError as e:
            mine = [(d.line, d.message) for d in e.diagnostics if d.severity == "error"]
        agree += mine == theirs
        if mine != theirs:
            print("DIFF", form, theirs, mine)
    print(f"{agree}/{len(FORMS)} forms: ours = ptxas's line or errors; "
          f"{read}/{words} UTC*MMA words of ptxas's cubins decode to nvdisasm's text")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
