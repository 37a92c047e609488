"""CUDA Dynamic Parallelism under `-c`: a kernel taking another kernel's address and
launching it from the device (`nvcc -rdc=true`'s PTX names the child `.entry` and calls the
device runtime's `__cudaCDP2*` functions, which only the link resolves). ptxas 13.5.37 -c
writes the address as the halves of the child's function descriptor,
`32@lo(fun@fdesc(child))` / `32@hi(...)`, relocated R_CUDA_FUNC_DESC32_LO_32 /
R_CUDA_FUNC_DESC32_HI_32 (0x3e / 0x3f) against the child's symbol, lists the child in the
parent's EIATTR_EXTERNS after the called functions, and names it in the call graph as an
address-taken function; without -c it refuses the unresolved runtime functions. Expected
values here are ptxas's (structure) and nvdisasm's (text)."""
from __future__ import annotations

import subprocess

import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.encoder.cubin import read_cubin
from test_relocatable import _ptxas_c, _structure

# nvcc 13.5 -rdc=true -ptx of
#   __global__ void child(int* out, int base) { out[base + threadIdx.x] = base * 100 + threadIdx.x; }
#   __global__ void parent(int* out) { if (threadIdx.x < 4) child<<<1, 8>>>(out, threadIdx.x * 8); }
CDP = """.version 9.0
.target sm_89
.address_size 64
.extern .func  (.param .b64 func_retval0) __cudaCDP2GetParameterBufferV2
(
	.param .b64 __cudaCDP2GetParameterBufferV2_param_0,
	.param .align 4 .b8 __cudaCDP2GetParameterBufferV2_param_1[12],
	.param .align 4 .b8 __cudaCDP2GetParameterBufferV2_param_2[12],
	.param .b32 __cudaCDP2GetParameterBufferV2_param_3
)
;
.extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 __cudaCDP2LaunchDeviceV2_param_0,
	.param .b64 __cudaCDP2LaunchDeviceV2_param_1
)
;
.visible .entry _Z5childPii(
	.param .u64 _Z5childPii_param_0,
	.param .u32 _Z5childPii_param_1
)
{
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [_Z5childPii_param_0];
	ld.param.u32 	%r1, [_Z5childPii_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	mad.lo.s32 	%r3, %r1, 100, %r2;
	add.s32 	%r4, %r2, %r1;
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.u32 	[%rd4], %r3;
	ret;
}
.visible .entry _Z6parentPi(
	.param .u64 _Z6parentPi_param_0
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd2, [_Z6parentPi_param_0];
	mov.u32 	%r1, %tid.x;
	setp.gt.u32 	%p1, %r1, 3;
	@%p1 bra 	$L__BB1_3;
	mov.u64 	%rd3, _Z5childPii;
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd3;
	.param .align 4 .b8 param1[12];
	st.param.b32 	[param1+0], 1;
	st.param.b32 	[param1+4], 1;
	st.param.b32 	[param1+8], 1;
	.param .align 4 .b8 param2[12];
	st.param.b32 	[param2+0], 8;
	st.param.b32 	[param2+4], 1;
	st.param.b32 	[param2+8], 1;
	.param .b32 param3;
	st.param.b32 	[param3+0], 0;
	.param .b64 retval0;
	call.uni (retval0),
	__cudaCDP2GetParameterBufferV2,
	(
	param0,
	param1,
	param2,
	param3
	);
	ld.param.b64 	%rd1, [retval0+0];
	} // callseq 0
	setp.eq.s64 	%p2, %rd1, 0;
	@%p2 bra 	$L__BB1_3;
	shl.b32 	%r2, %r1, 3;
	st.u64 	[%rd1], %rd2;
	st.u32 	[%rd1+8], %r2;
	{ // callseq 1, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b64 param1;
	st.param.b64 	[param1+0], 0;
	.param .b32 retval0;
	call.uni (retval0),
	__cudaCDP2LaunchDeviceV2,
	(
	param0,
	param1
	);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 1
$L__BB1_3:
	ret;
}
"""

# A kernel's address stored, no call: the descriptor relocations and records alone.
STORED = """.version 8.0
.target sm_89
.address_size 64
.visible .entry c(.param .u64 p) { ret; }
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  mov.u64 %rd2, c;
  st.global.u64 [%rd1], %rd2;
  ret;
}
"""

ARCHS = ["sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"]
FUNC_DESC32_LO_32, FUNC_DESC32_HI_32 = 0x3E, 0x3F


def _for(ptx: str, arch: str) -> str:
    return ptx.replace(".target sm_89", f".target {arch}").replace(".version 8.0", ".version 9.0")


def _ours_c(ptx: str, arch: str) -> bytes:
    return codegen.compile_ptx(_for(ptx, arch), arch=arch, compile_only=True)


def _externs(data: bytes) -> dict[str, list[str]]:
    """Each kernel's EIATTR_EXTERNS as symbol names."""
    c = read_cubin(data)
    names = [s.name for s in c.symbols]
    return {k.name: [names[i] for r in k.attribute("EXTERNS") for i in r.u32s()] for k in c.kernels}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name, ptx", [("cdp", CDP), ("stored", STORED)])
def test_kernel_address_is_built_like_ptxas(name, ptx, arch):
    theirs_data, ours_data = _ptxas_c(_for(ptx, arch), arch), _ours_c(ptx, arch)
    theirs, ours = _structure(theirs_data), _structure(ours_data)
    assert ours == theirs
    assert _externs(ours_data) == _externs(theirs_data)
    child = "_Z5childPii" if name == "cdp" else "c"
    relocs = [r for relocs in ours["text relocations"].values() for r in relocs if r[0] == child]
    assert sorted(r[1] for r in relocs) == [FUNC_DESC32_LO_32, FUNC_DESC32_HI_32]


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_nvdisasm_reads_the_descriptor_halves(arch):
    """nvdisasm prints our relocated halves as it prints ptxas's, and our SASS text reader
    takes its spelling back unchanged."""
    from ptx2sass.encoder.sass_text import format_operand, parse_operand
    text = oracle.nvdisasm(_ours_c(CDP, arch), ("-c",))
    for half in ("lo", "hi"):
        spelled = f"32@{half}(fun@fdesc(_Z5childPii))"
        assert spelled in text
        op = parse_operand(spelled)
        assert op.function_descriptor and op.symbol == "_Z5childPii"
        assert format_operand(op) == spelled


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_120"])
def test_links_with_the_device_runtime_as_ptxas_does(arch, tmp_path):
    """nvlink links our object with the device runtime (libcudadevrt.a) as it links
    ptxas's; the linked parent keeps the descriptor relocations for the loader, the same
    (section, type, symbol) multiset as ptxas's object links to."""
    from elftools.elf.elffile import ELFFile
    bin_dir = oracle.tool_path("ptxas").parent
    nvlink, devrt = bin_dir / "nvlink", bin_dir.parent / "lib" / "libcudadevrt.a"
    if not nvlink.is_file() or not devrt.is_file():
        pytest.skip("nvlink / libcudadevrt.a not installed")

    def linked(data: bytes, tag: str) -> list:
        obj, out = tmp_path / f"{tag}.o", tmp_path / f"{tag}.cubin"
        obj.write_bytes(data)
        r = subprocess.run([str(nvlink), f"-arch={arch}", str(obj), str(devrt), "-o", str(out)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(out, "rb") as f:
            elf = ELFFile(f)
            symtab = elf.get_section_by_name(".symtab")
            return sorted((s.name, rel["r_info_type"], symtab.get_symbol(rel["r_info_sym"]).name)
                          for s in elf.iter_sections() if s.name.endswith("text._Z6parentPi")
                          and s.header.sh_type in ("SHT_REL", "SHT_RELA") for rel in s.iter_relocations())

    ours, theirs = linked(_ours_c(CDP, arch), "ours"), linked(_ptxas_c(_for(CDP, arch), arch), "theirs")
    assert ours == theirs
    assert {t for _, t, _ in ours} >= {FUNC_DESC32_LO_32, FUNC_DESC32_HI_32}


def test_whole_program_refuses_the_runtime_functions_as_ptxas():
    message = "Unresolved extern function '__cudaCDP2GetParameterBufferV2'"
    assert message in oracle.ptxas(CDP).stderr
    with pytest.raises(CompileError, match=message):
        codegen.compile_ptx(CDP)


# CRS_STACK_SIZE under -c: a kernel calling a link target gets one (0) where its code splits
# the warp on a lane-varying condition; ptxas 13.5.37 writes none for a uniform branch or one
# it turns into predicated code.
_CALL = ("{ .param .b32 a0; .param .b32 r0; st.param.b32 [a0], %r2; call.uni (r0), ext, (a0); "
         "ld.param.b32 %r1, [r0]; }")
_SHAPES = {
    "uniform branch": f"setp.gt.u32 %p, %r3, 3; @%p bra L; {_CALL} st.global.u32 [%rd1+8], %r1; L: ret;",
    "call before a lane branch": f"{_CALL} st.global.u32 [%rd1+8], %r1; setp.gt.u32 %p, %r2, 3; @%p bra L; "
                                 "st.global.u32 [%rd1], %r2; L: ret;",
    "call after a predicated join": f"setp.gt.u32 %p, %r2, 3; @%p bra L; st.global.u32 [%rd1], %r2; L: {_CALL} "
                                    "st.global.u32 [%rd1+8], %r1; ret;",
    "call in one arm": f"setp.gt.u32 %p, %r2, 3; @%p bra L; {_CALL} st.global.u32 [%rd1+8], %r1; ret; "
                       "L: st.global.u32 [%rd1], %r2; ret;",
    "branch on the result": f"{_CALL} setp.gt.u32 %p, %r1, 3; @%p bra L; st.global.u32 [%rd1], %r2; "
                            "ld.global.u32 %r3, [%rd1+4]; add.u32 %r3, %r3, %r1; st.global.u32 [%rd1+8], %r3; L: ret;",
}


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_crs_stack_size_of_a_calling_kernel_as_ptxas(shape, arch):
    ptx = (".version 8.0\n.target sm_89\n.address_size 64\n"
           ".extern .func (.param .b32 r) ext(.param .b32 a);\n"
           ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n"
           " .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p;\n"
           " ld.param.u64 %rd1, [p]; ld.param.u32 %r3, [n]; mov.u32 %r2, %tid.x;\n"
           f" {_SHAPES[shape]}\n}}\n")
    theirs, ours = _structure(_ptxas_c(_for(ptx, arch), arch)), _structure(_ours_c(ptx, arch))
    assert ours["kernel records"] == theirs["kernel records"]


# A `.func`'s address under -c: ptxas 13.5.37 makes the function a link target named by
# `32@lo(f)` / `32@hi(f)` (R_CUDA_ABS32_LO/HI_32 on sm_75-89, 0x70/0x71 `fun@unified` from
# sm_90), writes no `.nv.prototype` entry for it but pairs it with its prototype string's
# `.strtab` offset in the call graph, and orders it as a callee of the code naming it; a
# call through a pointer is `CALL.ABS.NOINC R` (sm_90+: relocated 0x72 against
# `__UFT_OFFSET`). (Earlier, -c used the whole-program pointer table: `MOV R, 0x8`.)
_FUNCS = """.version 8.0
.target sm_89
.address_size 64
.visible .func (.param .b32 r) f(.param .b32 a)
{ .reg .b32 %r<3>; ld.param.b32 %r1, [a]; add.s32 %r2, %r1, 1; st.param.b32 [r], %r2; ret; }
.visible .func (.param .b32 r) g(.param .b32 a)
{ .reg .b32 %r<3>; ld.param.b32 %r1, [a]; add.s32 %r2, %r1, 2; st.param.b32 [r], %r2; ret; }
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<4>; .reg .b32 %r<4>;
  ld.param.u64 %rd1, [p];
"""
FUNC_ADDRESSES = {
    "stored": _FUNCS + " mov.u64 %rd2, f; st.global.u64 [%rd1], %rd2; ret;\n}\n",
    "called through a pointer": _FUNCS + """ ld.global.u64 %rd2, [%rd1];
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  { .param .b32 a0; .param .b32 r0; st.param.b32 [a0], 5; call (r0), %rd2, (a0), proto;
    ld.param.b32 %r1, [r0]; st.global.u32 [%rd1], %r1; }
  mov.u64 %rd3, f; st.global.u64 [%rd1+8], %rd3; ret;
}
""",
    "called and stored": _FUNCS + """ mov.u64 %rd2, g; st.global.u64 [%rd1], %rd2;
  { .param .b32 a0; .param .b32 r0; st.param.b32 [a0], 5; call (r0), f, (a0);
    ld.param.b32 %r1, [r0]; st.global.u32 [%rd1+8], %r1; }
  mov.u64 %rd3, f; st.global.u64 [%rd1+16], %rd3; ret;
}
""",
}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(FUNC_ADDRESSES))
def test_function_address_is_built_like_ptxas(name, arch):
    ptx = FUNC_ADDRESSES[name]
    assert _structure(_ours_c(ptx, arch)) == _structure(_ptxas_c(_for(ptx, arch), arch))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_function_address_under_c_and_g_is_built_like_ptxas(arch):
    ptx = _for(FUNC_ADDRESSES["stored"], arch)
    ours = codegen.compile_ptx(ptx, arch=arch, compile_only=True, debug=True)
    r = oracle.ptxas(ptx, arch=arch, options=("-c", "-g"))
    assert r.ok, r.stderr
    theirs, ours = _structure(r.output), _structure(ours)
    for key in ("prototypes", "callgraph", "text relocations"):
        assert ours[key] == theirs[key], key


# Two children launched from one parent, one with dynamic shared memory and a dim3
# configuration, compiled by the pinned nvcc with -rdc=true (not used while writing the
# code: it found the order of the named kernels' symbols, after the parent's callees in
# the order it names them).
TWO_CHILDREN = r"""
__global__ void scale(float* v, float s, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] *= s; }
__global__ void fill(int* o, int n, int val) {
  extern __shared__ int buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = val; __syncthreads();
  if (i < n) o[i] = buf[threadIdx.x] + i;
}
__global__ void parent2(float* v, int* o, int n, float s) {
  if (threadIdx.x == 0) {
    int blocks = (n + 127) / 128;
    scale<<<blocks, 128>>>(v, s, n);
    fill<<<dim3(blocks, 1, 1), dim3(128, 1, 1), 128 * sizeof(int)>>>(o, n, blockIdx.x);
  }
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_two_launched_kernels_are_built_like_ptxas(arch):
    r = oracle.nvcc_ptx(TWO_CHILDREN, arch, ("-rdc=true",))
    if not r.ok and "not found" in r.stderr:
        pytest.skip("nvcc not installed")
    assert r.ok, r.stderr
    ptx = r.output.decode()
    theirs = _structure(_ptxas_c(ptx, arch))
    ours = _structure(codegen.compile_ptx(ptx, arch=arch, compile_only=True))
    if int(arch[3:]) < 90:
        # (not this branch's: on sm_75-89 ptxas folds an extern shared array's address
        # into the access, `STS [R7.X4+`(buf)]`, relocated 0x4a; ours adds it from
        # `MOV R, `(buf)`, relocated R_CUDA_ABS32_32)
        for side in (theirs, ours):
            side["text relocations"].pop("_Z4fillPiii")
    assert ours == theirs


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_device_launch_under_c_and_g_is_built_like_ptxas(arch):
    """nvcc -G -rdc=true's case: -c -g. (The frame relocations are left out: their offsets
    in `.nv_debug_line_sass` follow the length of each kernel's line program, which follows
    its code.)"""
    ptx = _for(CDP, arch)
    r = oracle.ptxas(ptx, arch=arch, options=("-c", "-g"))
    assert r.ok, r.stderr
    theirs = _structure(r.output)
    ours = _structure(codegen.compile_ptx(ptx, arch=arch, compile_only=True, debug=True))
    for side in (theirs, ours):
        side.pop("frame relocations")
    assert ours == theirs


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_whole_program_debug_function_address_keeps_absolute_relocations(arch):
    """-g without -c: ptxas 13.5.37 relocates a `.func` address's halves R_CUDA_ABS32_LO/HI_32
    on sm_90 too (the unified table's 0x70/0x71 are -c's only)."""
    ptx = _for(FUNC_ADDRESSES["stored"], arch)
    r = oracle.ptxas(ptx, arch=arch, options=("-g",))
    assert r.ok, r.stderr

    def relocs(data: bytes) -> list:
        c = read_cubin(data)
        names = [s.name for s in c.symbols]
        return sorted((names[x.symbol], x.type) for k in c.kernels for x in k.relocations)
    assert relocs(codegen.compile_ptx(ptx, arch=arch, debug=True)) == relocs(r.output)
