"""Debug information as ptxas writes it: line tables for `-lineinfo` (implied by any `.loc`
in the PTX) and, for `-g` (or `.target debug`), the PTX's own DWARF sections as well.

- `ptx_text`: `.nv_debug_ptx_txt`, the PTX source the PTX line table points into;
- `source_map`: what the PTX says about lines (`.loc`, `.file`, the debug `.section`s);
- `line_program`: a DWARF 3 line-number program writer (ptxas's header and opcode choices);
- `sections`: the sections, their relocations and which kernels they describe.

Imported only when a compile asks for debug information.
"""
