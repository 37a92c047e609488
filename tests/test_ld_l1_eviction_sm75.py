"""sm_75's generic `ld.L1::evict_last/evict_unchanged/evict_first/no_allocate` (branch
isaleft32): ptxas writes LD.E.EL/.EU/.EF/.NA; ours was refused ("cannot encode LD.E.EL.SYS")
and the table read .EL/.EU words as no hint (a form held the hint group outside its layout).
Each kernel of `tools/isa_seeds/ld_l1_eviction_sm75.ptx` (one load each: 8..128 bits, a
parameter or register address) must hold ptxas's load word, register numbers and offsets
aside: the hint, the size and the bits nvdisasm does not print (bit 90 of a [UR] load)."""
import re
from pathlib import Path

import ptx2sass
from ptx2sass import oracle

SEED = Path(__file__).resolve().parents[1] / "tools/isa_seeds/ld_l1_eviction_sm75.ptx"
# register (Rd, Ra/URa) and immediate-offset fields of LD: compared apart, by the text
FIELDS = (0xFF << 16) | (0xFF << 24) | (0xFF << 32) | (0xFFFFFF << 40)


def _loads(cubin: bytes) -> dict[str, tuple[int, str]]:
    out, kernel = {}, None
    lines = oracle.nvdisasm(cubin, ("-hex",)).splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"\.text\.(k_\w+):", line)
        if m:
            kernel = m.group(1)
        if kernel and re.search(r"\sLD\.", line):
            lo = int(re.search(r"/\* (0x[0-9a-f]+) \*/", line).group(1), 16)
            hi = int(re.search(r"/\* (0x[0-9a-f]+) \*/", lines[i + 1]).group(1), 16)
            text = line.split("*/")[1].split(";")[0].strip()
            out[kernel] = ((hi << 64 | lo) & ((1 << 105) - 1), re.sub(r"U?R\d+", "R", text))
    return out


def test_generic_loads_with_l1_hints_are_ptxas_words():
    src = SEED.read_text()
    theirs = _loads(oracle.ptxas(src, "sm_75").output)
    ours = _loads(ptx2sass.compile(src, arch="sm_75"))
    assert len(theirs) == 60
    for kernel, (word, text) in theirs.items():
        assert ours[kernel][1] == text, kernel
        assert (ours[kernel][0] ^ word) & ~FIELDS == 0, kernel
