"""The bytes of a variable's initialiser (`.global .s32 a[4] = {1, 2};`), as ptxas stores
them: elements little-endian in declaration order, missing trailing elements zero.

Integer elements wrap to the element's width; float elements take a literal's value (an
integer literal is converted, `0f`/`0d` literals give their exact bits). An element naming a
variable or function (`sym`, `sym+8`, `generic(sym)`) is an address: its bytes stay zero and
it is returned as a relocation (byte offset, symbol name, addend) for the cubin writer.
"""
from __future__ import annotations

import struct

from ptx2sass.frontend import ast

_INT_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if b else 0, "%": lambda a, b: a - int(a / b) * b if b else 0,
    "<<": lambda a, b: a << (b & 63), ">>": lambda a, b: a >> (b & 63),
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
}


class NotConstant(ValueError):
    """The expression is not a compile-time number (an address, or something unsupported)."""


def _flatten(init) -> list:
    if type(init) is list:
        out = []
        for x in init:
            out.extend(_flatten(x))
        return out
    return [init]


def element_count(init) -> int:
    return len(_flatten(init))


def _number(e):
    """An int or float value of a constant expression."""
    if isinstance(e, ast.IntLit):
        return e.value
    if isinstance(e, ast.FloatLit):
        return e
    if isinstance(e, ast.ParenList) and len(e.elements) == 1:
        return _number(e.elements[0])
    if isinstance(e, ast.Unary):
        v = _number(e.operand)
        if isinstance(v, ast.FloatLit):
            if e.op != "-":
                raise NotConstant(e)
            return ast.FloatLit(value=-v.value, text="-" + v.text)
        return {"-": -v, "~": ~v, "!": int(not v)}[e.op]
    if isinstance(e, ast.Binary):
        a, b = _number(e.left), _number(e.right)
        if isinstance(a, ast.FloatLit) or isinstance(b, ast.FloatLit) or e.op not in _INT_OPS:
            raise NotConstant(e)
        return _INT_OPS[e.op](a, b)
    raise NotConstant(e)


def _address(e) -> tuple[str, int]:
    """(symbol, addend) of an address expression: `sym`, `sym+8`, `generic(sym)+4`."""
    if isinstance(e, ast.Name):
        return e.name, 0
    if isinstance(e, ast.Call) and e.function == "generic" and len(e.args) == 1:
        return _address(e.args[0])
    if isinstance(e, ast.ParenList) and len(e.elements) == 1:
        return _address(e.elements[0])
    if isinstance(e, ast.Binary) and e.op in ("+", "-"):
        try:
            name, add = _address(e.left)
            k = _number(e.right)
        except NotConstant:
            if e.op == "-":
                raise
            name, add = _address(e.right)
            k = _number(e.left)
        if isinstance(k, ast.FloatLit):
            raise NotConstant(e)
        return name, add + (k if e.op == "+" else -k)
    raise NotConstant(e)


def _float_bytes(v, size: int) -> bytes:
    if isinstance(v, ast.FloatLit) and v.bits is not None:
        if v.width == size * 8:
            return v.bits.to_bytes(size, "little")
        value = struct.unpack("<f", v.bits.to_bytes(4, "little"))[0] if v.width == 32 else \
            struct.unpack("<d", v.bits.to_bytes(8, "little"))[0]
    else:
        value = float(v.value if isinstance(v, ast.FloatLit) else v)
    fmt = {2: "<e", 4: "<f", 8: "<d"}[size]
    try:
        return struct.pack(fmt, value)
    except OverflowError:
        return struct.pack(fmt, float("inf") if value > 0 else float("-inf"))


def initial_bytes(init, kind: str, elem_size: int, size: int):
    """(bytes of `size`, relocations [(offset, symbol, addend)]) for initialiser `init` of
    elements of `elem_size` bytes of kind "f" (float) or another (integer/bits)."""
    data = bytearray(size)
    relocs = []
    for i, e in enumerate(_flatten(init)):
        at = i * elem_size
        if at + elem_size > size:
            break
        try:
            v = _number(e)
        except NotConstant:
            name, addend = _address(e)
            relocs.append((at, name, addend))
            continue
        if kind == "f":
            data[at:at + elem_size] = _float_bytes(v, elem_size)
        else:
            if isinstance(v, ast.FloatLit):
                v = v.bits if v.bits is not None else int(v.value)
            data[at:at + elem_size] = (v & ((1 << (8 * elem_size)) - 1)).to_bytes(elem_size, "little")
    return bytes(data), relocs


# `.samplerref` fields: (byte of the sampler word, {keyword: value}); a byte not given is 0xff
SAMPLER_FIELDS = {
    "addr_mode_0": (0, None), "addr_mode_1": (1, None), "addr_mode_2": (2, None),
    "filter_mode": (3, {"nearest": 0, "linear": 1}),
}
ADDRESS_MODES = {"wrap": 0, "mirror": 1, "clamp_ogl": 2, "clamp_to_edge": 3, "clamp_to_border": 4}


def sampler_word(fields) -> tuple[int, int | None]:
    """(the sampler word ptxas 13.5 records in EIATTR_SAMPLER_INIT, force_unnormalized_coords
    or None) for a `.samplerref`'s `{field = value, ...}`: one byte per field (address modes
    0..2, then the filter mode), 0xff where not given. Raises NotConstant on a field or
    value it does not know."""
    word, force = 0xFFFFFFFF, None
    for f in _flatten(fields) if fields is not None else ():
        if not isinstance(f, ast.FieldInit):
            raise NotConstant(f)
        if f.field == "force_unnormalized_coords":
            force = _number(f.value) & 1
            continue
        at, values = SAMPLER_FIELDS.get(f.field, (None, None))
        value = (values or ADDRESS_MODES).get(f.value) if isinstance(f.value, str) else None
        if at is None or value is None:
            raise NotConstant(f)
        word = word & ~(0xFF << (8 * at)) | value << (8 * at)
    return word, force
