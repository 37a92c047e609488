// Integer division and remainder by variables and by constants, 32- and 64-bit.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn divide(u: [*]addrspace(.global) u32, s: [*]addrspace(.global) i32, w: [*]addrspace(.global) u64, a: [*]addrspace(.global) const i32, b: [*]addrspace(.global) const i32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    const ux: u32 = @bitCast(x);
    const uy: u32 = @bitCast(y);
    u[i] = ux / uy +% ux % uy;
    u[n + i] = ux / 7 +% ux % 13 +% ux / 1000 +% (ux >> 3) / 5;
    s[i] = @divTrunc(x, y) + @rem(x, y);
    s[n + i] = @divFloor(x, y) * 3 + @mod(x, @as(i32, @intCast(@abs(y))));
    s[2 * n + i] = @divTrunc(x, 7) + @rem(x, -9) + @divFloor(x, 16) + @mod(x, 10);
    const wx = @as(u64, ux) * 0x10001 + 12345;
    const wy = @as(u64, uy) | 1;
    w[i] = wx / wy +% wx % wy +% wx / 3 +% wx % 1000003;
}
