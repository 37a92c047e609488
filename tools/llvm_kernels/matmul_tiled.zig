// Shared-memory tiled matrix product, 8x8 tiles, one thread per output element.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

const T = 8;
var ta: [T][T]f32 addrspace(.shared) = undefined;
var tb: [T][T]f32 addrspace(.shared) = undefined;

export fn matmul_tiled(c: [*]addrspace(.global) f32, a: [*]addrspace(.global) const f32, b: [*]addrspace(.global) const f32, m: u32, nn: u32, kk: u32) callconv(.kernel) void {
    const tx = @workItemId(0);
    const ty = @workItemId(1);
    const row = @workGroupId(1) * T + ty;
    const col = @workGroupId(0) * T + tx;
    var acc: f32 = 0;
    var k0: u32 = 0;
    while (k0 < kk) : (k0 += T) {
        ta[ty][tx] = if (row < m and k0 + tx < kk) a[row * kk + k0 + tx] else 0;
        tb[ty][tx] = if (col < nn and k0 + ty < kk) b[(k0 + ty) * nn + col] else 0;
        gpu.barrier();
        for (0..T) |q| acc += ta[ty][q] * tb[q][tx];
        gpu.barrier();
    }
    if (row < m and col < nn) c[row * nn + col] = acc;
}
