// transpose, hflip, vflip: turns and mirrors (filters/transpose.cpp). For a transpose, output
// pixel (x, y) is input pixel (sx, sy) with
//   sx = flip_columns ? in_width - 1 - y : y      (output rows are input columns)
//   sy = flip_rows ? in_height - 1 - x : x        (output columns are input rows)
// which gives FFmpeg's four directions: cclock_flip (neither), clock (flip_rows), cclock
// (flip_columns), clock_flip (both). hflip mirrors each row, vflip the rows' order.
// Two schedules for a transpose:
//  - rows (CPUs): a work-item stores four pixels of an output row, loading them down an input
//    column, a pixel a load; on rgba8 a block of 4 x 4 pixels (transpose_blocks);
//  - tiles (GPUs): a work-group turns a TILE x TILE block in local memory, so that it both
//    loads input rows and stores output rows four pixels (16 bytes of rgba8) a work-item, the
//    work-items of a row of the block side by side. H200, 7680x4320 rgba8: 0.070 ms (3.8 TB/s
//    of compulsory bytes; vflip, a copy, 0.065 ms) against 0.247 ms in rows.
// Every kernel stores through TANDEM_STORE4_*: a point-wise chain after it runs here.
//   PIXEL_RGBA8 1 or 0; WIDE_LOADS (hflip, vflip) 1 where 8-bit rows load a group of four
//   pixels as one 16-byte word (CPUs; hflip where the width is a multiple of 4 too)

#if PIXEL_RGBA8
typedef uchar sample_t;
typedef uint pixel_t;
#define STORE4(row, x, a, b, c, d) TANDEM_STORE4_RGBA8(row, x, as_uchar16((uint4)(a, b, c, d)))
#else
typedef float sample_t;
typedef float4 pixel_t;
#define STORE4(row, x, a, b, c, d) TANDEM_STORE4_RGBA32F(row, x, (float16)(a, b, c, d))
#endif
#ifndef WIDE_LOADS
#define WIDE_LOADS 0
#endif

// Row y of an image whose rows start at frame row `first`, as pixels.
#define PIXEL_ROW(image, y, first, pitch) \
  ((const __global pixel_t*)((image) + (size_t)((y) - (first)) * (pitch)))

// Rows [y0, y0 + rows) of the `width` wide output (width = in_height).
__kernel void transpose_rows(const __global sample_t* restrict src, int src_first, int src_pitch,
                             __global sample_t* restrict dst, int dst_first, int dst_pitch,
                             int width, int in_width, int flip_rows, int flip_columns,
                             int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const int sx = flip_columns ? in_width - 1 - y : y;
  const int last = width - 1;
  // Lanes past the width load the last column's pixel.
#define AT(k) \
  PIXEL_ROW(src, flip_rows ? last - min(x + (k), last) : min(x + (k), last), src_first, \
            src_pitch)[sx]
  STORE4(dst + (size_t)(y - dst_first) * dst_pitch, x, AT(0), AT(1), AT(2), AT(3));
#undef AT
}

#if PIXEL_RGBA8
// transpose_blocks (CPUs, rgba8): transpose_rows a block of 4 x 4 pixels a work-item, output
// rows [y, y + 4) from y = y0 + 4 id: the block's four input rows loaded four pixels at a time
// (16 bytes each) and turned in registers, where transpose_rows loads each pixel on its own.
// A block past the band's last row takes transpose_rows' way, row by row. (PoCL, this VM's 2
// cores, 1080p rgba8 clock, three runs of each alternating: 1.6-2.2 ms a frame against 2.9-5.0.)
__kernel void transpose_blocks(const __global sample_t* restrict src, int src_first,
                               int src_pitch, __global sample_t* restrict dst, int dst_first,
                               int dst_pitch, int width, int in_width, int flip_rows,
                               int flip_columns, int y0, int y1 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + 4 * (int)get_global_id(1);
  const int last = width - 1;
  // Output columns x .. x + 3 are input rows (lanes past the width load the last column's).
#define INPUT_ROW(k) \
  PIXEL_ROW(src, flip_rows ? last - min(x + (k), last) : min(x + (k), last), src_first, src_pitch)
  if (y + 3 < y1) {
    // Output rows y .. y + 3 are input columns c .. c + 3, or c + 3 down to c where flipped.
    const int c = flip_columns ? in_width - 4 - y : y;
    const uint4 r0 = vload4(0, INPUT_ROW(0) + c), r1 = vload4(0, INPUT_ROW(1) + c);
    const uint4 r2 = vload4(0, INPUT_ROW(2) + c), r3 = vload4(0, INPUT_ROW(3) + c);
    __global sample_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
    if (flip_columns) {
      STORE4(out, x, r0.s3, r1.s3, r2.s3, r3.s3);
      STORE4(out + dst_pitch, x, r0.s2, r1.s2, r2.s2, r3.s2);
      STORE4(out + 2 * dst_pitch, x, r0.s1, r1.s1, r2.s1, r3.s1);
      STORE4(out + 3 * dst_pitch, x, r0.s0, r1.s0, r2.s0, r3.s0);
    } else {
      STORE4(out, x, r0.s0, r1.s0, r2.s0, r3.s0);
      STORE4(out + dst_pitch, x, r0.s1, r1.s1, r2.s1, r3.s1);
      STORE4(out + 2 * dst_pitch, x, r0.s2, r1.s2, r2.s2, r3.s2);
      STORE4(out + 3 * dst_pitch, x, r0.s3, r1.s3, r2.s3, r3.s3);
    }
  } else {
    for (int row = y; row < y1; ++row) {
      const int sx = flip_columns ? in_width - 1 - row : row;
      STORE4(dst + (size_t)(row - dst_first) * dst_pitch, x, INPUT_ROW(0)[sx], INPUT_ROW(1)[sx],
             INPUT_ROW(2)[sx], INPUT_ROW(3)[sx]);
    }
  }
#undef INPUT_ROW
}
#endif

#ifdef TILE
// A TILE x TILE block of the output in a work-group of TILE / 4 x TILE work-items. Block rows
// are laid on the input's columns from a multiple of TILE on (a work-item's four loads are one
// aligned 16-byte group of rgba8) and block columns from output column 0; the band's first and
// last blocks compute only the band's rows. `columns_from` is the first input column of the
// band's rows rounded down to a multiple of TILE (the band's rows are input columns
// [in_width - y1, in_width - y0) when flip_columns, [y0, y1) otherwise).
__kernel __attribute__((reqd_work_group_size(TILE / 4, TILE, 1))) void transpose_tiled(
    const __global sample_t* restrict src, int src_first, int src_pitch,
    __global sample_t* restrict dst, int dst_first, int dst_pitch, int width, int in_width,
    int flip_rows, int flip_columns, int y0, int y1, int columns_from TANDEM_EPILOGUE_PARAMS) {
  // An unused column after the last: the stores' reads go down the block's columns, TILE + 1
  // words apart, which spreads them over the banks.
  __local pixel_t block[TILE][TILE + 1];
  const int lx = (int)get_local_id(0);
  const int ly = (int)get_local_id(1);
  const int x0 = (int)get_group_id(0) * TILE;                     // output columns
  const int c0 = columns_from + (int)get_group_id(1) * TILE;      // input columns
  const int r0 = flip_rows ? width - x0 - TILE : x0;              // input rows
  // Block row ly holds input row r0 + ly, columns c0 + 4 lx .. c0 + 4 lx + 3. Rows and columns
  // past the input's are clamped into it: they feed only pixels no one stores (past the width)
  // or rows outside the band.
  const int sy = clamp(r0 + ly, 0, width - 1);
  const int sx = min(c0 + 4 * lx, (in_width - 1) & ~3);
  const __global pixel_t* restrict in = PIXEL_ROW(src, sy, src_first, src_pitch) + sx;
#if PIXEL_RGBA8
  const uint4 v = *(const __global uint4*)in;
  block[ly][4 * lx] = v.x;
  block[ly][4 * lx + 1] = v.y;
  block[ly][4 * lx + 2] = v.z;
  block[ly][4 * lx + 3] = v.w;
#else
  for (int k = 0; k < 4; ++k) block[ly][4 * lx + k] = in[k];
#endif
  barrier(CLK_LOCAL_MEM_FENCE);

  // Output row y is input column c0 + ly; its pixels x0 + 4 lx + k are input rows r0 + i.
  const int y = flip_columns ? in_width - 1 - (c0 + ly) : c0 + ly;
  const int x = x0 + 4 * lx;
  if (y < y0 || y >= y1 || x >= width) return;
#define AT(k) block[flip_rows ? TILE - 1 - 4 * lx - (k) : 4 * lx + (k)][ly]
  STORE4(dst + (size_t)(y - dst_first) * dst_pitch, x, AT(0), AT(1), AT(2), AT(3));
#undef AT
}
#endif

// Rows [y0, y0 + rows) of a `width` wide frame, each mirrored.
__kernel void hflip(const __global sample_t* restrict src, int src_first, int src_pitch,
                    __global sample_t* restrict dst, int dst_first, int dst_pitch, int width,
                    int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global pixel_t* restrict row = PIXEL_ROW(src, y, src_first, src_pitch);
  __global sample_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
  const int last = width - 1;
#if WIDE_LOADS
  // Output pixels x .. x + 3 are the group of four at width - 4 - x, reversed.
  const uint4 v = *(const __global uint4*)(row + last - 3 - x);
  STORE4(out, x, v.w, v.z, v.y, v.x);
#else
  // Lanes past the width load the first column's pixel.
  STORE4(out, x, row[last - x], row[max(last - x - 1, 0)], row[max(last - x - 2, 0)],
         row[max(last - x - 3, 0)]);
#endif
}

// Rows [y0, y0 + rows) of a frame of `height` rows: row y is input row height - 1 - y.
__kernel void vflip(const __global sample_t* restrict src, int src_first, int src_pitch,
                    __global sample_t* restrict dst, int dst_first, int dst_pitch, int height,
                    int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global pixel_t* restrict row = PIXEL_ROW(src, height - 1 - y, src_first, src_pitch) + x;
  __global sample_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
  // The group past the width, if any, ends inside the row's pitch.
#if WIDE_LOADS
  const uint4 v = *(const __global uint4*)row;
  STORE4(out, x, v.x, v.y, v.z, v.w);
#else
  STORE4(out, x, row[0], row[1], row[2], row[3]);
#endif
}
