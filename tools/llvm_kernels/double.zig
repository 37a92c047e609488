// f64 arithmetic: fused multiply-add, division, square root, rounding, conversions.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn double(out: [*]addrspace(.global) f64, iout: [*]addrspace(.global) i64, fout: [*]addrspace(.global) f32, a: [*]addrspace(.global) const f64, b: [*]addrspace(.global) const f64, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    out[i] = @mulAdd(f64, x, y, 1.0) + x / (y * y + 0.5);
    out[n + i] = @sqrt(@abs(x)) + @floor(y) - @ceil(x) + @trunc(x * 3.0) + @round(y * 2.5);
    out[2 * n + i] = @max(x, y) * @min(x, y) - x * y;
    iout[i] = @intFromFloat(@trunc(x * 1000.0));
    fout[i] = @floatCast(x * y);
}
