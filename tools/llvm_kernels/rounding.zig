// f32 square roots, roundings, division and fused multiply-add.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn rounding(out: [*]addrspace(.global) f32, a: [*]addrspace(.global) const f32, b: [*]addrspace(.global) const f32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    out[i] = @sqrt(@abs(x));
    out[n + i] = @floor(x) + @ceil(y) * 2.0;
    out[2 * n + i] = @round(x * 1.5) - @trunc(y * 0.75);
    out[3 * n + i] = x / y;
    out[4 * n + i] = @mulAdd(f32, x, y, -x) + 1.0 / @sqrt(@abs(y) + 1.0);
}
