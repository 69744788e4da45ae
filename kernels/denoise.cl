// denoise: non-local means (Buades, Coll and Morel, 2005), pixel-wise. Each pixel becomes the
// mean of the pixels q of its (2 SEARCH + 1)^2 search window weighted by
//   w(q) = exp(-d2(q) * INV_H2),
// d2 the sum of the squared R, G and B differences between the (2 PATCH + 1)^2 patches around
// the pixel and around q; INV_H2 = 1 / (h^2 * 3 * (2 PATCH + 1)^2), h the strength in the
// frame's units (8-bit levels, or levels / 255 for float frames), so that h is the mean
// difference per channel at which a patch's weight falls to 1/e. Alpha is kept. Reflect-101
// borders. One pixel a work-item, which its (2 SEARCH + 1)^2 patch comparisons keep busy (the
// cache serves the neighbours' loads); 8-bit results rounded to nearest, ties to even.
//   SEARCH, PATCH, INV_H2, PIXEL_RGBA8 1 or 0

#if PIXEL_RGBA8
typedef uchar pixel_t;
inline float4 load1(const __global uchar* restrict row, int x) {
  return convert_float4(*(const __global uchar4*)(row + 4 * x));
}
#else
typedef float pixel_t;
inline float4 load1(const __global float* restrict row, int x) {
  return *(const __global float4*)(row + 4 * x);
}
#endif

__kernel void denoise_nlm(const __global pixel_t* restrict src, int src_first, int src_pitch,
                          __global pixel_t* restrict dst, int dst_first, int dst_pitch, int width,
                          int height, int y0) {
  const int x = (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  if (x >= width) return;
#define ROW(r) (src + (size_t)(tandem_reflect101((r), height) - src_first) * src_pitch)
#define AT(r, c) load1(ROW(r), tandem_reflect101((c), width))
  float4 acc = (float4)(0.0f);
  float total = 0.0f;
  for (int dy = -SEARCH; dy <= SEARCH; ++dy) {
    for (int dx = -SEARCH; dx <= SEARCH; ++dx) {
      float d2 = 0.0f;
      for (int py = -PATCH; py <= PATCH; ++py) {
        for (int px = -PATCH; px <= PATCH; ++px) {
          const float4 d = AT(y + py, x + px) - AT(y + dy + py, x + dx + px);
          d2 = mad(d.x, d.x, mad(d.y, d.y, mad(d.z, d.z, d2)));
        }
      }
      const float w = exp(-d2 * INV_H2);
      acc = mad((float4)(w), AT(y + dy, x + dx), acc);
      total += w;
    }
  }
  const float4 centre = AT(y, x);
#undef AT
#undef ROW
  float4 out = acc / total;
  out.w = centre.w;
  __global pixel_t* restrict row = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  *(__global uchar4*)(row + 4 * x) = convert_uchar4_sat_rte(out);
#else
  *(__global float4*)(row + 4 * x) = out;
#endif
}
