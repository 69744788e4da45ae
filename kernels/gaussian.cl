// gaussian: separable Gaussian blur with reflect-101 borders, as OpenCV's GaussianBlur.
// gaussian_vertical filters the input's columns for the band's rows into a float scratch image,
// gaussian_horizontal filters the scratch rows into the output. Vertical first: its taps are
// rows apart, so they come from the cache's far levels, and on rgba8 they are 16 bytes each
// rather than the 64 of a float row; the horizontal taps overlap and hit the nearest cache.
// (OpenCV goes horizontal first; on rgba8 both orders give the same exact sums.)
//
// Compile-time constants from the host (filters/gaussian.cpp):
//   RADIUS           taps on each side of the centre
//   WEIGHTS          RADIUS + 1 floats, centre first; on rgba8 OpenCV's 8-bit weights, which
//                    are multiples of 1/256, so every sum below is exact in float
//   PIXEL_RGBA8      1: uchar pixels, values 0..255 throughout; 0: float pixels
//   GAUSSIAN_VROWS   output rows per work-item of the vertical pass: 4 on GPUs, where loading
//                    each input row once for four outputs saves memory traffic; 1 on CPUs,
//                    where the rows come from cache and one accumulator per work-item keeps
//                    PoCL's vectorisation across work-items simple
//   TAPS             (tiled schedule) the rgba8 weights times 256, integers
//   ROW_TAPS         (rows schedule, rgba8) the same integers: with GAUSSIAN_VROWS 1 (CPUs) the
//                    vertical pass sums in 16-bit integers, sixteen lanes to a 32-byte vector
//                    where float takes eight, and no conversion of each tap's bytes to float:
//                    1.6x faster on PoCL (this VM's 2 cores, 1080p: 2.1 ms against 3.4), and
//                    its sums / 256 are the float ones to the bit
// Work-items handle four pixels: one 16-byte (rgba8) or 64-byte (rgba32f) load per tap.
//
// Two schedules (filters/gaussian.cpp picks one per device):
//  - tiles (GPUs, rgba8, RADIUS <= 24): gaussian_tiled, both passes in one launch through a
//    local-memory tile (separable.clh); exact integer sums, equal to the rows schedule.
//  - rows: gaussian_vertical then gaussian_horizontal through a float scratch image; on CPUs
//    on rgba8, gaussian_lines: the same two passes a row at a time through local memory.
// The last kernel stores through TANDEM_STORE4_*: a point-wise chain after the blur runs in it.

// Tap loops unroll fully up to a radius where the unrolled code stops paying: past it, loop
// overhead is small against the taps' loads, and a fully unrolled sigma 64 kernel (257 taps)
// takes PoCL tens of seconds to build.
#if RADIUS <= 32
#define UNROLL_TAPS _Pragma("unroll")
#else
#define UNROLL_TAPS _Pragma("unroll 8")
#endif

#ifdef PLANE_BITS
// Frames of Y'CbCr 4:2:0 planes (yuv420p, yuv420p10, yuv420p12), each plane blurred on its own, the 4:2:0 chroma
// planes with half the sigma (filters/gaussian.cpp). The rows schedule's integer arithmetic on
// single samples: vertically 16-bit sums (32-bit at 10 bits) of the taps times the samples into a
// scratch image, horizontally 32-bit sums of those, rounded half up by 2^16: the rgba8 kernels'
// sums on each channel, so an 8-bit plane gets OpenCV's GaussianBlur of it to the bit. Sixteen
// samples a work-item. Two schedules:
//  - rows (CPUs): a launch a plane and pass, the program built for that plane's taps:
//      RADIUS, ROW_TAPS            taps on each side and the RADIUS + 1 integer weights
//                                  (multiples of 1/256), centre first
//  - tiles (GPUs): one launch a pass over the rows of all three planes (a launch a plane left
//    the GPU waiting on six launches of a few microseconds' work), the program built with both:
//      RADIUS, LUMA_TAPS           Y's
//      CHROMA_RADIUS, CHROMA_TAPS  Cb's and Cr's
//   PLANE_BITS  8, or 10 for deeper samples (16-bit; 12-bit sums fit as well)

#if PLANE_BITS == 8
typedef uchar sample_t;
typedef uchar16 sample16_t;
typedef ushort column_t;  // 255 times the taps' sum, 256, fits 16 bits
typedef ushort16 column16_t;
#define CONVERT_COLUMN16 convert_ushort16
#define CONVERT_SAMPLE16 convert_uchar16
#else
typedef ushort sample_t;
typedef ushort16 sample16_t;
typedef uint column_t;
typedef uint16 column16_t;
#define CONVERT_COLUMN16 convert_uint16
#define CONVERT_SAMPLE16 convert_ushort16
#endif

// Samples x .. x + 15 of row y of plane `plane` from their horizontal sums, through the
// epilogue, if any.
inline void plane_store(__global sample_t* restrict dst, int first, int pitch, int plane, int x,
                        int y, uint16 acc TANDEM_EPILOGUE_PARAMS) {
  // At most the largest code: the taps sum to 256 each way.
  const uint16 codes = (acc + 32768u) >> 16;
#ifdef TANDEM_EPILOGUE
  const sample16_t out = tandem_plane_epilogue_identity(plane TANDEM_EPILOGUE_ARGS)
                             ? CONVERT_SAMPLE16(codes)
                             : CONVERT_SAMPLE16(tandem_codes16(tandem_plane_epilogue(
                                   convert_float16(as_int16(codes)), plane TANDEM_EPILOGUE_ARGS)));
#else
  const sample16_t out = CONVERT_SAMPLE16(codes);
#endif
  *(__global sample16_t*)(dst + tandem_plane_offset(plane, y, first, pitch) + x) = out;
}

#ifdef CHROMA_RADIUS

__constant uint kLumaTaps[RADIUS + 1] = {LUMA_TAPS};
__constant uint kChromaTaps[CHROMA_RADIUS + 1] = {CHROMA_TAPS};

// The plane (s0) and plane row (s1) of a launch's row r, and the plane's width (s2) and height
// (s3), for a band of Y' rows [y0, y1) of a width x height frame.
inline int4 plane_of_row(int r, int y0, int y1, int width, int height) {
  const int luma_rows = y1 - y0;
  if (r < luma_rows) return (int4)(0, y0 + r, width, height);
  const int c0 = y0 >> 1;
  const int chroma_rows = ((y1 + 1) >> 1) - c0;
  r -= luma_rows;
  return (int4)(1 + r / chroma_rows, c0 + r % chroma_rows, (width + 1) >> 1, (height + 1) >> 1);
}

// Sums wrap past 16 bits on the way (a pair of taps before its weight), never at the end.
#define PLANE_ROW(r)                                                                      \
  CONVERT_COLUMN16(*(const __global sample16_t*)(src +                                   \
                                                 tandem_plane_offset(plane, (r), first,   \
                                                                     pitch) +             \
                                                 x))

// plane_vertical_NAME(): the vertical sums of samples x .. x + 15 of row y of plane `plane`
// (height rows); plane_horizontal_NAME(): the horizontal sums of entries x .. x + 15 of `row` of
// vertical sums (width entries). Defined for Y' (luma) and Cb and Cr (chroma) apart, so that
// each has its taps and radius as constants and its loops unroll.
#define PLANE_PASSES(NAME, TAPS, R)                                                             \
  inline column16_t plane_vertical_##NAME(const __global sample_t* restrict src, int first,   \
                                          int pitch, int plane, int x, int y, int height) {   \
    column16_t acc = (column_t)TAPS[0] * PLANE_ROW(y);                                       \
    if (y >= R && y + R < height) {                                                           \
      UNROLL_TAPS                                                                             \
      for (int k = 1; k <= R; ++k) {                                                          \
        acc += (column_t)TAPS[k] * (PLANE_ROW(y - k) + PLANE_ROW(y + k));                    \
      }                                                                                       \
    } else {                                                                                  \
      const bool near = height > R;                                                           \
      for (int k = 1; k <= R; ++k) {                                                          \
        acc += (column_t)TAPS[k] * (PLANE_ROW(tandem_reflect(y - k, height, near)) +         \
                                    PLANE_ROW(tandem_reflect(y + k, height, near)));         \
      }                                                                                       \
    }                                                                                         \
    return acc;                                                                               \
  }                                                                                           \
                                                                                              \
  inline uint16 plane_horizontal_##NAME(const __global column_t* restrict row, int x,         \
                                        int width) {                                          \
    if (x >= R && x + 15 + R < width) {                                                       \
      uint16 acc = TAPS[0] * convert_uint16(vload16(0, row + x));                             \
      UNROLL_TAPS                                                                             \
      for (int k = 1; k <= R; ++k) {                                                          \
        acc += TAPS[k] * (convert_uint16(vload16(0, row + x - k)) +                           \
                          convert_uint16(vload16(0, row + x + k)));                           \
      }                                                                                       \
      return acc;                                                                             \
    }                                                                                         \
    /* Lanes past the width fill the row's padding; their taps reflect into the row too, so  \
       the cheap reflection holds while width >= R + 16. */                                   \
    const bool near = width >= R + 16;                                                        \
    uint lanes[16];                                                                           \
    for (int p = 0; p < 16; ++p) {                                                            \
      uint a = TAPS[0] * row[tandem_reflect(x + p, width, near)];                             \
      for (int k = 1; k <= R; ++k) {                                                          \
        a += TAPS[k] * (row[tandem_reflect(x + p - k, width, near)] +                         \
                        row[tandem_reflect(x + p + k, width, near)]);                         \
      }                                                                                       \
      lanes[p] = a;                                                                           \
    }                                                                                         \
    return vload16(0, lanes);                                                                 \
  }

PLANE_PASSES(luma, kLumaTaps, RADIUS)
PLANE_PASSES(chroma, kChromaTaps, CHROMA_RADIUS)
#undef PLANE_PASSES
#undef PLANE_ROW

// The tiles schedule (GPUs): two launches a band, each over the rows of all three planes, where a
// launch a plane left the GPU waiting on six launches of a few microseconds' work.
// The band's rows of every plane filtered vertically: launch row r into row r of dst.
__kernel void gaussian_plane_tiled_vertical(const __global sample_t* restrict src, int src_first,
                                      int src_pitch, __global column_t* restrict dst,
                                      int dst_pitch, int width, int height, int y0, int y1) {
  const int x = (int)get_global_id(0) * 16;
  const int r = (int)get_global_id(1);
  const int4 at = plane_of_row(r, y0, y1, width, height);
  if (x >= at.s2) return;
  const column16_t acc =
      at.s0 ? plane_vertical_chroma(src, src_first, src_pitch, at.s0, x, at.s1, at.s3)
            : plane_vertical_luma(src, src_first, src_pitch, 0, x, at.s1, at.s3);
  *(__global column16_t*)(dst + (size_t)r * dst_pitch + x) = acc;
}

// The same rows from the vertical sums in src into dst, through the epilogue, if any.
__kernel void gaussian_plane_tiled_horizontal(const __global column_t* restrict src, int src_pitch,
                                        __global sample_t* restrict dst, int dst_first,
                                        int dst_pitch, int width, int height, int y0,
                                        int y1 TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 16;
  const int r = (int)get_global_id(1);
  const int4 at = plane_of_row(r, y0, y1, width, height);
  if (x >= at.s2) return;
  const __global column_t* restrict row = src + (size_t)r * src_pitch;
  const uint16 acc =
      at.s0 ? plane_horizontal_chroma(row, x, at.s2) : plane_horizontal_luma(row, x, at.s2);
  plane_store(dst, dst_first, dst_pitch, at.s0, x, at.s1, acc TANDEM_EPILOGUE_ARGS);
}


#else  // the rows schedule

__constant uint kPlaneTaps[RADIUS + 1] = {ROW_TAPS};

// Rows [y0, y0 + rows) of plane `plane` (plane_height rows) filtered vertically into dst, whose
// row 0 is row y0.
__kernel void gaussian_plane_vertical(const __global sample_t* restrict src, int src_first,
                                      int src_pitch, __global column_t* restrict dst,
                                      int dst_pitch, int plane, int plane_height, int y0) {
  const int x = (int)get_global_id(0) * 16;
  const int y = y0 + (int)get_global_id(1);
  // Sums wrap past 16 bits on the way (a pair of taps before its weight), never at the end.
#define PLANE_ROW(r)                                                                         \
  CONVERT_COLUMN16(*(const __global sample16_t*)(src +                                      \
                                                 tandem_plane_offset(plane, (r), src_first,  \
                                                                     src_pitch) +            \
                                                 x))
  column16_t acc = (column_t)kPlaneTaps[0] * PLANE_ROW(y);
  if (y >= RADIUS && y + RADIUS < plane_height) {
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) {
      acc += (column_t)kPlaneTaps[k] * (PLANE_ROW(y - k) + PLANE_ROW(y + k));
    }
  } else {
    const bool near = plane_height > RADIUS;
    for (int k = 1; k <= RADIUS; ++k) {
      acc += (column_t)kPlaneTaps[k] * (PLANE_ROW(tandem_reflect(y - k, plane_height, near)) +
                                        PLANE_ROW(tandem_reflect(y + k, plane_height, near)));
    }
  }
#undef PLANE_ROW
  *(__global column16_t*)(dst + (size_t)(y - y0) * dst_pitch + x) = acc;
}

// Rows [y0, y0 + rows) of plane `plane` (plane_width samples a row) from the vertical sums in
// src (row 0 is row y0), into dst.
__kernel void gaussian_plane_horizontal(const __global column_t* restrict src, int src_pitch,
                                        __global sample_t* restrict dst, int dst_first,
                                        int dst_pitch, int plane, int plane_width,
                                        int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 16;
  const int y = y0 + (int)get_global_id(1);
  const __global column_t* restrict row = src + (size_t)(y - y0) * src_pitch;
  uint16 acc;
  if (x >= RADIUS && x + 15 + RADIUS < plane_width) {
    acc = kPlaneTaps[0] * convert_uint16(vload16(0, row + x));
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) {
      acc += kPlaneTaps[k] *
             (convert_uint16(vload16(0, row + x - k)) + convert_uint16(vload16(0, row + x + k)));
    }
  } else {
    // Lanes past the width fill the row's padding; their taps reflect into the row too, so the
    // cheap reflection holds while plane_width >= RADIUS + 16.
    const bool near = plane_width >= RADIUS + 16;
    uint lanes[16];
    for (int p = 0; p < 16; ++p) {
      uint a = kPlaneTaps[0] * row[tandem_reflect(x + p, plane_width, near)];
      for (int k = 1; k <= RADIUS; ++k) {
        a += kPlaneTaps[k] * (row[tandem_reflect(x + p - k, plane_width, near)] +
                              row[tandem_reflect(x + p + k, plane_width, near)]);
      }
      lanes[p] = a;
    }
    acc = vload16(0, lanes);
  }
  plane_store(dst, dst_first, dst_pitch, plane, x, y, acc TANDEM_EPILOGUE_ARGS);
}

#endif  // CHROMA_RADIUS

#else

__constant float kWeights[RADIUS + 1] = {WEIGHTS};

#if PIXEL_RGBA8
typedef uchar pixel_t;
inline float16 load4(const __global uchar* restrict p) {
  return convert_float16(*(const __global uchar16*)p);
}
// Half up, as OpenCV's fixed-point blur rounds; the sum is exact, so this is bit-exact.
#define STORE4(row, x, v) TANDEM_STORE4_RGBA8(row, x, convert_uchar16_sat((v) + 0.5f))
#else
typedef float pixel_t;
inline float16 load4(const __global float* restrict p) { return tandem_load4_rgba32f(p, 0); }
#define STORE4(row, x, v) TANDEM_STORE4_RGBA32F(row, x, v)
#endif

// Rows [y0, y1) of the vertically filtered input, four pixels per work-item.
__kernel void gaussian_vertical(const __global pixel_t* restrict src, int src_first, int src_pitch,
                                __global float* restrict dst, int dst_first, int dst_pitch,
                                int height, int y0, int y1) {
  const int x = (int)get_global_id(0) * 4;
  const int ya = y0 + (int)get_global_id(1) * GAUSSIAN_VROWS;
  const __global pixel_t* restrict column = src + 4 * x;
  __global float* restrict out = dst + 4 * x;
  // Row offsets reach -RADIUS .. height - 1 + RADIUS.
  const bool near = height > RADIUS;
#define ROW(r) load4(column + (size_t)((r) - src_first) * src_pitch)
#if GAUSSIAN_VROWS == 1 && PIXEL_RGBA8 && defined(ROW_TAPS)
  // 16-bit integer sums, 16 lanes to a CPU's 32-byte vector: the taps are the weights times 256,
  // every partial sum at most 255 * 256 (the taps sum to 256 and no term is negative).
  __constant ushort kTaps16[RADIUS + 1] = {ROW_TAPS};
#define ROW16(r) \
  convert_ushort16(*(const __global uchar16*)(column + (size_t)((r) - src_first) * src_pitch))
  ushort16 acc16;
  if (ya >= RADIUS && ya + RADIUS < height) {
    acc16 = kTaps16[0] * ROW16(ya);
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) acc16 += kTaps16[k] * (ROW16(ya - k) + ROW16(ya + k));
  } else {
    acc16 = kTaps16[0] * ROW16(ya);
    for (int k = 1; k <= RADIUS; ++k) {
      acc16 += kTaps16[k] * (ROW16(tandem_reflect(ya - k, height, near)) +
                             ROW16(tandem_reflect(ya + k, height, near)));
    }
  }
#undef ROW16
  tandem_store4_rgba32f(out + (size_t)(ya - dst_first) * dst_pitch, 0,
                        convert_float16(acc16) * (1.0f / 256.0f));
#elif GAUSSIAN_VROWS == 1
  float16 acc;
  if (ya >= RADIUS && ya + RADIUS < height) {
    const __global pixel_t* restrict centre = column + (size_t)(ya - src_first) * src_pitch;
    acc = kWeights[0] * load4(centre);
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) {
      const size_t step = (size_t)k * src_pitch;
      acc = mad((float16)kWeights[k], load4(centre - step) + load4(centre + step), acc);
    }
  } else {
    acc = kWeights[0] * ROW(ya);
    for (int k = 1; k <= RADIUS; ++k) {
      acc = mad((float16)kWeights[k],
                ROW(tandem_reflect(ya - k, height, near)) +
                    ROW(tandem_reflect(ya + k, height, near)),
                acc);
    }
  }
  tandem_store4_rgba32f(out + (size_t)(ya - dst_first) * dst_pitch, 0, acc);
#else
  // Rows ya - RADIUS .. ya + VROWS - 1 + RADIUS, each loaded once and added to every output row
  // within reach. Rows only outputs past y1 need are clamped to the last row the band has
  // (those outputs are not stored).
  float16 acc[GAUSSIAN_VROWS];
#pragma unroll
  for (int o = 0; o < GAUSSIAN_VROWS; ++o) acc[o] = (float16)(0.0f);
  const bool interior =
      ya >= RADIUS && ya + GAUSSIAN_VROWS - 1 + RADIUS < height && ya + GAUSSIAN_VROWS <= y1;
  const int last = y1 - 1 + RADIUS;
  UNROLL_TAPS
  for (int t = -RADIUS; t <= RADIUS + GAUSSIAN_VROWS - 1; ++t) {
    const float16 v = ROW(interior ? ya + t : tandem_reflect(min(ya + t, last), height, near));
#pragma unroll
    for (int o = 0; o < GAUSSIAN_VROWS; ++o) {
      const int k = t - o;
      if (k >= -RADIUS && k <= RADIUS) acc[o] = mad((float16)kWeights[abs(k)], v, acc[o]);
    }
  }
#pragma unroll
  for (int o = 0; o < GAUSSIAN_VROWS; ++o) {
    if (ya + o < y1) {
      tandem_store4_rgba32f(out + (size_t)(ya + o - dst_first) * dst_pitch, 0, acc[o]);
    }
  }
#endif
#undef ROW
}

#if GAUSSIAN_VROWS == 1 && PIXEL_RGBA8 && defined(ROW_TAPS)
// gaussian_lines (CPUs, rgba8): both passes of the rows schedule in one launch, a work-group of
// one work-item an output row. The row's vertical sums go into `line` in local memory, floats as
// gaussian_vertical stores them, with the RADIUS pixels past either end reflected; the
// horizontal pass reads them from there as gaussian_horizontal does from the scratch image.
// The same sums in the same order, so the same pixels. The scratch image of the two kernels,
// 16 bytes a pixel written and read again, went through main memory; a line stays in the core's
// cache (PoCL, this VM's 2 cores, 1080p, ms a frame, four runs of each alternating: sigma=2
// 4.3-4.8 against 4.7-6.8, sigma=8 12.8-14.3 against 17.3-17.5). The line as float4s: through
// vload16 from a float pointer PoCL split each tap's load into 8-byte pieces and spilled (8 ms).
__kernel void gaussian_lines(const __global uchar* restrict src, int src_first, int src_pitch,
                             __global uchar* restrict dst, int dst_first, int dst_pitch,
                             int width, int height, int y0,
                             __local float4* restrict line TANDEM_EPILOGUE_PARAMS) {
  __constant ushort kTaps16[RADIUS + 1] = {ROW_TAPS};
  const int y = y0 + (int)get_group_id(0);
  const int groups = (width + 3) / 4;
  // Pixel x at centre[x], for x in [-RADIUS, 4 groups + RADIUS).
  __local float4* restrict centre = line + RADIUS;
  const bool near = height > RADIUS;
  const bool inside = y >= RADIUS && y + RADIUS < height;
  const __global uchar* restrict rows[2 * RADIUS + 1];
  for (int k = -RADIUS; k <= RADIUS; ++k) {
    rows[k + RADIUS] =
        src + (size_t)((inside ? y + k : tandem_reflect(y + k, height, near)) - src_first) *
                  src_pitch;
  }
#define TAP16(k, g) convert_ushort16(*(const __global uchar16*)(rows[(k) + RADIUS] + 16 * (g)))
  for (int g = 0; g < groups; ++g) {
    ushort16 acc16 = kTaps16[0] * TAP16(0, g);
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) acc16 += kTaps16[k] * (TAP16(-k, g) + TAP16(k, g));
    const float16 v = convert_float16(acc16) * (1.0f / 256.0f);
    centre[4 * g] = v.s0123;
    centre[4 * g + 1] = v.s4567;
    centre[4 * g + 2] = v.s89ab;
    centre[4 * g + 3] = v.scdef;
  }
#undef TAP16
  // Past the row's ends, the pixels the horizontal taps reflect onto (the last group's lanes
  // past the width fill the row's padding, as gaussian_horizontal's do).
  tandem_reflect_line(centre, width, RADIUS, 4 * groups + RADIUS, width >= RADIUS + 4);
  __global uchar* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#define PIXELS4(x) (float16)(centre[x], centre[(x) + 1], centre[(x) + 2], centre[(x) + 3])
  for (int x = 0; x < 4 * groups; x += 4) {
    float16 acc = kWeights[0] * PIXELS4(x);
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) {
      acc = mad((float16)kWeights[k], PIXELS4(x - k) + PIXELS4(x + k), acc);
    }
#ifdef TANDEM_EPILOGUE
    *(__global uchar16*)(out + 4 * x) = convert_uchar16_sat(acc + 0.5f);
#else
    STORE4(out, x, acc);
#endif
  }
#undef PIXELS4
#ifdef TANDEM_EPILOGUE
  TANDEM_EPILOGUE_OVER_RGBA8(out, 0, 4 * groups);  // the point-wise chain after the blur
#endif
}
#endif

// One output pixel of the horizontal pass with reflected taps (groups touching a border).
inline float4 horizontal_pixel(const __global float* restrict row, int x, int width, bool near) {
  float4 acc = kWeights[0] * vload4(tandem_reflect(x, width, near), row);
  for (int k = 1; k <= RADIUS; ++k) {
    acc = mad((float4)kWeights[k],
              vload4(tandem_reflect(x - k, width, near), row) +
                  vload4(tandem_reflect(x + k, width, near), row),
              acc);
  }
  return acc;
}

// Output rows [y0, y0 + rows) from the vertically filtered rows in src.
__kernel void gaussian_horizontal(const __global float* restrict src, int src_first,
                                  int src_pitch, __global pixel_t* restrict dst, int dst_first,
                                  int dst_pitch, int width, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 4;
  const int y = y0 + (int)get_global_id(1);
  const __global float* restrict row = src + (size_t)(y - src_first) * src_pitch;
  float16 acc;
  if (x >= RADIUS && x + 3 + RADIUS < width) {
    const __global float* restrict centre = row + 4 * x;
    acc = kWeights[0] * tandem_load4_rgba32f(centre, 0);
    UNROLL_TAPS
    for (int k = 1; k <= RADIUS; ++k) {
      acc = mad((float16)kWeights[k],
                tandem_load4_rgba32f(centre, -k) + tandem_load4_rgba32f(centre, k), acc);
    }
  } else {
    // Lanes past the right edge (x + 3 < width + 3) fill the row's padding; their taps reflect
    // into the row too, so the cheap reflection holds while width >= RADIUS + 4.
    const bool near = width >= RADIUS + 4;
    acc = (float16)(horizontal_pixel(row, x, width, near),
                    horizontal_pixel(row, x + 1, width, near),
                    horizontal_pixel(row, x + 2, width, near),
                    horizontal_pixel(row, x + 3, width, near));
  }
  STORE4(dst + (size_t)(y - dst_first) * dst_pitch, x, acc);
}

#if PIXEL_RGBA8 && defined(TAPS)
// Output rows [y0, y1), both passes in one launch (separable.clh); the integer sums are 65536
// times the float ones of the rows schedule, rounded the same way: half up.
__kernel __attribute__((reqd_work_group_size(SEP_GX, SEP_GY, 1))) void gaussian_tiled(
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
      // floor(sum / 65536 + 1/2), every step exact: sum / 65536 below 256 takes 24 bits.
      TANDEM_STORE4_RGBA8_LEVELS(dst + (size_t)(ya + o - dst_first) * dst_pitch, x,
                                 floor(mad(sums[o], (float16)(1.0f / 65536.0f), (float16)(0.5f))));
    }
  }
}
#endif

#endif  // PLANE_BITS
