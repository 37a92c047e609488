// Per-thread arrays in local memory, indexed at run time: insertion sort and a histogram.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn local_sort(out: [*]addrspace(.global) i32, hist: [*]addrspace(.global) u32, x: [*]addrspace(.global) const i32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    var v: [12]i32 = undefined;
    var h: [8]u32 = @splat(0);
    for (&v, 0..) |*e, k| e.* = x[i * 12 + k];
    var k: usize = 1;
    while (k < v.len) : (k += 1) {
        const key = v[k];
        var j = k;
        while (j > 0 and v[j - 1] > key) : (j -= 1) v[j] = v[j - 1];
        v[j] = key;
    }
    for (v, 0..) |e, m| {
        out[i * 12 + m] = e;
        h[@as(u32, @bitCast(e)) & 7] += 1;
    }
    for (h, 0..) |c, m| hist[i * 8 + m] = c;
}
