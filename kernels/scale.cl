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
// More schedules (filters/scale.cpp picks them):
//  - scale_blocks: area by whole factors BLOCK_X x BLOCK_Y (and bilinear's 2x2 downscale), on
//    every device, reading no table: a work-item loads its pixels' blocks of each input row as
//    aligned 16-byte words for 2x2 blocks of rgba8 and for rgba32f (a float4 a pixel), as
//    4-byte words at fixed offsets otherwise (the table gathers them at indices it holds);
//  - scale_tiled (GPUs, where row sums save taps): scale_horizontal's sums of the input rows a
//    work-group's TILE_ROWS output rows reach, into local memory, then scale_vertical's sums from
//    there: one launch, and no scratch image in global memory;
//  - scale_halves16 (CPUs, 2x2 blocks of rgba8): scale_blocks sixteen output pixels a
//    work-item, a cache line of output a row;
//  - scale_rows16 (CPUs, 8 bits with integer sums): scale_rows 16 lanes wide, each work-item
//    walking down WALK output rows of GROUPS16 groups of four columns with the sums of the input
//    rows it reached in a ring, below.
//
// The table: for each output column (padded to a multiple of 4), then, from y_offset, for each
// output row, TAPS_X (TAPS_Y) input indices, clamped into the input (borders replicated), then
// as many weights: integers (11-bit fixed point for 8-bit interpolation, 1 for whole blocks), or
// the bits of floats (SUM_WEIGHTED); with CONSECUTIVE, each column's indices are consecutive
// from its first (the host merged the taps the border clamps onto one pixel). Then, from
// x_offset, the columns' entries again by tap: tap i's indices of all padded_width columns,
// then tap i + 1's, ..., then the weights likewise, which GPUs read (COLUMNS_BY_TAP): a
// work-item loads its four columns' indices of a tap as one int4, its neighbours the next ones,
// where entries by column would have a warp's work-items load words 32 TAPS_X bytes apart, a
// cache line each.
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
//   PIXEL_RGBA8 1 or 0; COLUMNS_BY_TAP 1 or 0; CONSECUTIVE 1 or 0; TAPS_X, TAPS_Y; SUM;
//   HALVES and INV_AREA for SUM_BLOCKS8; BLOCK_X and BLOCK_Y for scale_blocks; TILE_W, TILE_H,
//   TILE_ROWS and IN_ROWS (the most input rows TILE_ROWS output rows reach) for scale_tiled, with
//   TWICE_X and PAIRS (1 or 0, 8 bits only: its shortcuts, below it); WALK and GROUPS16 for
//   scale_rows16

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

// h = h + row's tap i, input pixel `index` with weight `w` (h = the term for tap 0).
#define ADD_TAP(h, row, index, w, i) \
  (h) = (i) == 0 ? TAP_FLOAT(row, index) * as_float(w) : (h) + TAP_FLOAT(row, index) * as_float(w)
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

// h = h + row's tap i, input pixel `index` with weight `w` (h = the term for tap 0).
#define ADD_TAP(h, row, index, w, i) (h) = ((i) == 0 ? 0 : (h)) + TAP_INT(row, index) * (w)
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

// The taps of the work-item's four columns from x (a multiple of 4): after TAP_COLUMNS(i),
// COLUMN_INDEX(p, i) and COLUMN_WEIGHT(p, i) are tap i's input index and weight of column
// x + p, p a literal 0..3.
// COLUMNS_BY_TAP 1 (the tiles schedule, GPUs): from the copy by tap, one int4 a tap of indices
// and one of weights, held in registers from the start up to 8 taps, loaded tap by tap beyond
// (area downscales by large factors: 1080p to 60x34 has 33 taps a side). 0 (rows, CPUs): from
// the entries by column, in place, which a CPU's work-item finds side by side in its cache
// (PoCL, 2 cores, 1080p to 720p bilinear: 4.8 ms by column, 6.6 ms by tap).
#if COLUMNS_BY_TAP
#define LOAD_COLUMNS(table, x_offset, padded_width, x)                                       \
  const __global int4* restrict columns_ = (const __global int4*)((table) + (x_offset)) +    \
                                           (x) / 4;                                         \
  const int column_stride_ = (padded_width) / 4;                                             \
  HOLD_COLUMNS
#define COLUMNS_OF(i, part) columns_[((part) * TAPS_X + (i)) * column_stride_]
#if TAPS_X <= 8
#define HOLD_COLUMNS                                  \
  int4 indices_[TAPS_X], weights_[TAPS_X];             \
  for (int i_ = 0; i_ < TAPS_X; ++i_) {                \
    indices_[i_] = COLUMNS_OF(i_, 0);                  \
    weights_[i_] = COLUMNS_OF(i_, 1);                  \
  }
#define TAP_COLUMNS(i) const int4 index_ = indices_[i], weight_ = weights_[i]
#else
#define HOLD_COLUMNS
#define TAP_COLUMNS(i) const int4 index_ = COLUMNS_OF(i, 0), weight_ = COLUMNS_OF(i, 1)
#endif
#define COLUMN_INDEX(p, i) index_.s##p
#define COLUMN_WEIGHT(p, i) weight_.s##p
#else
#define LOAD_COLUMNS(table, x_offset, padded_width, x) \
  const __global int* restrict xe_ = (table) + (x) * (2 * TAPS_X)
#define TAP_COLUMNS(i)
#define COLUMN_INDEX(p, i) xe_[(p) * 2 * TAPS_X + (i)]
#define COLUMN_WEIGHT(p, i) xe_[(p) * 2 * TAPS_X + TAPS_X + (i)]
#endif

// h0 .. h3 = `row`'s sums for the four columns, tap by tap from the first.
#define ROW_SUMS(h0, h1, h2, h3, row)                                 \
  for (int i_ = 0; i_ < TAPS_X; ++i_) {                                \
    TAP_COLUMNS(i_);                                                   \
    ADD_TAP(h0, row, COLUMN_INDEX(0, i_), COLUMN_WEIGHT(0, i_), i_);   \
    ADD_TAP(h1, row, COLUMN_INDEX(1, i_), COLUMN_WEIGHT(1, i_), i_);   \
    ADD_TAP(h2, row, COLUMN_INDEX(2, i_), COLUMN_WEIGHT(2, i_), i_);   \
    ADD_TAP(h3, row, COLUMN_INDEX(3, i_), COLUMN_WEIGHT(3, i_), i_);   \
  }

// A loop over the rows' taps j in OpenCV's order: bicubic's from the last row to the first, the
// others from the first.
#if SUM == SUM_CUBIC8
#define FOR_ROW_TAPS(j) for (int j = TAPS_Y - 1; j >= 0; --j)
#else
#define FOR_ROW_TAPS(j) for (int j = 0; j < TAPS_Y; ++j)
#endif

// Stores the four pixels' sums, finished, at column x of `out`.
#if PIXEL_RGBA8
#define STORE_SUMS(out, x, a0, a1, a2, a3) \
  TANDEM_STORE4_RGBA8(out, x, (uchar16)(FINISH(a0), FINISH(a1), FINISH(a2), FINISH(a3)))
#else
#define STORE_SUMS(out, x, a0, a1, a2, a3) \
  TANDEM_STORE4_RGBA32F(out, x, (float16)(FINISH(a0), FINISH(a1), FINISH(a2), FINISH(a3)))
#endif

// Output rows [y0, y0 + rows) of the band, four pixels a work-item from x = 4 * id on; the last
// group of a row fills the row's padding (the table's padded columns repeat the last one). Row
// by row of the taps, each row's sums for the four pixels added to theirs: bicubic's from the
// last row to the first (OpenCV's order), the others from the first.
__kernel void scale_rows(const __global pixel_t* restrict src, int src_first, int src_pitch,
                         __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                         const __global int* restrict table, int x_offset, int padded_width,
                         int y_offset, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global int* restrict ye = table + y_offset + y * (2 * TAPS_Y);
  LOAD_COLUMNS(table, x_offset, padded_width, x);
  acc_t acc0, acc1, acc2, acc3;
  FOR_ROW_TAPS(j) {
    const __global pixel_t* restrict row = src + (size_t)(ye[j] - src_first) * src_pitch;
    const int w = ye[TAPS_Y + j];
    row_t h0, h1, h2, h3;
    ROW_SUMS(h0, h1, h2, h3, row);
    ACCUMULATE(acc0, h0, w, j);
    ACCUMULATE(acc1, h1, w, j);
    ACCUMULATE(acc2, h2, w, j);
    ACCUMULATE(acc3, h3, w, j);
  }
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
  STORE_SUMS(out, x, acc0, acc1, acc2, acc3);
}

#if PIXEL_RGBA8 && SUM != SUM_WEIGHTED && SUM != SUM_BLOCKS8 && defined(WALK)
// scale_rows16: scale_rows for CPUs on 8 bits (the rows schedule), the same sums in the same
// order with the four pixels' channels side by side in 16-wide vectors (two AVX2 registers),
// where scale_rows keeps one 4-wide vector a pixel: PoCL leaves a work-item's code at the width
// it is written in where the work-items gather (PoCL, 2 cores, 1080p to 720p bilinear: 5.0 ms
// in scale_rows, 1.4 ms in 16-wide ints with the taps gathered, 0.9 ms with the pairs below, one
// output row a work-item, before the walks).
//  - CONSECUTIVE (the host laid every column's taps on consecutive input pixels,
//    consecutive_taps() in filters/scale.cpp): each pair of taps is one 8-byte load a pixel,
//    its bytes interleaved by channel, and the two products of a channel added in one
//    instruction (TANDEM_MADD_PAIRS, pmaddwd: 16-bit pixels and weights; the weights, 2^11
//    times at most 1.25 in magnitude for bicubic and lanczos, or their sums where the border
//    merged taps, fit; adjacent products added into 32 bits, exactly).
//  - otherwise (inputs narrower than the taps) each tap a 4-byte gather a pixel.
// Bilinear's vertical pass in 16 bits as OpenCV's: h >> 4 fits (bytes times weights summing to
// 2^11, shifted by 4), and so do ((w (h >> 4)) >> 16) and their sum. The ring holds the rows'
// h >> 4 as shorts, and the products' high halves are one instruction (pmulhw) for 16 lanes,
// which LLVM makes of two shorts widened, multiplied and shifted by 16 (PoCL's mul_hi() is a
// longer sequence; a ring of ints gave vpmulld: PoCL, 2 cores, 1080p to 1280x720, runs
// alternated four times each: 1.55-2.05 ms against 1.97-2.36).
// ROW16(h): an input row's sums as the vertical pass takes them, held in the ring: converted
// once a row rather than for each output row that reaches it (PoCL, 2 cores, 1080p, alternating
// frames: to 3840x2160 bicubic 8.8 ms against 10.0, lanczos 10.5 against 11.9). ACCUMULATE16
// adds row j's, weight w, to the output pixels' sum. With TANDEM_STREAM_STORES and four groups,
// a row's 64 bytes go out as one streamed store (TANDEM_STREAM_STORE16).
#if SUM == SUM_LINEAR8
typedef short16 row16_t;
typedef short16 acc16_t;
#define ROW16(h) convert_short16_sat((h) >> 4)
#define ACCUMULATE16(acc, v, w, j)            \
  (acc) = ((j) == 0 ? (short16)0 : (acc)) + \
          convert_short16((convert_int16(v) * (int)(short)(w)) >> 16)
#define FINISH16_8(acc) convert_uchar16_sat(((acc) + (short)2) >> (short)2)
#elif SUM == SUM_CUBIC8
typedef float16 row16_t;
typedef float16 acc16_t;
#define ROW16(h) convert_float16(h)
#define ACCUMULATE16(acc, v, w, j) \
  (acc) = (v) * ((float)(w) * 0x1.0p-22f) + ((j) == TAPS_Y - 1 ? (float16)(0.0f) : (acc))
#define FINISH16_8(acc) tandem_levels8_16(acc)
#else  // SUM_FIXED8
typedef int16 row16_t;
typedef int16 acc16_t;
#define ROW16(h) (h)
#define ACCUMULATE16(acc, v, w, j) (acc) = ((j) == 0 ? 0 : (acc)) + (v) * (w)
#define FINISH16_8(acc) convert_uchar16(clamp(((acc) + (1 << 21)) >> 22, 0, 255))
#endif

#if CONSECUTIVE
#if TAPS_X % 2 != 0
#error "CONSECUTIVE takes taps in pairs"
#endif
// Pixels p and p + 1's pair of taps from i: two 8-byte loads, bytes interleaved by channel,
// (tap a's channel c, tap b's channel c) at 2c (and 8 + 2c for the second pixel), as
// TANDEM_MADD_PAIRS takes them with the pixels' (weight a, weight b) likewise.
#define PAIR_PIXELS(row, sa, sb, i)                                                            \
  convert_short16(shuffle(as_uchar16((uint4)(vload2(0, (row) + (sa) + (i)),                   \
                                             vload2(0, (row) + (sb) + (i)))),                 \
                          (uchar16)(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15)))
#endif

// Input row `r`'s sums for the four pixels of the work-item's group g into `h` (int16, their
// channels side by side): with CONSECUTIVE, pairs of taps from the columns' first taps s0[g] ..
// s3[g] with weights w01[g] and w23[g]; otherwise each tap gathered at the columns' indices in
// xe[g].
#if CONSECUTIVE
#define ROW_SUMS16(h, r, g)                                                                \
  {                                                                                        \
    const __global uint* restrict row_ =                                                   \
        (const __global uint*)(src + (size_t)((r) - src_first) * src_pitch);               \
    _Pragma("unroll") for (int i_ = 0; i_ < TAPS_X; i_ += 2) {                             \
      const int16 t_ =                                                                     \
          (int16)(TANDEM_MADD_PAIRS(PAIR_PIXELS(row_, s0[g], s1[g], i_), w01[g][i_ / 2]),  \
                  TANDEM_MADD_PAIRS(PAIR_PIXELS(row_, s2[g], s3[g], i_), w23[g][i_ / 2])); \
      (h) = i_ == 0 ? t_ : (h) + t_;                                                       \
    }                                                                                      \
  }
#else
#define ROW_SUMS16(h, r, g)                                                                  \
  {                                                                                          \
    const __global uint* restrict row_ =                                                     \
        (const __global uint*)(src + (size_t)((r) - src_first) * src_pitch);                 \
    const __global int* restrict xg_ = xe[g];                                                \
    _Pragma("unroll") for (int i_ = 0; i_ < TAPS_X; ++i_) {                                  \
      const int16 t_ = convert_int16(as_uchar16((uint4)(                                     \
          row_[xg_[i_]], row_[xg_[2 * TAPS_X + i_]], row_[xg_[4 * TAPS_X + i_]],             \
          row_[xg_[6 * TAPS_X + i_]])));                                                     \
      (h) = i_ == 0 ? t_ * wx[g][i_] : (h) + t_ * wx[g][i_];                                 \
    }                                                                                        \
  }
#endif

// scale_rows' arguments, and y1, the band's end; it reads the columns' entries by column, not
// x_offset's copy by tap. A work-item walks WALK output rows of GROUPS16 groups of four columns
// from y0 + WALK id(1) (up to y1) with its columns' weights loaded once, and keeps the input rows'
// sums of the taps the last output row reached in a ring of TAPS_Y: each output row sums only
// the input rows the row before did not reach, as row sums would, with no scratch image. The
// host checked that every output row's taps lie within TAPS_Y consecutive input rows, from its
// first tap, and that the first and last taps never go back up (Plan::row_walks).
__kernel void scale_rows16(const __global uchar* restrict src, int src_first, int src_pitch,
                           __global uchar* restrict dst, int dst_first, int dst_pitch,
                           const __global int* restrict table, int x_offset, int padded_width,
                           int y_offset, int y0, int y1 TANDEM_EPILOGUE_PARAMS) {
  const int x0 = 4 * GROUPS16 * (int)get_global_id(0);
  const int first = y0 + WALK * (int)get_global_id(1);
  const int end = min(first + WALK, y1);
  const __global int* restrict xe[GROUPS16];
#if CONSECUTIVE
  int s0[GROUPS16], s1[GROUPS16], s2[GROUPS16], s3[GROUPS16];
  short16 w01[GROUPS16][TAPS_X / 2], w23[GROUPS16][TAPS_X / 2];
#else
  int16 wx[GROUPS16][TAPS_X];
#endif
#pragma unroll
  for (int g = 0; g < GROUPS16; ++g) {
    // Past the padded width (the row's last work-item), the last group again, not stored.
    const int x = min(x0 + 4 * g, padded_width - 4);
    xe[g] = table + x * (2 * TAPS_X);  // column x + p at 2 TAPS_X p
#if CONSECUTIVE
    s0[g] = xe[g][0];
    s1[g] = xe[g][2 * TAPS_X];
    s2[g] = xe[g][4 * TAPS_X];
    s3[g] = xe[g][6 * TAPS_X];
#pragma unroll
    for (int i = 0; i < TAPS_X; i += 2) {
      const short2 a = (short2)(xe[g][TAPS_X + i], xe[g][TAPS_X + i + 1]);
      const short2 b = (short2)(xe[g][3 * TAPS_X + i], xe[g][3 * TAPS_X + i + 1]);
      const short2 c = (short2)(xe[g][5 * TAPS_X + i], xe[g][5 * TAPS_X + i + 1]);
      const short2 d = (short2)(xe[g][7 * TAPS_X + i], xe[g][7 * TAPS_X + i + 1]);
      w01[g][i / 2] = (short16)(a, a, a, a, b, b, b, b);
      w23[g][i / 2] = (short16)(c, c, c, c, d, d, d, d);
    }
#else
#pragma unroll
    for (int i = 0; i < TAPS_X; ++i) {
      wx[g][i] = (int16)((int4)xe[g][TAPS_X + i], (int4)xe[g][3 * TAPS_X + i],
                         (int4)xe[g][5 * TAPS_X + i], (int4)xe[g][7 * TAPS_X + i]);
    }
#endif
  }
  row16_t ring[TAPS_Y][GROUPS16];  // input row r's sums at r % TAPS_Y (rows are not negative)
  int next = 0;                    // the first input row not summed yet
  for (int y = first; y < end; ++y) {
    const __global int* restrict ye = table + y_offset + y * (2 * TAPS_Y);
    for (int r = y == first ? ye[0] : max(next, ye[0]); r <= ye[TAPS_Y - 1]; ++r) {
#pragma unroll
      for (int g = 0; g < GROUPS16; ++g) {
        int16 h;
        ROW_SUMS16(h, r, g);
        ring[(uint)r % TAPS_Y][g] = ROW16(h);
      }
    }
    next = ye[TAPS_Y - 1] + 1;
    __global uchar* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
    uchar16 v[GROUPS16];
#pragma unroll
    for (int g = 0; g < GROUPS16; ++g) {
      acc16_t acc;
#pragma unroll
      FOR_ROW_TAPS(j) { ACCUMULATE16(acc, ring[(uint)ye[j] % TAPS_Y][g], ye[TAPS_Y + j], j); }
      v[g] = FINISH16_8(acc);
    }
#if defined(TANDEM_STREAM_STORES) && GROUPS16 == 4
    if (x0 + 16 <= padded_width) {
      TANDEM_STREAM_STORE16((__global uint16*)(out + 4 * x0),
                            (uint16)(as_uint4(v[0]), as_uint4(v[1]), as_uint4(v[2]),
                                     as_uint4(v[3])));
      continue;
    }
#endif
#pragma unroll
    for (int g = 0; g < GROUPS16; ++g) {
      if (x0 + 4 * g < padded_width) TANDEM_STORE4_RGBA8(out, x0 + 4 * g, v[g]);
    }
  }
}
#endif

// The row sums of input rows [r0, r0 + rows) for four output columns a work-item, into `sums`
// (row r at (r - sums_first) * sums_pitch row_t's).
__kernel void scale_horizontal(const __global pixel_t* restrict src, int src_first, int src_pitch,
                               __global row_t* restrict sums, int sums_first, int sums_pitch,
                               const __global int* restrict table, int x_offset,
                               int padded_width, int r0) {
  const int x = 4 * (int)get_global_id(0);
  const int r = r0 + (int)get_global_id(1);
  LOAD_COLUMNS(table, x_offset, padded_width, x);
  const __global pixel_t* restrict row = src + (size_t)(r - src_first) * src_pitch;
  __global row_t* restrict out = sums + (size_t)(r - sums_first) * sums_pitch + x;
  row_t h0, h1, h2, h3;
  ROW_SUMS(h0, h1, h2, h3, row);
  out[0] = h0;
  out[1] = h1;
  out[2] = h2;
  out[3] = h3;
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
  FOR_ROW_TAPS(j) {
    const __global row_t* restrict h = sums + (size_t)(ye[j] - sums_first) * sums_pitch + x;
    const int w = ye[TAPS_Y + j];
    ACCUMULATE(acc0, h[0], w, j);
    ACCUMULATE(acc1, h[1], w, j);
    ACCUMULATE(acc2, h[2], w, j);
    ACCUMULATE(acc3, h[3], w, j);
  }
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
  STORE_SUMS(out, x, acc0, acc1, acc2, acc3);
}

#ifdef BLOCK_X
#if PIXEL_RGBA8 && BLOCK_X * BLOCK_Y <= 257
// A block's sum of bytes fits in 16 bits: twice the lanes of 32 a vector register holds (on
// PoCL, 2 cores, 1080p to 960x540: 0.37 ms a frame in shorts, 0.85 ms in ints).
typedef ushort16 block_t;
#define TO_BLOCK convert_ushort16
#elif PIXEL_RGBA8
typedef int16 block_t;
#define TO_BLOCK convert_int16
#endif
#if PIXEL_RGBA8 && HALVES
#define FINISH16(acc) convert_uchar16(((acc) + (ushort)2) >> (ushort)2)
#elif PIXEL_RGBA8
#define FINISH16(acc) (uchar16)(FINISH((acc).s0123), FINISH((acc).s4567), \
                                FINISH((acc).s89ab), FINISH((acc).scdef))
#else
typedef float16 block_t;
#define FINISH16(acc) (float16)(FINISH((acc).s0123), FINISH((acc).s4567), \
                                FINISH((acc).s89ab), FINISH((acc).scdef))
#endif

// Output rows [y0, y0 + rows) of a `width` wide output by whole blocks, four pixels a
// work-item from column x_from on: the sums of scale_rows on the blocks' table (weights 1), the
// same additions in the same order, the four pixels' channels side by side in a 16-wide
// vector. Where `edge` is 0 every group lies inside the width and loads its blocks as aligned
// 16-byte words (x is a multiple of 4, so its blocks start on one); the host enqueues the
// row's last group apart (edge 1) where the width is not a multiple of 4, and it takes its
// pixels one at a time from clamped columns.
__kernel void scale_blocks(const __global pixel_t* restrict src, int src_first, int src_pitch,
                           __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                           int width, int x_from, int edge, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = x_from + 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  block_t acc;
#pragma unroll
  for (int j = 0; j < BLOCK_Y; ++j) {
    const __global pixel_t* restrict row =
        src + (size_t)(y * BLOCK_Y + j - src_first) * src_pitch;
    block_t h;
    if (!edge) {
#if PIXEL_RGBA8 && HALVES
      // Halves: eight pixels in two words, the pairs' first and second pixels shuffled apart.
      const __global uchar16* restrict words = (const __global uchar16*)(row + 8 * x);
      const uchar16 a = words[0], b = words[1];
#define GATHER(i)                                                                     \
  ((i) == 0 ? TO_BLOCK((uchar16)(a.s0123, a.s89ab, b.s0123, b.s89ab)) \
            : TO_BLOCK((uchar16)(a.s4567, a.scdef, b.s4567, b.scdef)))
#elif PIXEL_RGBA8
      const __global uint* restrict px = (const __global uint*)(row + 4 * x * BLOCK_X);
#define GATHER(i)                                                                      \
  TO_BLOCK(as_uchar16((uint4)(px[i], px[BLOCK_X + (i)], px[2 * BLOCK_X + (i)], \
                              px[3 * BLOCK_X + (i)])))
#else
      const __global float4* restrict px = (const __global float4*)row + x * BLOCK_X;
#define GATHER(i) \
  (float16)(px[i], px[BLOCK_X + (i)], px[2 * BLOCK_X + (i)], px[3 * BLOCK_X + (i)])
#endif
      h = GATHER(0);
      for (int i = 1; i < BLOCK_X; ++i) h = h + GATHER(i);
#undef GATHER
    } else {
      const int q0 = min(x, width - 1) * BLOCK_X, q1 = min(x + 1, width - 1) * BLOCK_X;
      const int q2 = min(x + 2, width - 1) * BLOCK_X, q3 = min(x + 3, width - 1) * BLOCK_X;
#if PIXEL_RGBA8
#define GATHER(i)                                                                   \
  TO_BLOCK((uchar16)(((const __global uchar4*)row)[q0 + (i)],                       \
                          ((const __global uchar4*)row)[q1 + (i)],                  \
                          ((const __global uchar4*)row)[q2 + (i)],                  \
                          ((const __global uchar4*)row)[q3 + (i)]))
#else
#define GATHER(i)                                                           \
  (float16)(((const __global float4*)row)[q0 + (i)],                       \
            ((const __global float4*)row)[q1 + (i)],                       \
            ((const __global float4*)row)[q2 + (i)],                       \
            ((const __global float4*)row)[q3 + (i)])
#endif
      h = GATHER(0);
      for (int i = 1; i < BLOCK_X; ++i) h = h + GATHER(i);
#undef GATHER
    }
    acc = j == 0 ? h : acc + h;
  }
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  TANDEM_STORE4_RGBA8(out, x, FINISH16(acc));
#else
  TANDEM_STORE4_RGBA32F(out, x, FINISH16(acc));
#endif
}

#if defined(BLOCK_X) && PIXEL_RGBA8 && HALVES
// scale_blocks' 2x2 blocks of rgba8 on CPUs, sixteen output pixels a work-item from x_from on,
// all inside the width: four of scale_blocks' groups, the same sums, and the row's 64 bytes one
// cache line, stored through TANDEM_STREAM_STORE16 (non-temporal where the output goes to the
// host) where no point-wise chain follows, else a group at a time through TANDEM_STORE4_RGBA8.
// x is a multiple of 16: the input's 128 bytes of each row and the output's line are aligned.
__kernel void scale_halves16(const __global uchar* restrict src, int src_first, int src_pitch,
                             __global uchar* restrict dst, int dst_first, int dst_pitch,
                             int x_from, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = x_from + 16 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global uchar16* restrict top =
      (const __global uchar16*)(src + (size_t)(2 * y - src_first) * src_pitch + 8 * x);
  const __global uchar16* restrict bottom =
      (const __global uchar16*)(src + (size_t)(2 * y + 1 - src_first) * src_pitch + 8 * x);
  uchar16 means[4];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const uchar16 a = top[2 * g], b = top[2 * g + 1];
    const uchar16 c = bottom[2 * g], d = bottom[2 * g + 1];
    const block_t upper = TO_BLOCK((uchar16)(a.s0123, a.s89ab, b.s0123, b.s89ab)) +
                          TO_BLOCK((uchar16)(a.s4567, a.scdef, b.s4567, b.scdef));
    const block_t lower = TO_BLOCK((uchar16)(c.s0123, c.s89ab, d.s0123, d.s89ab)) +
                          TO_BLOCK((uchar16)(c.s4567, c.scdef, d.s4567, d.scdef));
    means[g] = FINISH16(upper + lower);
  }
  __global uchar* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#ifdef TANDEM_EPILOGUE
#pragma unroll
  for (int g = 0; g < 4; ++g) TANDEM_STORE4_RGBA8(out, x + 4 * g, means[g]);
#else
  TANDEM_STREAM_STORE16((__global uint16*)(out + 4 * x),
                        (uint16)(as_uint4(means[0]), as_uint4(means[1]), as_uint4(means[2]),
                                 as_uint4(means[3])));
#endif
}
#endif
#endif

#ifdef TILE_W
#if SUM == SUM_CUBIC8
// Bicubic's vertical pass is in floats: the row sums go to local memory converted, once a row
// rather than once a tap of every output row reading it (conversions run at a quarter of a
// GPU's float rate; H200, 1080p to 2160p: 0.045 ms converting in the vertical pass). The same
// floats: the sums are integers below 2^24 in magnitude (bytes times weights summing to 2^11).
typedef float4 tile_t;
#define TO_TILE(h) convert_float4(h)
#define ACCUMULATE_TILE(acc, h, w, j) \
  (acc) = (h) * ((float)(w) * 0x1.0p-22f) + ((j) == TAPS_Y - 1 ? (float4)(0.0f) : (acc))
#else
typedef row_t tile_t;
#define TO_TILE(h) (h)
#define ACCUMULATE_TILE(acc, h, w, j) ACCUMULATE(acc, h, w, j)
#endif

#if TWICE_X
// TWICE_X: the output is exactly twice the input's width (8 bits, interpolation, TAPS_X / 2 even:
// bicubic and lanczos). Away from the borders the four columns x .. x + 3 (x = 4 m) then read the
// TAPS_X + 2 input pixels from base = 2 m - TAPS_X / 2 on (even, so 8-byte aligned), column p's
// taps from base + (p + 1) / 2: they are loaded as 8-byte words instead of 4 TAPS_X gathers, the
// same sums.
#if (TAPS_X / 2) % 2 != 0
#error "TWICE_X needs an even first tap: TAPS_X / 2 even"
#endif
#define X_WORDS ((TAPS_X + 2) / 2)
#define TWICE_ROW_SUMS(h0, h1, h2, h3, row, base)                                          \
  {                                                                                        \
    const __global uint2* restrict words_ = (const __global uint2*)(row) + (base) / 2;     \
    int4 p_[2 * X_WORDS];                                                                  \
    _Pragma("unroll") for (int k_ = 0; k_ < X_WORDS; ++k_) {                               \
      const uint2 w_ = words_[k_];                                                         \
      p_[2 * k_] = convert_int4(as_uchar4(w_.x));                                          \
      p_[2 * k_ + 1] = convert_int4(as_uchar4(w_.y));                                      \
    }                                                                                      \
    _Pragma("unroll") for (int i_ = 0; i_ < TAPS_X; ++i_) {                                \
      const int4 w_ = weights_[i_];                                                        \
      h0 = (i_ == 0 ? 0 : h0) + p_[i_] * w_.s0;                                            \
      h1 = (i_ == 0 ? 0 : h1) + p_[i_ + 1] * w_.s1;                                        \
      h2 = (i_ == 0 ? 0 : h2) + p_[i_ + 1] * w_.s2;                                        \
      h3 = (i_ == 0 ? 0 : h3) + p_[i_ + 2] * w_.s3;                                        \
    }                                                                                      \
  }
#endif

#if PAIRS
// PAIRS (upscales): a work-item computes two output rows at once where each one's taps are
// consecutive rows and the second's start at the first's first (D = 0) or at the next row
// (D = 1): the TAPS_Y + D rows' sums are read once for both, each row's terms in its own order,
// FOR_ROW_TAPS's (FOR_PAIR_TAPS follows it: a change to one is a change to both).
#if SUM == SUM_CUBIC8
#define FOR_PAIR_TAPS(k, D) _Pragma("unroll") for (int k = TAPS_Y - 1 + (D); k >= 0; --k)
#else
#define FOR_PAIR_TAPS(k, D) _Pragma("unroll") for (int k = 0; k < TAPS_Y + (D); ++k)
#endif
#define PAIR_TAPS(D)                                                             \
  FOR_PAIR_TAPS(k, D) {                                                          \
    const tile_t s0 = sums[r + k][0][lx], s1 = sums[r + k][1][lx];               \
    const tile_t s2 = sums[r + k][2][lx], s3 = sums[r + k][3][lx];               \
    if (k < TAPS_Y) {                                                            \
      const int w = ye[TAPS_Y + k];                                              \
      ACCUMULATE_TILE(a0, s0, w, k);                                             \
      ACCUMULATE_TILE(a1, s1, w, k);                                             \
      ACCUMULATE_TILE(a2, s2, w, k);                                             \
      ACCUMULATE_TILE(a3, s3, w, k);                                             \
    }                                                                            \
    if (k >= (D)) {                                                              \
      const int w = yf[TAPS_Y + k - (D)];                                        \
      ACCUMULATE_TILE(b0, s0, w, k - (D));                                       \
      ACCUMULATE_TILE(b1, s1, w, k - (D));                                       \
      ACCUMULATE_TILE(b2, s2, w, k - (D));                                       \
      ACCUMULATE_TILE(b3, s3, w, k - (D));                                       \
    }                                                                            \
  }
#endif

// Output rows [y0, y1), TILE_ROWS rows and 4 TILE_W columns a work-group of TILE_W x TILE_H
// work-items, a work-item four pixels of TILE_ROWS / TILE_H rows. The input rows the group's
// rows reach are [lo, hi], the first row's lowest tap to the last row's highest (the host uses
// this schedule only where taps never go back up the rows, and where IN_ROWS such rows fit in
// local memory). First the work-items share out those rows and store each one's sums for their
// four columns in `sums`; then each computes its output rows from them, in scale_vertical's
// order. Work-items past the band's rows or the table's columns compute sums for the others
// and store nothing. `sums` holds pixel p of work-item lx's four at [p][lx], so that a warp's
// 16-byte accesses are side by side. Several rows a work-item: a group's loads wait for one
// another (the table, then the taps it names, then the barrier), and more rows a group pay
// for that wait once (H200, 1080p to 2160p bicubic: 0.058 ms at 8 rows a group). For 8 bits the
// output rows' entries of the table go to local memory with the sums, so that each output row
// starts without a load from global memory after the barrier (H200, 1080p to 2160p: bicubic
// 40.8 us against 42.3, lanczos 71.4 against 75.2, bilinear 29.6 against 31.3; rgba32f bicubic
// ran 95.6 against 89.7 that way, so float pixels keep reading the table).
__kernel __attribute__((reqd_work_group_size(TILE_W, TILE_H, 1))) void scale_tiled(
    const __global pixel_t* restrict src, int src_first, int src_pitch,
    __global pixel_t* restrict dst, int dst_first, int dst_pitch,
    const __global int* restrict table, int x_offset, int padded_width, int y_offset, int y0,
    int y1 TANDEM_EPILOGUE_PARAMS) {
  __local tile_t sums[IN_ROWS][4][TILE_W];
  const int lx = (int)get_local_id(0);
  const int ly = (int)get_local_id(1);
  const int x = 4 * (int)get_global_id(0);
  const int ya = y0 + (int)get_group_id(1) * TILE_ROWS;
  const int yb = min(ya + TILE_ROWS, y1) - 1;
  const __global int* restrict first = table + y_offset + ya * (2 * TAPS_Y);
  const __global int* restrict last = table + y_offset + yb * (2 * TAPS_Y);
  int lo = first[0], hi = last[0];
  for (int j = 1; j < TAPS_Y; ++j) {
    lo = min(lo, first[j]);
    hi = max(hi, last[j]);
  }
#if PIXEL_RGBA8
  __local int entries[TILE_ROWS * 2 * TAPS_Y];
  for (int i = ly * TILE_W + lx; i < (yb - ya + 1) * (2 * TAPS_Y); i += TILE_W * TILE_H) {
    entries[i] = first[i];
  }
#define ROW_ENTRIES(y) const __local int* ye = entries + ((y) - ya) * (2 * TAPS_Y)
#else
#define ROW_ENTRIES(y) const __global int* restrict ye = table + y_offset + (y) * (2 * TAPS_Y)
#endif
  LOAD_COLUMNS(table, x_offset, padded_width, min(x, padded_width - 4));
#if TWICE_X
  // Whether the four columns' taps lie as an exact 2x upscale's do, inside the input.
  const int base = indices_[0].s0;
  bool twice = base % 2 == 0;
  for (int i = 0; i < TAPS_X; ++i) {
    twice = twice && all(indices_[i] == base + i + (int4)(0, 1, 1, 2));
  }
#endif
  for (int r = ly; r <= hi - lo; r += TILE_H) {
    const __global pixel_t* restrict row = src + (size_t)(lo + r - src_first) * src_pitch;
    row_t h0, h1, h2, h3;
#if TWICE_X
    if (twice) {
      TWICE_ROW_SUMS(h0, h1, h2, h3, row, base);
    } else
#endif
    {
      ROW_SUMS(h0, h1, h2, h3, row);
    }
    sums[r][0][lx] = TO_TILE(h0);
    sums[r][1][lx] = TO_TILE(h1);
    sums[r][2][lx] = TO_TILE(h2);
    sums[r][3][lx] = TO_TILE(h3);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (x >= padded_width) return;
#define ONE_ROW(y)                                                    \
  {                                                                   \
    ROW_ENTRIES(y);                                                   \
    acc_t acc0, acc1, acc2, acc3;                                     \
    FOR_ROW_TAPS(j) {                                                 \
      const int r = ye[j] - lo;                                       \
      const int w = ye[TAPS_Y + j];                                   \
      ACCUMULATE_TILE(acc0, sums[r][0][lx], w, j);                    \
      ACCUMULATE_TILE(acc1, sums[r][1][lx], w, j);                    \
      ACCUMULATE_TILE(acc2, sums[r][2][lx], w, j);                    \
      ACCUMULATE_TILE(acc3, sums[r][3][lx], w, j);                    \
    }                                                                 \
    __global pixel_t* restrict out =                                  \
        dst + (size_t)((y) - dst_first) * dst_pitch;                  \
    STORE_SUMS(out, x, acc0, acc1, acc2, acc3);                       \
  }
#if PAIRS
  for (int y = ya + 2 * ly; y <= yb; y += 2 * TILE_H) {
    const __local int* ye = entries + (y - ya) * (2 * TAPS_Y);
    const __local int* yf = ye + 2 * TAPS_Y;
    // Both rows' taps consecutive, the second's from the first's first or the next row.
    const int d = y < yb ? yf[0] - ye[0] : -1;
    bool pair = d == 0 || d == 1;
    for (int j = 1; j < TAPS_Y; ++j) pair = pair && ye[j] == ye[0] + j && yf[j] == yf[0] + j;
    if (pair) {
      const int r = ye[0] - lo;
      acc_t a0, a1, a2, a3, b0, b1, b2, b3;
      if (d) {
        PAIR_TAPS(1);
      } else {
        PAIR_TAPS(0);
      }
      __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
      STORE_SUMS(out, x, a0, a1, a2, a3);
      STORE_SUMS(out + dst_pitch, x, b0, b1, b2, b3);
    } else {
      ONE_ROW(y);
      if (y < yb) ONE_ROW(y + 1);
    }
  }
#else
  for (int y = ya + ly; y <= yb; y += TILE_H) ONE_ROW(y);
#endif
#undef ONE_ROW
}
#undef ROW_ENTRIES
#endif
