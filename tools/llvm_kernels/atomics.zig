// Atomics on global and shared memory, and a compare-and-swap loop.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

var bins: [16]u32 addrspace(.shared) = undefined;

export fn atomics(hist: [*]addrspace(.global) u32, stats: [*]addrspace(.global) i32, fsum: [*]addrspace(.global) f32, prod: [*]addrspace(.global) u32, x: [*]addrspace(.global) const i32, n: u32) callconv(.kernel) void {
    const t = @workItemId(0);
    const i = gpu.globalId();
    if (t < 16) bins[t] = 0;
    gpu.barrier();
    if (i < n) {
        const v = x[i];
        _ = @atomicRmw(u32, &bins[@as(u32, @bitCast(v)) & 15], .Add, 1, .monotonic);
        _ = @atomicRmw(i32, &stats[0], .Max, v, .monotonic);
        _ = @atomicRmw(i32, &stats[1], .Min, v, .monotonic);
        _ = @atomicRmw(i32, &stats[2], .Or, v & 0x0f0f, .monotonic);
        _ = @atomicRmw(i32, &stats[3], .Xor, v, .monotonic);
        _ = @atomicRmw(i32, &stats[4], .And, v | 0x100, .monotonic);
        _ = @atomicRmw(i32, &stats[5], .Add, v, .monotonic);
        _ = @atomicRmw(f32, &fsum[0], .Add, @floatFromInt(v), .monotonic);
        var old = @atomicLoad(u32, &prod[0], .monotonic);
        const factor = @as(u32, @bitCast(v)) | 1;
        while (@cmpxchgWeak(u32, &prod[0], old, old *% factor, .monotonic, .monotonic)) |seen| old = seen;
    }
    gpu.barrier();
    if (t < 16) _ = @atomicRmw(u32, &hist[t], .Add, bins[t], .monotonic);
}
