"""Loads, stores, atomics and async copies over the global, shared, local, generic and
constant spaces."""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import NO_SCOREBOARD, ConstRef, Imm, Mem, Reg

from . import fp
from .errors import EmuFault
from .lanes import EXITED, SHARED_RANK_SHIFT, reg, widen
from .memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from .registry import semantics

U32, U64, I64 = np.uint32, np.uint64, np.int64
M32 = U64(0xFFFFFFFF)

_SIZES = {"U8": (1, False), "S8": (1, True), "U16": (2, False), "S16": (2, True),
          "32": (4, False), "64": (8, False), "128": (16, False)}


def access_size(mods) -> tuple[int, bool]:
    for m in mods:
        if m in _SIZES:
            return _SIZES[m]
    return 4, False


def address(w, mem: Mem, wide: bool) -> np.ndarray:
    """Per-lane byte address of `[Ra(.64) + URb + imm]` as uint64."""
    addr = np.zeros(1, dtype=U64)
    base = mem.base
    if base is not None and not base.is_zero:
        if "64" in base.suffix or (wide and "U32" not in base.suffix):
            addr = w.r64(reg("R", base.index)) if base.file == "R" else w.r64(base)
        else:
            addr = w.r(reg(base.file, base.index)).astype(U64)
        for sfx in base.suffix:        # `[R7.X4]`: a scaled index
            if sfx in ("X4", "X8", "X16"):
                addr = addr * U64(int(sfx[1:]))
    if mem.ubase is not None and not mem.ubase.is_zero:
        if wide:
            addr = addr + w.r64(reg("UR", mem.ubase.index))
        else:
            addr = addr + w.r(reg("UR", mem.ubase.index)).astype(U64)
    if mem.offset:              # (two's complement: a negative offset as its 64-bit pattern)
        addr = addr + U64(mem.offset & 0xFFFFFFFFFFFFFFFF)
    if not wide:
        addr = addr & M32
    # (a new array: each step above makes one)
    return addr if addr.shape == (w.width,) else np.broadcast_to(addr, (w.width,)).copy()


def _to_words(raw: np.ndarray, size: int, signed: bool) -> list[np.ndarray]:
    """(lanes, size) bytes → list of 32-bit register values (sign/zero-extended if narrow)."""
    n = raw.shape[0]
    if size < 4:
        dt = {1: np.int8 if signed else np.uint8, 2: np.int16 if signed else np.uint16}[size]
        v = raw.copy().view(dt).reshape(n).astype(np.int64).astype(U64) & M32
        return [v.astype(U32)]
    words = raw.copy().view(U32).reshape(n, size // 4)
    return [words[:, i] for i in range(size // 4)]


def _from_words(w, src: Reg, size: int, lanes: np.ndarray) -> np.ndarray:
    n = int(lanes.sum())
    count = max(size // 4, 1)
    words = []
    for i in range(count):
        r = reg(src.file, src.index + i) if not src.is_zero else src
        words.append(widen(w.r(r), w.width)[lanes])
    data = np.stack(words, axis=1).astype(U32).view(np.uint8).reshape(n, 4 * count)
    return data[:, :size]


# --------------------------------------------------------------------------- spaces

def _load(w, space, addrs, size, lanes):
    a = addrs[lanes]
    if space == "global":
        return w.launch.gmem.load(a, size)
    if space == "shared":
        return w.shared.load(np.nonzero(lanes)[0], a, size)
    if space == "local":
        return w.local.load(np.nonzero(lanes)[0], a, size)
    if space == "generic":
        return _generic(w, a, size, lanes, None)
    raise EmuFault(f"unknown space {space}")


def _store(w, space, addrs, data, lanes):
    a = addrs[lanes]
    if space == "global":
        w.launch.gmem.store(a, data)
    elif space == "shared":
        w.shared.store(np.nonzero(lanes)[0], a, data)
    elif space == "local":
        w.local.store(np.nonzero(lanes)[0], a, data)
    elif space == "generic":
        _generic(w, a, data.shape[1], lanes, data)


def _generic(w, a, size, lanes, data):
    """Generic addressing: the shared and local windows map onto those spaces."""
    in_shared = (a >= U64(SHARED_WINDOW)) & (a < U64(SHARED_WINDOW + WINDOW_SIZE))
    in_local = (a >= U64(LOCAL_WINDOW)) & (a < U64(LOCAL_WINDOW + WINDOW_SIZE))
    glob = ~in_shared & ~in_local
    lane_ids = np.nonzero(lanes)[0]
    out = np.zeros((len(a), size), dtype=np.uint8) if data is None else None
    if glob.any():
        if data is None:
            out[glob] = w.launch.gmem.load(a[glob], size)
        else:
            w.launch.gmem.store(a[glob], data[glob])
    if in_shared.any():
        # (a shared::cluster address: another rank's reaches that CTA's, SharedLanes)
        off = a[in_shared] - U64(SHARED_WINDOW)
        if data is None:
            out[in_shared] = w.shared.load(lane_ids[in_shared], off, size)
        else:
            w.shared.store(lane_ids[in_shared], off, data[in_shared])
    if in_local.any():
        off = a[in_local] - U64(LOCAL_WINDOW)
        if data is None:
            out[in_local] = w.local.load(lane_ids[in_local], off, size)
        else:
            w.local.store(lane_ids[in_local], off, data[in_local])
    return out


_SPACE = {"LDG": "global", "STG": "global", "LD": "generic", "ST": "generic",
          "LDS": "shared", "STS": "shared", "LDL": "local", "STL": "local"}


def _is_wide(opcode, mods):
    return _SPACE[opcode] in ("global", "generic") and ("E" in mods or True)


@semantics("LDG", "LD", "LDS", "LDL", vector=True)
def op_load(w, s, active, mask):
    ins = s.ins
    d, mem = ins.operands[0], ins.operands[1]
    if not np.count_nonzero(mask):
        return
    if "256" in ins.modifiers:
        return _load256(w, ins, mask)
    size, signed = access_size(ins.modifiers)
    space = _SPACE[ins.opcode]
    addrs = address(w, mem, space in ("global", "generic"))
    every = mask is active or np.count_nonzero(mask) == w.width
    if space == "global":
        # elements, not bytes (the same faults: `gather` checks as `load` does)
        words = _element_words(w.launch.gmem.gather(addrs if every else addrs[mask], size), size, signed)
    else:
        words = _to_words(_load(w, space, addrs, size, mask), size, signed)
    _write_loaded(w, d, words, mask, every)


def _write_loaded(w, d, words, mask, every: bool) -> None:
    """The loaded words into d and the registers after it (the active lanes' only)."""
    if d.is_zero:
        return
    for i, word in enumerate(words):
        if not every:
            full = np.zeros(w.width, dtype=U32)
            full[mask] = word
            word = full
        w.w(reg(d.file, d.index + i), word, mask)


def _element_words(el: np.ndarray, size: int, signed: bool) -> list[np.ndarray]:
    """Loaded elements (`GlobalMemory.gather`) as 32-bit register values, as `_to_words`."""
    if size < 4:
        return [el.view(np.int8 if size == 1 else np.int16).astype(np.int32).view(U32) if signed
                else el.astype(U32)]
    if size == 4:
        return [el]
    if size == 16:
        return [(el[:, k // 2] >> U64(32 * (k & 1))).astype(U32) for k in range(4)]
    return [el.astype(U32), (el >> U64(32)).astype(U32)]


@semantics("STG", "ST", "STS", "STL", vector=True)
def op_store(w, s, active, mask):
    ins = s.ins
    mem, src = ins.operands[0], ins.operands[1]
    if not np.count_nonzero(mask):
        return
    if "256" in ins.modifiers:
        return _store256(w, ins, mask)
    size, _ = access_size(ins.modifiers)
    space = _SPACE[ins.opcode]
    addrs = address(w, mem, space in ("global", "generic"))
    if space == "global":
        # elements, not bytes (the same faults: `scatter` checks as `store` does)
        every = mask is active or np.count_nonzero(mask) == w.width
        w.launch.gmem.scatter(addrs if every else addrs[mask], _element_values(w, src, size, mask, every), size)
        return
    _store(w, space, addrs, _from_words(w, src, size, mask), mask)


_NARROW = {1: np.uint8, 2: np.uint16}


# 256-bit global accesses (sm_100+: `LDG/STG.E.ENL2.256`): 8 words at a 32-byte aligned
# address, in two register quads. A load names the quad of words 4..7 first
# (`LDG … R12, R8, [..]`: R8..R11 = words 0..3), a store the quad of words 0..3 first
# (`STG [..], R8, R12`), as ptxas's code moves a loaded vector to a store. A load's optional
# last operand masks the words (bit k: word k); ptxas writes it for a partly read vector
# and packs each quad's loaded words into its first registers (`R25, R22, …, 0x25`: words
# 0 and 2 in R22, R23, word 5 in R25; a quad with no word is RZ); a store's mask likewise
# (`STG … R4, R8, 0xcd`: words 0,2,3 from R4..R6, 6,7 from R8, R9; PTX's sinks `_`). A
# model read off ptxas's code, not hardware-checked.

def _wide256_address(w, ins, mem, mask) -> np.ndarray:
    addrs = address(w, mem, True)[mask]
    bad = addrs & U64(31)
    if bad.any():
        raise EmuFault(f"misaligned 32-byte global access at address 0x{int(addrs[bad != 0][0]):x}")
    return addrs


def _word_mask(ins) -> int:
    last = ins.operands[-1]
    return last.value & 0xFF if isinstance(last, Imm) else 0xFF


def _load256(w, ins, mask):
    hi, lo, mem = ins.operands[0], ins.operands[1], ins.operands[2]
    addrs = _wide256_address(w, ins, mem, mask)
    words = []
    for half in (0, 16):
        pairs = w.launch.gmem.gather(addrs + U64(half), 16)
        words += [(pairs[:, k // 2] >> U64(32 * (k & 1))).astype(U32) for k in range(4)]
    used = _word_mask(ins)
    for quad, first in ((lo, 0), (hi, 4)):
        slot = 0
        for k in range(first, first + 4):
            if not used >> k & 1:
                continue
            if quad.is_zero:
                break
            full = np.zeros(w.width, dtype=U32)
            full[mask] = words[k]
            w.w(reg(quad.file, quad.index + slot), full, mask)
            slot += 1


def _store256(w, ins, mask):
    """All 8 words, or (a last mask operand, PTX's sinks in `st.v8`) only the masked ones,
    each quad's stored words packed into its first registers as a masked load's; the other
    words of memory keep their values (a quad with no stored word is RZ)."""
    mem, lo, hi = ins.operands[0], ins.operands[1], ins.operands[2]
    addrs = _wide256_address(w, ins, mem, mask)
    used = _word_mask(ins)
    if used == 0xFF:
        for half, quad in ((0, lo), (16, hi)):
            w.launch.gmem.scatter(addrs + U64(half), _element_values(w, quad, 16, mask, False), 16)
        return
    for quad, first in ((lo, 0), (hi, 4)):
        slot = 0
        for k in range(first, first + 4):
            if used >> k & 1:
                r = quad if quad.is_zero else reg(quad.file, quad.index + slot)
                w.launch.gmem.scatter(addrs + U64(4 * k), widen(w.r(r), w.width)[mask], 4)
                slot += 1


def _element_values(w, src: Reg, size: int, lanes: np.ndarray, every: bool) -> np.ndarray:
    """The stored registers as elements of `size` bytes (16: pairs of uint64), read as
    `_from_words` reads them."""
    words = []
    for i in range(max(size // 4, 1)):
        r = reg(src.file, src.index + i) if not src.is_zero else src
        v = widen(w.r(r), w.width)
        words.append(v if every else v[lanes])
    if size < 4:
        return words[0].astype(_NARROW[size])
    if size == 4:
        return words[0]
    pairs = [words[k].astype(U64) | (words[k + 1].astype(U64) << U64(32)) for k in range(0, len(words), 2)]
    return pairs[0] if size == 8 else np.stack(pairs, axis=1)


@semantics("LDC", "ULDC_INDEXED")
def op_ldc(w, s, active, mask):
    d, ref = s.ins.operands
    size, signed = access_size(s.ins.modifiers)
    if ref.ureg is not None and not ref.ureg.is_zero and w.m.tracing:
        w.m.reads.append((ref.ureg.file, ref.ureg.index))     # the index is a source (hazard check)
    if ref.ureg is not None and ref.ureg.file == "R":
        offs = w.R[ref.ureg.index].astype(I64) + ref.offset
    else:
        off = ref.offset + (int(w.UR[ref.ureg.index]) if ref.ureg is not None and not ref.ureg.is_zero else 0)
        offs = np.full(32, off, dtype=I64)
    offs = np.where(mask, offs, offs[mask][0] if mask.any() else 0)
    raw = w.launch.const.read_lanes(ref.bank, offs, size)
    for i, word in enumerate(_to_words(raw, size, signed)):
        if not d.is_zero:
            w.w(Reg(d.file, d.index + i), word, mask)


# --------------------------------------------------------------------------- atomics

_ATOM_OPS = ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST", "SAFEADD",
             "ARRIVE")

# The 64-bit mbarrier object as ptxas's sm_8x code lays it out (mbarrier.init writes it,
# test_wait/pending_count read it): word 0 holds 2^30 - the expected arrival count
# (arrive_drop's ATOMS.POPC.INC raises it), word 1 the phase in bit 31 and 2^31 - the
# pending count below it. An arrival adds one to word 1: the pending count's last arrival
# carries into bit 31 (the phase flips) and the pending count starts again from word 0.
MBARRIER_PHASE = 0x80000000


def mbarrier_arrive(old: int) -> int:
    """The object after one arrival (ATOMS.ARRIVE.64, ARRIVES.LDGSTSBAR.64)."""
    w0, w1 = old & 0xFFFFFFFF, old >> 32
    w1 = (w1 + 1) & 0xFFFFFFFF
    if not w1 & ~MBARRIER_PHASE:
        w1 = (w1 & MBARRIER_PHASE) | ((w0 + 0x40000000) & ~MBARRIER_PHASE & 0xFFFFFFFF)
    return w0 | w1 << 32


def _atom_type(mods):
    for t in ("F32", "F64", "F16x2", "BF16x2", "S32", "U32", "64", "S64", "U64", "128"):
        if t in mods:
            return t
    return "U32"


def _scalar_apply(op, ty, old, b, c=None, ftz=False):
    """One lane's read-modify-write on integers/bit patterns; returns the new value (`ftz`:
    the instruction's `.FTZ`, for an F32 add)."""
    bits = 64 if ty in ("64", "S64", "U64", "F64") else 32
    m = (1 << bits) - 1
    signed = ty in ("S32", "S64")

    def sv(x):
        return x - (1 << bits) if signed and x >> (bits - 1) else x

    if ty == "F32":
        a32 = np.array([old], dtype=U32).view(np.float32)
        b32 = np.array([b], dtype=U32).view(np.float32)
        if op == "ADD":
            r = fp.fadd32(a32, b32, "RN", ftz)
        elif op in ("MIN", "MAX"):
            r = np.fmin(a32, b32) if op == "MIN" else np.fmax(a32, b32)
        elif op == "EXCH":
            return b
        else:
            raise EmuFault(f"unsupported float atomic {op}")
        return int(fp.canonicalise_f32(r)[0])
    if ty in ("F16x2", "BF16x2"):
        return _half2_apply(op, ty, old, b)
    if ty == "F64":
        a = np.array([old], dtype=U64).view(np.float64)
        bb = np.array([b], dtype=U64).view(np.float64)
        if op == "ADD":
            # the memory unit's FP64 add gives a NaN operand back as it is, a signalling one
            # unquieted, the added value's before the word in memory's (an H200, GPU run 24's
            # fuzz 9400100 and 9400138); the SM's DADD would set the quiet bit
            if np.isnan(bb[0]):
                return b
            if np.isnan(a[0]):
                return old
            return int((a + bb).view(U64)[0])
        if op == "EXCH":
            return b
        raise EmuFault(f"unsupported float atomic {op}")
    if op in ("ADD", "SAFEADD"):
        return (old + b) & m
    if op == "ARRIVE":
        return mbarrier_arrive(old)
    if op == "MIN":
        return old if sv(old) <= sv(b) else b
    if op == "MAX":
        return old if sv(old) >= sv(b) else b
    if op == "INC":
        return 0 if old >= b else (old + 1) & m
    if op == "DEC":
        return b if (old == 0 or old > b) else (old - 1) & m
    if op == "AND":
        return old & b
    if op == "OR":
        return old | b
    if op == "XOR":
        return old ^ b
    if op == "EXCH":
        return b
    if op == "CAS":
        return c if old == b else old
    raise EmuFault(f"unsupported atomic operation {op}")


def _half2_apply(op, ty, old, b):
    """Packed F16x2/BF16x2 atomics: each half on its own, rounded to nearest even, F16
    subnormals kept (PTX `atom.add.noftz.f16x2`; an H200 gave 0x6294 + 0x0100 (tiny) = 0x6294
    where integer addition gives 0x6394)."""
    kind = "f16" if ty == "F16x2" else "bf16"
    halves = np.array([old & 0xFFFF, old >> 16 & 0xFFFF], dtype=np.uint16)
    adds = np.array([b & 0xFFFF, b >> 16 & 0xFFFF], dtype=np.uint16)
    x, y = fp.half_to_f64(halves, kind), fp.half_to_f64(adds, kind)
    if op == "ADD":
        r = fp.add_rto(x, y)
    elif op in ("MIN", "MAX"):
        r = np.fmin(x, y) if op == "MIN" else np.fmax(x, y)
    elif op == "EXCH":
        return b
    else:
        raise EmuFault(f"unsupported packed-half atomic {op}")
    h = fp.f64_to_half_bits(np.asarray(r, dtype=np.float64), kind).astype(np.uint32)
    return int(h[0]) | int(h[1]) << 16


def _atomic(w, s, mask, space, has_result):
    ins = s.ins
    ops = list(ins.operands)
    done_pred = None
    if ops and isinstance(ops[0], Reg) and ops[0].file == "P":
        done_pred = ops.pop(0)
    if has_result and not isinstance(ops[0], Mem):    # sm_120's CAST.SPIN: P, [a], b, c
        d = ops.pop(0)
    else:
        d = None
    mem = ops.pop(0)
    b_op = ops[0] if ops else None
    c_op = ops[1] if len(ops) > 1 else None
    mods = ins.modifiers
    ftz = "FTZ" in mods
    op = next((m for m in mods if m in _ATOM_OPS), "ADD")
    popc_increment = op == "INC" and "POPC" in mods
    if popc_increment:
        # ATOMS.POPC.INC: ptxas's form of `atom.add 1` (no source operand): every lane adds
        # one, i.e. each address grows by the number of lanes that name it.
        op = "ADD"
    if any(m in _VECTOR_ATOM for m in mods):
        return _vector_atomic(w, mask, space, d, mem, b_op, op, mods)
    ty = _atom_type(mods)
    size = 16 if ty == "128" else 8 if ty in ("64", "S64", "U64", "F64") else 4
    addrs = address(w, mem, space in ("global", "generic"))
    n = w.width
    if space == "generic" and done_pred is not None:
        # A generic ATOM performs the operation on global memory, and on shared memory when
        # the shared unit has it (32-bit integer operations, CAS and EXCH); elsewhere it
        # does nothing, and its predicate (when not PT) says so: ptxas then runs its own
        # code for shared (a compare-and-swap loop) or local memory (a load and a store).
        shared, distributed, local = generic_windows(addrs, own_rank(w))
        # (what the shared unit lacks: float additions and 64-bit arithmetic/logic; CAS,
        # EXCH and sm_8x's mbarrier ATOM.E.ARRIVE.64 it has. Another CTA's shared memory
        # (sm_90+ clusters) does all but the f32/f64 additions: ptxas's only QSPC.E.D loops)
        lacking = ty in ("F32", "F64", "F16x2", "BF16x2") or (
            size == 8 and op in ("ADD", "MIN", "MAX", "AND", "OR", "XOR", "INC", "DEC"))
        native = not lacking
        remote = not (op == "ADD" and ty in ("F32", "F64"))
        done = ~local & (~shared | native) & (~distributed | remote)
        if not done_pred.is_zero:
            w.wp(done_pred, done, mask)
        mask = mask & done
    if size == 16:      # CAS/EXCH.128: register quads, as Python integers
        bvals = _quad(w, b_op) if b_op is not None else None
        cvals = _quad(w, c_op) if c_op is not None else None
    elif size == 8:
        bvals = np.broadcast_to(w.r64(b_op), (n,)) if b_op is not None else None
        cvals = np.broadcast_to(w.r64(c_op), (n,)) if c_op is not None else None
    else:
        bvals = np.broadcast_to(w.r(b_op), (n,)) if b_op is not None else None
        cvals = np.broadcast_to(w.r(c_op), (n,)) if c_op is not None else None
    results = np.zeros(n, dtype=object if size == 16 else U64)
    for lane in np.nonzero(mask)[0]:
        lanes = np.zeros(n, bool)
        lanes[lane] = True
        raw = _load(w, space, addrs, size, lanes)
        old = int.from_bytes(raw[0].tobytes(), "little")
        b = 1 if popc_increment else int(bvals[lane]) if bvals is not None else 0
        c = int(cvals[lane]) if cvals is not None else None
        if op == "CAST":
            # ATOMS.CAST.SPIN: store c if memory still holds b; the result says whether it did.
            ok = old == b
            if ok:
                new = c
                _store(w, space, addrs, np.frombuffer(new.to_bytes(size, "little"), np.uint8)[None, :], lanes)
            results[lane] = 1 if ok else 0
            continue
        new = _scalar_apply(op, ty, old, b, c, ftz)
        if new != old:
            _store(w, space, addrs, np.frombuffer(new.to_bytes(size, "little"), np.uint8)[None, :], lanes)
        results[lane] = old
    if op == "CAST" and d is None and done_pred is not None:    # sm_120: the flag in P
        w.wp(done_pred, results != 0, mask)
    if d is not None and not d.is_zero:
        if size == 16:
            for k in range(4):
                w.w(reg(d.file, d.index + k), np.array([int(r) >> 32 * k & 0xFFFFFFFF for r in results],
                                                      dtype=U32), mask)
        elif size == 8:
            w.w64(d, results, mask)
        else:
            w.w(d, results.astype(U32), mask)


# Vector atomics (PTX `.v2/.v4/.v8`, sm_90+): type -> (each word's type, words); the data,
# and the old values of ATOM/ATOMG, in consecutive registers.
_VECTOR_ATOM = {"F32x2": ("F32", 2), "F32x4": ("F32", 4), "F16x4": ("F16x2", 2),
                "F16x8": ("F16x2", 4), "BF16x4": ("BF16x2", 2), "BF16x8": ("BF16x2", 4)}


def _vector_atomic(w, mask, space, d, mem, b_op, op, mods):
    """Each 32-bit word of the vector its own atomic read-modify-write (the PTX ISA makes
    each element atomic, not the vector), lane by lane in lane order."""
    ty, words = next(_VECTOR_ATOM[m] for m in mods if m in _VECTOR_ATOM)
    addrs = address(w, mem, space in ("global", "generic"))
    n = w.width
    data = [np.broadcast_to(w.r(reg(b_op.file, b_op.index + k)), (n,)) for k in range(words)]
    results = [np.zeros(n, dtype=U32) for _ in range(words)]
    for lane in np.nonzero(mask)[0]:
        lanes = np.zeros(n, bool)
        lanes[lane] = True
        for k in range(words):
            at = addrs + 4 * k
            old = int.from_bytes(_load(w, space, at, 4, lanes)[0].tobytes(), "little")
            new = _scalar_apply(op, ty, old, int(data[k][lane]), ftz="FTZ" in mods)
            if new != old:
                _store(w, space, at, np.frombuffer(new.to_bytes(4, "little"), np.uint8)[None, :], lanes)
            results[k][lane] = old
    if d is not None and not d.is_zero:
        for k in range(words):
            w.w(reg(d.file, d.index + k), results[k], mask)


def _quad(w, r: Reg) -> list:
    """Each lane's 128-bit value of the register quad at r."""
    words = [np.broadcast_to(w.r(reg(r.file, r.index + k)), (w.width,)) for k in range(4)]
    return [sum(int(words[k][lane]) << 32 * k for k in range(4)) for lane in range(w.width)]


@semantics("ATOMG", vector=True)
def op_atomg(w, s, active, mask):
    _atomic(w, s, mask, "global", True)


@semantics("ATOM", vector=True)
def op_atom(w, s, active, mask):
    _atomic(w, s, mask, "generic", True)


@semantics("ATOMS", vector=True)
def op_atoms(w, s, active, mask):
    _atomic(w, s, mask, "shared", True)


@semantics("RED", vector=True)
def op_red(w, s, active, mask):
    _atomic(w, s, mask, "generic" if "E" in s.ins.modifiers and False else "global", False)


@semantics("REDG", vector=True)
def op_redg(w, s, active, mask):
    _atomic(w, s, mask, "global", False)


# --------------------------------------------------------------------------- async copy, LDSM

@semantics("LDGSTS")
def op_ldgsts(w, s, active, mask):
    """cp.async global → shared. The source is read at issue, but the shared memory is
    written only when a wait proves the copy done (`AsyncCopies`): a read of the
    destination before the DEPBAR (cp.async.wait_group) or ARRIVES.LDGSTSBAR that covers it
    sees the old bytes, as it may on the hardware. .ZFILL zero-fills when the source size
    operand is smaller."""
    ins = s.ins
    dst_mem, src_mem = ins.operands[0], ins.operands[1]
    if not mask.any():
        return
    size, _ = access_size(ins.modifiers)
    saddr = address(w, dst_mem, False)
    copies = AsyncCopies.of(w.m)
    if len(ins.operands) > 2:
        # The predicate operand: ptxas's fold of a source size `p ? size : 0` (Triton's
        # masked copies). Lanes where it is false read nothing and write zeros.
        copy = mask & w.pred(ins.operands[2])
        if not copy.all():
            zero = mask & ~copy
            if zero.any():
                copies.issue(w, saddr, np.zeros((int(zero.sum()), size), np.uint8), zero)
            mask = copy
            if not mask.any():
                return
    if "ZFILL" in ins.modifiers:
        # With .ZFILL the source address's low bits (below the copy size) count the trailing
        # bytes to zero instead of copy, from the address with them cleared (cp.async's
        # src-size = size - that count): ptxas puts a constant count in the immediate, a
        # run-time one into the address register. Only the copied bytes are read.
        gaddr = address(w, src_mem, True)
        fill = (gaddr & U64(size - 1)).astype(np.int64)
        gaddr = gaddr - fill.astype(U64)
        data = np.zeros((int(mask.sum()), size), np.uint8)
        lanes = np.nonzero(mask)[0]
        for f in np.unique(fill[lanes]):
            part = mask & (fill == f)
            rows = np.isin(lanes, np.nonzero(part)[0])
            if size - f:
                data[rows, :size - f] = _load(w, "global", gaddr, int(size - f), part)
    else:
        gaddr = address(w, src_mem, True)
        data = _load(w, "global", gaddr, size, mask)
    copies.issue(w, saddr, data, mask)


class AsyncCopies:
    """The LDGSTS copies of a launch not yet known to be done, per thread: each belongs to
    the thread's open group until LDGDEPBAR (cp.async.commit_group) closes it. DEPBAR.LE
    SB, n (cp.async.wait_group n) lands every copy of the thread's closed groups but the
    newest n; ARRIVES.LDGSTSBAR lands all of the thread's copies. A copy never waited for
    never lands (nothing orders it before any read)."""

    def __init__(self, m):
        self.m = m
        self.closed = np.zeros(m.nlanes, np.int64)     # groups each thread has closed
        self.sb = 0                                    # the scoreboard LDGDEPBAR counts them on
        # (global lanes, their open group then, absolute shared offsets, bytes per lane)
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    @staticmethod
    def of(m) -> "AsyncCopies":
        copies = getattr(m, "async_copies", None)
        if copies is None:
            copies = m.async_copies = AsyncCopies(m)
        return copies

    def issue(self, w, saddr: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
        pos = np.nonzero(mask)[0]
        shared = w.shared
        at = shared._at(pos, saddr[mask], data.shape[1])
        if self.m.note is not None:
            self.m.note("shared", saddr[mask], data.shape[1])
        lanes = w.idx[pos]
        self.pending.append((lanes, self.closed[lanes].copy(), at, data))

    def commit(self, lanes: np.ndarray) -> None:
        self.closed[lanes] += 1

    def land(self, lanes: np.ndarray, keep: int | None) -> None:
        """Land the copies of `lanes` in all but their newest `keep` closed groups (None:
        every copy, the open group's too)."""
        from .memory import _scatter
        waiting = np.zeros(self.m.nlanes, bool)
        waiting[lanes] = True
        rest = []
        for who, group, at, data in self.pending:
            done = waiting[who]
            if keep is not None:
                done &= group < self.closed[who] - keep
            if done.any():
                _scatter(self.m.shared_data, at[done], data[done])
            if not done.all():
                rest.append((who[~done], group[~done], at[~done], data[~done]))
        self.pending = rest


@semantics("LDGDEPBAR", "DEPBAR", vector=True)
def op_depbar(w, s, active, mask):
    copies = getattr(w.m, "async_copies", None)
    if copies is None or not mask.any():
        return
    lanes = w.idx[mask]
    if s.ins.opcode == "LDGDEPBAR":
        copies.sb = s.ins.control.wr_sb if s.ins.control is not None else 0
        copies.commit(lanes)
        return
    sb = next((o.index for o in s.ins.operands if isinstance(o, Reg) and o.file == "SB"), None)
    # A DEPBAR on another scoreboard waits for no copy. An LDGDEPBAR that names none (7) is
    # ptxas -O0/-g's: it leaves every wait to the `DEPBAR.LE SB0, n` that follows (nvcc -G's
    # cp.async code runs on the hardware), so any DEPBAR lands its groups.
    if sb == copies.sb or copies.sb == NO_SCOREBOARD:
        keep = next((o.value for o in s.ins.operands if isinstance(o, Imm)), 0)
        copies.land(lanes, keep)


@semantics("ARRIVES", vector=True)
def op_arrives(w, s, active, mask):
    """ARRIVES.LDGSTSBAR.64 [a]: each lane arrives on the mbarrier at shared address a once
    its earlier LDGSTS copies are done: they land now, and the arrival is now."""
    copies = getattr(w.m, "async_copies", None)
    if copies is not None and mask.any():
        copies.land(w.idx[mask], None)
    if {"ARVCNT", "TRANSCNT"} & set(s.ins.modifiers):       # sm_90's SYNCS-unit object
        from .ops_syncs import arrives_syncs
        return arrives_syncs(w, s, mask)
    addrs = address(w, s.ins.operands[0], False)
    for lane in np.nonzero(mask)[0]:
        lanes = np.zeros(w.width, bool)
        lanes[lane] = True
        old = int.from_bytes(_load(w, "shared", addrs, 8, lanes)[0].tobytes(), "little")
        new = mbarrier_arrive(old)
        _store(w, "shared", addrs, np.frombuffer(new.to_bytes(8, "little"), np.uint8)[None, :], lanes)


# Packed sources of `LDSM.U6x16P32TO8/U4x16P64TO8` (ldmatrix `.b8x16.b6x16_p32/.b4x16_p64`):
# a 16-byte row holds 16 unsigned 6-/4-bit elements, element e at bits [w*e, w*e+w) of the
# row read little-endian, then 32/64 bits of padding (PTX ISA "ldmatrix"); each becomes a
# byte with the element in its low bits (the manual says only that the byte has 2/4 bits of
# padding: where is not said, nor checked on an sm_100/120 GPU; one place to change).
LDSM_PACKED_BITS = {"U6x16P32TO8": 6, "U4x16P64TO8": 4}
LDSM_UNPACKED_SHIFT = 0


def ldsm_unpack(rows: np.ndarray, fmt: str) -> np.ndarray:
    """(k, 16) row bytes as LDSM format `fmt` reads them: unchanged for .16/.8, else the
    16 packed elements of each row as 16 bytes."""
    width = LDSM_PACKED_BITS.get(fmt)
    if width is None:
        return rows
    bits = np.unpackbits(rows, axis=1, bitorder="little")[:, :16 * width]
    elems = bits.reshape(len(rows), 16, width)
    vals = (elems.astype(np.uint32) << np.arange(width, dtype=np.uint32)).sum(axis=2)
    return (vals << LDSM_UNPACKED_SHIFT).astype(np.uint8)


def _rows(w, addrs, lanes: range) -> np.ndarray:
    """The 16-byte rows at the given lanes' addresses: in one load when none of them faults
    (else lane by lane, to report the first faulting row as it is reached)."""
    first = addrs[lanes.start:lanes.stop]
    if not np.count_nonzero(first & U64(15)) and int(first.max()) + 16 <= w.m.shared_bytes:
        return w.shared.load(np.arange(len(first)), first, 16)
    rows = np.zeros((len(first), 16), dtype=np.uint8)
    for r, src_lane in enumerate(lanes):
        sel = np.zeros(32, bool)
        sel[src_lane] = True
        rows[r] = _load(w, "shared", addrs, 16, sel)[0]
    return rows


@semantics("LDSM")
def op_ldsm(w, s, active, mask):
    """ldmatrix. `.16.M88/MT88`: lanes 8i..8i+7 give the row addresses of 8x8 matrix i
    (16-bit elements); lane t receives row t/4, elements 2(t%4), 2(t%4)+1 of each matrix
    (transposed with .MT88: column t/4, rows 2(t%4) and 2(t%4)+1). `.M816` (8x16 bytes,
    packed sources unpacked first): likewise at byte level, lane t gets row t/4, bytes
    4(t%4)..+3. `.MT1616` (16x16 bytes, two registers a matrix): lanes 16i..16i+15 give the
    rows of matrix i, and lane t's register 2i+h holds bytes t/4 + 8h of rows 4(t%4)..+3
    (the manual's "4 consecutive columns across 2 rows" of the transpose; the byte order as
    CUTLASS's SM100_U8x8_LDSM_T layout publishes it)."""
    if not np.any(mask):
        return      # guarded off (`@!P0 LDSM` with P0 set): no row address is read
    ins = s.ins
    d, mem = ins.operands
    mods = ins.modifiers
    count = 4 if "4" in mods else 2 if "2" in mods else 1
    fmt = mods[0] if mods else "16"
    addrs = address(w, mem, False)
    lanes = np.arange(32)
    out = []
    if "MT1616" in mods:
        for i in range(count):
            rows = ldsm_unpack(_rows(w, addrs, range(16 * i, 16 * i + 16)), fmt)
            for h in range(2):
                col = lanes // 4 + 8 * h
                word = np.zeros(32, U32)
                for k in range(4):
                    word |= rows[4 * (lanes % 4) + k, col].astype(U32) << U32(8 * k)
                out.append(word)
        w.wn(d, out, mask)
        return
    rows_all = _rows(w, addrs, range(8 * count))
    for i in range(count):
        rows = ldsm_unpack(rows_all[8 * i:8 * i + 8], fmt)
        if "M816" in mods:
            out.append(np.ascontiguousarray(rows).view(U32)[lanes // 4, lanes % 4].astype(U32))
            continue
        elems = rows.view(np.uint16).reshape(8, 8)
        if "MT88" in mods:
            elems = elems.T
        lo = elems[lanes // 4, 2 * (lanes % 4)].astype(U32)
        hi = elems[lanes // 4, 2 * (lanes % 4) + 1].astype(U32)
        out.append(lo | (hi << U32(16)))
    w.wn(d, out, mask)


@semantics("STSM")
def op_stsm(w, s, active, mask):
    """stmatrix, LDSM's inverse: lane t holds, in its register i, row t/4, elements
    2(t%4) and 2(t%4)+1 of 8x8 matrix i (16-bit elements; .MT88: those of its transpose),
    and lanes 8i..8i+7 give the addresses of matrix i's rows. `.8.MT168`: a 16x8 matrix M
    of bytes in the mma accumulator layout (lane t's register i, byte k: M[t/4 + 8(k/2)]
    [2(t%4) + k%2]) stored transposed: row c of 16 bytes at lane 8i+c's address holds
    column c of M (as CUTLASS's SM100_U8x4_STSM_T layout publishes it).

    A warp that lacks lanes (threads the CTA does not have, or that exited) stores nothing:
    stmatrix is .sync.aligned, which the PTX manual leaves undefined unless every thread of
    the warp runs it, and an H200 left the scratch as it was there (GPU run 25: fuzz
    9500363's 17-thread CTAs and 9500094's one-lane second warps read back the prelude's
    zeros where the emulator had stored the present lanes' elements; a store of zeros would
    read the same)."""
    if not np.any(mask) or np.any(w.m.state[w.idx] == EXITED):
        return
    ins = s.ins
    mem, src = ins.operands[:2]
    mods = ins.modifiers
    count = 4 if "4" in mods else 2 if "2" in mods else 1
    trans = "MT88" in mods
    addrs = address(w, mem, False)
    lanes = np.arange(32)
    for i in range(count):
        words = np.broadcast_to(w.r(reg(src.file, src.index + i)), (w.width,)).astype(U32)
        if "MT168" in mods:
            rows = np.zeros((8, 16), np.uint8)       # rows[c, r] = M[r, c]
            for k in range(4):
                rows[2 * (lanes % 4) + k % 2, lanes // 4 + 8 * (k // 2)] = \
                    (words >> U32(8 * k)) & U32(0xFF)
        else:
            elems = np.zeros((8, 8), np.uint16)
            elems[lanes // 4, 2 * (lanes % 4)] = words & U32(0xFFFF)
            elems[lanes // 4, 2 * (lanes % 4) + 1] = words >> U32(16)
            if trans:
                elems = elems.T
            rows = np.ascontiguousarray(elems).view(np.uint8).reshape(8, 16)
        for r in range(8):
            sel = np.zeros(32, bool)
            sel[8 * i + r] = True
            _store(w, "shared", addrs, np.ascontiguousarray(rows[r])[None, :], sel)


@semantics("QSPC")
def op_qspc(w, s, active, mask):
    """QSPC.E.<space> P, RZ, [a]: whether the generic address a lies in that space's window
    (S: this CTA's shared memory, D: another CTA's of its cluster, L: local, G: global: none
    of the others) — ptxas's tests before a generic atomic it splits into ATOM, ATOMS and
    loops (`generic_windows`)."""
    p, d, mem = s.ins.operands[:3]
    if not (isinstance(d, Reg) and d.is_zero):
        raise EmuFault(f"{s.ins.mnemonic} with a register result is not modelled")
    addr = address(w, mem, "E" in s.ins.modifiers)
    shared, distributed, local = generic_windows(addr, own_rank(w))
    space = next((m for m in s.ins.modifiers if m in ("S", "D", "L", "G")), None)
    if space is None:
        raise EmuFault(f"{s.ins.mnemonic}: which space it asks about is not known")
    w.wp(p, {"S": shared, "D": distributed, "L": local,
             "G": ~(shared | distributed | local)}[space], mask)


# A shared-window address's low word is a shared::cluster address on sm_90+: the CTA's rank
# in its cluster from this bit (ptxas: SR_CgaCtaId << 24); a launch without clusters makes
# every CTA rank 0 of a cluster of one.
CLUSTER_RANK_SHIFT = SHARED_RANK_SHIFT


def own_rank(w) -> np.ndarray:
    """Per lane (or one value for a warp), its CTA's rank in its cluster."""
    ranks = w.m.cga_rank_of_warp
    return (ranks[w.warp:w.warp + 1] if w.warp >= 0 else ranks[w.wl]).astype(U64)


def generic_windows(addr: np.ndarray, rank_here=U64(0)):
    """Per lane, whether a generic address is in this CTA's shared memory (QSPC.E.S), in
    another CTA's of the cluster (QSPC.E.D: the shared window, another rank) or in local
    memory (QSPC.E.L); the rest is global. `rank_here`: the lanes' own ranks."""
    window = (addr >= U64(SHARED_WINDOW)) & (addr < U64(SHARED_WINDOW + WINDOW_SIZE))
    rank = ((addr - U64(SHARED_WINDOW)) >> U64(CLUSTER_RANK_SHIFT)) & U64(0xFF)
    own = rank == rank_here
    local = (addr >= U64(LOCAL_WINDOW)) & (addr < U64(LOCAL_WINDOW + WINDOW_SIZE))
    return window & own, window & ~own, local


_LDGMC_BYTES = {"32": 4, "S32": 4, "F32": 4, "F16x2": 4, "BF16x2": 4, "64": 8, "S64": 8, "F64": 8,
                "F32x2": 8, "F16x4": 8, "BF16x4": 8, "F32x4": 16, "F16x8": 16, "BF16x8": 16,
                # fp8 lanes (sm_100+ a/f targets; `.HPADD` their `.acc::f16` add)
                "E4M3x4": 4, "E5M2x4": 4, "E4M3x8": 8, "E5M2x8": 8, "E4M3x16": 16, "E5M2x16": 16}


@semantics("LDGMC", vector=True)
def op_ldgmc(w, s, active, mask):
    """LDGMC (multimem.ld_reduce): the reduction over every member's copy of a multimem
    address. One emulated GPU holds one copy (emu/memory.py), and a reduction over one value
    is that value (an .F32ADD/.HPADD half add accumulates it in f32 and rounds back, an fp8
    .HPADD in f16: exact),
    so this is the global load of the access's width."""
    ins = s.ins
    d, mem = ins.operands[0], ins.operands[1]
    if not np.count_nonzero(mask):
        return
    size = next(_LDGMC_BYTES[m] for m in ins.modifiers if m in _LDGMC_BYTES)
    addrs = address(w, mem, True)
    every = mask is active or np.count_nonzero(mask) == w.width
    words = _element_words(w.launch.gmem.gather(addrs if every else addrs[mask], size), size, False)
    _write_loaded(w, d, words, mask, every)
