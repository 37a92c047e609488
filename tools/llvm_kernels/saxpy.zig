const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn saxpy(y: [*]addrspace(.global) f32, x: [*]addrspace(.global) const f32, a: f32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i < n) y[i] = a * x[i] + y[i];
}
