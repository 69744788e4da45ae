// scale: output pixels from their taps in the input, with the weights and the arithmetic of
// OpenCV's cv::resize for the sizes and the method. filters/scale.cpp builds the table on the
// host (the same table its reference reads); a work-item computes four output pixels of a row
// and stores them through TANDEM_STORE4_* (a point-wise chain after the scale runs in it). Two
// ways, the same sums in the same order:
//  - scale_rows: every output pixel straight from its TAPS_X x TAPS_Y taps;
//  - scale_horizontal, then scale_vertical: each input row's sums for the output's columns
//    into a scratch image of 16 bytes a pixel, then each output pixel from TAPS_Y of those
//    (as cv::resize does): fewer taps where the output has more rows than the input's band.
//
// The table: for each output column (padded to a multiple of 4), then, from y_offset, for each
// output row, TAPS_X (TAPS_Y) input indices, clamped into the input (borders replicated), then
// as many weights: integers (11-bit fixed point for 8-bit interpolation, 1 for whole blocks), or
// the bits of floats (SUM_WEIGHTED).
//
// SUM, OpenCV's way of adding up the taps for the case:
//   SUM_LINEAR8   8-bit bilinear: integer row sums, then OpenCV's vertical rounding,
//                 ((b0 (h0 >> 4)) >> 16 + (b1 (h1 >> 4)) >> 16 + 2) >> 2
//   SUM_CUBIC8    8-bit bicubic: integer row sums, then a float vertical pass in the order of
//                 OpenCV's vector code, b0 h0 + (b1 h1 + (b2 h2 + b3 h3)), rounded to nearest even
//   SUM_FIXED8    8-bit lanczos: integers throughout, (v + 2^21) >> 22
//   SUM_BLOCKS8   8-bit area by whole factors: block sums; 2x2 (HALVES) (s + 2) >> 2, others
//                 s * INV_AREA rounded to nearest even
//   SUM_WEIGHTED  float weights and sums, each row's first, in OpenCV's order (rgba32f, and
//                 8-bit area by other factors); FINAL_SCALE, where defined, multiplies the sum
//                 (rgba32f area by whole factors: the block's sum times 1 / area)
// Contraction is off: the float passes round where the host reference and OpenCV do.
//   PIXEL_RGBA8 1 or 0; TAPS_X, TAPS_Y; SUM; HALVES and INV_AREA for SUM_BLOCKS8

#pragma OPENCL FP_CONTRACT OFF

#define SUM_LINEAR8 1
#define SUM_CUBIC8 2
#define SUM_FIXED8 3
#define SUM_BLOCKS8 4
#define SUM_WEIGHTED 5

#if PIXEL_RGBA8
typedef uchar pixel_t;
#define TAP_INT(row, i) convert_int4(((const __global uchar4*)(row))[i])
#define TAP_FLOAT(row, i) convert_float4(((const __global uchar4*)(row))[i])
#else
typedef float pixel_t;
#define TAP_FLOAT(row, i) (((const __global float4*)(row))[i])
#endif

#if SUM == SUM_WEIGHTED

// h = the weighted sum of `row`'s taps at input pixels idx[0 .. TAPS_X) with weights wt[..].
#define ROW_SUM(h, row, idx, wt)                              \
  do {                                                        \
    h = TAP_FLOAT(row, (idx)[0]) * as_float((wt)[0]);         \
    for (int i_ = 1; i_ < TAPS_X; ++i_) {                     \
      h = h + TAP_FLOAT(row, (idx)[i_]) * as_float((wt)[i_]); \
    }                                                         \
  } while (0)
typedef float4 row_t;
typedef float4 acc_t;
// Row j's sum `h`, weight `w`, added to the pixel's sum of the rows before it.
#define ACCUMULATE(acc, h, w, j) (acc) = (j) == 0 ? as_float(w) * (h) : (acc) + as_float(w) * (h)
#if PIXEL_RGBA8
#define FINISH(acc) tandem_levels8_4(acc)
#elif defined(FINAL_SCALE)
#define FINISH(acc) ((acc) * FINAL_SCALE)
#else
#define FINISH(acc) (acc)
#endif

#else

// h = the integer sum of `row`'s taps at input pixels idx[0 .. TAPS_X) with weights wt[..].
#define ROW_SUM(h, row, idx, wt)                                                 \
  do {                                                                           \
    h = TAP_INT(row, (idx)[0]) * (wt)[0];                                        \
    for (int i_ = 1; i_ < TAPS_X; ++i_) h += TAP_INT(row, (idx)[i_]) * (wt)[i_]; \
  } while (0)
typedef int4 row_t;
#if SUM == SUM_LINEAR8
typedef int4 acc_t;
#define ACCUMULATE(acc, h, w, j) (acc) = ((j) == 0 ? 0 : (acc)) + (((w) * ((h) >> 4)) >> 16)
#define FINISH(acc) convert_uchar4(clamp(((acc) + 2) >> 2, 0, 255))
#elif SUM == SUM_CUBIC8
// The rows from the last to the first, each term added to the sum of the rows after it; the
// weights scaled by 2^-22 (exact).
typedef float4 acc_t;
#define ACCUMULATE(acc, h, w, j)                            \
  (acc) = convert_float4(h) * ((float)(w) * 0x1.0p-22f) + \
          ((j) == TAPS_Y - 1 ? (float4)(0.0f) : (acc))
#define FINISH(acc) tandem_levels8_4(acc)
#elif SUM == SUM_FIXED8
typedef int4 acc_t;
#define ACCUMULATE(acc, h, w, j) (acc) = ((j) == 0 ? 0 : (acc)) + (h) * (w)
#define FINISH(acc) convert_uchar4(clamp(((acc) + (1 << 21)) >> 22, 0, 255))
#else  // SUM_BLOCKS8
typedef int4 acc_t;
#define ACCUMULATE(acc, h, w, j) (acc) = ((j) == 0 ? 0 : (acc)) + (h)
#if HALVES
#define FINISH(acc) convert_uchar4(((acc) + 2) >> 2)
#else
#define FINISH(acc) tandem_levels8_4(convert_float4(acc) * INV_AREA)
#endif
#endif

#endif

// Output rows [y0, y0 + rows) of the band, four pixels a work-item from x = 4 * id on; the last
// group of a row fills the row's padding (the table's padded columns repeat the last one). Row
// by row of the taps, each row's sums for the four pixels added to theirs: bicubic's from the
// last row to the first (OpenCV's order), the others from the first.
__kernel void scale_rows(const __global pixel_t* restrict src, int src_first, int src_pitch,
                         __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                         const __global int* restrict table, int y_offset,
                         int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global int* restrict ye = table + y_offset + y * (2 * TAPS_Y);
  const __global int* restrict xe = table + x * (2 * TAPS_X);
#define INDEX(p) (xe + (p) * 2 * TAPS_X)
#define WEIGHT(p) (xe + (p) * 2 * TAPS_X + TAPS_X)
  acc_t acc0, acc1, acc2, acc3;
#if SUM == SUM_CUBIC8
  for (int j = TAPS_Y - 1; j >= 0; --j) {
#else
  for (int j = 0; j < TAPS_Y; ++j) {
#endif
    const __global pixel_t* restrict row = src + (size_t)(ye[j] - src_first) * src_pitch;
    const int w = ye[TAPS_Y + j];
    row_t h;
    ROW_SUM(h, row, INDEX(0), WEIGHT(0));
    ACCUMULATE(acc0, h, w, j);
    ROW_SUM(h, row, INDEX(1), WEIGHT(1));
    ACCUMULATE(acc1, h, w, j);
    ROW_SUM(h, row, INDEX(2), WEIGHT(2));
    ACCUMULATE(acc2, h, w, j);
    ROW_SUM(h, row, INDEX(3), WEIGHT(3));
    ACCUMULATE(acc3, h, w, j);
  }
#undef INDEX
#undef WEIGHT
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  TANDEM_STORE4_RGBA8(out, x, (uchar16)(FINISH(acc0), FINISH(acc1), FINISH(acc2), FINISH(acc3)));
#else
  TANDEM_STORE4_RGBA32F(out, x, (float16)(FINISH(acc0), FINISH(acc1), FINISH(acc2), FINISH(acc3)));
#endif
}

// The row sums of input rows [r0, r0 + rows) for four output columns a work-item, into `sums`
// (row r at (r - sums_first) * sums_pitch row_t's).
__kernel void scale_horizontal(const __global pixel_t* restrict src, int src_first, int src_pitch,
                               __global row_t* restrict sums, int sums_first, int sums_pitch,
                               const __global int* restrict table, int r0) {
  const int x = 4 * (int)get_global_id(0);
  const int r = r0 + (int)get_global_id(1);
  const __global int* restrict xe = table + x * (2 * TAPS_X);
  const __global pixel_t* restrict row = src + (size_t)(r - src_first) * src_pitch;
  __global row_t* restrict out = sums + (size_t)(r - sums_first) * sums_pitch + x;
  row_t h;
  for (int p = 0; p < 4; ++p) {
    ROW_SUM(h, row, xe + p * 2 * TAPS_X, xe + p * 2 * TAPS_X + TAPS_X);
    out[p] = h;
  }
}

// Output rows [y0, y0 + rows) from the row sums, in scale_rows' order.
__kernel void scale_vertical(const __global row_t* restrict sums, int sums_first, int sums_pitch,
                             __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                             const __global int* restrict table, int y_offset,
                             int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global int* restrict ye = table + y_offset + y * (2 * TAPS_Y);
  acc_t acc0, acc1, acc2, acc3;
#if SUM == SUM_CUBIC8
  for (int j = TAPS_Y - 1; j >= 0; --j) {
#else
  for (int j = 0; j < TAPS_Y; ++j) {
#endif
    const __global row_t* restrict h = sums + (size_t)(ye[j] - sums_first) * sums_pitch + x;
    const int w = ye[TAPS_Y + j];
    ACCUMULATE(acc0, h[0], w, j);
    ACCUMULATE(acc1, h[1], w, j);
    ACCUMULATE(acc2, h[2], w, j);
    ACCUMULATE(acc3, h[3], w, j);
  }
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  TANDEM_STORE4_RGBA8(out, x, (uchar16)(FINISH(acc0), FINISH(acc1), FINISH(acc2), FINISH(acc3)));
#else
  TANDEM_STORE4_RGBA32F(out, x, (float16)(FINISH(acc0), FINISH(acc1), FINISH(acc2), FINISH(acc3)));
#endif
}
