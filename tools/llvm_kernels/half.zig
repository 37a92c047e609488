// f16 arithmetic: products, sums, min/max, compares, conversions to and from f32.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn half(out: [*]addrspace(.global) f16, fout: [*]addrspace(.global) f32, a: [*]addrspace(.global) const f16, b: [*]addrspace(.global) const f16, s: f32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    const p = x * y + x;
    const q = @max(x, y) - @min(x, y) * @as(f16, 0.5);
    out[i] = if (p > q) p else q - y;
    out[n + i] = @as(f16, @floatCast(@as(f32, x) * s)) + @abs(y);
    fout[i] = @as(f32, x) + @as(f32, y) * s + @as(f32, @floatCast(x / (@abs(y) + 1.0)));
}
