"""The `ptx2sass` command against the pinned ptxas: same exit codes, same messages (with our
name where ptxas names itself), same output files, for the same command lines and inputs.

ptxas runs through the oracle's cache in a scratch folder holding the same input files;
ours runs in-process in a temporary folder holding them too. Cases whose success would need
a code generator use a virtual target (`compute_89`), for which ptxas only checks the PTX.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2sass import cli, oracle
from ptx2sass import options as opt

REPO = Path(__file__).resolve().parent.parent

GOOD = """\
.version 8.0
.target sm_89
.address_size 64

.visible .entry k(.param .u64 p)
{
	.reg .b64 %rd<2>;
	.reg .b32 %r<2>;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, 7;
	st.global.u32 [%rd1], %r1;
	ret;
}
"""
SEVERAL_ERRORS = GOOD.replace("mov.u32 %r1, 7;", "mov.u32 %r1, %r9;\n\tadd.u32 %r1, %r1, %f1;")
SYNTAX_ERROR = GOOD.replace("[p];", "[p] foo;")
NEWER_TARGET = GOOD.replace(".target sm_89", ".target sm_120").replace("8.0", "8.7")
NEWER_VERSION = GOOD.replace(".version 8.0", ".version 9.9")

DOUBLES = GOOD.replace(".reg .b32 %r<2>;", ".reg .b32 %r<2>;\n\t.reg .f64 %d<3>;\n\t.reg .f32 %f1;").replace(
    "mov.u32 %r1, 7;", "ld.global.f64 %d1, [%rd1];\n\tmov.b64 %d2, %rd1;\n\tadd.f64 %d2, %d1, %d1;\n"
    "\tcvt.rn.f32.f64 %f1, %d2;\n\tsetp.lt.f64 %p1, %d1, %d2;\n\tmov.b32 %r1, %f1;").replace(
    ".reg .b64 %rd<2>;", ".reg .b64 %rd<2>;\n\t.reg .pred %p1;")
LOCAL = GOOD.replace(".reg .b32 %r<2>;", ".reg .b32 %r<2>;\n\t.local .align 4 .b8 arr[1024];\n"
                     "\t.reg .b64 %ra;").replace(
    "st.global.u32 [%rd1], %r1;", "mov.u64 %ra, arr;\n\tld.global.u32 %r1, [%rd1];\n"
    "\tand.b32 %r1, %r1, 1020;\n\tcvt.u64.u32 %rd1, %r1;\n\tadd.u64 %ra, %ra, %rd1;\n"
    "\tst.local.u32 [%ra], %r1;\n\tld.local.u32 %r1, [arr+8];\n\tld.param.u64 %rd1, [p];\n"
    "\tst.global.u32 [%rd1], %r1;")
K2 = GOOD.replace(".entry k(", ".entry k2(")
# two mma.sp (an advisory each on every target) and one `.sp::ordered_metadata` (none)
SPARSE = GOOD.replace(".version 8.0", ".version 8.5").replace(".reg .b32 %r<2>;", ".reg .b32 %r<2>;\n\t.reg .b32 %s<12>;").replace(
    "mov.u32 %r1, 7;", "ld.global.v4.b32 {%s0, %s1, %s2, %s3}, [%rd1];\n" + "".join(
        f"\tmma.{sp}.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {{%s4, %s5, %s6, %s7}}, {{%s0, %s1}}, "
        "{%s2, %s3}, {%s0, %s1, %s2, %s3}, %s1, 0x0;\n" for sp in ("sp", "sp::ordered_metadata", "sp"))
    + "\tadd.u32 %r1, %s4, %s7;")

# cp.async.bulk[.tensor] .multicast::cluster: ptxas's advisory on every target but sm_90a and
# the sm_100a-like ones, once per instruction (a warning: -w, -Werror, its suppress option)
MULTICAST = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
\t.reg .b64 %rd1;
\t.shared .align 128 .b8 sbuf[1024];
\t.shared .align 8 .b64 mbar;
\tld.param.u64 %rd1, [p];
\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [sbuf], [%rd1], 256, [mbar], 5;
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [sbuf], [%rd1, {{1, 2}}], [mbar], 3;
\tret;
}}
"""

KERNEL = GOOD[GOOD.index(".visible"):]
# --compile-as-tools-patch refuses `.shared` and `.const` variables (declared anywhere, used
# or not) and entries, in that order
TOOLS_PATCH_FUNCTIONS = """.version 8.0
.target sm_89
.address_size 64
.const .align 4 .b8 table[16];
.extern .shared .align 16 .b8 dyn[];
.visible .func (.param .b32 r) twice(.param .b32 a)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [a];
	add.s32 %r2, %r1, %r1;
	st.param.b32 [r], %r2;
	ret;
}
"""
TOOLS_PATCH_KERNEL = GOOD.replace(".reg .b32 %r<2>;", ".reg .b32 %r<2>;\n\t.shared .align 4 .b8 unused[8];")

INPUTS = {"k.ptx": GOOD, "bad.ptx": SEVERAL_ERRORS, "syn.ptx": SYNTAX_ERROR,
          "new.ptx": NEWER_TARGET, "v99.ptx": NEWER_VERSION,
          "nul.ptx": "garbage\0\xff\n", "opts.txt": "-arch=compute_89 -O3\n",
          "dbl.ptx": DOUBLES, "tp1.ptx": TOOLS_PATCH_FUNCTIONS, "tp2.ptx": TOOLS_PATCH_KERNEL, "ctl15.txt": "-O2 -lineinfo1\n", "ctl16.txt": "x" * 16, "ctl1.txt": "\n", "lmem.ptx": LOCAL, "k2.ptx": K2, "empty.txt": "", "sparse.ptx": SPARSE,
          **{f"mc_{a}.ptx": MULTICAST.format(arch=a) for a in ("sm_90", "sm_90a", "sm_100", "sm_100a")},
          # syntax errors before the header is complete
          "hdr1.ptx": ".target sm_89\nfoo\n", "hdr2.ptx": "/* x\n */ .version 8.0\nfoo\n",
          "hdr3.ptx": "\n\n  foo bar\n", "hdr4.ptx": ".version 8.0 .target\n",
          "hdr5.ptx": ".address_size 64\n\n-\n",
          # malformed headers: each directive judged as read, before a later syntax error
          "hdr6.ptx": ".version 9.9 foo\n", "hdr7.ptx": ".target\nfoo\n" + KERNEL,
          "hdr8.ptx": ".version 8.0\n.target foo, sm_89\n" + KERNEL,
          "hdr9.ptx": ".version 8.0\n.version 8.0\n.target sm_89\n" + KERNEL,
          "hdr10.ptx": ".version 8.0\n.target sm_89\n.address_size 64\n.address_size 64\n"
          + KERNEL, "hdr11.ptx": ".version 9.9\n.target\n",
          "hdr12.ptx": ".target sm_89\n.target foo\n", "hdr13.ptx": ".target sm_89\n.target sm_89\n",
          "hdr14.ptx": ".version 8.0\n.target texmode_independent\n" + KERNEL,
          "hdr15.ptx": ".version 8.0\n.target sm_89\n.target sm_10x\n" + KERNEL,
          "hdr16.ptx": ".version 8.0\n.target sm_89\n.target debug\n" + KERNEL,
          "hdr17.ptx": ".target foo\n.version 9.9\n"}

# Command lines both tools must treat alike: (argv, the output file ptxas would write).
CASES = [
    # unknown options: ptxas drops one dash and any `=value` when naming them
    ("-bogus k.ptx", "elf.o"), ("--bogus k.ptx", "elf.o"), ("--arch=sm_89 k.ptx", "elf.o"),
    ("-gpu-name=sm_89 k.ptx", "elf.o"), ("-archsm_89 k.ptx", "elf.o"), ("-- k.ptx", "elf.o"),
    ("---x k.ptx", "elf.o"), ("-ek k.ptx", "elf.o"), ("k.ptx -oout.o", "out.o"),
    ("k.ptx -bogus", "elf.o"), ("-arch=sm_899 -bogus k.ptx", "elf.o"),
    # bad values
    ("-arch=sm_899 k.ptx", "elf.o"), ("--gpu-name sm_899 k.ptx", "elf.o"),
    ("-arch=SM_89 k.ptx", "elf.o"), ("-arch= k.ptx", "elf.o"), ("-m32 k.ptx", "elf.o"),
    ("-m6 k.ptx", "elf.o"), ("-m k.ptx", "elf.o"), ("-Ox k.ptx", "elf.o"),
    ("-O3x k.ptx", "elf.o"), ("--fmad=FALSE k.ptx", "elf.o"), ("--fmad k.ptx", "elf.o"),
    ("-fmad=0 k.ptx", "elf.o"), ("-device-stack-protector=yes k.ptx", "elf.o"),
    ("-sanitize=foo k.ptx", "elf.o"), ("-minnctapersm=x k.ptx", "elf.o"),
    ("-split-compile=x k.ptx", "elf.o"), ("-regUsageLevel=x k.ptx", "elf.o"),
    ("-regAllocOptLevel=x k.ptx", "elf.o"),
    ("-arch=compute_89 -maxrregcount=foo k.ptx", "elf.o"),
    ("-arch=compute_89 -maxrregcount=12x k.ptx", "elf.o"),
    ("-arch=compute_89 -Ofc=bad k.ptx", "elf.o"),
    ("-arch=compute_89 -dlcm=zz k.ptx", "elf.o"), ("-arch=compute_89 -dscm=ca k.ptx", "elf.o"),
    # listed by --help, refused once there is an input: the architecture-specific LTO targets
    ("-arch=lto_90a k.ptx", "elf.o"), ("-arch=lto_120a -O3 -O2 k.ptx", "elf.o"),
    ("-arch=lto_100a -maxrregcount=zz -pic=true k.ptx", "elf.o"), ("-arch=lto_121a x.ptx", "elf.o"),
    ("-arch=lto_103a -ias garbage", "elf.o"), ("-arch=lto_110a", "elf.o"),
    ("-arch=lto_100f k.ptx", "elf.o"),
    # missing values, files and inputs
    ("-o", "elf.o"), ("k.ptx -o", "elf.o"), ("--gpu-name", "elf.o"), ("-arch", "elf.o"),
    ("-arch=sm_89 x.ptx", "elf.o"), ("-arch=sm_89 x.ptx y.ptx", "elf.o"),
    ("-arch=sm_89 -O 2 k.ptx", "elf.o"), ("-optf nothere.txt k.ptx", "elf.o"),
    ("-arch=compute_89 -e nothere k.ptx", "elf.o"),
    ("-arch=compute_89 --entry=k,nothere k.ptx", "elf.o"),
    # the PTX itself
    ("-arch=sm_89 bad.ptx", "elf.o"), ("-arch=sm_89 syn.ptx", "elf.o"),
    ("-arch=sm_89 new.ptx", "elf.o"), ("k.ptx", "elf.o"), ("-arch=compute_75 k.ptx", "elf.o"),
    ("-arch=sm_89 v99.ptx", "elf.o"),
    # warnings, -w and -Werror
    ("-arch=sm_75 -maxrregcount=16 k.ptx", "elf.o"),
    ("-arch=compute_89 -maxrregcount=1000 -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -maxrregcount=1000 k.ptx", "elf.o"),
    ("-arch=compute_89 -maxrregcount=1000 -w -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -regUsageLevel=11 k.ptx", "elf.o"),
    ("-arch=compute_89 -pic=false k.ptx", "elf.o"),
    ("-arch=compute_89 -fmad=true -fmad=false k.ptx", "elf.o"),
    ("-arch=sm_89 -arch=compute_89 k.ptx", "elf.o"),
    ("-arch=compute_89 -arch=compute_89 k.ptx", "elf.o"),
    ("-arch=compute_89 -O3 -g k.ptx", "elf.o"), ("-arch=compute_89 -g -O0 k.ptx", "elf.o"),
    ("-arch=compute_89 -g -lineinfo -maxrregcount=1000 k.ptx", "elf.o"),
    ("-arch=compute_89 -g -lineinfo -O2 k.ptx", "elf.o"),
    ("-arch=compute_89 -suppress-debug-info k.ptx", "elf.o"),
    ("-arch=compute_89 -g -lineinfo -w k.ptx", "elf.o"),
    # warnings on request, their suppression, and which -Werror promotes
    ("-arch=sm_89 --warn-on-double-precision-use dbl.ptx", "elf.o"),
    ("-arch=sm_89 -warn-double-usage -Werror dbl.ptx", "elf.o"),
    ("-arch=compute_89 -warn-double-usage dbl.ptx", "elf.o"),
    ("-arch=sm_89 -warn-lmem-usage lmem.ptx", "elf.o"),
    ("-arch=sm_89 -warn-lmem-usage -Werror lmem.ptx", "elf.o"),
    ("-arch=sm_89 -warn-lmem-usage -w -Werror lmem.ptx", "elf.o"),
    ("-arch=sm_89 -warn-lmem-usage k.ptx", "elf.o"),
    ("-arch=sm_89 sparse.ptx", "elf.o"), ("-arch=sm_89 -w -Werror sparse.ptx", "elf.o"),
    ("-arch=sm_120 sparse.ptx", "elf.o"), ("-arch=compute_89 sparse.ptx", "elf.o"),
    ("-arch=sm_89 -suppress-sparse-mma-advisory-info sparse.ptx", "elf.o"),
    *((f"-arch={a} mc_{a}.ptx", "elf.o") for a in ("sm_90", "sm_90a", "sm_100", "sm_100a")),
    ("-arch=sm_90 -w mc_sm_90.ptx", "elf.o"), ("-arch=sm_90 -Werror mc_sm_90.ptx", "elf.o"),
    ("-arch=sm_100 -suppress-async-bulk-multicast-advisory-warning mc_sm_100.ptx", "elf.o"),
    ("-arch=sm_89 -pic=true -suppress-position-independent-code-warning k.ptx", "elf.o"),
    ("-arch=sm_89 -pic=true -Werror k.ptx", "elf.o"),
    ("-arch=sm_89 -apply-controls nothere.txt k.ptx", "elf.o"),
    ("-arch=sm_89 -apply-controls opts.txt k.ptx", "elf.o"),
    ("-arch=sm_89 -apply-controls empty.txt k.ptx", "elf.o"),
    ("-arch=sm_89 -apply-controls ctl15.txt k.ptx", "elf.o"),
    ("-arch=sm_89 -apply-controls ctl16.txt k.ptx", "elf.o"),
    ("-arch=sm_89 -apply-controls ctl1.txt -w k.ptx", "elf.o"),
    ("-arch=sm_89 -O3 -O2 -Werror k.ptx", "elf.o"),
    ("-arch=sm_89 -maxrregcount=16 -Werror k.ptx", "elf.o"),
    # combinations, in ptxas's order of judging them (branch cli35)
    ("-arch=compute_89 -O0 -regUsageLevel=5 k.ptx", "elf.o"),
    ("-arch=compute_89 -O0 -regUsageLevel=11 k.ptx", "elf.o"),
    ("-arch=compute_89 -g -regUsageLevel=5 k.ptx", "elf.o"),
    ("-arch=compute_89 -O0 -c -enable-func-clone-sc=true k.ptx", "elf.o"),
    ("-arch=compute_89 -O0 -c -g -enable-func-clone-sc=true k.ptx", "elf.o"),
    ("-arch=compute_89 -O2 -Ofc=min k.ptx", "elf.o"), ("-arch=compute_89 -O0 -Ofc=mid k.ptx", "elf.o"),
    ("-arch=compute_89 -O1 -Ofc=max k.ptx", "elf.o"), ("-arch=compute_89 -O1 -Ofc=mid k.ptx", "elf.o"),
    ("-arch=compute_89 -O2 -Ofc=max -g k.ptx", "elf.o"),
    ("-arch=compute_89 -O0 -Ofc=min -split-compile=-1 k.ptx", "elf.o"),
    ("-arch=sm_90 -preserve-relocs k.ptx", "elf.o"), ("-arch=compute_100 -preserve-relocs k.ptx", "elf.o"),
    ("-arch=sm_90 -preserve-relocs -Werror k.ptx", "elf.o"),
    ("-arch=lto_90 -preserve-relocs k.ptx", "elf.o"), ("-arch=sm_89 -preserve-relocs k.ptx", "elf.o"),
    ("-arch=lto_89 -maxrregcount=40 -minnctapersm=2 k.ptx", "elf.o"),
    ("-arch=lto_89 -maxrregcount=0 -maxntid=64 k.ptx", "elf.o"),
    ("-arch=lto_89 -maxrregcount=archmin -minnctapersm=2 k.ptx", "elf.o"),
    ("-arch=compute_90 -pic=true -regUsageLevel=4 -O0 -c -ewp -g -lineinfo -dlcm=ca -flcm=cg "
     "-minnctapersm=2 -preserve-relocs -maxrregcount=16 -enable-func-clone-sc=true -Ofc=max -dscm=x k.ptx",
     "elf.o"),
    ("-arch=compute_90 -regUsageLevel=11 -pic=true -Ofc=bad k.ptx", "elf.o"),
    ("-arch=compute_90 -func-maxrregcount=40 -maxrregcount=16 -maxntid=64 k.ptx", "elf.o"),
    ("-arch=compute_89 -dlcm=ca -flcm=cg -maxrregcount=40 -minnctapersm=2 k.ptx", "elf.o"),
    # launch bounds from the command line
    ("-arch=sm_89 -maxntid x k.ptx", "elf.o"), ("-arch=sm_89 -maxntid 1,2,3,4 k.ptx", "elf.o"),
    ("-arch=sm_89 -maxntid 2048 k.ptx", "elf.o"), ("-arch=sm_89 -maxntid 0 k.ptx", "elf.o"),
    ("-arch=sm_89 -maxntid 64 -maxntid 2 -minnctapersm 2 k.ptx", "elf.o"),
    ("-arch=sm_89 -maxntid 64 -minnctapersm 2 -maxrregcount 32 k.ptx", "elf.o"),
    ("-arch=sm_89 -maxrregcount 32 -maxntid 64 -Werror k.ptx", "elf.o"),
    # options ptxas ignores for another, or for the target, in its words (branch cli18)
    ("-arch=compute_89 -c -ewp k.ptx", "elf.o"), ("-arch=compute_89 -ewp -c -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -Ofc=max -g k.ptx", "elf.o"), ("-arch=compute_89 -Ofc=0 -g k.ptx", "elf.o"),
    ("-arch=compute_89 -Ofc=mid -g -lineinfo -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -enable-func-clone-sc=true k.ptx", "elf.o"),
    ("-arch=compute_89 -enable-func-clone-sc=true -c -g k.ptx", "elf.o"),
    ("-arch=compute_89 -func-maxrregcount=zz k.ptx", "elf.o"),
    ("-arch=compute_89 -func-maxrregcount=40 -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -c -func-maxrregcount=zz k.ptx", "elf.o"),
    ("-arch=compute_89 -c -func-maxrregcount=1000 k.ptx", "elf.o"),
    ("-arch=compute_89 -c -func-maxrregcount=10 -maxrregcount=1000 k.ptx", "elf.o"),
    ("-arch=compute_89 -c -func-maxrregcount=zz -maxrregcount=zz k.ptx", "elf.o"),
    ("-arch=compute_89 -flcm=zz -dlcm=yy k.ptx", "elf.o"),
    ("-arch=compute_89 -flcm=zz -dlcm=ca -fscm=q -dscm=wb k.ptx", "elf.o"),
    ("-arch=compute_89 -dlcm=ca -flcm=cg -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -split-compile=-1 k.ptx", "elf.o"),
    ("-arch=compute_89 -split-compile=-1 -Ofc=zz k.ptx", "elf.o"),
    ("-arch=compute_89 -split-compile=2147483648 k.ptx", "elf.o"),
    ("-arch=compute_89 -minnctapersm 99999999999 k.ptx", "elf.o"),
    ("-arch=compute_89 -g-tmem-access-check -gno-fabric-access-check k.ptx", "elf.o"),
    ("-arch=compute_89 -gno-tmem-access-check -Werror bad.ptx", "elf.o"),
    ("-arch=sm_120 -g-tmem-access-check -gno-fabric-access-check new.ptx", "elf.o"),
    ("-arch=sm_89 -astoolspatch tp1.ptx", "elf.o"), ("-arch=sm_89 -astoolspatch tp2.ptx", "elf.o"),
    ("-arch=compute_89 --compile-as-tools-patch tp1.ptx", "elf.o"),
    ("-arch=compute_89 -legacy-bar-warp-wide-behavior -c k.ptx", "elf.o"),
    ("-arch=compute_89 -legacy-bar-warp-wide-behavior -Werror k.ptx", "elf.o"),
    ("-arch=compute_89 -astoolspatch -legacy-bar-warp-wide-behavior -g-tmem-access-check k.ptx",
     "elf.o"),
    ("-arch=compute_89 -g-tmem-access-check -legacy-bar-warp-wide-behavior -c -ewp -Ofc=max -g "
     "-func-maxrregcount=3 -enable-func-clone-sc=true -lineinfo -maxrregcount=1000 -pic=true k.ptx",
     "elf.o"),
    ("-arch=compute_89 -optf nul.ptx k.ptx", "elf.o"),
    ("-arch=compute_89 -ias -ias k.ptx", "elf.o"), ("-arch=compute_89 -ias garbage", "elf.o"),
    ("-arch=compute_89 hdr1.ptx", "elf.o"), ("-arch=compute_89 hdr2.ptx", "elf.o"),
    ("-arch=compute_89 hdr3.ptx", "elf.o"), ("-arch=compute_89 hdr4.ptx", "elf.o"),
    ("-arch=compute_89 hdr5.ptx k.ptx", "elf.o"),
    *((f"-arch=compute_89 hdr{i}.ptx", "elf.o") for i in range(6, 18)),
    # several inputs: files and strings
    ("-arch=sm_89 k.ptx k2.ptx", "elf.o"), ("-arch=sm_89 k.ptx k.ptx", "elf.o"),
    ("-arch=sm_89 k2.ptx -ias " + "\x00".join(GOOD.split()), "elf.o"),
    ("-arch=sm_89 -ias " + "\x00".join(GOOD.split()) + " -ias " + "\x00".join(GOOD.split()),
     "elf.o"),
    # accepted spellings (a virtual target: ptxas checks and writes nothing, exit 0)
    ("-arch=compute_89 -O3 -O0 -O -O=2 --opt-level 1 --opt-level=3 k.ptx", "elf.o"),
    ("-arch compute_89 -m64 -m 64 -m=64 --machine 64 k.ptx", "elf.o"),
    ("--gpu-name=compute_89 --fmad=false --fmad false -fmad=true k.ptx", "elf.o"),
    ("--gpu-name compute_89 -o out.o --output-file=out.o -o=out.o k.ptx", "out.o"),
    ("-arch=lto_89 -maxrregcount=32 --maxrregcount 40 -maxrregcount=archmax k.ptx", "elf.o"),
    ("-arch=compute_89 -lineinfo -g -c -w -Werror --warn-on-spills -v -v2 k.ptx", "elf.o"),
    ("-arch=compute_89 -e k --entry=k k.ptx", "elf.o"),
    ("-arch=compute_89 -Ofc=max -Ofc max -dlcm=ca -fscm=wb -split-compile=4 k.ptx", "elf.o"),
    ("-arch=compute_89 -maxntid=128,1,1 -minnctapersm=2 -jobserver -annotate k.ptx", "elf.o"),
    ("-arch=compute_89 -preserve-relocs -ret-end -no-bb-merge -disable-optimizer-consts "
     "-sp-bounds-check -opt-fp-atomics -warn-double-usage -warn-lmem-usage k.ptx", "elf.o"),
    ("-arch=compute_89 -optf opts.txt k.ptx", "elf.o"),
    # what nvcc (`nvcc --dryrun`) and Triton (make_cubin) pass, virtual target for sm_89
    ("-arch=compute_89 -m64 -O3 --output-file x.cubin k.ptx", "x.cubin"),
    ("-arch=compute_89 -m64 k.ptx -o k.sm_89.cubin", "k.sm_89.cubin"),
    ("-arch=compute_89 -m64 -v -maxrregcount=32 -g --dont-merge-basicblocks --return-at-end "
     "--generate-line-info k.ptx -o k.cubin", "k.cubin"),
    ("-arch=compute_89 -m64 --compile-only k.ptx -o k.cubin", "k.cubin"),
    ("-lineinfo -suppress-debug-info --fmad=false -v --opt-level 0 --gpu-name=compute_89 "
     "k.ptx -o k.ptx.o", "k.ptx.o"),
    ("-g -v --gpu-name=compute_89 k.ptx -o k.ptx.o", "k.ptx.o"),
    ("-lineinfo -v --gpu-name=compute_89 k.ptx -o k.ptx.o", "k.ptx.o"),
    # Triton 3.9's make_cubin (and its --regAllocOptLevel, absent from ptxas's --help)
    ("-lineinfo -v --regAllocOptLevel=2 --gpu-name=compute_89 k.ptx -o k.ptx.o", "k.ptx.o"),
    ("-lineinfo -suppress-debug-info --fmad=false -v --regAllocOptLevel=2 --opt-level 1 "
     "--gpu-name=compute_89 k.ptx -o k.ptx.o", "k.ptx.o"),
    ("-regAllocOptLevel 2 -arch=compute_89 k.ptx", "elf.o"),
    ("-lineinfo -v --gpu-name=compute_89 k.ptx -o k.ptx.o --fmad=false -O0 --warn-on-spills",
     "k.ptx.o"),
    # PTX on the command line (not split at its commas)
    ("-arch=compute_89 -ias " + "\x00".join(SEVERAL_ERRORS.split()), "elf.o"),
    # no compilation
    ("-V k.ptx", "elf.o"), ("--version", "elf.o"), ("-h k.ptx", "elf.o"), ("-V -h", "elf.o"),
    ("", "elf.o"), ("-arch=sm_89", "elf.o"), ("-arch=sm_89 -maxrregcount k.ptx", "elf.o"),
    ("-V -bogus", "elf.o"), ("-arch-ls k.ptx", "elf.o"), ("-version-ls k.ptx", "elf.o"),
]


def _ptxas(argv: list[str], output: str) -> oracle.ToolRun:
    inputs = {name: text.encode("latin-1") for name, text in INPUTS.items()}
    return oracle._run_cached("ptxas", argv, inputs, output)


def _ours(argv: list[str], folder: Path, capsys, monkeypatch) -> tuple[int, str, str]:
    for name, text in INPUTS.items():
        (folder / name).write_bytes(text.encode("latin-1"))
    monkeypatch.chdir(folder)
    capsys.readouterr()
    rc = cli.main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _as_ours(ptxas_stderr: str) -> str:
    """ptxas's messages with our name where it names itself (line starts)."""
    return re.sub(r"(?m)^ptxas ", "ptx2sass ", ptxas_stderr)


@pytest.mark.parametrize("command,output", CASES, ids=[c[:80] or "(none)" for c, _ in CASES])
def test_same_verdict_and_messages_as_ptxas(command, output, tmp_path, capsys, monkeypatch):
    argv = [a.replace("\x00", " ") for a in command.split()]
    theirs = _ptxas(argv, output)
    rc, out, err = _ours(argv, tmp_path, capsys, monkeypatch)
    assert rc == theirs.returncode
    assert err == _as_ours(theirs.stderr)
    assert bool(out) == bool(theirs.stdout)
    assert (tmp_path / output).exists() == (theirs.output is not None)
    if "-version-ls" in argv or "-arch-ls" in argv:
        assert out == theirs.stdout


def _ptxas_help() -> str:
    return subprocess.run([str(oracle.tool_path("ptxas")), "--help"], capture_output=True,
                          text=True, check=True).stdout


def test_option_table_is_ptxas_own():
    """Every option ptxas lists, with its alias, placeholder, allowed values and default."""
    theirs = _ptxas_help()
    heads = [line.rstrip() for line in theirs.splitlines() if line.startswith("--")]
    ours = [line for line in cli.help_text().splitlines()
            if line.startswith("--") and not line.startswith("--dump-ir")]
    assert ours == heads
    blocks = re.split(r"\n(?=--)", theirs)
    for o in opt.OPTIONS:
        if o.hidden:
            continue
        block = next(b for b in blocks if re.match(rf"--{re.escape(o.name)}[ \n]", b))
        flat = " ".join(block.split())
        allowed = re.search(r"Allowed values for this option: (.*?)\.(?: Default|$)", flat)
        listed = tuple(v.strip().strip("'") for v in allowed.group(1).split(",")) if allowed else ()
        assert o.values == listed, o.name
        default = re.search(r"Default value: (?:'([^']*)'|(\w+))\.", flat)
        if o.default is not None or default:
            assert default and o.default == (default.group(1) or default.group(2)), o.name


def test_help_keeps_ptxas_layout():
    lines = cli.help_text().splitlines()
    assert lines[:6] == ["", "Usage  : ptx2sass [options] <ptx file>,...", "", "Options",
                         "=======", ""]
    theirs = _ptxas_help().splitlines()
    assert theirs[1].replace("ptxas", "ptx2sass") == lines[1]


def test_version_names_ptx2sass_and_the_release_tools_read(capsys):
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ptx2sass: ") and "NVIDIA" not in out.splitlines()[0]
    assert len(out.splitlines()) == 5
    theirs = subprocess.run([str(oracle.tool_path("ptxas")), "--version"], capture_output=True,
                            text=True, check=True).stdout
    # Triton reads the CUDA release from `release X.Y`: both must give the same one.
    release = re.compile(r"release (\d+\.\d+)")
    assert release.search(out).group(1) == release.search(theirs).group(1)


# Diagnostics and robustness ---------------------------------------------------------------

DIAGNOSTIC = re.compile(r"^ptx2sass (\S+, line \d+; )?(error|fatal|warning) *: \S")


def _garbage_inputs() -> dict[str, bytes]:
    return {"empty.ptx": b"", "binary.ptx": bytes(range(256)) * 4,
            "nested.ptx": GOOD.encode().replace(b"ret;", b"{" * 5000 + b"ret;" + b"}" * 5000),
            "half.ptx": GOOD.encode()[:97],
            "huge.ptx": GOOD.encode().replace(b"7;", b"9" * 400 + b";")}


def test_garbage_gives_diagnostics_never_a_traceback(tmp_path):
    """A real process (so nothing in-process hides a traceback): exit 255, ptxas-form lines."""
    for name, data in _garbage_inputs().items():
        (tmp_path / name).write_bytes(data)
        proc = subprocess.run([sys.executable, "-m", "ptx2sass", "-arch=sm_89", name, "-o",
                               "out.o"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 255, (name, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, name
        assert proc.stderr and all(DIAGNOSTIC.match(line) for line in proc.stderr.splitlines())
        assert not (tmp_path / "out.o").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(_garbage_inputs())


def _invalid_corpus_sample():
    manifest = REPO / "tests" / "corpus" / "invalid" / "manifest.json"
    if not manifest.is_file():
        return []
    variants = json.loads(manifest.read_text())["variants"]
    size = int(os.environ.get("PTX2SASS_SAMPLE", "24"))
    step = max(1, len(variants) // size)
    return variants[::step][:size]


@pytest.mark.parametrize("variant", _invalid_corpus_sample(), ids=lambda v: v["file"])
def test_invalid_corpus_verdicts_in_ptxas_form(variant, tmp_path, capsys, monkeypatch):
    """Mutated real PTX (the frontend's invalid corpus, with ptxas's recorded verdicts): the
    command agrees on the verdict and prints only ptxas-form lines, never an internal error."""
    src = REPO / "tests" / "corpus" / "invalid" / variant["file"]
    (tmp_path / variant["file"]).write_bytes(src.read_bytes())
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(["-arch=compute_89", variant["file"]])
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert all(DIAGNOSTIC.match(line) for line in err.splitlines()), err
    assert rc == (0 if variant["ptxas_ok"] else 255), err


def test_unexpected_exception_is_one_line(tmp_path, capsys, monkeypatch):
    from ptx2sass import frontend

    def broken(*_args, **_kw):
        raise ValueError("simulated fault")
    monkeypatch.setattr(frontend, "parse", broken)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    rc, out, err = _ours(["-arch=sm_89", "k.ptx"], tmp_path, capsys, monkeypatch)
    assert rc == 255
    assert err.splitlines() == ["ptx2sass fatal   : internal error: ValueError: simulated "
                                f"fault (set {cli.DEBUG_ENV}=1 for a traceback)"]
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    rc, out, err = _ours(["-arch=sm_89", "k.ptx"], tmp_path, capsys, monkeypatch)
    assert rc == 255 and "Traceback" in err and "simulated fault" in err


@pytest.mark.parametrize("arch", ["sm_88"])
def test_a_listed_target_without_a_code_generator_is_one_error(arch, tmp_path, capsys, monkeypatch):
    """ptxas compiles for it (k.ptx's `.target sm_89` aside: sm_88 is below it); ours has no
    tables for it yet: one error naming the target, not an internal error (sm_107: compiled
    since branch cli37, tests/test_sm107.py)."""
    (tmp_path / "k75.ptx").write_text(GOOD.replace("sm_89", "sm_75"))
    rc, out, err = _ours([f"-arch={arch}", "k75.ptx"], tmp_path, capsys, monkeypatch)
    theirs = oracle._run_cached("ptxas", [f"-arch={arch}", "k75.ptx"],
                                {"k75.ptx": GOOD.replace("sm_89", "sm_75").encode()}, "elf.o")
    assert theirs.ok and theirs.output
    assert rc == 255 and "internal error" not in err
    assert err.splitlines()[0].startswith(f"ptx2sass error   : code generation for {arch} not supported yet")


# With a stand-in code generator: ptxas's own cubin -----------------------------------------

def _ptxas_cubin(ptx: str, arch: str = "sm_89") -> oracle.ToolRun:
    run = oracle.ptxas(ptx, arch, ("-v",), name="k.ptx")
    assert run.ok, run.stderr
    return run


def test_verbose_lines_match_ptxas(tmp_path, capsys, monkeypatch):
    """With ptxas's cubin standing in for ours, `-v` prints exactly ptxas's lines (the
    compile time aside): the report depends only on the cubin bytes."""
    run = _ptxas_cubin(GOOD)
    monkeypatch.setattr(cli, "_code_generator", lambda: lambda ptx, arch, **kw: run.output)
    rc, out, err = _ours(["-v", "-arch=sm_89", "k.ptx", "-o", "k.cubin"], tmp_path, capsys,
                         monkeypatch)
    assert rc == 0
    timeless = re.compile(r"(?m)^ptx2sass info    : Compile time = [\d.]+ ms\n")
    assert timeless.sub("", err) == timeless.sub("", _as_ours(run.stderr))
    assert len(timeless.findall(err)) == len(timeless.findall(_as_ours(run.stderr))) == 1
    assert (tmp_path / "k.cubin").read_bytes() == run.output


def _corpus_files() -> list[Path]:
    return sorted((REPO / "tests" / "corpus" / "cuda").glob("*.ptx"))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_90a"])
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_resource_lines_of_ptxas_cubins(path, arch):
    """Our -v report of ptxas's cubin equals ptxas's own -v lines, except the lines for
    non-entry functions (not reported yet) and the compile time (sm_90: no constant-bank
    sizes, shared memory without the driver's reserved part)."""
    run = oracle.ptxas(path.read_text(), arch, ("-v",), name=path.name)
    if not run.ok:
        pytest.skip(f"ptxas rejects {path.name}")
    lines = [ln for ln in run.stderr.splitlines()
             if "Compile time" not in ln and "warning" not in ln]
    entries = set(re.findall(r"Compiling entry function '([^']+)'", run.stderr))
    expected, skip_next = [], False
    for ln in lines:
        m = re.match(r"ptxas info    : Function properties for (\S+)$", ln)
        if m and m.group(1) not in entries:
            skip_next = True
            continue
        if skip_next:
            skip_next = False
            continue
        expected.append(re.sub(r"^ptxas info    : ", "", ln))
    assert cli.resource_lines(run.output, arch) == expected


def test_failed_write_leaves_nothing(tmp_path, capsys, monkeypatch):
    run = _ptxas_cubin(GOOD)
    monkeypatch.setattr(cli, "_code_generator", lambda: lambda ptx, arch, **kw: run.output)
    (tmp_path / "out.o").write_bytes(b"previous")

    def failing_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", failing_replace)
    rc, out, err = _ours(["-arch=sm_89", "k.ptx", "-o", "out.o"], tmp_path, capsys,
                         monkeypatch)
    assert rc == 255
    assert err == "ptx2sass fatal   : Output file 'out.o' could not be opened\n"
    assert (tmp_path / "out.o").read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*INPUTS, "out.o"])


def test_output_into_a_folder_is_refused_like_ptxas(tmp_path, capsys, monkeypatch):
    run = _ptxas_cubin(GOOD)
    monkeypatch.setattr(cli, "_code_generator", lambda: lambda ptx, arch, **kw: run.output)
    (tmp_path / "dir").mkdir()
    theirs = _ptxas(["-arch=sm_89", "k.ptx", "-o", "."], "elf.o")
    rc, out, err = _ours(["-arch=sm_89", "k.ptx", "-o", "dir"], tmp_path, capsys, monkeypatch)
    assert rc == theirs.returncode == 255
    assert err == _as_ours(theirs.stderr).replace("'.'", "'dir'")


def test_error_keeps_an_existing_output_untouched(tmp_path, capsys, monkeypatch):
    (tmp_path / "out.o").write_bytes(b"previous")
    rc, _, _ = _ours(["-arch=sm_89", "bad.ptx", "-o", "out.o"], tmp_path, capsys, monkeypatch)
    assert rc == 255 and (tmp_path / "out.o").read_bytes() == b"previous"


def test_options_reach_the_code_generator(tmp_path, capsys, monkeypatch):
    seen = {}
    cubin = _ptxas_cubin(GOOD).output

    def generator(ptx, arch, *, opt_level, fmad, maxrregcount, entries):
        seen.update(arch=arch, opt_level=opt_level, fmad=fmad, maxrregcount=maxrregcount,
                    entries=entries)
        return cubin
    monkeypatch.setattr(cli, "_code_generator", lambda: generator)
    rc, _, err = _ours(["--gpu-name=sm_90", "-O1", "--fmad=false", "-maxrregcount=40",
                        "-e", "k", "-lineinfo", "k.ptx"], tmp_path, capsys, monkeypatch)
    assert rc == 0, err
    assert seen == {"arch": "sm_90", "opt_level": 1, "fmad": False, "maxrregcount": 40,
                    "entries": ("k",)}


# The real code generator ------------------------------------------------------------------

def test_compile_with_the_code_generator(tmp_path, capsys, monkeypatch):
    """End to end with ptx2sass's own back end: a cubin, or a ptxas-form refusal."""
    if cli._code_generator() is None:
        pytest.skip("no code generator in this checkout yet (ptx2sass.compile missing)")
    rc, out, err = _ours(["-v", "-arch=sm_89", "k.ptx", "-o", "k.cubin"], tmp_path, capsys,
                         monkeypatch)
    if rc != 0:
        assert all(DIAGNOSTIC.match(ln) for ln in err.splitlines()), err
        assert not (tmp_path / "k.cubin").exists()
        pytest.skip(f"the code generator does not support this kernel yet: {err.strip()}")
    from ptx2sass.encoder.cubin import read_cubin
    cubin = (tmp_path / "k.cubin").read_bytes()
    assert [k.name for k in read_cubin(cubin).kernels] == ["k"]
    assert "ptx2sass info    : Compiling entry function 'k' for 'sm_89'" in err
    assert re.search(r"(?m)^ptx2sass info    : Used \d+ registers, used 0 barriers, "
                     r"360 bytes cmem\[0\]$", err)
    assert ".text.k" in oracle.nvdisasm(cubin)


def test_recursion_compiles_with_ptxas_warning(tmp_path, capsys, monkeypatch):
    """A recursive function: the command inlines what it can, compiles the rest out of line
    and warns, as ptxas does, that the kernel's stack size is not knowable."""
    from tests.test_codegen_calls import FIB
    monkeypatch.setitem(INPUTS, "fib.ptx", FIB)
    argv = ["-arch=sm_89", "fib.ptx", "-o", "fib.cubin"]
    theirs = _ptxas(argv, "fib.cubin")
    rc, out, err = _ours(argv, tmp_path, capsys, monkeypatch)
    assert "cannot be statically determined" in theirs.stderr
    assert (rc, err) == (theirs.returncode, _as_ours(theirs.stderr))
    assert (tmp_path / "fib.cubin").exists()


# Debugging output and start-up cost --------------------------------------------------------

def test_dump_ir(tmp_path, capsys, monkeypatch):
    from ptx2sass import frontend, ir
    from ptx2sass.frontend.to_ssa import lower_module
    rc, out, err = _ours(["--dump-ir", "-arch=sm_89", "k.ptx"], tmp_path, capsys, monkeypatch)
    assert rc == 0 and err == ""
    module = frontend.parse(GOOD, "k.ptx")
    frontend.check(module, "sm_89")
    assert out.rstrip("\n") == ir.dump_module(lower_module(module)).rstrip("\n")
    assert not (tmp_path / "elf.o").exists()


def test_no_numpy_on_the_command_path(tmp_path):
    (tmp_path / "k.ptx").write_text(GOOD)
    script = ("import sys; from ptx2sass.cli import main; "
              "assert main(['--version']) == 0; "
              "assert main(['-arch=compute_89', 'k.ptx']) == 0; "
              "assert main(['--dump-ir', '-arch=sm_89', 'k.ptx']) == 0; "
              "bad = [m for m in ('numpy', 'ptx2sass.oracle') if m in sys.modules]; "
              "assert not bad, bad")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_a_ptxas_shim_serves_triton(tmp_path):
    """ptx2sass installed under the name `ptxas` (a link, what TRITON_PTXAS_PATH or PATH
    would find): Triton reads the CUDA release from `--version`, then runs its make_cubin
    command line; every line then starts `ptxas`, as ptxas's own do."""
    if cli._code_generator() is None:
        pytest.skip("no code generator in this checkout yet (ptx2sass.compile missing)")
    shim = tmp_path / "ptxas"
    shim.symlink_to(Path(sys.executable).parent / "ptx2sass")
    (tmp_path / "k.ptx").write_text(GOOD)
    version = subprocess.run([str(shim), "--version"], capture_output=True, text=True,
                             check=True).stdout
    assert re.search(r".*release (\d+\.\d+).*", version).group(1) == "13.5"
    proc = subprocess.run([str(shim), "-lineinfo", "-v", "--gpu-name=sm_89", "k.ptx", "-o",
                           "k.ptx.o"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "ptxas info    : Used " in proc.stderr
    from ptx2sass.encoder.cubin import read_cubin
    assert [k.name for k in read_cubin((tmp_path / "k.ptx.o").read_bytes()).kernels] == ["k"]


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_example_for_hopper(arch, tmp_path, capsys, monkeypatch):
    """`ptx2sass -arch=sm_90 examples/vecadd.ptx` (what tools/gpu_check launches on an H100):
    a cubin cuobjdump and nvdisasm accept, whose code nvdisasm reads back as our instructions,
    and which computes a + b in the emulator as ptxas's cubin for the same arch does."""
    import numpy as np
    from ptx2sass.emu.launch import run
    from tools.inventory_coverage import _readback_ok
    from ptx2sass.encoder.cubin import read_cubin
    from ptx2sass.encoder import codec
    rc, _, err = _ours([f"-arch={arch}", str(REPO / "examples/vecadd.ptx"), "-o", "v.cubin"],
                       tmp_path, capsys, monkeypatch)
    assert rc == 0, err
    ours = (tmp_path / "v.cubin").read_bytes()
    assert f"code for {arch}" in oracle.cuobjdump_sass(ours)
    kernel = read_cubin(ours).kernels[0]
    words = [codec.decode(int.from_bytes(kernel.text[pc:pc + 16], "little"), arch[:5], pc)
             for pc in range(0, len(kernel.text), 16)]
    code = type("Code", (), {"name": kernel.name, "instructions": words})
    assert _readback_ok(ours, [code])
    theirs = oracle.ptxas((REPO / "examples/vecadd.ptx").read_text(), arch).output
    n = 200
    a = np.arange(256, dtype=np.float32) * 0.5
    b = np.full(256, 3.25, dtype=np.float32)
    outs = []
    for cubin in (ours, theirs):
        c = np.zeros(256, dtype=np.float32)
        res = run(cubin, "vecadd", (2, 1, 1), (128, 1, 1), [a, b, c, np.uint32(n)])
        assert not res.hazards
        outs.append(c)
    assert (outs[0] == outs[1]).all()
    assert (outs[0][:n] == a[:n] + b[:n]).all() and not outs[0][n:].any()


# -v2's "Processing" lines ------------------------------------------------------------------

CALLER = GOOD.replace(".visible .entry k(", """.func (.param .b32 r) twice(.param .b32 a)
{
\t.reg .b32 %t<3>;
\tld.param.b32 %t1, [a];
\tadd.s32 %t2, %t1, %t1;
\tst.param.b32 [r], %t2;
\tret;
}

.visible .func (.param .b32 r) thrice(.param .b32 a)
{
\t.reg .b32 %t<3>;
\tld.param.b32 %t1, [a];
\tmul.lo.s32 %t2, %t1, 3;
\tst.param.b32 [r], %t2;
\tret;
}

.visible .entry k(""").replace("mov.u32 %r1, 7;", """ld.global.u32 %r1, [%rd1];
\t{
\t.param .b32 a0;
\t.param .b32 r0;
\tst.param.b32 [a0], %r1;
\tcall.uni (r0), twice, (a0);
\tld.param.b32 %r1, [r0];
\tst.param.b32 [a0], %r1;
\tcall.uni (r0), thrice, (a0);
\tld.param.b32 %r1, [r0];
\t}""") + GOOD[GOOD.index(".visible"):].replace(".entry k(", ".entry k2(")


@pytest.mark.parametrize("options", ["-v2", "-v2 -c", "-v2 -g", "-v2 -e k2", "-v2 -v"])
def test_verbose2_names_each_function_it_processes(options, tmp_path, capsys, monkeypatch):
    """ptxas -v2 says "Processing NAME" for each function it compiles on its own (the
    entries; every function under -c and -g), in -v's order, before its other lines."""
    argv = ["-arch=sm_89", *options.split(), "caller.ptx", "-o", "out.cubin"]
    theirs = oracle._run_cached("ptxas", argv, {"caller.ptx": CALLER.encode()}, "out.cubin")
    assert theirs.ok, theirs.stderr
    (tmp_path / "caller.ptx").write_text(CALLER)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert cli.main(argv) == 0
    ours = capsys.readouterr().err

    def processing(err: str) -> list[str]:
        infos = [line.split(":", 1)[1].strip() for line in err.splitlines() if " info " in line]
        count = next((i for i, t in enumerate(infos) if not t.startswith("Processing ")), len(infos))
        return infos[:count]
    expected = processing(theirs.stderr)
    assert expected and processing(ours) == expected


@pytest.mark.parametrize("options", ["-e k2", "-e k", "--entry=k,k2", "-e k2 -e k",
                                     "-lineinfo -e k2", "-g -e k2"])
def test_entry_compiles_the_named_kernels_in_their_order(options, tmp_path, capsys, monkeypatch):
    """--entry in a whole program: only the named kernels (and what they call), the cubin
    listing them last-named first; -g keeps every kernel (ptxas 13.5.37). (-e was accepted
    and ignored: every kernel was compiled.)"""
    from ptx2sass.encoder.cubin import read_cubin
    argv = ["-arch=sm_89", *options.split(), "caller.ptx", "-o", "out.cubin"]
    theirs = oracle._run_cached("ptxas", argv, {"caller.ptx": CALLER.encode()}, "out.cubin")
    assert theirs.ok, theirs.stderr
    (tmp_path / "caller.ptx").write_text(CALLER)
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 0, capsys.readouterr().err
    ours = (tmp_path / "out.cubin").read_bytes()

    def kernels(cubin: bytes) -> list[str]:
        return [k.name for k in read_cubin(cubin).kernels if k.is_entry]
    assert kernels(ours) == kernels(theirs.output)


@pytest.mark.parametrize("value, refused", [("memcheck", True), ("threadsteer", False)])
def test_sanitize_memcheck_is_refused_not_ignored(value, refused, tmp_path, capsys, monkeypatch):
    """ptxas instruments every memory access under `--sanitize=memcheck` (many more
    instructions); we write no instrumentation, so the option is refused in one fatal line
    and nothing is written, where it used to give plain code; `threadsteer` leaves ptxas's
    code as without it and stays accepted."""
    plain = oracle._run_cached("ptxas", ["-arch=sm_89", "k.ptx"], {"k.ptx": GOOD.encode()}, "elf.o")
    theirs = oracle._run_cached("ptxas", ["-arch=sm_89", f"--sanitize={value}", "k.ptx"],
                                {"k.ptx": GOOD.encode()}, "elf.o")
    assert plain.ok and theirs.ok
    assert (len(theirs.output) > 2 * len(plain.output)) == refused
    rc, out, err = _ours(["-arch=sm_89", f"--sanitize={value}", "k.ptx", "-o", "k.cubin"], tmp_path, capsys,
                         monkeypatch)
    if refused:
        assert rc == 255 and not (tmp_path / "k.cubin").exists()
        assert err.splitlines() == ["ptx2sass fatal   : Value 'memcheck' of option 'sanitize' is not supported "
                                    "in this build of ptx2sass (no memcheck instrumentation)"]
    else:
        assert rc == 0 and (tmp_path / "k.cubin").exists() and err == ""
