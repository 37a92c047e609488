// Device-wide CUB algorithms: the kernels CUB instantiates for host calls (compile only).
#include <cub/cub.cuh>

struct Positive { __device__ bool operator()(int k) const { return k > 0; } };

void device_algorithms(const float* in, float* out, int* keys, int* keys_out, int* vals,
                       int* vals_out, int* num, int n, void* tmp, size_t bytes) {
  cub::DeviceReduce::Sum(tmp, bytes, in, out, n);
  cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n);
  cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, keys_out, vals, vals_out, n);
  cub::DeviceSelect::If(tmp, bytes, keys, keys_out, num, n, Positive());
  cub::DeviceRunLengthEncode::Encode(tmp, bytes, keys, keys_out, vals_out, num, n);
}
