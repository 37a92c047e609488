"""ldmatrix/stmatrix refusals: ours vs ptxas 13.5's diagnostics (every line, in order) on
combinations of opcode x shape x count x .trans x space x element format x vector size, drawn
by seed. Seed 1 is what frontend/matrix_checks.py was tuned on (with PROBED, the hand-written
probe lines); any other seed is held out (its sample excludes seed 1's lines).

    python -m tools.matrix_b8_sweep --seed 2 --count 150 100a 100 120a 90a
    python -m tools.matrix_b8_sweep --inventory     # the inventory's 45 arch-specific forms
"""
import argparse
import itertools
import random
import re

from ptx2sass import CompileError, codegen, oracle
from tools.inventory_kernels import acceptance_module

MATRIX_OPS = re.compile(r"\b(?:LDSM|STSM)(?:\.\w+)*")
PROBED = {
    'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b16 {%r1, %r2}, [%rd30];',
    'ldmatrix.sync.aligned.m8n16.x1.shared.b8 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m8n16.x1.shared.b16 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16 {%r1, %r2}, [%rd30];',
    'ldmatrix.sync.aligned.m8n8.x1.shared.b8x16.b6x16_p32 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 {%r1, %r2}, [%rd30];',
    'ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b4x16_p64 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m16n8.x1.trans.shared.b8 {%r1}, [%rd30];',
    'stmatrix.sync.aligned.m16n8.x1.trans.shared.b16 [%rd30], {%r1};',
    'stmatrix.sync.aligned.m16n16.x1.trans.shared.b8 [%rd30], {%r1, %r2};',
    'stmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 [%rd30], {%r1};',
    'stmatrix.sync.aligned.m16n8.x2.trans.shared.b8 [%rd30], {%r1};',
    'ldmatrix.sync.aligned.m16n16.x1.trans.global.b8 {%r1, %r2}, [%rd30];',
    'ldmatrix.sync.aligned.m8n16.x1.shared.b6x16_p32 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m8n16.x1.shared.b6x16_p32.b8x16 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8.b6x16_p32 {%r1, %r2}, [%rd30];',
    'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [%rd30];',
    'ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r1}, [%rd30];',
    'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16.b6x16_p32 {%r1, %r2}, [%rd30];',
    'stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%rd30], {%r1};',
    'ldmatrix.sync.aligned.m16n16.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%rd30];',
    'ldmatrix.sync.aligned.m8n8.x1.trans.shared.b8x16.b6x16_p32 {%r1}, [%rd30];',
}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--inventory", action="store_true",
                    help="ptxas's verdict and ours on the inventory's arch-specific ldmatrix/"
                         "stmatrix forms, on the a/f targets (each at its first PTX version)")
    ap.add_argument("targets", nargs="*", help="100a, 100, 120a, 90a, ...")
    args = ap.parse_args(argv)
    if args.inventory:
        return inventory_check()
    seed, k, targets = args.seed, args.count, args.targets
    tuned = PROBED
    lines = []
    for op, shape, n, tr, sp, el, wrong in itertools.product(
            ("ldmatrix", "stmatrix"), ("m8n8", "m16n16", "m8n16", "m16n8"), (1, 2, 4), ("", ".trans"),
            ("", ".shared"), (".b16", ".b8", ".b8x16.b6x16_p32", ".b8x16.b4x16_p64", ".b8x16", ".b4x16_p64"), (0, 1)):
        size = n * (2 if shape == "m16n16" and op == "ldmatrix" else 1) + wrong
        regs = "{" + ", ".join(f"%r{i+1}" for i in range(size)) + "}"
        ins = f"{op}.sync.aligned.{shape}.x{n}{tr}{sp}{el}"
        lines.append(f"{ins} {regs}, [%rd30];" if op == "ldmatrix" else f"{ins} [%rd30], {regs};")
    lines = [l for l in lines if l not in tuned]
    if seed != 1:       # held out: none of seed 1's (tuned-on) lines
        first = list(lines); random.Random(1).shuffle(first)
        lines = [l for l in lines if l not in set(first[:k])]
    random.Random(seed).shuffle(lines)
    lines = lines[:k]
    for target in targets:
        same = diff = acc = 0
        ver = (9, 0) if target.startswith("110") else (8, 8)
        for l in lines:
            text, _ = acceptance_module([l], target, ver)
            r = oracle.ptxas(text, f"sm_{target}")
            theirs = [x.split("error   : ")[-1] for x in r.stderr.strip().splitlines() if "error" in x and "fatal" not in x]
            try:
                codegen.compile_ptx(text, f"sm_{target}", "k.ptx"); ours = []
            except CompileError as e:
                ours = [d.message for d in e.diagnostics if d.severity == "error"]
            except Exception as e:
                ours = [f"CRASH {type(e).__name__}"]
            acc += not theirs
            if ours == theirs: same += 1
            else:
                diff += 1; print("DIFF", target, l); print("   theirs:", theirs); print("   ours:  ", ours)
        print(f"sm_{target}: {len(lines)} lines (seed {seed}), ptxas accepts {acc}; ours = ptxas's diagnostics {same}, differ {diff}")


def inventory_check():
    from ptx2sass.frontend import inventory
    from tools.inventory_check import ptxas_verdicts
    from tools.inventory_kernels import instruction_text
    forms = [f for f in inventory.forms() if f.opcode in ("ldmatrix", "stmatrix") and f.arch_specific]
    for target, ver in (("100a", (8, 6)), ("120a", (8, 7)), ("100f", (8, 8)), ("103a", (8, 8)),
                        ("110a", (9, 0)), ("121a", (8, 8)), ("100", (8, 8)), ("90a", (8, 6))):
        lines = [instruction_text(f) for f in forms]
        verdicts = ptxas_verdicts([(line, False) for line in lines], target, ver)
        ours = same = 0
        for line, (ok, _) in zip(lines, verdicts):
            # (each result stored: ptxas drops an ldmatrix whose results are dead)
            uses = [f"st.global.u32 [%rd31+{4 * k}], %r{k + 1};" for k in range(4)
                    if line.startswith("ldmatrix") and f"%r{k + 1}" in line]
            text, _ = acceptance_module([line] + uses, target, ver)
            try:
                cubin = codegen.compile_ptx(text, f"sm_{target}", "k.ptx")
                ours += 1
            except CompileError:
                continue
            if ok:      # the same LDSM/STSM forms as ptxas's (nvdisasm's text)
                theirs = oracle.ptxas(text, f"sm_{target}").output
                same += MATRIX_OPS.findall(oracle.nvdisasm(cubin)) == \
                    MATRIX_OPS.findall(oracle.nvdisasm(theirs))
        print(f"sm_{target} PTX {ver[0]}.{ver[1]}: ptxas accepts {sum(ok for ok, _ in verdicts)}/"
              f"{len(lines)}; ours compiles {ours}/{len(lines)}, the same LDSM/STSM forms {same}")


if __name__ == "__main__":
    main()
