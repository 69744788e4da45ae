// bilateral: edge-preserving smoothing. Each output pixel is the weighted mean of the
// (2 RADIUS + 1)^2 pixels around it (reflect-101 borders) with
//   w = spatial(dx) * spatial(dy) * exp(-|c - c0|^2 * RANGE_SCALE),
// spatial(k) = exp(-k^2 / (2 sigma_s^2)) (so the product is exp(-(dx^2 + dy^2) / (2 sigma_s^2)))
// and |c - c0| the Euclidean distance of the RGB values to the centre pixel's. Alpha passes
// through unchanged.
// Compile-time constants from the host (filters/bilateral.cpp):
//   RADIUS       ceil(2 sigma_s)
//   SPATIAL      RADIUS + 1 floats, spatial(0) .. spatial(RADIUS)
//   RANGE_SCALE  1 / (2 sigma_r^2) in the stored units: sigma_r is in normalised intensity, so
//                for rgba8 it is 1 / (2 (255 sigma_r)^2)
//   PIXEL_RGBA8  1: uchar pixels (values 0..255 throughout); 0: float pixels
// Four pixels per work-item: one 16-byte (rgba8) or 64-byte (rgba32f) load per tap serves all
// four. One variant for every device. It stores through TANDEM_STORE4_*: a point-wise chain
// after it runs in the same kernel.

__constant float kSpatial[RADIUS + 1] = {SPATIAL};

#if PIXEL_RGBA8
typedef uchar pixel_t;
// Taps start at any pixel: typed loads of whole pixels (4-byte uchar4, 16-byte float4), where
// vload16 through a uchar* would let the compiler assume byte alignment only.
inline float16 load4(const __global uchar* restrict row, int x) {
  const __global uchar4* p = (const __global uchar4*)row + x;
  return convert_float16((uchar16)(p[0], p[1], p[2], p[3]));
}
inline float4 load1(const __global uchar* restrict row, int x) {
  return convert_float4(((const __global uchar4*)row)[x]);
}
#define STORE4(row, x, v) TANDEM_STORE4_RGBA8(row, x, convert_uchar16_sat_rte(v))
#else
typedef float pixel_t;
inline float16 load4(const __global float* restrict row, int x) {
  return tandem_load4_rgba32f(row, x);
}
inline float4 load1(const __global float* restrict row, int x) {
  return ((const __global float4*)row)[x];
}
#define STORE4(row, x, v) TANDEM_STORE4_RGBA32F(row, x, v)
#endif

// Adds the tap v (four pixels) with spatial weight `spatial` to the sums of the four outputs.
inline void accumulate(float16 v, float spatial, float16 centre, float4* weights,
                       float16* sums) {
  const float16 d = v - centre;
  const float16 dd = d * d;
  const float4 distance2 = dd.s048c + dd.s159d + dd.s26ae;
  const float4 w = spatial * exp(-distance2 * RANGE_SCALE);
  *weights += w;
  *sums = mad(w.s0000111122223333, v, *sums);
}

__kernel void bilateral(const __global pixel_t* restrict src, int src_first, int src_pitch,
                        __global pixel_t* restrict dst, int dst_first, int dst_pitch, int width,
                        int height, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 4;
  const int y = y0 + (int)get_global_id(1);
  // Lanes past the right edge read the row's padding and write junk to the output's padding.
  const float16 centre = load4(src + (size_t)(y - src_first) * src_pitch, x);
  const bool interior = x >= RADIUS && x + 3 + RADIUS < width;
  // Offsets reach -RADIUS .. width + 2 + RADIUS across, -RADIUS .. height - 1 + RADIUS down.
  const bool near_x = width >= RADIUS + 4;
  const bool near_y = height > RADIUS;
  float4 weights = (float4)(0.0f);
  float16 sums = (float16)(0.0f);
  for (int dy = -RADIUS; dy <= RADIUS; ++dy) {
    const __global pixel_t* restrict row =
        src + (size_t)(tandem_reflect(y + dy, height, near_y) - src_first) * src_pitch;
    const float spatial_y = kSpatial[abs(dy)];
    if (interior) {
#pragma unroll
      for (int dx = -RADIUS; dx <= RADIUS; ++dx) {
        accumulate(load4(row, x + dx), spatial_y * kSpatial[abs(dx)], centre, &weights, &sums);
      }
    } else {
      for (int dx = -RADIUS; dx <= RADIUS; ++dx) {
        const float16 v = (float16)(load1(row, tandem_reflect(x + dx, width, near_x)),
                                    load1(row, tandem_reflect(x + 1 + dx, width, near_x)),
                                    load1(row, tandem_reflect(x + 2 + dx, width, near_x)),
                                    load1(row, tandem_reflect(x + 3 + dx, width, near_x)));
        accumulate(v, spatial_y * kSpatial[abs(dx)], centre, &weights, &sums);
      }
    }
  }
  float16 out = sums / weights.s0000111122223333;
  out.s37bf = centre.s37bf;
  STORE4(dst + (size_t)(y - dst_first) * dst_pitch, x, out);
}
