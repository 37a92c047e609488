// Conversions between integer and floating types of every width.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn convert(oi: [*]addrspace(.global) i32, of: [*]addrspace(.global) f32, od: [*]addrspace(.global) f64, oh: [*]addrspace(.global) f16, ob: [*]addrspace(.global) i8, x: [*]addrspace(.global) const f32, k: [*]addrspace(.global) const i32, w: [*]addrspace(.global) const u64, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const v = x[i];
    oi[i] = @intFromFloat(v * 100.0);
    oi[n + i] = @as(i32, @intFromFloat(@abs(v) * 1000.0)) + @as(i32, @as(u8, @intFromFloat(@abs(v) * 10.0)));
    of[i] = @floatFromInt(k[i]);
    of[n + i] = @floatFromInt(w[i]);
    od[i] = @floatFromInt(w[i] >> 3);
    od[n + i] = @as(f64, v) * @as(f64, @floatFromInt(k[i]));
    oh[i] = @floatCast(v);
    oh[n + i] = @floatFromInt(@as(i16, @truncate(k[i] >> 4)));
    ob[i] = @truncate(k[i]);
}
