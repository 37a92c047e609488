"""`variants`: experiment cubins added to a prepared bundle, to bisect on silicon a launch
that the emulator gets right and the GPU gets wrong.

Each variant rewrites the control fields (or one modifier bit) of a cubin's instructions and
keeps everything else: if `ours_slow` (every instruction stalls 15 cycles and waits on every
scoreboard) is right on the GPU where `ours` is wrong, the fault is in our schedule's timing;
if it is still wrong, it is in the instructions themselves (a semantics the emulator gets
otherwise than the GPU). `ptxas_slow` is the control: the rewrite itself must keep ptxas's
cubin right. A variant's emulator outputs are its base's (a rewrite of control codes does not
change what a correct machine computes), so the GPU check's "emulator" comparison says
whether the GPU computed the intended result.

Control field layout (Volta+ 128-bit words, bits 105..127 as `hi >> 41`): stall 0-3, yield 4,
write scoreboard 5-7, read scoreboard 8-10, wait mask 11-16, operand reuse 17-20.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Callable

from .bundle import Bundle, BundleWriter

STALL, WAIT, REUSE = 0xF, 0x3F << 11, 0xF << 17


def text_sections(cubin: bytes) -> list[tuple[str, int, int]]:
    """(name, file offset, size) of each `.text.*` section of an ELF64 cubin."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    out = []
    for name_off, _type, _flags, _addr, offset, size, *_ in headers:
        end = cubin.index(b"\0", strtab + name_off)
        name = cubin[strtab + name_off:end].decode()
        if name.startswith(".text."):
            out.append((name, offset, size))
    return out


def _guarded_opcode(text: str) -> str:
    parts = text.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0].split(".")[0] if parts else ""


def rewrite(cubin: bytes, arch: str, change: Callable[[int, int, str, int], int]) -> bytes:
    """The cubin with each instruction word `w` of its code replaced by `change(w, control,
    opcode, index)` (the whole 128-bit word in, the whole word out; `index` counts the
    instructions over the code sections in order)."""
    from ptx2sass.encoder import codec
    data = bytearray(cubin)
    index = 0
    for _name, offset, size in text_sections(cubin):
        for at in range(offset, offset + size - 15, 16):
            word = int.from_bytes(data[at:at + 16], "little")
            try:
                op = _guarded_opcode(codec.decode_text(word, arch))
            except Exception:  # noqa: BLE001 - not in our tables: control fields only
                op = ""
            new = change(word, word >> 105, op, index)
            data[at:at + 16] = new.to_bytes(16, "little")
            index += 1
    return bytes(data)


def _with_control(word: int, control: int) -> int:
    return (word & ((1 << 105) - 1)) | (control << 105)


def slow(word: int, control: int, op: str, index: int) -> int:
    """Every instruction stalls 15 cycles and waits on all six scoreboards; no reuse."""
    return _with_control(word, (control & ~REUSE) | STALL | WAIT)


def ldgsts_spaced(word: int, control: int, op: str, index: int) -> int:
    """LDGSTS and LDGDEPBAR stall at least 4 cycles, as ptxas's sm_90 code does."""
    if op in ("LDGSTS", "LDGDEPBAR") and (control & STALL) < 4:
        return _with_control(word, (control & ~STALL) | 4)
    return word


def ltc128b(word: int, control: int, op: str, index: int) -> int:
    """LDGSTS with ptxas's `.LTC128B` (bit 72: an L2 prefetch hint, no change of meaning)."""
    return word | (1 << 72) if op == "LDGSTS" else word


def barrier_waits(word: int, control: int, op: str, index: int) -> int:
    """Every barrier, LDGDEPBAR, DEPBAR, LDGSTS, LDSM and MMA waits on all scoreboards first."""
    if op in ("BAR", "LDGSTS", "LDGDEPBAR", "DEPBAR", "LDSM", "HMMA", "IMMA"):
        return _with_control(word, control | WAIT)
    return word


def stall_all(word: int, control: int, op: str, index: int) -> int:
    return _with_control(word, control | STALL)


def wait_all(word: int, control: int, op: str, index: int) -> int:
    return _with_control(word, control | WAIT)


def no_reuse(word: int, control: int, op: str, index: int) -> int:
    return _with_control(word, control & ~REUSE)


def effect_waits(arch: str = "sm_90", kinds=("inval", "proxy", "membar")) -> Callable[[int, int, str, int], int]:
    """Every instruction with a late memory effect of `kinds` (`ptx2sass.fences.memory_effect`:
    SYNCS.CCTL.IV, FENCE.VIEW.ASYNC.S/.G, MEMBAR.CTA) that sets no scoreboard for it gets one
    (SB5, SB4 where its other field holds SB5) and the next instruction that depends on it
    (`EFFECT_WAITERS`) waits on it, as ptxas's sm_90 code: the rule applied to a cubin built
    without it. (A scoreboard counts its producers: sharing one with another only adds a wait.)"""
    from ptx2sass.encoder import codec
    from ptx2sass.fences import EFFECT_WAITERS, effect_on_read_scoreboard, memory_effect
    pending: dict[str, int] = {}

    def change(word: int, control: int, op: str, index: int) -> int:
        for kind in [k for k, sb in pending.items() if op in EFFECT_WAITERS[k]]:
            control |= 1 << (11 + pending.pop(kind))
        kind = None
        if op in ("SYNCS", "FENCE", "MEMBAR"):
            try:
                parts = codec.decode_text(word, arch).split()
                parts = parts[1:] if parts[0].startswith("@") else parts
                name = parts[0].split(".")
                kind = memory_effect(name[0], name[1:])
            except Exception:  # noqa: BLE001 - not in our tables
                kind = None
        if kind in kinds:
            shift = 8 if effect_on_read_scoreboard(kind) else 5
            other = 5 if shift == 8 else 8
            if (control >> shift & 7) == 7:
                sb = 4 if (control >> other & 7) == 5 else 5
                control = (control & ~(7 << shift)) | sb << shift
            pending[kind] = control >> shift & 7
        return _with_control(word, control)
    return change


def ublk_read_sb(word: int, control: int, op: str, index: int) -> int:
    """Every UBLKCP/UBLKPF/UBLKRED that sets no read scoreboard gets SB5 (SB4 where its write
    field holds SB5), as ptxas's: the next instruction that waits on it (ours: the waterfall
    loop's head and the BSSY after the loop wait on SB1-SB5) then finds its uniform sources
    read. Tests `uniform_late_readers` alone on a cubin built without the rule."""
    if op in ("UBLKCP", "UBLKPF", "UBLKRED") and (control >> 8 & 7) == 7:
        sb = 4 if (control >> 5 & 7) == 5 else 5
        return _with_control(word, (control & ~(7 << 8)) | sb << 8)
    return word


def bar_red_stall(word: int, control: int, op: str, index: int) -> int:
    """BAR (BAR.RED's B2R.RESULT follows it) stalls at least 6 cycles, as ptxas's sm_80+ code
    (after_barrier's distance): tests the B2R rule alone on a cubin built without it."""
    if op == "BAR" and (control & STALL) < 6:
        return _with_control(word, (control & ~STALL) | 6)
    return word


# opcode groups a bisection names: `wait_<GROUP>` waits on every scoreboard before the
# group's instructions, `stall_<GROUP>` stalls 15 cycles after each of them
GROUPS = {"BAR": ("BAR",), "LDGSTS": ("LDGSTS",), "LDGDEPBAR": ("LDGDEPBAR",), "DEPBAR": ("DEPBAR",),
          "LDSM": ("LDSM",), "MMA": ("HMMA", "IMMA", "QMMA"), "LDS": ("LDS", "STS"), "ALU": ()}


def _group_transform(kind: str, group: str) -> Callable[[int, int, str, int], int]:
    ops = GROUPS[group]

    def change(word: int, control: int, op: str, index: int) -> int:
        hit = op in ops if ops else op not in {o for g in GROUPS.values() for o in g}
        if not hit:
            return word
        return _with_control(word, control | (WAIT if kind == "wait" else STALL))
    change.__doc__ = f"{'wait on every scoreboard before' if kind == 'wait' else 'stall 15 after'} {group}"
    return change


TRANSFORMS: dict[str, Callable[[int, int, str, int], int]] = {
    "slow": slow, "ldgsts_spaced": ldgsts_spaced, "ltc128b": ltc128b, "barrier_waits": barrier_waits,
    "stall": stall_all, "wait": wait_all, "noreuse": no_reuse, "ublk_read_sb": ublk_read_sb,
    "bar_red_stall": bar_red_stall,
    **{f"{kind}_{group}": _group_transform(kind, group) for kind in ("wait", "stall") for group in GROUPS}}


def _range_transform(name: str) -> Callable | None:
    """`stallin_LO_HI` stalls 15 cycles after the instructions LO..HI-1 (counted over the
    cubin's code sections in order); `stallout_LO_HI` after every other one; `waitin_LO_HI`
    / `waitout_LO_HI` make them wait on every scoreboard instead. A bisection over ranges
    finds the instruction whose result comes later than our schedule assumes (a stall) or
    that reads a variable-latency result without waiting for it (a wait)."""
    m = re.fullmatch(r"(stall|wait)(in|out)_(\d+)_(\d+)", name)
    if not m:
        return None
    bits = STALL if m.group(1) == "stall" else WAIT
    inside, lo, hi = m.group(2) == "in", int(m.group(3)), int(m.group(4))

    def change(word: int, control: int, op: str, index: int) -> int:
        if (lo <= index < hi) == inside:
            return _with_control(word, control | bits)
        return word
    return change


def _nop_transform(name: str, arch: str) -> Callable | None:
    """`nop_I[_J...]` replaces the instructions I, J, ... (counted as in `stallin`) by NOP with
    their control fields kept: a YIELD, a WARPSYNC or a fence whose removal changes what the
    GPU computes is one the code depends on (the emulator's outputs stay the base's, so this
    is meant for instructions that should not change the result)."""
    m = re.fullmatch(r"nop((?:_\d+)+)", name)
    if not m:
        return None
    from ptx2sass.encoder import codec
    targets = {int(i) for i in m.group(1).split("_")[1:]}
    nop = codec.encode_text("NOP", arch) & ((1 << 105) - 1)

    def change(word: int, control: int, op: str, index: int) -> int:
        return _with_control(nop, control) if index in targets else word
    return change


def transform(name: str, arch: str = "sm_90") -> Callable:
    if name in ("effect_wait", "inval_wait"):      # stateful: a fresh one per cubin
        return effect_waits(arch, ("inval",) if name == "inval_wait" else ("inval", "proxy", "membar"))
    found = TRANSFORMS.get(name) or _range_transform(name) or _nop_transform(name, arch)
    if found is None:
        raise KeyError(name)
    return found


def instruction_count(cubin: bytes) -> int:
    return sum(size // 16 for _name, _offset, size in text_sections(cubin))


def bisection_names(count: int, lo: int, hi: int, parts: int, outside: bool = True,
                    kind: str = "stall") -> list[str]:
    """Variants that stall (or, `kind` "wait", make wait) one of `parts` slices of the
    instructions lo..hi each (and, with `outside`, every instruction but that slice)."""
    step = max(1, -(-(hi - lo) // parts))
    names = []
    for a in range(lo, hi, step):
        b = min(hi, a + step)
        names.append(f"{kind}in_{a}_{b}")
        if outside:
            names.append(f"{kind}out_{a}_{b}")
    return names


def add_variants(bundle_dir: Path, select: str, names: list[str], bases=("ours", "ptxas"),
                 log=print) -> int:
    """Add `<base>_<name>` cubins to the launches whose id matches `select`; returns how many."""
    bundle = Bundle(bundle_dir)
    manifest = bundle.manifest
    writer = BundleWriter(bundle_dir)
    for key in bundle._zip.namelist():
        writer.add(bundle._zip.read(key))
    pattern = re.compile(select)
    added = 0
    for spec in manifest["launches"]:
        if not pattern.search(spec["id"]):
            continue
        for base in bases:
            build = spec["cubins"].get(base, {})
            if build.get("status") != "ok":
                continue
            cubin = bundle.blob(build["cubin"])
            for name in names:
                variant = f"{base}_{name}"
                new = rewrite(cubin, manifest["arch"], transform(name, manifest["arch"]))
                spec["cubins"][variant] = {**build, "cubin": writer.add(new), "variant_of": base}
                if base in spec["emu"]:
                    spec["emu"][variant] = spec["emu"][base]
                added += 1
    bundle._zip.close()
    manifest.pop("format", None)
    writer.close(manifest)
    log(f"variants: {added} cubins added to {bundle_dir} ({', '.join(names)})")
    return added

