"""Do the encoding tables generalise? Re-assemble ptxas's cubins of inputs the probe never
saw (the real-world corpus, the fuzzer's programs) and count, per arch, the words that
encode bit-exactly from nvdisasm's text and decode back to the same instruction.

The tables were probed from the zluda/tinygrad/cuda/triton/llvm corpora and the seed PTX
under tools/isa_seeds/; neither `tests/corpus/realworld` nor any fuzzer program was a
seed, so every figure here is on inputs outside the probe's sources.

    py -m tools.isa_generalise --arch sm_89 --fuzz-seeds 0:100
    py -m tools.isa_generalise --arch all --held-back-only     # the CI test's inputs
    py -m tools.isa_generalise --arch sm_90 --fuzz-seeds 0:200 --no-realworld \
        --seed-words-out tools/isa_seeds/fuzz_hopper.words     # then isa_probe --seed-words

`--seed-words-out` writes one failing word per failing form (with nvdisasm's text as its
comment) in `isa_probe --seed-words`'s format: the words to probe the table from. Tune on one
range of inputs and measure on another (the CI test's seeds 900000.. are never a source).

The per-word check is `tools.isa_probe.check_words` (words whose differing bits the text
cannot determine, a hidden descriptor register or a NaN payload, are counted apart).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tools.corpora import REPO, held_back

ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_120")
REALWORLD = REPO / "tests" / "corpus" / "realworld"
_ARCH_SUFFIX = re.compile(r"\.(sm_\d+)\.ptx$")


def realworld_files(arch: str, held_back_only: bool = False,
                    tuning_only: bool = False) -> list[tuple[str, bytes]]:
    """(name, PTX) of each real-world module for `arch`: the file written for that arch, or
    for an arch the corpus was not built for (sm_75, sm_120) the sm_89 file (ptxas's
    `.target` is rewritten by `compile_for`). The held-back split is by the sm_89 file's
    content, so one module is in or out for every arch. `tuning_only` leaves the held-back
    modules out (for harvesting seed words without touching them)."""
    by_module: dict[str, dict[str, Path]] = {}
    for p in sorted(REALWORLD.rglob("*.ptx")):
        m = _ARCH_SUFFIX.search(p.name)
        if m:
            key = str(p.relative_to(REALWORLD))[: -len(m.group(0))]
            by_module.setdefault(key, {})[m.group(1)] = p
    out = []
    for key, files in sorted(by_module.items()):
        anchor = files.get("sm_89") or next(iter(files.values()))
        if held_back_only and not held_back(anchor) or tuning_only and held_back(anchor):
            continue
        p = files.get(arch, anchor)
        out.append((f"realworld/{p.relative_to(REALWORLD).as_posix()}", p.read_bytes()))
    return out


def fuzz_files(seeds: range) -> list[tuple[str, bytes]]:
    """(name, PTX) of the fuzzer's programs for `seeds` (default features), as `ptx2sass.fuzz
    run` generates them."""
    from ptx2sass.fuzz.campaign import Options, make_program
    from ptx2sass.fuzz.program import render
    out = []
    for seed in seeds:
        try:
            text = render(make_program(seed, Options())).text
        except Exception as e:    # a generator failure is the fuzzer's bug, not this check's
            print(f"fuzz seed {seed}: generator failed: {e}", file=sys.stderr)
            continue
        out.append((f"fuzz/seed{seed}.ptx", text.encode()))
    return out


def check_arch(arch: str, files: list[tuple[str, bytes]]) -> dict:
    from tools.corpus_words import collect
    from tools.isa_probe import check_words
    words = collect(arch, (), files)
    return check_words(words, arch)


def summary_line(arch: str, st: dict) -> str:
    n = st["words"] or 1
    det = st["words"] - st["undetermined"]
    det_ok = st["encode_ok"]
    return (f"{arch}: {st['words']} distinct words; encode bit-exact {st['encode_ok']} "
            f"({100 * st['encode_ok'] / n:.2f}%), of the {det} whose bits the text determines "
            f"{det_ok}/{det} ({100 * det_ok / max(det, 1):.2f}%); decode {st['decode_ok']} "
            f"({100 * st['decode_ok'] / n:.2f}%); decode->encode {st['decode_encode_ok']}; "
            f"undetermined {st['undetermined_by']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", nargs="*", default=["sm_89"], help="archs, or 'all'")
    ap.add_argument("--fuzz-seeds", default="0:100", help="START:STOP of fuzzer seeds ('' for none)")
    ap.add_argument("--no-realworld", action="store_true")
    ap.add_argument("--held-back-only", action="store_true",
                    help="only the real-world corpus's held-back modules")
    ap.add_argument("--tuning-only", action="store_true",
                    help="only the real-world corpus's tuning modules (to harvest seed words)")
    ap.add_argument("--examples", type=int, default=2, help="examples per failing form")
    ap.add_argument("--seed-words-out", help="write one failing word per failing form here "
                                             "(isa_probe --seed-words format; one arch)")
    args = ap.parse_args(argv)
    archs = ARCHS if args.arch == ["all"] else tuple(args.arch)
    seeds = range(*map(int, args.fuzz_seeds.split(":"))) if args.fuzz_seeds else range(0)
    fuzz = fuzz_files(seeds)
    bad = 0
    for arch in archs:
        files = ([] if args.no_realworld else realworld_files(arch, args.held_back_only,
                                                                      args.tuning_only)) + fuzz
        st = check_arch(arch, files)
        print(summary_line(arch, st), flush=True)
        for key, examples in sorted(st["determined_failures"].items()):
            print(f"  FAIL {key}  x{len(examples)}")
            for e in examples[: args.examples]:
                print(f"      {e}")
        bad += st["words"] - st["undetermined"] - st["encode_ok"] + st["words"] - st["decode_ok"]
        if args.seed_words_out:
            write_seed_words(Path(args.seed_words_out), arch, args.fuzz_seeds, st)
    return 1 if bad else 0


_EXAMPLE = re.compile(r"^(.*?)  \[([0-9a-f]{32})\]")


def write_seed_words(path: Path, arch: str, seeds: str, st: dict) -> None:
    """The first failing word of each failing form, as probe seeds."""
    lines = [f"# Words ptxas 13.5 writes for {arch} that the table could not read back: the fuzzer's",
             f"# programs of seeds {seeds} (tools/isa_generalise.py --seed-words-out); one per form."]
    for key, examples in sorted(st["determined_failures"].items()):
        m = _EXAMPLE.match(examples[0])
        if m:
            lines.append(f"0x{m.group(2)}  # {m.group(1).strip()}")
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 2} seed words to {path}")


if __name__ == "__main__":
    raise SystemExit(main())
