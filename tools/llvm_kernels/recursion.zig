// Recursive noinline functions: call frames on the stack, parameters through .param.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

noinline fn fib(k: u32) u32 {
    if (k < 2) return k;
    return fib(k - 1) +% fib(k - 2);
}

noinline fn sumDigits(v: u64, base: u64) u64 {
    if (v == 0) return 0;
    return (v % base) + sumDigits(v / base, base);
}

export fn recursion(out: [*]addrspace(.global) u32, wout: [*]addrspace(.global) u64, k: [*]addrspace(.global) const u32, w: [*]addrspace(.global) const u64, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    out[i] = fib(k[i] % 11);
    wout[i] = sumDigits(w[i], 7 + (k[i] & 3));
}
