// @Vector loads and stores (ld.v4 / st.v4) and reductions over them.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

const F4 = @Vector(4, f32);
const U4 = @Vector(4, u32);
const H8 = @Vector(8, u16);

export fn vec4(out: [*]addrspace(.global) F4, sums: [*]addrspace(.global) f32, uout: [*]addrspace(.global) U4, hout: [*]addrspace(.global) H8, a: [*]addrspace(.global) const F4, b: [*]addrspace(.global) const F4, u: [*]addrspace(.global) const U4, h: [*]addrspace(.global) const H8, c: f32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const va = a[i];
    const vb = b[i];
    const r = va * vb + @as(F4, @splat(c));
    out[i] = r;
    sums[i] = @reduce(.Add, va) + @reduce(.Max, vb);
    const vu = u[i];
    uout[i] = (vu >> @splat(3)) ^ @shuffle(u32, vu, undefined, [4]i32{ 3, 2, 1, 0 });
    const vh = h[i];
    hout[i] = vh +% @as(H8, @splat(0x1234)) -% (vh >> @splat(2));
}
