// 64-bit integer arithmetic: multiply, high halves, variable shifts, rotates, compares.
const std = @import("std");
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn int64(out: [*]addrspace(.global) u64, sout: [*]addrspace(.global) i64, a: [*]addrspace(.global) const u64, b: [*]addrspace(.global) const u64, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    const hi: u64 = @truncate((@as(u128, x) * @as(u128, y)) >> 64);
    const sh: u6 = @truncate(y);
    const r = (x *% y) ^ hi ^ (x << sh) ^ (y >> @truncate(x)) ^ std.math.rotl(u64, x, y & 63);
    out[i] = r +% @as(u64, @intFromBool(x < y)) +% @min(x, y);
    const sx: i64 = @bitCast(x);
    const sy: i64 = @bitCast(y);
    const shi: i64 = @truncate((@as(i128, sx) * @as(i128, sy)) >> 64);
    sout[i] = (sx >> sh) +% shi -% @max(sx, sy) +% @as(i64, @intFromBool(sx < sy));
}
