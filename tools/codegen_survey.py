"""Which corpus files the code generator compiles, and why the others are refused.

    python -m tools.codegen_survey [--arch sm_90] [zluda] [tinygrad] [cuda] [triton] [llvm]

Compiles every PTX file of each named corpus for the arch (default sm_89) (compile only, nothing is run) and
prints the count compiled and a histogram of the CompileError messages (kernel and variable
names folded), most common first. Files ptxas rejects are counted with the rest: their
message is the frontend's.
"""
from __future__ import annotations

import collections
import re
import sys

from ptx2sass import CompileError, codegen
from tools.corpora import ptx_files


def _folded(message: str) -> str:
    message = re.sub(r"(kernel|function) `?[\w$]+`?: ", "", message)
    return re.sub(r"variable `[^`]*`", "variable X", message)


def survey(corpus: str, arch: str = "sm_89") -> tuple[int, int, collections.Counter]:
    reasons: collections.Counter = collections.Counter()
    files = ptx_files(corpus)
    compiled = 0
    for path in files:
        try:
            codegen.generate_module(codegen.lower_ptx(path.read_text(), arch, path.name), arch,
                                    filename=path.name)
            compiled += 1
        except CompileError as e:
            reasons[_folded(e.message)] += 1
    return compiled, len(files), reasons


def main(argv: list[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    arch = "sm_89"
    if "--arch" in args:
        at = args.index("--arch")
        arch = args[at + 1]
        del args[at:at + 2]
    for corpus in args or ["zluda", "tinygrad", "cuda"]:
        compiled, total, reasons = survey(corpus, arch)
        print(f"{corpus}: {compiled}/{total} files compiled")
        for message, n in reasons.most_common(25):
            print(f"  {n:4d}  {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
