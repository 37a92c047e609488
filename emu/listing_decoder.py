"""Kernels decoded from nvdisasm's listing instead of our own decoder: the fuzzer and the
tests run NVIDIA's cubins through the emulator this way where our decoder has a gap (it
needs nvdisasm, as the oracle does)."""
from __future__ import annotations

import re

from ptx2sass.emu.errors import EmuFault
from ptx2sass.encoder.model import Instruction

# nvdisasm spellings that `encoder.sass_text` does not parse (yet): BRX's branch-target note
# (the targets come from the register at run time; the note is informational) and the
# relocated immediates `32@lo(sym)` / `32@hi((kernel + .L_x_4@srel))`, whose value the
# loader fills from the cubin's relocations, as the driver does with the zero field.
_LISTING_NOTE = re.compile(r'\s*\(\*"BRANCH_TARGETS[^"]*"\*\)')
_LISTING_RELOC = re.compile(r"32@(?:lo|hi)\((?:[^()]|\([^()]*\))*\)")


def parseable(listing: str) -> str:
    """The listing with the spellings our text parser does not read replaced."""
    return _LISTING_RELOC.sub("0x0", _LISTING_NOTE.sub("", listing))


def nvdisasm_decoder(text: bytes, arch: str, kernel: str) -> list[tuple[int, Instruction]]:
    """Instructions of one kernel section from nvdisasm's listing of a raw text section."""
    from ptx2sass import oracle
    from ptx2sass.encoder.sass_text import parse_listing
    run = oracle.nvdisasm_raw(text, arch, ("-hex",))
    if not run.ok:
        raise EmuFault(f"nvdisasm could not disassemble the text: {run.stderr.strip()}", kernel=kernel)
    # A raw listing has no sections or symbols: give it one function to hang entries on.
    listing = parse_listing(".section .text.raw\nraw:\n" + parseable(run.stdout))
    out = []
    for f in listing.functions:
        out.extend((e.offset, e.instruction) for e in f.entries)
    out.sort(key=lambda t: t[0])
    return out


def cubin_listing_decoder(cubin: bytes):
    """A decoder reading the kernel's instructions from nvdisasm's listing of the whole
    cubin (labels and call targets resolved by name)."""
    from ptx2sass import oracle
    from ptx2sass.encoder.sass_text import parse_listing
    listing = parse_listing(parseable(oracle.nvdisasm(cubin)))

    def decode(text: bytes, arch: str, kernel: str):
        out = []
        for f in listing.functions:
            if f.section == f".text.{kernel}":
                out.extend((e.offset, e.instruction) for e in f.entries)
        out.sort(key=lambda t: t[0])
        return out
    return decode
