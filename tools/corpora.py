"""Where the PTX corpora live, so every tool and test enumerates them the same way.

`zluda` is read in place from the shared folder beside the clone (CI puts `../shared` there;
`PTX2SASS_SHARED` overrides); the others are committed under `tests/corpus/`.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    return Path(os.environ.get("PTX2SASS_SHARED", REPO.parent / "shared"))


def corpus_dirs() -> dict[str, Path]:
    return {
        "zluda": shared_dir() / "corpus" / "zluda",
        "tinygrad": REPO / "tests" / "corpus" / "tinygrad",
        "cuda": REPO / "tests" / "corpus" / "cuda",
        "triton": REPO / "tests" / "corpus" / "triton",
        "llvm": REPO / "tests" / "corpus" / "llvm",
    }


def all_corpus_dirs() -> dict[str, Path]:
    """The test corpora and those kept for benchmarks only (`tinygrad_large`: bigger
    kernels for compile-speed work, tools/harvest_tinygrad.py --set large), which no test
    sweeps."""
    return {**corpus_dirs(), "tinygrad_large": REPO / "tests" / "corpus" / "tinygrad_large"}


def held_back(path: Path) -> bool:
    """The fixed quarter of a corpus kept out of tuning: by the SHA-256 of the file's
    content, so the split does not move when files are added or renamed."""
    import hashlib
    return hashlib.sha256(Path(path).read_bytes()).digest()[0] % 4 == 0


def ptx_files(corpus: str) -> list[Path]:
    """Every PTX file of a corpus, sorted, including sub-folders (zluda's compile_only/ …)."""
    root = all_corpus_dirs()[corpus]
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.ptx") if p.is_file())


_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)")


def entry_names(ptx_text: str) -> list[str]:
    """Kernel entry names in declaration order (a light scan, not the frontend's parser)."""
    return _ENTRY.findall(ptx_text)
