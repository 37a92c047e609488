"""A cluster program's launch has at most `textures.RW_CELLS` threads: each thread owns one
16-byte cell of every read-write surface (512 cells), and its readback `suld ... .trap` of a
cell past the surface faults. Two clusters of four CTAs of 96 threads (768) made thread 512+
read layer 2 of a 2-layer 3d surface (held-out sm_120a fuzz seed 44200039: "surface access
out of range: byte 0 of row 0, layer 2", on ptxas's cubin and ours alike)."""
from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.textures import RW_CELLS


def _threads(prog) -> int:
    g, b = prog.grid, prog.block
    return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]


def test_cluster_launches_fit_the_read_write_surfaces():
    sizes = [_threads(generate(seed, {"cluster", "texture"}, None, frozenset(), "sm_120a"))
             for seed in range(7000, 7120)]
    assert max(sizes) <= RW_CELLS
    assert RW_CELLS in sizes          # four CTAs of 128 or two clusters of 2 x 128 still drawn


def test_seed_44200039_launch():
    assert _threads(make_program(44200039, Options(arch="sm_120a"))) <= RW_CELLS
