// scale_tiled (kernels/scale.cl), 8-bit bicubic from 1920x1080 to 3840x2160, written again in CUDA
// with the same loads, local memory and arithmetic, so that Nsight Compute can profile it: on the
// GPU machine ncu profiles no OpenCL kernel. It runs at scale_tiled's speed there (H200: 41.0 us
// against the OpenCL kernel's 41.4, 2026-11-29), so its counters stand for it. The table has
// cv::resize's taps for the sizes but one set of weights for every pixel (the weights do not
// change the work). Not part of the build: tools/device-ncu-scale.sh compiles it there with nvcc.
//
//   ncu-scale-tiled VARIANT [REPEATS]   prints the median kernel time over REPEATS (default 200)
//     0  as scale_tiled
//     1  the row sums from one aligned load a row instead of 16 gathers (wrong pixels: what the
//        gathers cost)
//     2  the vertical pass reading one tap instead of four (wrong pixels: what those reads cost)
//     3  a 2x nearest upscale of the same bytes (each pixel read once, written as a 2x2 block):
//        the traffic's own limit
//     4  cudaMemcpy of the 1080p input, device to device
//     5  row sums one column a thread (threads 16 apart take a group's four columns), the
//        same pixels
//     6  row sums one column a thread (consecutive columns), the sums padded a slot every 8
//        columns, the same pixels
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cmath>
#include <cuda_runtime.h>

#define TILE_W 16
#define TILE_H 8
#define TILE_ROWS 32
#define TAPS 4
#ifndef IN_ROWS
#define IN_ROWS 20
#endif

__device__ __forceinline__ unsigned levels8(float v) {
  v = fminf(fmaxf(v, 0.0f), 255.0f) + 8388608.0f;
  return __float_as_uint(v) & 0xFF;
}

template <int VARIANT>
__global__ __launch_bounds__(TILE_W * TILE_H) void scale_tiled(
    const unsigned char* __restrict__ src, int src_pitch, unsigned char* __restrict__ dst,
    int dst_pitch, const int* __restrict__ table, int x_offset, int padded_width, int y_offset,
    int y0, int y1) {
  __shared__ float4 sums[IN_ROWS][4][TILE_W + TILE_W / 8];  // variant 6 reads it as [IN_ROWS][72]
  __shared__ int entries[TILE_ROWS * 2 * TAPS];
  const int lx = threadIdx.x, ly = threadIdx.y;
  const int x = 4 * (blockIdx.x * TILE_W + lx);
  const int ya = y0 + blockIdx.y * TILE_ROWS;
  const int yb = min(ya + TILE_ROWS, y1) - 1;
  const int* first = table + y_offset + ya * 2 * TAPS;
  const int* last = table + y_offset + yb * 2 * TAPS;
  int lo = first[0], hi = last[0];
  for (int j = 1; j < TAPS; ++j) { lo = min(lo, first[j]); hi = max(hi, last[j]); }
  for (int i = ly * TILE_W + lx; i < (yb - ya + 1) * 2 * TAPS; i += TILE_W * TILE_H) entries[i] = first[i];
  const int4* cols = (const int4*)(table + x_offset) + min(x, padded_width - 4) / 4;
  const int stride = padded_width / 4;
  int4 idx[TAPS], wt[TAPS];
#pragma unroll
  for (int i = 0; i < TAPS; ++i) { idx[i] = cols[i * stride]; wt[i] = cols[(TAPS + i) * stride]; }
  if (VARIANT == 5 || VARIANT == 6) {
    // One column a thread: 5, threads t..t+15 take columns 4 lxx + p (sums' layout as before);
    // 6, thread t column t % 64, sums at [r][c + c / 8] (padded), read back so below.
    const int t = ly * TILE_W + lx;
    const int c = VARIANT == 5 ? 4 * (t % 16) + (t / 16) % 4 : t % 64;
    const int xc = min(4 * blockIdx.x * TILE_W + c, padded_width - 1);
    const int* tc = table + x_offset + xc;
    int ci[TAPS], cw[TAPS];
#pragma unroll
    for (int i = 0; i < TAPS; ++i) { ci[i] = tc[i * padded_width]; cw[i] = tc[(TAPS + i) * padded_width]; }
    float4* flat = &sums[0][0][0];
    for (int r = t / 64; r <= hi - lo; r += TILE_W * TILE_H / 64) {
      const uchar4* row = (const uchar4*)(src + (size_t)(lo + r) * src_pitch);
      int4 h = make_int4(0, 0, 0, 0);
#pragma unroll
      for (int i = 0; i < TAPS; ++i) {
        const uchar4 p = row[ci[i]];
        h.x += p.x * cw[i]; h.y += p.y * cw[i]; h.z += p.z * cw[i]; h.w += p.w * cw[i];
      }
      const float4 v = make_float4(h.x, h.y, h.z, h.w);
      if (VARIANT == 5) sums[r][c % 4][c / 4] = v;
      else flat[r * 72 + c + c / 8] = v;
    }
  } else
  for (int r = ly; r <= hi - lo; r += TILE_H) {
    const uchar4* row = (const uchar4*)(src + (size_t)(lo + r) * src_pitch);
    int4 h[4] = {};
    if (VARIANT == 1) {
      const uchar4 p = row[min(x, padded_width - 4) / 2];
#pragma unroll
      for (int q = 0; q < 4; ++q) h[q] = make_int4(p.x * wt[q].x, p.y * wt[q].y, p.z * wt[q].z, p.w * wt[q].w);
    } else {
#pragma unroll
      for (int i = 0; i < TAPS; ++i) {
        const int ix[4] = {idx[i].x, idx[i].y, idx[i].z, idx[i].w};
        const int wx[4] = {wt[i].x, wt[i].y, wt[i].z, wt[i].w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const uchar4 p = row[ix[q]];
          h[q].x += p.x * wx[q]; h[q].y += p.y * wx[q]; h[q].z += p.z * wx[q]; h[q].w += p.w * wx[q];
        }
      }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) sums[r][q][lx] = make_float4(h[q].x, h[q].y, h[q].z, h[q].w);
  }
  __syncthreads();
  if (x >= padded_width) return;
  for (int y = ya + ly; y <= yb; y += TILE_H) {
    const int* ye = entries + (y - ya) * 2 * TAPS;
    float4 acc[4];
#pragma unroll
    for (int j = TAPS - 1; j >= 0; --j) {
      if (VARIANT == 2 && j != 0) continue;
      const int r = ye[j] - lo;
      const float w = __fmul_rn((float)ye[TAPS + j], 0x1.0p-22f);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float4 s = VARIANT == 6 ? (&sums[0][0][0])[r * 72 + 4 * lx + q + lx / 2] : sums[r][q][lx];
        float4 t = make_float4(__fmul_rn(s.x, w), __fmul_rn(s.y, w), __fmul_rn(s.z, w), __fmul_rn(s.w, w));
        if (j != TAPS - 1 && !(VARIANT == 2)) t = make_float4(__fadd_rn(t.x, acc[q].x), __fadd_rn(t.y, acc[q].y), __fadd_rn(t.z, acc[q].z), __fadd_rn(t.w, acc[q].w));
        acc[q] = t;
      }
    }
    uint4 o;
    unsigned* op = &o.x;
#pragma unroll
    for (int q = 0; q < 4; ++q) op[q] = levels8(acc[q].x) | levels8(acc[q].y) << 8 | levels8(acc[q].z) << 16 | levels8(acc[q].w) << 24;
    *(uint4*)(dst + (size_t)y * dst_pitch + 4 * x) = o;
  }
}

// A kernel of the same bytes: each thread reads one input pixel's uint and writes the 2x2 block
// (the limit of this pattern of traffic).
__global__ void upscale_nearest(const unsigned* __restrict__ src, int src_w, unsigned* __restrict__ dst, int dst_w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= src_w / 4) return;
  const uint4 p = ((const uint4*)(src + (size_t)y * src_w))[x];
  const uint4 a = make_uint4(p.x, p.x, p.y, p.y), b = make_uint4(p.z, p.z, p.w, p.w);
  uint4* r0 = (uint4*)(dst + (size_t)(2 * y) * dst_w) + 2 * x;
  uint4* r1 = (uint4*)(dst + (size_t)(2 * y + 1) * dst_w) + 2 * x;
  r0[0] = a; r0[1] = b; r1[0] = a; r1[1] = b;
}

int main(int argc, char** argv) {
  const int iw = 1920, ih = 1080, ow = 3840, oh = 2160;
  const int variant = argc > 1 ? atoi(argv[1]) : 0;
  const int reps = argc > 2 ? atoi(argv[2]) : 200;
  std::vector<int> table;
  auto put_axis = [&](int src, int dst, int d) {
    const float f0 = (float)((d + 0.5) * ((double)src / dst) - 0.5);
    const int s = (int)std::floor(f0);
    for (int k = 0; k < TAPS; ++k) table.push_back(std::clamp(s - 1 + k, 0, src - 1));
    const int w[4] = {-150, 1200, 1100, -102};
    for (int k = 0; k < TAPS; ++k) table.push_back(w[k]);
  };
  for (int d = 0; d < ow; ++d) put_axis(iw, ow, d);
  const int y_offset = table.size();
  for (int d = 0; d < oh; ++d) put_axis(ih, oh, d);
  while (table.size() % 4) table.push_back(0);
  const int x_offset = table.size();
  for (int part = 0; part < 2; ++part)
    for (int k = 0; k < TAPS; ++k)
      for (int d = 0; d < ow; ++d) table.push_back(table[d * 2 * TAPS + part * TAPS + k]);
  int in_rows = 0;
  for (int d = 0; d < oh; d += 1) {
    const int e = std::min(d + TILE_ROWS, oh) - 1;
    in_rows = std::max(in_rows, table[y_offset + e * 8 + 3] - table[y_offset + d * 8] + 1);
  }
  if (in_rows > IN_ROWS) { printf("IN_ROWS %d needed\n", in_rows); return 1; }
  unsigned char *src, *dst; int* dtable;
  cudaMalloc(&src, (size_t)iw * 4 * ih); cudaMalloc(&dst, (size_t)ow * 4 * oh);
  cudaMalloc(&dtable, table.size() * 4);
  cudaMemcpy(dtable, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  std::vector<unsigned char> in((size_t)iw * 4 * ih);
  for (size_t i = 0; i < in.size(); ++i) in[i] = (unsigned char)(i * 2654435761u >> 13);
  cudaMemcpy(src, in.data(), in.size(), cudaMemcpyHostToDevice);
  dim3 block(TILE_W, TILE_H), grid(ow / 4 / TILE_W, (oh + TILE_ROWS - 1) / TILE_ROWS * 1);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a);
    if (variant == 3) upscale_nearest<<<dim3(iw / 4 / 128 + 1, ih), 128>>>((unsigned*)src, iw, (unsigned*)dst, ow, ih);
    else if (variant == 4) cudaMemcpyAsync(dst, src, (size_t)iw * 4 * ih, cudaMemcpyDeviceToDevice);
    else if (variant == 1) scale_tiled<1><<<grid, block>>>(src, iw * 4, dst, ow * 4, dtable, x_offset, ow, y_offset, 0, oh);
    else if (variant == 5) scale_tiled<5><<<grid, block>>>(src, iw * 4, dst, ow * 4, dtable, x_offset, ow, y_offset, 0, oh);
    else if (variant == 6) scale_tiled<6><<<grid, block>>>(src, iw * 4, dst, ow * 4, dtable, x_offset, ow, y_offset, 0, oh);
    else if (variant == 2) scale_tiled<2><<<grid, block>>>(src, iw * 4, dst, ow * 4, dtable, x_offset, ow, y_offset, 0, oh);
    else scale_tiled<0><<<grid, block>>>(src, iw * 4, dst, ow * 4, dtable, x_offset, ow, y_offset, 0, oh);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float t; cudaEventElapsedTime(&t, a, b); ms.push_back(t * 1000);
  }
  const cudaError_t err = cudaGetLastError();
  // A checksum of the output: variants 0, 5 and 6 make the same pixels.
  std::vector<unsigned char> out((size_t)ow * 4 * oh);
  cudaMemcpy(out.data(), dst, out.size(), cudaMemcpyDeviceToHost);
  unsigned long long sum = 0;
  for (size_t i = 0; i < out.size(); ++i) sum = sum * 31 + out[i];
  std::sort(ms.begin() + 10, ms.end());
  const double bytes = variant == 4 ? 2.0 * iw * 4 * ih : (double)iw * 4 * ih + (double)ow * 4 * oh;
  printf("variant %d: median %.2f us (in_rows %d) %.0f GB/s %s, checksum %016llx\n", variant,
         ms[10 + (ms.size() - 10) / 2], in_rows, bytes / ms[10 + (ms.size() - 10) / 2] / 1e3,
         cudaGetErrorString(err), sum);
  return 0;
}
