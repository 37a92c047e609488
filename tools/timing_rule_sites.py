"""Count where ptxas's cubins meet the four timing rules the H200 taught us on sm_90
(hopper.json: late_source_reads, late_fixed_reads, issue_interval, after_barrier), per arch,
and how ptxas kept each rule there.

    .venv/bin/python -m tools.timing_rule_sites --arch sm_89 [--corpus zluda --corpus cuda
        --corpus tinygrad --corpus triton --corpus llvm] [--limit N]

The sites are defined by the sm_90 table's opcode sets (whatever the audited arch's table
says), so the counts show whether ptxas's code for another arch could break a rule at all.
A *site* is, on the executed path of a warp:
- late_source_reads: the first instruction that overwrites a register a load (or an indexed
  LDC) read as its address, after the load issued; classified by how ptxas kept the address
  intact: a wait on the load's read scoreboard, a wait on its result, or neither (the next
  writer is a later load of the same in-order unit, or waits on a later load's scoreboard);
- late_fixed_reads: the first fixed-latency instruction that overwrites an HMMA/IMMA source;
- issue_interval: an FP64 instruction after an earlier one (distances of those that do not
  read the earlier one's result);
- after_barrier: the first memory instruction after a BAR.
Distances are in ptxas's stall counts (each instruction `max(stall, 1)`), a lower bound of
the issue distance. *Exceptions* are the emulator's hazards of the rule with the arch's
own table (emu/hazards.py): 0 means ptxas obeys the rule as the table states it.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass.emu.hazards import TimingModel  # noqa: E402
from ptx2sass.sched.latency import model_for  # noqa: E402
from tools.latency_audit import launches  # noqa: E402

NO_SB = 7
RULES = ("late_source_reads", "late_fixed_reads", "issue_interval", "after_barrier")
# the emulator's hazard messages per rule (emu/hazards.py)
MESSAGES = {"late_source_reads": ("no read scoreboard", "may still read"),
            "late_fixed_reads": ("late_fixed_reads",),
            "issue_interval": ("of its unit; it takes one every",),
            "after_barrier": ("memory instructions need",)}


class Sites:
    """Totals over launches: site counts, distance histograms, exceptions, per rule."""

    def __init__(self):
        self.sites = Counter()
        self.kind = defaultdict(Counter)        # rule → how ptxas kept it → count
        self.distance = defaultdict(Counter)    # rule → stall distance (capped) → count
        self.exceptions = Counter()
        self.launches = 0
        self.skipped = 0


class _Warp:
    __slots__ = ("s", "addr", "mma", "fp64", "bar")

    def __init__(self):
        self.s = 0
        self.addr: dict = {}      # reg → (s, rd_sb, how it was kept, wr_sb) of the last load that read it as an address
        self.mma: dict = {}       # reg → s of the MMA that read it
        self.fp64 = None          # (s, registers written) of the last FP64 instruction
        self.bar = None           # s of a BAR no memory instruction followed yet


def sites_model(sites: Sites):
    h90 = model_for("sm_90")
    late_loads, mma_ops = h90.LATE_SOURCE_READS, set(h90.LATE_FIXED_READS)
    fp64_ops, barrier_ops = set(h90.ISSUE_INTERVAL), h90.AFTER_BARRIER[0]

    class SitesModel(TimingModel):
        def new_clock(self):
            clock = super().new_clock()
            clock.rule_sites = _Warp()
            return clock

        def end(self, clock, step, lanes, reads, writes) -> None:
            if not self.serialised:
                self._count(clock.rule_sites, step, reads, writes)
            super().end(clock, step, lanes, reads, writes)

        def _count(self, w, step, reads, writes):
            ins, s = step.ins, w.s
            op, ctl = ins.opcode, ins.control
            variable = self.lat.is_variable(op)
            if ctl.wait:
                for reg, a in w.addr.items():
                    if a[2] is None:
                        if a[1] != NO_SB and ctl.wait >> a[1] & 1:
                            w.addr[reg] = (a[0], a[1], "waited on its read scoreboard", a[3])
                        elif a[3] != NO_SB and ctl.wait >> a[3] & 1:
                            w.addr[reg] = (a[0], a[1], "waited on its result", a[3])
            for reg in dict.fromkeys(writes):
                a = w.addr.pop(reg, None)
                if a is not None:
                    sites.sites["late_source_reads"] += 1
                    sites.kind["late_source_reads"][a[2] or ("read scoreboard not waited" if a[1] != NO_SB
                                                             else "no wait (unit order)")] += 1
                    sites.distance["late_source_reads"][min(s - a[0], 16)] += 1
                m = w.mma.pop(reg, None)
                if m is not None:
                    if variable or op in mma_ops:
                        sites.kind["late_fixed_reads"]["variable-latency or MMA writer"] += 1
                    else:
                        sites.sites["late_fixed_reads"] += 1
                        sites.distance["late_fixed_reads"][min(s - m, 16)] += 1
            if op in fp64_ops:
                if w.fp64 is not None:
                    sites.sites["issue_interval"] += 1
                    dependent = bool(w.fp64[1] & set(reads))
                    sites.kind["issue_interval"]["reads the previous one's result" if dependent
                                                 else "independent"] += 1
                    if not dependent:        # the interval itself, not a result latency
                        sites.distance["issue_interval"][min(s - w.fp64[0], 8)] += 1
                w.fp64 = (s, set(writes))
            if op in barrier_ops and w.bar is not None:
                sites.sites["after_barrier"] += 1
                sites.distance["after_barrier"][min(s - w.bar, 16)] += 1
                w.bar = None
            if op == "BAR":
                w.bar = s
            if op in late_loads:
                for reg in reads:
                    if reg[0] == "R":
                        w.addr[reg] = (s, ctl.rd_sb, None, ctl.wr_sb)
            if op in mma_ops:
                for reg in reads:
                    if reg[0] == "R":
                        w.mma[reg] = s
            w.s += max(ctl.stall, 1)

    return SitesModel


def _corpus_launches(corpus: str, limit: int | None, arch: str):
    """(name, runner) for the Triton or LLVM corpus (tests/triton_corpus.py, llvm_corpus.py),
    ptxas compiling for `arch` (an sm_89 `.target` rewritten to an older arch, as
    tools.corpus_words.compile_for does)."""
    import functools
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import llvm_corpus
    import triton_corpus
    from ptx2sass.emu.launch import run as emu_run
    from tools.corpus_words import compile_for
    from tools.latency_audit import _spread
    mod = triton_corpus if corpus == "triton" else llvm_corpus
    folder = mod.TRITON_DIR if corpus == "triton" else mod.LLVM_DIR
    entries = [e for e in mod.manifest() if "ptxas_error" not in e]
    for e in _spread(entries, limit):
        def runner(timing, decoder_for, e=e):
            cubin = compile_for((folder / e["file"]).read_bytes(), arch, e["file"])[0]
            if cubin is None:
                return None
            real = mod.run
            mod.run = functools.partial(emu_run, timing=timing)
            try:
                res, _ = mod.launch(e, cubin, decoder=decoder_for(cubin))
            finally:
                mod.run = real
            return type("Outcome", (), {"result": res})
        yield f"{corpus}/{e['file']}", runner


def run(arch: str, corpora, limit: int | None, quiet: bool = False) -> Sites:
    from ptx2sass.emu.loader import codec_decoder
    from tools.emu_testing import cubin_listing_decoder
    sites = Sites()
    model = sites_model(sites)

    def decoder_for(cubin):
        listing = None

        def decode(text, a, kernel):
            nonlocal listing
            try:
                return codec_decoder(text, a, kernel)
            except Exception:
                listing = listing or cubin_listing_decoder(cubin)
                return listing(text, a, kernel)
        return decode

    for corpus in corpora:
        for name, runner in (_corpus_launches(corpus, limit, arch) if corpus in ("triton", "llvm")
                             else launches(corpus, limit, arch=arch)):
            try:
                out = runner(model, decoder_for)
            except Exception as e:        # a cubin the emulator cannot run: counted, not fatal
                out, why = None, e
            res = getattr(out, "result", None)
            if res is None:
                sites.skipped += 1
                continue
            sites.launches += 1
            for h in res.hazards:
                for rule, keys in MESSAGES.items():
                    if any(k in str(h) for k in keys):
                        sites.exceptions[rule] += 1
                        if not quiet:
                            print(f"  {name}: {h}", file=sys.stderr)
    return sites


def report(arch: str, sites: Sites, out=sys.stdout) -> None:
    print(f"{arch}: {sites.launches} launches ({sites.skipped} skipped: ptxas refuses or the "
          f"emulator cannot run them)", file=out)
    for rule in RULES:
        d = sites.distance[rule]
        hist = " ".join(f"{k}:{v}" for k, v in sorted(d.items()))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(sites.kind[rule].items()))
        print(f"  {rule:18s} sites {sites.sites[rule]:6d}  exceptions {sites.exceptions[rule]:3d}  "
              f"min distance {min(d) if d else '-'}  [{hist}]" + (f"  ({kinds})" if kinds else ""), file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", action="append", help="ptxas compiles for it (repeatable; default sm_89)")
    ap.add_argument("--corpus", action="append", choices=("zluda", "cuda", "tinygrad", "triton", "llvm"))
    ap.add_argument("--limit", type=int, default=None, help="at most N launches per corpus (even spread)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    for arch in args.arch or ["sm_89"]:
        report(arch, run(arch, args.corpus or ["zluda", "cuda", "tinygrad", "triton", "llvm"], args.limit, args.quiet))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
