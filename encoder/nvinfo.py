"""The `.nv.info` attribute records of a cubin, as data.

A record is `u8 format, u8 attribute, u16 value-or-size, payload`: format NVAL has no value,
BVAL holds one byte, HVAL a 16-bit value, SVAL a byte count followed by that many payload
bytes. The attribute names are the ones `cuobjdump -elf` prints (probed with the pinned
cuobjdump: one cubin per block of codes, every code written as an HVAL record; see
tests/test_cubin.py::test_attribute_names_match_cuobjdump).
"""
from __future__ import annotations

import struct
from enum import IntEnum

from ptx2sass.records import dataclass


class NvInfoError(ValueError):
    """A malformed `.nv.info` section."""


class Fmt(IntEnum):
    NVAL = 1   # no value
    BVAL = 2   # one byte
    HVAL = 3   # 16-bit value
    SVAL = 4   # sized payload


# Attribute code -> name, without cuobjdump's `EIATTR_` prefix. Codes cuobjdump calls
# "unknown Attribute" are absent (ptxas 13.5 writes 0x5f, HVAL 0, in every kernel).
ATTRIBUTE_NAMES: dict[int, str] = {
    0x00: "ERROR", 0x01: "PAD", 0x02: "IMAGE_SLOT", 0x03: "JUMPTABLE_RELOCS",
    0x04: "CTAIDZ_USED", 0x05: "MAX_THREADS", 0x06: "IMAGE_OFFSET", 0x07: "IMAGE_SIZE",
    0x08: "TEXTURE_NORMALIZED", 0x09: "SAMPLER_INIT", 0x0A: "PARAM_CBANK",
    0x0B: "SMEM_PARAM_OFFSETS", 0x0C: "CBANK_PARAM_OFFSETS", 0x0D: "SYNC_STACK",
    0x0E: "TEXID_SAMPID_MAP", 0x0F: "EXTERNS", 0x10: "REQNTID", 0x11: "FRAME_SIZE",
    0x12: "MIN_STACK_SIZE", 0x13: "SAMPLER_FORCE_UNNORMALIZED", 0x14: "BINDLESS_IMAGE_OFFSETS",
    0x15: "BINDLESS_TEXTURE_BANK", 0x16: "BINDLESS_SURFACE_BANK", 0x17: "KPARAM_INFO",
    0x18: "SMEM_PARAM_SIZE", 0x19: "CBANK_PARAM_SIZE", 0x1A: "QUERY_NUMATTRIB",
    0x1B: "MAXREG_COUNT", 0x1C: "EXIT_INSTR_OFFSETS", 0x1D: "S2RCTAID_INSTR_OFFSETS",
    0x1E: "CRS_STACK_SIZE", 0x1F: "NEED_CNP_WRAPPER", 0x20: "NEED_CNP_PATCH",
    0x21: "EXPLICIT_CACHING", 0x22: "ISTYPEP_USED", 0x23: "MAX_STACK_SIZE", 0x24: "SUQ_USED",
    0x25: "LD_CACHEMOD_INSTR_OFFSETS", 0x26: "LOAD_CACHE_REQUEST",
    0x27: "ATOM_SYS_INSTR_OFFSETS", 0x28: "COOP_GROUP_INSTR_OFFSETS",
    0x29: "COOP_GROUP_MASK_REGIDS", 0x2B: "WMMA_USED", 0x2C: "HAS_PRE_V10_OBJECT",
    0x2D: "ATOMF16_EMUL_INSTR_OFFSETS", 0x2E: "ATOM16_EMUL_INSTR_REG_MAP", 0x2F: "REGCOUNT",
    0x31: "INT_WARP_WIDE_INSTR_OFFSETS", 0x32: "SHARED_SCRATCH", 0x33: "STATISTICS",
    0x34: "INDIRECT_BRANCH_TARGETS", 0x36: "SW_WAR", 0x37: "CUDA_API_VERSION",
    0x38: "NUM_MBARRIERS", 0x39: "MBARRIER_INSTR_OFFSETS", 0x3A: "COROUTINE_RESUME_ID_OFFSETS",
    0x3B: "SAM_REGION_STACK_SIZE", 0x3C: "PER_REG_TARGET_PERF_STATS", 0x3D: "CTA_PER_CLUSTER",
    0x3E: "EXPLICIT_CLUSTER", 0x3F: "MAX_CLUSTER_RANK", 0x40: "INSTR_REG_MAP",
    0x41: "RESERVED_SMEM_USED", 0x42: "RESERVED_SMEM_0_SIZE", 0x43: "UCODE_SECTION_DATA",
    0x44: "UNUSED_LOAD_BYTE_OFFSET", 0x45: "KPARAM_INFO_V2", 0x46: "SYSCALL_OFFSETS",
    0x48: "GRAPHICS_GLOBAL_CBANK", 0x49: "SHADER_TYPE", 0x4A: "VRC_CTA_INIT_COUNT",
    0x4B: "TOOLS_PATCH_FUNC", 0x4C: "NUM_BARRIERS", 0x4D: "TEXMODE_INDEPENDENT",
    0x4E: "PERF_STATISTICS", 0x4F: "AT_ENTRY_FRAGMENTS", 0x50: "SPARSE_MMA_MASK",
    0x51: "TCGEN05_1CTA_USED", 0x52: "TCGEN05_2CTA_USED", 0x53: "GEN_ERRBAR_AT_EXIT",
    0x54: "REG_RECONFIG", 0x55: "ANNOTATIONS", 0x57: "STACK_CANARY_TRAP_OFFSETS",
    0x58: "STUB_FUNCTION_KIND", 0x59: "LOCAL_CTA_ASYNC_STORE_OFFSETS",
    0x5B: "BLOCKS_ARE_CLUSTERS", 0x5C: "SANITIZE", 0x5D: "SYSCALLS_FALLBACK", 0x5E: "CUDA_REQ",
    0x61: "RTCORE_ENTRY", 0x62: "CLUSTER_LAUNCH_CONTROL_USED", 0x64: "MIN_PER_CTA_MEMORY_SIZE",
    0x65: "IGNOREOOB_CP_ASYNC_BULK_INSTR_OFFSETS", 0x66: "LANGUAGE", 0x68: "GRID_ATTRIBUTES",
    0x69: "STACK_OFFSET", 0x6A: "RT_LIVESTATE_SASS_MAP", 0x6B: "NVSAL_SW_WAR",
    0x6C: "INSTR_OFFSETS", 0x6D: "PREEXIT_USED",
}
ATTRIBUTE_CODES: dict[str, int] = {name: code for code, name in ATTRIBUTE_NAMES.items()}
# Written by ptxas 13.5 into every kernel's table after MAXREG_COUNT (HVAL 0; sm_90+ 0x101); cuobjdump has
# no name for it.
UNNAMED_5F = 0x5F
MULTICAST_BULK_5F = 0x2     # its bit for a multimem bulk copy in the code (sm_90+)
# Written by ptxas 13.5 into every kernel's table on sm_80/86/87 (NVAL), after
# CUDA_API_VERSION; also unnamed by cuobjdump.
UNNAMED_35 = 0x35
# Written by ptxas 13.5.37 last into every kernel's table on sm_107 (BVAL 0); unnamed too.
UNNAMED_67 = 0x67

LANGUAGE_PTX = 3   # EIATTR_LANGUAGE value cuobjdump prints as "PTX"


def attribute_code(name_or_code: str | int) -> int:
    if isinstance(name_or_code, int):
        return name_or_code
    key = name_or_code.removeprefix("EIATTR_")
    try:
        return ATTRIBUTE_CODES[key]
    except KeyError:
        raise NvInfoError(f"unknown .nv.info attribute {name_or_code!r}") from None


@dataclass(frozen=True)
class NvInfoRecord:
    """One attribute. `value` is an int for NVAL/BVAL/HVAL and the raw payload for SVAL."""
    attr: int
    fmt: Fmt
    value: int | bytes = 0

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "fmt", Fmt(self.fmt))
        except ValueError:
            raise NvInfoError(f"unknown .nv.info record format {self.fmt!r}") from None

    @property
    def name(self) -> str:
        return ATTRIBUTE_NAMES.get(self.attr, f"UNKNOWN_{self.attr:#04x}")

    # Typed views of common SVAL payloads -------------------------------------------------
    def u32s(self) -> tuple[int, ...]:
        """The payload as little-endian u32 words (offset lists, MAX_THREADS, sym/value)."""
        data = self.payload
        if len(data) % 4:
            raise NvInfoError(f"{self.name}: payload of {len(data)} bytes is not u32 words")
        return struct.unpack(f"<{len(data) // 4}I", data)

    @property
    def payload(self) -> bytes:
        if not isinstance(self.value, bytes):
            raise NvInfoError(f"{self.name} is {self.fmt.name}, not a sized payload")
        return self.value

    @staticmethod
    def words(attr: str | int, *values: int) -> "NvInfoRecord":
        """An SVAL record whose payload is the given u32 words."""
        return NvInfoRecord(attribute_code(attr), Fmt.SVAL, struct.pack(f"<{len(values)}I", *values))

    @staticmethod
    def half(attr: str | int, value: int) -> "NvInfoRecord":
        return NvInfoRecord(attribute_code(attr), Fmt.HVAL, value)

    @staticmethod
    def byte(attr: str | int, value: int) -> "NvInfoRecord":
        return NvInfoRecord(attribute_code(attr), Fmt.BVAL, value)

    @staticmethod
    def flag(attr: str | int) -> "NvInfoRecord":
        return NvInfoRecord(attribute_code(attr), Fmt.NVAL, 0)


@dataclass(frozen=True)
class KParam:
    """One KPARAM_INFO record: parameter `ordinal` at byte `offset` of the parameter block.

    `flags` is the record's last word: bits 18.. hold the size in bytes, 12..16 the constant
    bank (0x1f), 8..11 the space, 0..7 the pointee's log alignment (cuobjdump's reading).
    """
    ordinal: int
    offset: int
    size: int
    index: int = 0
    flags_low: int = 0x1F000   # cbank 0x1f, space 0, log alignment 0: what ptxas writes

    def record(self) -> NvInfoRecord:
        word = (self.size << 18) | self.flags_low
        return NvInfoRecord(ATTRIBUTE_CODES["KPARAM_INFO"], Fmt.SVAL,
                            struct.pack("<IHHI", self.index, self.ordinal, self.offset, word))

    @staticmethod
    def from_record(rec: NvInfoRecord) -> "KParam | None":
        """The parameter a KPARAM_INFO record describes; None for a malformed record."""
        if rec.fmt is not Fmt.SVAL or len(rec.payload) != 12:
            return None
        index, ordinal, offset, word = struct.unpack("<IHHI", rec.payload)
        return KParam(ordinal, offset, word >> 18, index, word & 0x3FFFF)


def parse_records(data: bytes, where: str = ".nv.info") -> list[NvInfoRecord]:
    records: list[NvInfoRecord] = []
    pos = 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise NvInfoError(f"{where}: truncated record header at byte {pos:#x}")
        fmt_code, attr, half = struct.unpack_from("<BBH", data, pos)
        pos += 4
        try:
            fmt = Fmt(fmt_code)
        except ValueError:
            raise NvInfoError(f"{where}: unknown record format {fmt_code} at byte {pos - 4:#x}") from None
        if fmt is Fmt.SVAL:
            if pos + half > len(data):
                raise NvInfoError(f"{where}: record {ATTRIBUTE_NAMES.get(attr, hex(attr))} "
                                  f"claims {half} bytes, only {len(data) - pos} left")
            records.append(NvInfoRecord(attr, fmt, bytes(data[pos:pos + half])))
            pos += half
        else:
            records.append(NvInfoRecord(attr, fmt, half))
    return records


def encode_records(records: list[NvInfoRecord]) -> bytes:
    out = bytearray()
    for rec in records:
        if rec.fmt is Fmt.SVAL:
            payload = rec.payload
            if len(payload) > 0xFFFF:
                raise NvInfoError(f"{rec.name}: payload of {len(payload)} bytes is too large")
            out += struct.pack("<BBH", rec.fmt, rec.attr, len(payload)) + payload
        else:
            if not isinstance(rec.value, int) or not 0 <= rec.value <= 0xFFFF:
                raise NvInfoError(f"{rec.name}: {rec.fmt.name} value {rec.value!r} out of range")
            out += struct.pack("<BBH", rec.fmt, rec.attr, rec.value)
    return bytes(out)
