"""The README's main job: compile a PTX file with ptx2sass, show its SASS and resource use,
and the pinned ptxas's beside it for comparison.

Usage: python -m tools.example FILE.ptx [-arch sm_89]

Our SASS is printed by our own decoder (`encoder.codec`) and printer (`encoder.sass_text`),
so what is shown does not depend on NVIDIA's tools; ptxas and cuobjdump are used only for
the reference half.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from ptx2sass import oracle
from ptx2sass.encoder import codec, sass_text
from ptx2sass.encoder.cubin import read_cubin


def our_listing(cubin: bytes, arch: str) -> str:
    lines = []
    for kernel in read_cubin(cubin).kernels:
        lines.append(f"        Function : {kernel.name}")
        text = kernel.text
        for pc in range(0, len(text), 16):
            word = int.from_bytes(text[pc:pc + 16], "little")
            try:
                shown = sass_text.format_instruction(codec.decode(word, arch, pc))
            except Exception as e:  # show the word rather than stop the listing
                shown = f"<not decodable: {e}>"
            lines.append(f"        /*{pc:04x}*/  {shown} ;")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ptx")
    ap.add_argument("-arch", "--gpu-name", dest="arch", default="sm_89")
    args = ap.parse_args(argv)
    path = Path(args.ptx)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ours.cubin"
        print(f"$ ptx2sass -v -arch={args.arch} {path} -o {out.name}")
        run = subprocess.run([sys.executable, "-m", "ptx2sass", "-v", f"-arch={args.arch}",
                              str(path), "-o", str(out)], text=True, capture_output=True)
        sys.stdout.write(run.stdout + run.stderr)
        if run.returncode != 0:
            return run.returncode
        print(our_listing(out.read_bytes(), args.arch))
    ref = oracle.ptxas(path.read_bytes(), args.arch, ("-v",), name=path.name)
    print(f"\n$ ptxas -v -arch={args.arch} {path}   (reference, pinned {oracle.tool_version('ptxas')})")
    sys.stdout.write(ref.stdout + ref.stderr)
    if ref.ok:
        sass = oracle.cuobjdump_sass(ref.output)
        print("\n".join(ln for ln in sass.splitlines() if "/*0" in ln and "NOP" not in ln or "Function" in ln))
    return 0


if __name__ == "__main__":
    sys.exit(main())
