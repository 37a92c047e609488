"""Lanes do not leave a loop whose body runs a full-warp op or a barrier.

Campaign 25, seed 36003711: a uniform loop held `@%p0 bra $L4_endif; @%p1 bra $L2_endloop;`
(a break under a per-thread branch) before a `wmma.mma.sync.aligned`, so lane 0 ran the wmma
alone: undefined in PTX, and the checker rightly flagged ours (a convergence hazard) while the
two cubins' private words differed. A break in a divergent context is not rendered there."""
import re

from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.program import render

BREAK = re.compile(r"^\s*@!?%p\d+ bra \$L\d+_endloop;")


def _loops(text: str):
    """(body lines) of each loop, innermost ones too."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^\$L\d+_loop:", line.strip())
        if not m:
            continue
        depth, body = 0, []
        for later in lines[i + 1:]:
            if re.match(r"^\$L\d+_loop:", later.strip()):
                depth += 1
            if re.match(r"^\$L\d+_endloop:", later.strip()):
                if depth == 0:
                    break
                depth -= 1
            body.append(later)
        yield body


def test_no_divergent_break_out_of_a_loop_with_a_wmma():
    text = render(make_program(36003711, Options(arch="sm_103"))).text
    assert "wmma.mma" in text
    for body in _loops(text):
        if any("wmma." in ln for ln in body):
            inside_divergent_if = False
            for ln in body:
                if re.match(r"^\s*@!?%p\d+ bra \$L\d+_(else|endif);", ln):
                    inside_divergent_if = True
                assert not (inside_divergent_if and BREAK.match(ln)), ln
