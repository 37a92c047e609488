"""`ptx2sass-emu CUBIN LAUNCH.json [--out-dir DIR] [--stats] [--no-hazard-check]`.

Runs one kernel launch described by LAUNCH.json (see docs in ../shared/DESIGN.md), writes
every buffer to DIR/<name>.bin, and exits 0; on any fault or hazard prints one line on
stderr naming kernel, offset and reason, and exits 1 (2 for bad usage or input files).

Textures and surfaces (emu.textures): `"textures": {NAME: {"kind": "texture"|"surface",
"geometry": "2d", "dtype": "float32", "shape": [H, W, C], "file": "t.bin" (else zeros),
"filter", "address", "normalized", "read_mode", "descriptor": {"num_samples": 4},
"bind": "tex0"}}` makes an object, bound to the module `.texref`/`.surfref` variable `bind`
if given; a parameter `{"texture": NAME}` passes its bindless handle; "descriptor" sets
txq/suq header fields other than the dimensions (emu.textures.descriptor_fields gives the
others). Surfaces are written back to DIR/<NAME>.bin.

Thread-block clusters (sm_90+): `"cluster": [x, y, z]` launches the grid as clusters of that
shape (emu.launch.run's `cluster`); without it a kernel declaring `.reqnctapercluster` runs
with its shape, an `.explicitcluster` one as 1x1x1 clusters, any other without clusters.

The stack: `"stack_bytes": N` is the per-thread stack limit the program sets with
`cudaDeviceSetLimit(cudaLimitStackSize, N)` (emu.launch.run's `stack_bytes`; default 1024,
the driver's): recursive code, whose stack ptxas cannot bound, traps or runs out of local
memory past it, as on the GPU."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .convergence import RECONVERGE_MODES
from .errors import EmuFault
from .launch import DEFAULT_BUDGET, DEFAULT_STACK_BYTES, SCALAR_FORMATS, Param, run_buffers
from .loader import load_program


class LaunchFileError(ValueError):
    pass


def _parse_launch(path: Path) -> dict:
    try:
        spec = json.loads(path.read_text())
    except OSError as e:
        raise LaunchFileError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise LaunchFileError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(spec, dict):
        raise LaunchFileError(f"{path}: expected a JSON object")
    if "stack_bytes" in spec and not (isinstance(spec["stack_bytes"], int) and spec["stack_bytes"] >= 0):
        raise LaunchFileError(f"{path}: 'stack_bytes' must be a non-negative integer")
    for key in ("grid", "block") + (("cluster",) if "cluster" in spec else ()):
        v = spec.get(key, [1, 1, 1])
        if not (isinstance(v, list) and 1 <= len(v) <= 3 and all(isinstance(x, int) and x > 0 for x in v)):
            raise LaunchFileError(f"{path}: '{key}' must be a list of 1-3 positive integers")
    return spec


def _buffers(spec: dict, base: Path) -> dict[str, tuple[int, bytes]]:
    out = {}
    for name, b in (spec.get("buffers") or {}).items():
        if not isinstance(b, dict):
            raise LaunchFileError(f"buffer {name!r}: expected an object")
        if "file" in b:
            try:
                data = (base / b["file"]).read_bytes()
            except OSError as e:
                raise LaunchFileError(f"buffer {name!r}: cannot read {b['file']}: {e.strerror}") from None
            size = int(b.get("size", len(data)))
            out[name] = (size, data)
        elif "size" in b:
            fill = int(b.get("fill", 0))
            if not 0 <= fill <= 255:
                raise LaunchFileError(f"buffer {name!r}: fill must be a byte value 0-255")
            out[name] = (int(b["size"]), bytes([fill]) * int(b["size"]))
        else:
            raise LaunchFileError(f"buffer {name!r}: give 'size' (with optional 'fill') or 'file'")
    return out


def _objects(spec: dict, base: Path) -> dict:
    """NAME -> Texture/Surface of the launch file's "textures"."""
    import numpy as np
    from .textures import Surface, Texture
    out = {}
    for name, d in (spec.get("textures") or {}).items():
        try:
            dtype, shape = np.dtype(d.get("dtype", "float32")), tuple(int(x) for x in d["shape"])
            data = np.zeros(shape, dtype)
            if "file" in d:
                raw = (base / d["file"]).read_bytes()
                data = np.frombuffer(raw[:data.nbytes].ljust(data.nbytes, b"\0"), dtype).reshape(shape).copy()
            opts = {k: d[k] for k in ("filter", "normalized", "read_mode", "descriptor") if k in d}
            if "address" in d:
                opts["address"] = tuple(d["address"]) if isinstance(d["address"], list) else d["address"]
            geo = d.get("geometry", "2d")
            out[name] = (Surface(data, geo, descriptor=d.get("descriptor", {})) if d.get("kind") == "surface"
                         else Texture(data, geo, **opts))
        except (KeyError, TypeError, ValueError, OSError) as e:
            raise LaunchFileError(f"texture {name!r}: {e}") from None
    return out


def _params(spec: dict, buffers: dict, objects: dict | None = None) -> list[Param]:
    from .textures import KIND_BIT, Surface
    params = []
    order = list(objects or {})
    for i, p in enumerate(spec.get("params") or []):
        if isinstance(p, dict) and "texture" in p:
            if p["texture"] not in order:
                raise LaunchFileError(f"param {i}: unknown texture {p['texture']!r}")
            obj = objects[p["texture"]]
            kind = "surface" if isinstance(obj, Surface) else "texture"
            params.append(Param(type="u64", value=KIND_BIT[kind] | (order.index(p["texture"]) + 1)))
        elif isinstance(p, dict) and "buffer" in p:
            if p["buffer"] not in buffers:
                raise LaunchFileError(f"param {i}: unknown buffer {p['buffer']!r}")
            params.append(Param(buffer=p["buffer"]))
        elif isinstance(p, dict) and "type" in p and "value" in p:
            if p["type"] not in SCALAR_FORMATS:
                raise LaunchFileError(f"param {i}: unknown type {p['type']!r} "
                                      f"(known: {', '.join(sorted(SCALAR_FORMATS))})")
            params.append(Param(type=p["type"], value=p["value"]))
        else:
            raise LaunchFileError(f"param {i}: expected {{\"buffer\": name}} or {{\"type\": t, \"value\": v}}")
    return params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ptx2sass-emu", description="Run a cubin kernel on the SASS emulator.")
    ap.add_argument("cubin", type=Path)
    ap.add_argument("launch", type=Path, metavar="LAUNCH.json")
    ap.add_argument("--out-dir", type=Path, default=Path("."))
    ap.add_argument("--stats", action="store_true", help="print a JSON line of instructions/cycles/hazards")
    ap.add_argument("--no-hazard-check", action="store_true")
    ap.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="warp-instruction budget")
    ap.add_argument("--reconverge", choices=RECONVERGE_MODES, default="optimistic",
                    help="explicit: diverged lanes meet only at BSYNC/WARPSYNC/BAR, and warp "
                         "collectives run apart are reported as convergence hazards")
    ap.add_argument("--sm-model", action="store_true",
                    help="with --stats: also the SM-level model's cycles on the cubin arch's GPU "
                         "(sm_cycles, gpu, resident_warps; emu.timing)")
    args = ap.parse_args(argv)
    try:
        spec = _parse_launch(args.launch)
        buffers = _buffers(spec, args.launch.parent)
        objects = _objects(spec, args.launch.parent)
        params = _params(spec, buffers, objects)
        try:
            cubin = args.cubin.read_bytes()
        except OSError as e:
            raise LaunchFileError(f"cannot read {args.cubin}: {e.strerror}") from None
    except LaunchFileError as e:
        print(f"ptx2sass-emu: error: {e}", file=sys.stderr)
        return 2
    kernel = spec.get("kernel")
    try:
        program = load_program(cubin, kernel)
        result = run_buffers(program, spec.get("grid", [1]), spec.get("block", [1]), params, buffers,
                             dynamic_shared_bytes=int(spec.get("dynamic_shared_bytes", 0)),
                             budget=args.budget, hazard_check=not args.no_hazard_check,
                             reconverge=args.reconverge, trace=args.sm_model,
                             objects=list(objects.values()),
                             textures={d["bind"]: objects[n] for n, d in (spec.get("textures") or {}).items()
                                       if "bind" in d},
                             cluster=spec.get("cluster"),
                             stack_bytes=spec.get("stack_bytes", DEFAULT_STACK_BYTES))
    except EmuFault as e:
        print(f"ptx2sass-emu: {e}", file=sys.stderr)
        return 1
    stats = result.stats
    if args.sm_model:
        from .timing.facts import NoTimingFacts
        from .timing.model import from_result
        from .timing.occupancy import LaunchTooLarge
        try:
            est = from_result(result)
        except (NoTimingFacts, LaunchTooLarge) as e:
            print(f"ptx2sass-emu: error: {e.args[0]}", file=sys.stderr)
            return 2
        stats |= {"sm_cycles": est.cycles, "gpu": est.facts.gpu, "resident_warps": est.occupancy.warps}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in result.buffers.items():
        (args.out_dir / f"{name}.bin").write_bytes(data)
    from .textures import Surface
    for name, obj in objects.items():
        if isinstance(obj, Surface):
            (args.out_dir / f"{name}.bin").write_bytes(obj.data.tobytes())
    if args.stats:
        print(json.dumps(stats))
    hazards = result.hazards + result.convergence_hazards
    if hazards:
        print(f"ptx2sass-emu: {hazards[0]}" + (f" (and {len(hazards) - 1} more)"
                                              if len(hazards) > 1 else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
