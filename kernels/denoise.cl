// denoise: non-local means (Buades, Coll and Morel, 2005), pixel-wise. Each pixel becomes the
// mean of the pixels q of its (2 SEARCH + 1)^2 search window weighted by
//   w(q) = exp(-d2(q) * INV_H2),
// d2 the sum of the squared R, G and B differences between the (2 PATCH + 1)^2 patches around
// the pixel and around q; INV_H2 = 1 / (h^2 * 3 * (2 PATCH + 1)^2), h the strength in the
// frame's units (8-bit levels, or levels / 255 for float frames), so that h is the mean
// difference per channel at which a patch's weight falls to 1/e. Alpha is kept. Reflect-101
// borders. 8-bit results rounded to nearest, ties to even. Two kernels, the same arithmetic
// (but for d2 at PATCH 5 on 8 bits, see denoise_blocks4):
//  - denoise_nlm (GPUs, and float frames): one pixel a work-item, which its (2 SEARCH + 1)^2
//    patch comparisons keep busy (the cache serves the neighbours' loads); pixels whose search
//    stays inside the frame skip the reflections and, on 8 bits, add distances in integers
//    (H200, 1080p, defaults: 1.48 ms against 4.92);
//  - denoise_blocks4 (CPUs on 8 bits, the rows schedule): four pixels by four rows a work-item,
//    their channels side by side in 16-wide vectors, their patches held for the whole search.
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

// Pixel (x, y)'s mean, its alpha kept.
inline float4 nlm_pixel(const __global pixel_t* restrict src, int src_first, int src_pitch,
                        int width, int height, int x, int y) {
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
  float4 out = acc / total;
  out.w = AT(y, x).w;
#undef AT
#undef ROW
  return out;
}

#if PIXEL_RGBA8
inline void store1(__global uchar* restrict row, int x, float4 v) {
  *(__global uchar4*)(row + 4 * x) = convert_uchar4_sat_rte(v);
}
#else
inline void store1(__global float* restrict row, int x, float4 v) {
  *(__global float4*)(row + 4 * x) = v;
}
#endif

#if PIXEL_RGBA8
typedef int4 patch_t;
#define PATCH_PIXEL(p) convert_int4(*(const __global uchar4*)(p))
#else
typedef float4 patch_t;
#define PATCH_PIXEL(p) (*(const __global float4*)(p))
#endif

// nlm_pixel for a pixel whose search window's patches lie inside the frame: no reflections,
// the centre patch held in registers up to PATCH 1, and on 8 bits the patch distances added in
// integers, which the float sums equal up to PATCH 4 (see denoise_blocks4).
inline float4 nlm_inside(const __global pixel_t* restrict src, int src_first, int src_pitch,
                         int x, int y) {
  const __global pixel_t* restrict centre = src + (size_t)(y - src_first) * src_pitch + 4 * x;
#define AT(p, r, c) ((p) + (r) * src_pitch + 4 * (c))
#if PATCH <= 1
  patch_t held[2 * PATCH + 1][2 * PATCH + 1];
  for (int py = 0; py <= 2 * PATCH; ++py) {
    for (int px = 0; px <= 2 * PATCH; ++px) {
      held[py][px] = PATCH_PIXEL(AT(centre, py - PATCH, px - PATCH));
    }
  }
#define CENTRE(py, px) held[py][px]
#else
#define CENTRE(py, px) PATCH_PIXEL(AT(centre, (py) - PATCH, (px) - PATCH))
#endif
  float4 acc = (float4)(0.0f);
  float total = 0.0f;
  for (int dy = -SEARCH; dy <= SEARCH; ++dy) {
    for (int dx = -SEARCH; dx <= SEARCH; ++dx) {
      const __global pixel_t* restrict q = AT(centre, dy, dx);
#if PIXEL_RGBA8
      int sum = 0;
#else
      float sum = 0.0f;
#endif
      for (int py = 0; py <= 2 * PATCH; ++py) {
        for (int px = 0; px <= 2 * PATCH; ++px) {
          const patch_t d = CENTRE(py, px) - PATCH_PIXEL(AT(q, py - PATCH, px - PATCH));
#if PIXEL_RGBA8
          sum += d.x * d.x + d.y * d.y + d.z * d.z;
#else
          sum = mad(d.x, d.x, mad(d.y, d.y, mad(d.z, d.z, sum)));
#endif
        }
      }
      const float w = exp(-(float)sum * INV_H2);
      acc = mad((float4)(w), load1(q, 0), acc);
      total += w;
    }
  }
  float4 out = acc / total;
  out.w = load1(centre, 0).w;
#undef CENTRE
#undef AT
  return out;
}

__kernel void denoise_nlm(const __global pixel_t* restrict src, int src_first, int src_pitch,
                          __global pixel_t* restrict dst, int dst_first, int dst_pitch, int width,
                          int height, int y0) {
  const int x = (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  if (x >= width) return;
  const int reach = SEARCH + PATCH;
  const bool inside = x >= reach && x + reach < width && y >= reach && y + reach < height;
  store1(dst + (size_t)(y - dst_first) * dst_pitch, x,
         inside ? nlm_inside(src, src_first, src_pitch, x, y)
                : nlm_pixel(src, src_first, src_pitch, width, height, x, y));
}

#if PIXEL_RGBA8
// Lanes 4 r .. 4 r + 3 of `v` (row r's four pixels), each spread over its pixel's four channels.
#define ROW_LANES(v, r)                                                                      \
  ((r) == 0   ? (float16)((v).s0000, (v).s1111, (v).s2222, (v).s3333)                         \
   : (r) == 1 ? (float16)((v).s4444, (v).s5555, (v).s6666, (v).s7777)                         \
   : (r) == 2 ? (float16)((v).s8888, (v).s9999, (v).saaaa, (v).sbbbb)                         \
              : (float16)((v).scccc, (v).sdddd, (v).seeee, (v).sffff))

// Pixels x .. x + 3 of four rows from y0 + 4 id on, x a multiple of 4, the band's rows ending
// at y1 (its last block moved up to end there, storing only rows the block before left; a band
// of fewer than 4 rows and pixels whose search reaches past the left or the right edge go pixel
// by pixel as denoise_nlm). Elsewhere the sixteen at once: the patches' pixels of the 4 + 2 PATCH
// rows around the block loaded once, as 16-bit vectors; for each candidate, each of those rows'
// differences squared and added in pairs (TANDEM_MADD_PAIRS, with alpha's differences masked to
// 0) over the patch's columns, then 2 PATCH + 1 of those row sums a block row, then each pixel's
// two halves: the integer d2 of every pixel, which the float sum of denoise_nlm equals (integers
// below 2^24: (2 PATCH + 1)^2 3 255^2 is, up to PATCH 4; at PATCH 5 d2 is exact here where the
// float sum may round). The sixteen weights in one exp() (16 lanes: on a CPU one vector, where
// four pixels a work-item took a quarter of one, and the exp() most of the time), the means in
// denoise_nlm's order, lane by lane. (PoCL, 2 cores, 1080p, defaults: 355-368 ms against 605-623
// for four pixels of one row a work-item, the same pixels.)
__kernel void denoise_blocks4(const __global uchar* restrict src, int src_first, int src_pitch,
                              __global uchar* restrict dst, int dst_first, int dst_pitch,
                              int width, int height, int y0, int y1) {
  const int x = 4 * (int)get_global_id(0);
  const int first = y0 + 4 * (int)get_global_id(1);  // the first row this work-item stores
  if (x < SEARCH + PATCH || x + 3 + SEARCH + PATCH >= width || y1 - y0 < 4) {
    for (int y = first; y < min(first + 4, y1); ++y) {
      __global uchar* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
      for (int p = 0; p < 4 && x + p < width; ++p) {
        store1(out, x + p, nlm_pixel(src, src_first, src_pitch, width, height, x + p, y));
      }
    }
    return;
  }
  const int ya = min(first, y1 - 4);  // the block's first row
#define ROW(r) (src + (size_t)(tandem_reflect101((r), height) - src_first) * src_pitch)
#define STRIP (4 + 2 * PATCH)
  const short16 colour = (short16)(-1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0);
  short16 patch[STRIP][2 * PATCH + 1];
#pragma unroll
  for (int s = 0; s < STRIP; ++s) {
    const __global uchar* restrict row = ROW(ya + s - PATCH);
#pragma unroll
    for (int px = 0; px <= 2 * PATCH; ++px) {
      patch[s][px] = convert_short16(vload16(0, row + 4 * (x + px - PATCH)));
    }
  }
  float16 acc[4] = {(float16)(0.0f), (float16)(0.0f), (float16)(0.0f), (float16)(0.0f)};
  float16 total = (float16)(0.0f);
  for (int dy = -SEARCH; dy <= SEARCH; ++dy) {
    const __global uchar* restrict rows[STRIP];
#pragma unroll
    for (int s = 0; s < STRIP; ++s) rows[s] = ROW(ya + s - PATCH + dy) + 4 * (x - PATCH);
    for (int dx = -SEARCH; dx <= SEARCH; ++dx) {
      int8 sums[STRIP];
#pragma unroll
      for (int s = 0; s < STRIP; ++s) {
        sums[s] = (int8)(0);
#pragma unroll
        for (int px = 0; px <= 2 * PATCH; ++px) {
          const short16 d =
              (patch[s][px] - convert_short16(vload16(0, rows[s] + 4 * (dx + px)))) & colour;
          sums[s] += TANDEM_MADD_PAIRS(d, d);
        }
      }
      int4 d2[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        int8 pairs = sums[r];
#pragma unroll
        for (int s = 1; s <= 2 * PATCH; ++s) pairs += sums[r + s];
        d2[r] = pairs.even + pairs.odd;
      }
      const float16 w =
          exp(-convert_float16((int16)(d2[0], d2[1], d2[2], d2[3])) * INV_H2);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const float16 q = convert_float16(vload16(0, rows[r + PATCH] + 4 * (dx + PATCH)));
        acc[r] = mad(ROW_LANES(w, r), q, acc[r]);
      }
      total += w;
    }
  }
#undef STRIP
#undef ROW
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    if (ya + r < first) continue;
    uchar16 v = tandem_levels8_16(acc[r] / ROW_LANES(total, r));
    const uchar16 centre = convert_uchar16(patch[r + PATCH][PATCH]);
    v.s37bf = centre.s37bf;
    *(__global uchar16*)(dst + (size_t)(ya + r - dst_first) * dst_pitch + 4 * x) = v;
  }
}
#undef ROW_LANES
#endif
