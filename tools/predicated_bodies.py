"""Where ptxas predicates a guarded branch body and where it branches around it, against ours
(opt/if_convert.py, `Target.predicated_body_limit`), over a grid of body shapes.

Each kernel has two guarded regions (`if (i < n)`, `if (i + 8 < n)`), each of `loads` loads,
a chain of `chain` dependent fmas and `stores` stores, then code after the join:

    python -m tools.predicated_bodies --arch sm_89 [--arch sm_90 ...]

prints per shape `P` (predicated) or `B` (branched) for ptxas and ours, and the shapes where
they differ."""
from __future__ import annotations

import argparse

# (loads, chain, stores): bodies either side of ptxas's 20 SASS instructions, and ones with
# many loads or many stores
SHAPES = ([(1, a, 1) for a in range(12, 17)] + [(2, a, 1) for a in range(10, 15)]
          + [(4, a, 1) for a in (6, 8, 10, 11, 12)] + [(8, a, 1) for a in range(4, 9)]
          + [(1, a, 2) for a in (8, 10, 11, 12)] + [(1, a, 4) for a in (4, 6, 8, 10)]
          + [(1, 2, 8), (1, 2, 12), (1, 2, 14), (4, 3, 8), (1, 24, 1), (2, 30, 2)])


def regions(arch: str, loads: int, chain: int, stores: int) -> str:
    """The kernel `k(pa, pb, n)`: a body of `loads + chain + stores + 2` instructions that
    become SASS ones (and two `cvta`s); region B reads and writes 32 KiB further on, and every
    thread writes its index at byte 61440 + 4 * tid of `pb` after both."""
    ptx_version = "8.8" if int(arch[3:].rstrip("af")) >= 100 else "8.0"
    lines = [f".version {ptx_version}\n.target {arch}\n.address_size 64",
             ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u32 pn)\n{",
             ".reg .pred %p<4>; .reg .b32 %r<8>; .reg .f32 %f<64>; .reg .b64 %rd<16>;",
             "ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u32 %r1, [pn];",
             "mov.u32 %r2, %tid.x; setp.ge.s32 %p1, %r2, %r1; add.s32 %r3, %r2, 8;",
             "setp.ge.s32 %p2, %r3, %r1; mul.wide.s32 %rd3, %r2, 4;"]
    for tag, pred, base in (("A", "%p1", 0), ("B", "%p2", 32768)):
        lines += [f"@{pred} bra $J{tag};", "cvta.to.global.u64 %rd4, %rd1; add.s64 %rd5, %rd4, %rd3;"]
        lines += [f"ld.global.f32 %f{k + 1}, [%rd5+{base + 1024 * k}];" for k in range(loads)]
        f = loads
        for step in range(chain):
            lines.append(f"fma.rn.f32 %f{f + 1}, %f{f}, %f{step % loads + 1}, 0f3F000000;")
            f += 1
        lines.append("cvta.to.global.u64 %rd6, %rd2; add.s64 %rd7, %rd6, %rd3;")
        lines += [f"st.global.f32 [%rd7+{base + 1024 * s}], %f{max(1, f - s)};" for s in range(stores)]
        lines.append(f"$J{tag}:")
    lines += ["cvta.to.global.u64 %rd8, %rd2; add.s64 %rd9, %rd8, %rd3; st.global.u32 [%rd9+61440], %r2;",
              "ret;\n}"]
    return "\n".join(lines) + "\n"


def branches(cubin: bytes) -> bool:
    """The code keeps a branch region (BSSY) rather than predicating the bodies."""
    from ptx2sass import oracle
    return any("BSSY" in line for line in oracle.nvdisasm(cubin, options=()).splitlines())


def main() -> None:
    from ptx2sass import codegen, oracle
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", default=None)
    args = ap.parse_args()
    for arch in args.arch or ["sm_89"]:
        differ = []
        for shape in SHAPES:
            ptx = regions(arch, *shape)
            theirs = branches(oracle.ptxas(ptx, arch).output)
            ours = branches(codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch,
                                                    filename="k.ptx")[0])
            print(f"{arch} l{shape[0]}_a{shape[1]}_s{shape[2]}: ptxas {'B' if theirs else 'P'}"
                  f" ours {'B' if ours else 'P'}")
            if theirs != ours:
                differ.append(shape)
        print(f"{arch}: {len(SHAPES)} shapes, {len(differ)} differ {differ}")


if __name__ == "__main__":
    main()
