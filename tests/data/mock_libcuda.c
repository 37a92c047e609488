/* A stand-in for libcuda.so.1 with the driver API entry points tools/gpu_check/device.py
   calls, so that its ctypes marshalling (pointer sizes, the _v2 symbols, kernel parameter
   arrays, error names) is tested where there is no GPU. "Device" memory is host memory.
   Every kernel is one fake: out[i] = i * k for i < grid.x * block.x, where the parameters
   are (u32 *out, u32 k). A function named "fault" makes the next synchronisation report
   CUDA_ERROR_ILLEGAL_ADDRESS; "hang" (or any, with MOCK_CUDA_HANG set) makes it never
   return. MOCK_CUDA_DEVICES=0 hides the device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef struct { char name[64]; int fault, hang; } Fn;
static int pending_fault, pending_hang;
static const char *names[] = {"CUDA_SUCCESS", "CUDA_ERROR_INVALID_IMAGE", "CUDA_ERROR_NOT_FOUND",
                              "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_INVALID_VALUE"};

CUresult cuGetErrorName(CUresult e, const char **s) {
    *s = e == 0 ? names[0] : e == 200 ? names[1] : e == 500 ? names[2] : e == 700 ? names[3] : names[4];
    return 0;
}
CUresult cuInit(unsigned flags) { return flags ? 1 : 0; }
CUresult cuDeviceGetCount(int *n) { const char *v = getenv("MOCK_CUDA_DEVICES"); *n = v ? atoi(v) : 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { *ctx = (void *)0x1; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx ? 0 : 1; }
CUresult cuEventCreate(void **e, unsigned f) { *e = calloc(1, 8); return 0; }
CUresult cuEventRecord(void *e, void *stream) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) { *ms = 0.25f; return 0; }
CUresult cuDeviceGetName(char *s, int len, int d) { strncpy(s, "Mock GPU", len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
    const char *cc = getenv("MOCK_CUDA_CC");          /* e.g. "89"; default 90 */
    int major = cc ? cc[0] - '0' : 9, minor = cc ? cc[1] - '0' : 0;
    *v = attr == 75 ? major : attr == 76 ? minor : attr == 16 ? 132 : attr + 1000; return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)80 << 30; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuModuleLoadData(void **m, const void *image) {
    const char *p = image;
    if (memcmp(p, "\177ELF", 4) != 0 && memcmp(p, ".version", 8) != 0) return 200;
    *m = malloc(1); return 0;
}
CUresult cuModuleUnload(void *m) { free(m); return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    if (!strcmp(name, "missing")) return 500;
    Fn *fn = calloc(1, sizeof(Fn));
    strncpy(fn->name, name, 63);
    fn->fault = !strcmp(name, "fault");
    fn->hang = !strcmp(name, "hang");
    *f = fn; return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) { *v = attr == 4 ? 42 : 7; return 0; }
CUresult cuFuncSetAttribute(void *f, int attr, int value) { return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { *p = (uint64_t)(uintptr_t)malloc(n); return 0; }
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemsetD8_v2(uint64_t p, unsigned char c, size_t n) { memset((void *)(uintptr_t)p, c, n); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *h, size_t n) { memcpy((void *)(uintptr_t)d, h, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *h, uint64_t d, size_t n) { memcpy(h, (void *)(uintptr_t)d, n); return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    Fn *fn = f;
    if (fn->fault) { pending_fault = 1; return 0; }
    if (fn->hang || getenv("MOCK_CUDA_HANG")) { pending_hang = 1; return 0; }
    if (!params) return 1;
    uint32_t *out = (uint32_t *)(uintptr_t)*(uint64_t *)params[0];
    uint32_t k = *(uint32_t *)params[1];
    for (unsigned i = 0; i < gx * bx; i++) out[i] = i * k;
    return 0;
}
CUresult cuCtxSynchronize(void) {
    if (pending_hang) for (;;) sleep(1);
    if (pending_fault) return 700;
    return 0;
}
