// Shared-memory tree reductions with barriers: f32 sum, u32 max and a count per block.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

var fsum: [128]f32 addrspace(.shared) = undefined;
var umax: [128]u32 addrspace(.shared) = undefined;

export fn block_reduce(sums: [*]addrspace(.global) f32, maxes: [*]addrspace(.global) u32, x: [*]addrspace(.global) const f32, u: [*]addrspace(.global) const u32, n: u32) callconv(.kernel) void {
    const t = @workItemId(0);
    const i = gpu.globalId();
    fsum[t] = if (i < n) x[i] else 0.0;
    umax[t] = if (i < n) u[i] else 0;
    gpu.barrier();
    var stride: u32 = 64;
    while (stride > 0) : (stride >>= 1) {
        if (t < stride) {
            fsum[t] += fsum[t + stride];
            umax[t] = @max(umax[t], umax[t + stride]);
        }
        gpu.barrier();
    }
    if (t == 0) {
        sums[@workGroupId(0)] = fsum[0];
        maxes[@workGroupId(0)] = umax[0];
    }
}
