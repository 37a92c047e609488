"""Per-architecture facts the back end and the cubin writer need, as one table.

Every value here was read from cubins that ptxas 13.5.37 writes for a trivial kernel (see
tests/test_cubin.py, which checks the table against the oracle), or from NVIDIA's public
PTX/CUDA documentation. Code asks `arch_info("sm_89").param_base`; nothing elsewhere tests
`arch == ...`.
"""
from __future__ import annotations

from ptx2sass.records import dataclass


class UnknownArch(ValueError):
    """An architecture name this project has no facts for."""


@dataclass(frozen=True)
class ArchInfo:
    name: str                     # "sm_89"
    sm: int                       # 89
    family: str                   # encoding family: "turing", "ampere", "hopper", "blackwell"
    e_flags: int                  # ELF header flags ptxas writes (OSABI 0x41, ABI version 8)
    param_base: int               # first kernel-parameter byte in constant bank 0
    global_desc_offset: int | None  # c[0x0][...] holding the default global-memory descriptor
    stack_pointer_offset: int     # c[0x0][...] holding the initial stack pointer
    max_registers: int            # per thread, RZ excluded
    max_param_bytes: int          # kernel parameter space (CUDA 12.1+, Volta and later)
    regcount_in_text_info: bool   # `.text.<k>` sh_info carries `regcount << 24` (before sm_90)
    shared_reserved: bool         # ptxas emits `.nv.shared.reserved.0` / Mercury sections (sm_100+)
    phdr_style: str               # program-header scheme (elf_layout.default_segments)
    shoff_align: int              # alignment of the section header table's file offset
    kernel_sw_war: int | None     # SW_WAR value ptxas writes into every `.nv.info.<k>`
    kernel_nval_35: bool          # ptxas writes attribute 0x35 (NVAL, unnamed) per kernel
    # Launch facts the driver places in constant bank 0 (read by special registers), by
    # name -> c[0x0][offset]: dynamic_smem (%dynamic_smem_size), nsmid, gridid (64-bit),
    # envreg (%envreg0, then 4 bytes each), reserved_smem (the reserved shared bytes that
    # %total_smem_size leaves out), reserved_smem_end, reserved_smem_1, graph_exec (64-bit),
    # param_window / const_window (64-bit generic bases of those windows, for cvta)
    driver_cbank: dict | None
    max_warps_per_sm: int | None  # %nwarpid, an immediate in ptxas's code


ELF_OSABI = 0x41          # "CUDA" OS ABI of CUDA 12.9+ toolkits
ELF_ABI_VERSION = 8
EM_CUDA = 190


# Read off ptxas 13.5's code for `mov` of each special register on sm_80/86/87/89.
_AMPERE_DRIVER_CBANK = {"dynamic_smem": 0x2C, "gridid": 0x30, "envreg": 0x88, "nsmid": 0x10C,
                        "reserved_smem": 0x114, "reserved_smem_end": 0x120,
                        "reserved_smem_1": 0x124, "graph_exec": 0x130,
                        "param_window": 0x40, "const_window": 0x50}


def _info(sm: int, family: str, e_flags: int, param_base: int, gdesc: int | None,
          regcount_in_info: bool, reserved: bool, sw_war: int | None = None,
          nval_35: bool = False, driver_cbank: dict | None = None,
          max_warps: int | None = None) -> ArchInfo:
    return ArchInfo(name=f"sm_{sm}", sm=sm, family=family, e_flags=e_flags,
                    param_base=param_base, global_desc_offset=gdesc,
                    stack_pointer_offset=0x28, max_registers=255, max_param_bytes=32764,
                    regcount_in_text_info=regcount_in_info, shared_reserved=reserved,
                    phdr_style="ampere" if sm < 90 else "hopper", shoff_align=8 if sm < 90 else 1,
                    kernel_sw_war=sw_war, kernel_nval_35=nval_35, driver_cbank=driver_cbank,
                    max_warps_per_sm=max_warps)


_TABLE = [
    #     sm  family       e_flags     param  gdesc  regcount-in-info  mercury  kernel WARs
    _info(75, "turing",    0x6004B04, 0x160, None,  True,  False, sw_war=1),
    _info(80, "ampere",    0x6005004, 0x160, 0x118, True,  False, nval_35=True,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=64),
    _info(86, "ampere",    0x6005604, 0x160, 0x118, True,  False, nval_35=True,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=48),
    _info(87, "ampere",    0x6005704, 0x160, 0x118, True,  False, sw_war=2, nval_35=True,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=48),
    _info(89, "ampere",    0x6005904, 0x160, 0x118, True,  False,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=48),
    _info(90, "hopper",    0x6005A04, 0x210, 0x208, False, False),
    _info(100, "blackwell", 0x6006402, 0x380, None, False, True),
    _info(103, "blackwell", 0x6006702, 0x380, None, False, True),
    _info(110, "blackwell", 0x6006E02, 0x380, None, False, True),
    _info(120, "blackwell", 0x6007802, 0x380, None, False, True),
    _info(121, "blackwell", 0x6007902, 0x380, None, False, True),
]
ARCHS: dict[str, ArchInfo] = {a.name: a for a in _TABLE}


def arch_info(arch: str) -> ArchInfo:
    """Facts for `arch` ("sm_89"; "sm_90a"-style suffixes share their base's facts)."""
    base = arch.rstrip("af") if arch.startswith("sm_") else arch
    try:
        return ARCHS[base]
    except KeyError:
        raise UnknownArch(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}") from None


def arch_from_e_flags(e_flags: int) -> ArchInfo:
    """The architecture a cubin's ELF header names (bits 8..15 hold the SM number)."""
    sm = (e_flags >> 8) & 0xFF
    for info in _TABLE:
        if info.sm == sm:
            return info
    raise UnknownArch(f"cubin for unknown SM {sm} (e_flags {e_flags:#x})")
