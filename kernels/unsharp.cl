// unsharp: out = in + AMOUNT * (in - mean), the mean over the (2 RADIUS + 1)^2 window with
// reflect-101 borders (FFmpeg's unsharp: its blur is such a mean). 8-bit results are rounded to
// nearest (ties to even) and saturated. Two schedules (filters/unsharp.cpp):
//  - rows (CPUs, and float frames): column sums of the band's rows into a float scratch image
//    (unsharp_vertical), then row sums of those and the sharpening (unsharp_horizontal); on
//    CPUs both a row at a time through local memory (unsharp_lines);
//  - tiles (GPUs, rgba8): both sums through separable.clh's local-memory tile with every tap 1,
//    and the sharpening, in one launch (unsharp_tiled).
// Sums of 8-bit values are whole numbers below 2^24 in float (255 * 23^2), so both schedules
// take the same mean. The last kernel stores through TANDEM_STORE4_*: a point-wise chain after
// it runs in it.
//   RADIUS  taps on each side; INV_AREA 1 / (2 RADIUS + 1)^2; AMOUNT; PIXEL_RGBA8 1 or 0

#if PIXEL_RGBA8
typedef uchar pixel_t;
inline float16 load4(const __global uchar* restrict p) {
  return convert_float16(*(const __global uchar16*)p);
}
#define STORE4(row, x, v) TANDEM_STORE4_RGBA8(row, x, tandem_levels8_16(v))
#else
typedef float pixel_t;
inline float16 load4(const __global float* restrict p) { return tandem_load4_rgba32f(p, 0); }
#define STORE4(row, x, v) TANDEM_STORE4_RGBA32F(row, x, v)
#endif

inline float16 sharpen(float16 in, float16 sum) {
  return fma((float16)(AMOUNT), in - sum * INV_AREA, in);
}

#ifndef TAPS

// Rows [y0, y1): for four pixels, the sum of src rows y - RADIUS .. y + RADIUS (reflected).
__kernel void unsharp_vertical(const __global pixel_t* restrict src, int src_first, int src_pitch,
                               __global float* restrict dst, int dst_first, int dst_pitch,
                               int height, int y0) {
  const int x = (int)get_global_id(0) * 4;
  const int y = y0 + (int)get_global_id(1);
  const bool near = height > RADIUS;
  const __global pixel_t* restrict column = src + 4 * x;
#define ROW(r) load4(column + (size_t)(tandem_reflect((r), height, near) - src_first) * src_pitch)
  float16 sum = ROW(y);
  for (int k = 1; k <= RADIUS; ++k) sum += ROW(y - k) + ROW(y + k);
#undef ROW
  tandem_store4_rgba32f(dst + (size_t)(y - dst_first) * dst_pitch, x, sum);
}

// The window's sum of one pixel's column sums, taps reflected at the row's ends.
inline float4 row_sum(const __global float* restrict row, int x, int width, bool near) {
  float4 sum = vload4(tandem_reflect(x, width, near), row);
  for (int k = 1; k <= RADIUS; ++k) {
    sum += vload4(tandem_reflect(x - k, width, near), row) +
           vload4(tandem_reflect(x + k, width, near), row);
  }
  return sum;
}

// Output rows [y0, y0 + rows): the row sums of the column sums, and the sharpening of `src`.
__kernel void unsharp_horizontal(const __global float* restrict sums, int sums_first,
                                 int sums_pitch, const __global pixel_t* restrict src,
                                 int src_first, int src_pitch, __global pixel_t* restrict dst,
                                 int dst_first, int dst_pitch, int width,
                                 int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 4;
  const int y = y0 + (int)get_global_id(1);
  const __global float* restrict row = sums + (size_t)(y - sums_first) * sums_pitch;
  // Lanes past the right edge fill the row's padding; their taps reflect into the row too.
  const bool near = width >= RADIUS + 4;
  const float16 sum = (float16)(row_sum(row, x, width, near), row_sum(row, x + 1, width, near),
                                row_sum(row, x + 2, width, near), row_sum(row, x + 3, width, near));
  const float16 in = load4(src + (size_t)(y - src_first) * src_pitch + 4 * x);
  STORE4(dst + (size_t)(y - dst_first) * dst_pitch, x, sharpen(in, sum));
}

// unsharp_lines (CPUs): both kernels above in one launch, a work-group of one work-item an
// output row: the row's column sums go into `line` in local memory with the RADIUS pixels past
// either end reflected, and the row sums are taken from there. The same sums in the same order,
// so the same pixels; the scratch image, 16 bytes a pixel written and read again, no longer
// goes through main memory, and no tap of the row is reflected on its own (PoCL, this VM's 2
// cores, 1080p rgba8, ms a frame, three runs of each alternating: 3.4-5.5 against 11.5-14.5).
__kernel void unsharp_lines(const __global pixel_t* restrict src, int src_first, int src_pitch,
                            __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                            int width, int height, int y0,
                            __local float4* restrict line TANDEM_EPILOGUE_PARAMS) {
  const int y = y0 + (int)get_group_id(0);
  const int groups = (width + 3) / 4;
  // Pixel x's column sums at centre[x], for x in [-RADIUS, 4 groups + RADIUS).
  __local float4* restrict centre = line + RADIUS;
  const bool near = height > RADIUS;
  const __global pixel_t* restrict rows[2 * RADIUS + 1];
  for (int k = -RADIUS; k <= RADIUS; ++k) {
    rows[k + RADIUS] = src + (size_t)(tandem_reflect(y + k, height, near) - src_first) * src_pitch;
  }
  for (int g = 0; g < groups; ++g) {
    float16 sum = load4(rows[RADIUS] + 16 * g);
    for (int k = 1; k <= RADIUS; ++k) {
      sum += load4(rows[RADIUS - k] + 16 * g) + load4(rows[RADIUS + k] + 16 * g);
    }
    centre[4 * g] = sum.s0123;
    centre[4 * g + 1] = sum.s4567;
    centre[4 * g + 2] = sum.s89ab;
    centre[4 * g + 3] = sum.scdef;
  }
  // Past the row's ends, the pixels the row sums reflect onto (the last group's lanes past the
  // width fill the row's padding, as unsharp_horizontal's do).
  tandem_reflect_line(centre, width, RADIUS, 4 * groups + RADIUS, width >= RADIUS + 4);
  const __global pixel_t* restrict in = rows[RADIUS];
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#define PIXELS4(x) (float16)(centre[x], centre[(x) + 1], centre[(x) + 2], centre[(x) + 3])
  for (int x = 0; x < 4 * groups; x += 4) {
    float16 sum = PIXELS4(x);
    for (int k = 1; k <= RADIUS; ++k) sum += PIXELS4(x - k) + PIXELS4(x + k);
#if defined(TANDEM_EPILOGUE) && PIXEL_RGBA8
    *(__global uchar16*)(out + 4 * x) = tandem_levels8_16(sharpen(load4(in + 4 * x), sum));
#else
    STORE4(out, x, sharpen(load4(in + 4 * x), sum));
#endif
  }
#undef PIXELS4
#if defined(TANDEM_EPILOGUE) && PIXEL_RGBA8
  TANDEM_EPILOGUE_OVER_RGBA8(out, 0, 4 * groups);  // the point-wise chain after it
#endif
}

#else

// Output rows [y0, y1), both sums in one launch (separable.clh, every tap 1).
__kernel __attribute__((reqd_work_group_size(SEP_GX, SEP_GY, 1))) void unsharp_tiled(
    const __global uchar* restrict src, int src_first, int src_pitch, __global uchar* restrict dst,
    int dst_first, int dst_pitch, int width, int height, int y0, int y1 TANDEM_EPILOGUE_PARAMS) {
  __local float4 tile[SEP_TILE_FLOAT4S];
  float16 sums[SEP_VR];
  separable_sums(src, src_first, src_pitch, width, height, y0, y1, tile, sums);
  const int x = 4 * (int)get_global_id(0);
  const int ya = separable_first_row(y0);
  if (x >= width) return;
#pragma unroll
  for (int o = 0; o < SEP_VR; ++o) {
    if (ya + o < y1) {
      const float16 in = load4(src + (size_t)(ya + o - src_first) * src_pitch + 4 * x);
      STORE4(dst + (size_t)(ya + o - dst_first) * dst_pitch, x, sharpen(in, sums[o]));
    }
  }
}

#endif
