"""The device functions the CUDA driver links into a module (`malloc`, `free`, `vprintf`,
`__assertfail`), run by the emulator itself.

A cubin calls them as undefined symbols: their addresses reach the code through constant
bank 4 (`LDC.64 R6, c[0x4][R0]; ... CALL.ABS.NOINC R6`) or a CALL.ABS relocation, with the
CUDA calling convention: arguments from R4 (64-bit values in register pairs), the result
in R4, the return address in R20:R21 (computed with LEPC). Each undefined symbol gets an
address in a window no allocation uses; a call that lands there runs the function for
the calling lanes and returns to R20:R21.
"""
from __future__ import annotations

import re
import struct

import numpy as np

from .errors import EmuFault

EXTERN_BASE = 0x7E00_0000_0000     # below every global allocation (memory.GLOBAL_BASE)
SLOT = 0x100
KNOWN = ("malloc", "free", "vprintf", "__assertfail")
WINDOW = SLOT * (len(KNOWN) + 1)    # one slot per known function, one for every other name
_MAX_STRING = 4096


def address(name: str) -> int:
    """The address that stands for the undefined symbol `name` (every unknown name shares
    the last slot: calling it faults)."""
    return EXTERN_BASE + SLOT * (KNOWN.index(name) if name in KNOWN else len(KNOWN))


def name_at(target: int) -> str:
    """The function whose address (in the window) is `target`."""
    k = (target - EXTERN_BASE) // SLOT
    return KNOWN[k] if k < len(KNOWN) else "an undefined function"


def call(w, lane_ids: np.ndarray, name: str, read64, read_bytes, set64) -> None:
    """Run `name` for each calling lane, in lane order (as the device's printf buffer
    orders one warp's calls)."""
    launch = w.launch
    for lane in lane_ids:
        if name == "malloc":
            size = int(read64(lane, 4))
            launch.heap_allocations += 1
            base = launch.gmem.allocate(f"malloc#{launch.heap_allocations}", max(size, 1)).base
            set64(lane, 4, base)
        elif name == "free":
            pass                    # the heap is the launch's; freed blocks are simply dropped
        elif name == "vprintf":
            text, count = _format(read_bytes, lane, int(read64(lane, 4)), int(read64(lane, 6)))
            launch.printf.append(text)
            set64(lane, 4, count)
        elif name == "__assertfail":
            message = _string(read_bytes, lane, int(read64(lane, 4)))
            file = _string(read_bytes, lane, int(read64(lane, 6)))
            line = int(read64(lane, 8)) & 0xFFFFFFFF
            raise EmuFault(f"device assertion failed: {file}:{line}: {message}")
        else:
            raise EmuFault(f"call of {name}, which the emulator does not provide")


def _string(read_bytes, lane: int, addr: int) -> str:
    out = bytearray()
    while len(out) < _MAX_STRING:
        chunk = read_bytes(lane, addr + len(out), 1)
        if chunk[0] == 0:
            break
        out += chunk
    return out.decode("utf-8", "replace")


_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
                   r"(?P<len>hh|h|ll|l|L|z|j|t)?(?P<conv>[diouxXeEfFgGaAcspn%])")


def _format(read_bytes, lane: int, fmt_addr: int, args_addr: int) -> tuple[str, int]:
    """printf's text for one lane. The argument buffer holds each argument at its natural
    alignment: 4 bytes for int/char/short, 8 for long, double (floats are promoted) and
    pointers."""
    fmt = _string(read_bytes, lane, fmt_addr)
    offset, count, out, pos = 0, 0, [], 0

    def take(size: int) -> bytes:
        nonlocal offset
        offset = -(-offset // size) * size
        raw = read_bytes(lane, args_addr + offset, size)
        offset += size
        return raw

    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv, length = m.group("conv"), m.group("len") or ""
        if conv == "%":
            out.append("%")
            continue
        width, prec = m.group("width"), m.group("prec")
        if width == "*":
            width, count = str(struct.unpack("<i", take(4))[0]), count + 1
        if prec == "*":
            prec, count = str(struct.unpack("<i", take(4))[0]), count + 1
        spec = "%" + m.group("flags") + (width or "") + (f".{prec}" if prec is not None else "")
        count += 1
        if conv in "eEfFgGaA":
            value = struct.unpack("<d", take(8))[0]
            out.append((spec + conv) % value if conv not in "aA" else float.hex(value))
        elif conv in "diouxXc":
            wide = length in ("l", "ll", "z", "j", "t")
            raw = take(8 if wide else 4)
            signed = conv in "di"
            value = int.from_bytes(raw, "little", signed=signed)
            if length == "hh":
                value = ((value & 0xFF) ^ 0x80) - 0x80 if signed else value & 0xFF
            elif length == "h":
                value = ((value & 0xFFFF) ^ 0x8000) - 0x8000 if signed else value & 0xFFFF
            if conv == "u":
                conv = "d"
            out.append((spec + conv) % (chr(value & 0xFF) if conv == "c" else value))
        elif conv == "s":
            out.append((spec + "s") % _string(read_bytes, lane, int.from_bytes(take(8), "little")))
        elif conv == "p":
            out.append(f"0x{int.from_bytes(take(8), 'little'):x}")
        else:                        # %n writes nothing on the device
            take(8)
    out.append(fmt[pos:])
    return "".join(out), count
