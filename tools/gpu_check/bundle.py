"""The bundle `prepare` writes and `run` reads: one JSON manifest and one zip of blobs (cubins,
PTX, input and expected buffers, the emulator's outputs), each blob stored once under the
sha256 of its bytes. Standard library only: the GPU machine reads it without ptx2sass.

    .gpu_bundle/
      bundle.json      what to launch, how to compare, what the emulator said
      blobs.zip        blobs by key (deflated)
      wheels/          pure-Python wheels the GPU machine lacks (ply, pyelftools, tinygrad)
"""
from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from pathlib import Path

FORMAT = 1
MANIFEST = "bundle.json"
BLOBS = "blobs.zip"
WHEELS = "wheels"

# Scalar kernel parameters: PTX type → struct format (the CUDA driver takes each
# parameter's bytes; the emulator takes the same type names).
SCALAR_FORMATS = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q", "s8": "<b", "s16": "<h",
                  "s32": "<i", "s64": "<q", "f32": "<f", "f64": "<d", "b32": "<I", "b64": "<Q"}


def blob_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def scalar_bytes(type_: str, value) -> bytes:
    """A parameter's bytes; type "bytes": a by-value aggregate given as hex."""
    if type_ == "bytes":
        return bytes.fromhex(value)
    return struct.pack(SCALAR_FORMATS[type_], value)


class BundleWriter:
    """Collects blobs (deduplicated) and writes the bundle at `close(manifest)`."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._blobs: dict[str, bytes] = {}

    def add(self, data: bytes | None) -> str | None:
        if data is None:
            return None
        data = bytes(data)
        key = blob_key(data)
        self._blobs.setdefault(key, data)
        return key

    def close(self, manifest: dict) -> dict:
        """Write both files; returns {"blobs": count, "bytes": size on disk}."""
        manifest = {"format": FORMAT, **manifest}
        tmp = self.folder / (BLOBS + ".tmp")
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            for key in sorted(self._blobs):
                z.writestr(key, self._blobs[key])
        tmp.replace(self.folder / BLOBS)
        (self.folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
        size = sum(p.stat().st_size for p in (self.folder / BLOBS, self.folder / MANIFEST))
        return {"blobs": len(self._blobs), "bytes": size}


class Bundle:
    """A prepared bundle, read lazily (blobs come out of the zip on demand)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        path = self.folder / MANIFEST
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no bundle here (run `python -m tools.gpu_check prepare` first)")
        self.manifest = json.loads(path.read_text())
        if self.manifest.get("format") != FORMAT:
            raise ValueError(f"{path}: bundle format {self.manifest.get('format')}, this tool reads {FORMAT}")
        self._zip = zipfile.ZipFile(self.folder / BLOBS)

    def blob(self, key: str | None) -> bytes | None:
        if key is None:
            return None
        return self._zip.read(key)

    @property
    def arch(self) -> str:
        return self.manifest["arch"]

    @property
    def launches(self) -> list[dict]:
        return self.manifest.get("launches", [])

    @property
    def calibration(self) -> list[dict]:
        return self.manifest.get("calibration", [])

    def wheels(self) -> list[Path]:
        folder = self.folder / WHEELS
        return sorted(folder.glob("*.whl")) if folder.is_dir() else []
