// box: mean over a (2 RADIUS + 1)^2 window with reflect-101 borders, by running sums: a work-item
// walks along a segment keeping the window's sum, adding the value that enters and taking out
// the one that leaves: two loads a step whatever the radius, plus 2 RADIUS + 1 to start a walk
// (the host picks the segment lengths per device, see walk_lengths in filters/box.cpp).
//   box_vertical    column sums of 2 RADIUS + 1 rows for the band's rows, four pixels per
//                   work-item walking down a segment of rows
//   box_horizontal  sums of 2 RADIUS + 1 column sums, one work-item walking along a segment of
//                   a row, four pixels per step; on 8 bits, where the windows of the step's
//                   pixels and of the next step's first lie inside the row, its four columns
//                   that enter and four that leave are two 16-lane loads and the four sums one
//                   prefix sum of their differences (PoCL, 2 cores, 1080p, both passes timed:
//                   1.30-1.39x the step of four dependent additions, radius 1 to 64)
// rgba8: sums in uint, exact whatever the walk; the mean is rounded to nearest
// ((sum + AREA / 2) / AREA; AREA is odd, so there are no ties). The column sums between the
// passes are stored in 16 bits up to RADIUS 128 (at most 257 * 255 = 65535), halving the
// intermediate image's traffic, in 32 bits past it.
// rgba32f: float sums with Neumaier's compensation, so that a walk past bright pixels leaves no
// residue on the dark ones after them.
// Compile-time constants: RADIUS, PIXEL_RGBA8; TAPS (RADIUS + 1 ones) for the tiled schedule.
//
// Two schedules (filters/box.cpp picks one per device):
//  - tiles (GPUs, rgba8):
//    RADIUS <= 8: box_tiled, the direct sums of both passes in one launch through a
//    local-memory tile (separable.clh): no walks, every pixel a work-item's.
//    RADIUS <= 128: box_sliding (TILE_* defined), below: walks down columns, one column a
//    work-item, and the row sums out of prefix sums in local memory, in one launch: work per
//    pixel independent of the radius, and no intermediate image.
//  - rows: box_vertical then box_horizontal, the running sums above.
// The last kernel stores through TANDEM_STORE4_*: a point-wise chain after the blur runs in it.

#define AREA ((2 * RADIUS + 1) * (2 * RADIUS + 1))

#if PIXEL_RGBA8
typedef uchar pixel_t;
#if RADIUS <= 128
typedef ushort sum_t;  // as stored between the passes
#define STORE_SUMS4(p, v) (*(__global ushort16*)(p) = convert_ushort16(v))
#define LOAD_SUM(p, i) convert_uint4(((const __global ushort4*)(p))[i])
#define LOAD_SUMS4(p, i) convert_uint16(vload16(0, (p) + 4 * (i)))
#else
typedef uint sum_t;
#define STORE_SUMS4(p, v) (*(__global uint16*)(p) = (v))
#define LOAD_SUM(p, i) (((const __global uint4*)(p))[i])
#define LOAD_SUMS4(p, i) vload16(0, (p) + 4 * (i))
#endif
#define LOAD_ROW4(p) convert_uint16(*(const __global uchar16*)(p))
#else
typedef float pixel_t;
typedef float sum_t;
#define LOAD_SUM(p, i) (((const __global float4*)(p))[i])
#define LOAD_ROW4(p) tandem_load4_rgba32f(p, 0)

// Adds v to the compensated sum (sum, comp): Neumaier's variant of Kahan summation.
inline void add16(float16* sum, float16* comp, float16 v) {
  const float16 t = *sum + v;
  *comp += select((v - t) + *sum, (*sum - t) + v, isgreaterequal(fabs(*sum), fabs(v)));
  *sum = t;
}

inline void add4(float4* sum, float4* comp, float4 v) {
  const float4 t = *sum + v;
  *comp += select((v - t) + *sum, (*sum - t) + v, isgreaterequal(fabs(*sum), fabs(v)));
  *sum = t;
}
#endif

// Column sums of rows [ys, ye), ys = y0 + segment * id: dst row y holds, for four pixels, the
// sum of src rows y - RADIUS .. y + RADIUS (reflected).
__kernel void box_vertical(const __global pixel_t* restrict src, int src_first, int src_pitch,
                           __global sum_t* restrict dst, int dst_first, int dst_pitch,
                           int height, int y0, int y1, int segment) {
  const int x = (int)get_global_id(0) * 4;
  const int ys = y0 + (int)get_global_id(1) * segment;
  const int ye = min(ys + segment, y1);
  // Row offsets reach -RADIUS .. height - 1 + RADIUS.
  const bool near = height > RADIUS;
  const __global pixel_t* restrict column = src + 4 * x;
  __global sum_t* restrict out = dst + 4 * x;
#define ROW(r) \
  LOAD_ROW4(column + (size_t)(tandem_reflect((r), height, near) - src_first) * src_pitch)
#if PIXEL_RGBA8
  uint16 sum = ROW(ys);
  for (int k = 1; k <= RADIUS; ++k) sum += ROW(ys - k) + ROW(ys + k);
  STORE_SUMS4(out + (size_t)(ys - dst_first) * dst_pitch, sum);
  for (int y = ys + 1; y < ye; ++y) {
    // Unsigned wrap-around in between is harmless: the true sum is never negative.
    sum += ROW(y + RADIUS) - ROW(y - 1 - RADIUS);
    STORE_SUMS4(out + (size_t)(y - dst_first) * dst_pitch, sum);
  }
#else
  float16 sum = ROW(ys);
  float16 comp = (float16)(0.0f);
  for (int k = 1; k <= RADIUS; ++k) {
    add16(&sum, &comp, ROW(ys - k));
    add16(&sum, &comp, ROW(ys + k));
  }
  tandem_store4_rgba32f(out + (size_t)(ys - dst_first) * dst_pitch, 0, sum + comp);
  for (int y = ys + 1; y < ye; ++y) {
    add16(&sum, &comp, ROW(y + RADIUS));
    add16(&sum, &comp, -ROW(y - 1 - RADIUS));
    tandem_store4_rgba32f(out + (size_t)(y - dst_first) * dst_pitch, 0, sum + comp);
  }
#endif
#undef ROW
}

// Means of pixels [xs, xe) of row y0 + id, xs = segment * id (segment a multiple of 4). The last
// group of a row runs into the row's padding: its values there are not used.
__kernel void box_horizontal(const __global sum_t* restrict src, int src_first, int src_pitch,
                             __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                             int width, int y0, int segment TANDEM_EPILOGUE_PARAMS) {
  const int xs = (int)get_global_id(0) * segment;
  const int y = y0 + (int)get_global_id(1);
  const int xe = min(xs + segment, (width + 3) & ~3);
  // Pixel offsets reach -RADIUS .. width + 2 + RADIUS.
  const bool near = width >= RADIUS + 4;
  const __global sum_t* restrict row = src + (size_t)(y - src_first) * src_pitch;
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#define COLUMN(i) LOAD_SUM(row, tandem_reflect((i), width, near))
#if PIXEL_RGBA8
#define ADVANCE(n) sum += COLUMN((n) + RADIUS) - COLUMN((n) - 1 - RADIUS)
#define MEAN(s) convert_uchar4((s + (uint4)(AREA / 2)) / (uint4)(AREA))
  uint4 sum = COLUMN(xs);
  for (int k = 1; k <= RADIUS; ++k) sum += COLUMN(xs - k) + COLUMN(xs + k);
  for (int x = xs; x < xe; x += 4) {
    if (x >= RADIUS && x + 4 + RADIUS < width) {
      // Inside the row: the four columns that enter the window and the four that leave it are
      // side by side, and the four steps are one prefix sum of their differences.
      const uint16 d = LOAD_SUMS4(row, x + 1 + RADIUS) - LOAD_SUMS4(row, x - RADIUS);
      const uint16 d2 = d + (uint16)((uint4)(0), d.s0123, d.s4567, d.s89ab);
      const uint16 d4 = d2 + (uint16)((uint4)(0), (uint4)(0), d2.s0123, d2.s4567);
      const uint16 sums = (uint16)(sum, sum, sum, sum) +
                          (uint16)((uint4)(0), d4.s0123, d4.s4567, d4.s89ab);
      sum += d4.scdef;
      const uchar16 means = convert_uchar16((sums + (uint16)(AREA / 2)) / (uint16)(AREA));
#if defined(TANDEM_EPILOGUE) && defined(TANDEM_CPU)
      *(__global uchar16*)(out + 4 * x) = means;
#else
      TANDEM_STORE4_RGBA8(out, x, means);
#endif
      continue;
    }
    uchar16 means;
    means.s0123 = MEAN(sum);
    ADVANCE(x + 1);
    means.s4567 = MEAN(sum);
    ADVANCE(x + 2);
    means.s89ab = MEAN(sum);
    ADVANCE(x + 3);
    means.scdef = MEAN(sum);
    if (x + 4 < xe) ADVANCE(x + 4);
#if defined(TANDEM_EPILOGUE) && defined(TANDEM_CPU)
    *(__global uchar16*)(out + 4 * x) = means;
#else
    TANDEM_STORE4_RGBA8(out, x, means);
#endif
  }
#if defined(TANDEM_EPILOGUE) && defined(TANDEM_CPU)
  TANDEM_EPILOGUE_OVER_RGBA8(out, xs, xe);  // on CPUs, the point-wise chain after it
#endif
#else
#define ADVANCE(n)                               \
  do {                                           \
    add4(&sum, &comp, COLUMN((n) + RADIUS));     \
    add4(&sum, &comp, -COLUMN((n) - 1 - RADIUS)); \
  } while (0)
#define MEAN(s) (((s) + comp) / (float)(AREA))
  float4 sum = COLUMN(xs);
  float4 comp = (float4)(0.0f);
  for (int k = 1; k <= RADIUS; ++k) {
    add4(&sum, &comp, COLUMN(xs - k));
    add4(&sum, &comp, COLUMN(xs + k));
  }
  for (int x = xs; x < xe; x += 4) {
    float16 means;
    means.s0123 = MEAN(sum);
    ADVANCE(x + 1);
    means.s4567 = MEAN(sum);
    ADVANCE(x + 2);
    means.s89ab = MEAN(sum);
    ADVANCE(x + 3);
    means.scdef = MEAN(sum);
    if (x + 4 < xe) ADVANCE(x + 4);
    TANDEM_STORE4_RGBA32F(out, x, means);
  }
#endif
#undef ADVANCE
#undef MEAN
#undef COLUMN
}

#if PIXEL_RGBA8 && defined(TAPS)
// Output rows [y0, y1), both passes in one launch (separable.clh).
__kernel __attribute__((reqd_work_group_size(SEP_GX, SEP_GY, 1))) void box_tiled(
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
      const uint16 sum = convert_uint16(sums[o]);
      TANDEM_STORE4_RGBA8(dst + (size_t)(ya + o - dst_first) * dst_pitch, x,
                          convert_uchar16((sum + (uint16)(AREA / 2)) / (uint16)(AREA)));
    }
  }
}
#endif

#if PIXEL_RGBA8 && defined(TILE_SPAN)
// TILE_W      output pixels of a work-group across (its rows down: the band's, shared out
//             between the work-groups down it, filters/box.cpp)
// TILE_SPAN   the column sums its rows need: TILE_W + 2 RADIUS, rounded up to a multiple of 8
// TILE_CHUNK  rows whose column sums are in local memory at a time
// TILE_GROUP  work-items of a work-group, at least TILE_CHUNK * TILE_SPAN / 8 and TILE_W / 4
// WARP_SCAN   1: the segments' totals added up by warp shuffles (NVIDIA), 0: in local memory
#define TILE_COLUMNS ((TILE_SPAN + TILE_GROUP - 1) / TILE_GROUP)
#define TILE_SEGMENTS (TILE_SPAN / 8)
// An unused entry after every 8: the scan's work-items read 8 entries apart, 9 with it, which
// spreads their reads over the banks.
#define TILE_AT(i) ((i) + ((i) >> 3))
#define TILE_ROW TILE_AT(TILE_SPAN)

#if WARP_SCAN
// WARP_SCAN 1 (NVIDIA: warps of 32 lanes, consecutive work-items; the host checks
// TILE_SEGMENTS <= 32 and TILE_CHUNK * 32 <= TILE_GROUP): lane i gets lane i - d's v (its own
// where i < d), by inline PTX, as NVIDIA's OpenCL has no sub-group functions.
inline uint warp_shuffle_up(uint v, uint d) {
  uint r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
  return r;
}

inline uint4 warp_shuffle_up4(uint4 v, uint d) {
  return (uint4)(warp_shuffle_up(v.x, d), warp_shuffle_up(v.y, d), warp_shuffle_up(v.z, d),
                 warp_shuffle_up(v.w, d));
}
#endif

// Output rows [ys, ye) of the band's [y0, y1) and pixels [x0, x0 + TILE_W), in one
// launch: each work-item walks down one or two of the TILE_SPAN columns from x0 - RADIUS on
// (reflected) keeping their sums of 2 RADIUS + 1 rows; every TILE_CHUNK rows the sums go to
// local memory, become inclusive prefix sums P along each row (a segment of 8 entries a
// work-item, then the totals of the segments before it), and the window of pixel x0 + p is
// P[p + 2 RADIUS] - P[p - 1]. Sums stay below 2^32; no intermediate image in global memory.
__kernel __attribute__((reqd_work_group_size(TILE_GROUP, 1, 1))) void box_sliding(
    const __global uchar* restrict src, int src_first, int src_pitch,
    __global uchar* restrict dst, int dst_first, int dst_pitch, int width, int height, int y0,
    int y1 TANDEM_EPILOGUE_PARAMS) {
  __local uint4 sums[TILE_CHUNK * TILE_ROW];
#if !WARP_SCAN
  __local uint4 totals[TILE_CHUNK * TILE_SEGMENTS];
#endif
  const int lid = (int)get_local_id(0);
  const int x0 = (int)get_group_id(0) * TILE_W;
  // The band's rows shared out between the work-groups down it, in whole chunks.
  const int groups_down = (int)get_num_groups(1);
  const int tile_h = ((y1 - y0 + groups_down - 1) / groups_down + TILE_CHUNK - 1) /
                     TILE_CHUNK * TILE_CHUNK;
  const int ys = y0 + (int)get_group_id(1) * tile_h;
  if (ys >= y1) return;  // the whole work-group: the rows ran out before it
  const int ye = min(ys + tile_h, y1);
  // Offsets reach -RADIUS .. height - 1 + RADIUS (rows) and, clamped, -RADIUS ..
  // width - 1 + RADIUS (columns): one reflection at most where the frame is larger.
  const bool near_rows = height > RADIUS;
  const bool near_columns = width > RADIUS;
  const size_t pitch = (size_t)(src_pitch / 4);
  const __global uchar4* restrict column[TILE_COLUMNS];
  uint4 sum[TILE_COLUMNS];
#define LOAD(c, r) column[c][(size_t)(tandem_reflect((r), height, near_rows) - src_first) * pitch]
#pragma unroll
  for (int c = 0; c < TILE_COLUMNS; ++c) {
    const int i = min(lid + c * TILE_GROUP, TILE_SPAN - 1);
    const int x = tandem_reflect(min(x0 - RADIUS + i, width - 1 + RADIUS), width, near_columns);
    column[c] = (const __global uchar4*)src + x;
    sum[c] = convert_uint4(LOAD(c, ys));
#pragma unroll 16
    for (int k = 1; k <= RADIUS; ++k) {
      sum[c] += convert_uint4(LOAD(c, ys - k)) + convert_uint4(LOAD(c, ys + k));
    }
  }
  // The values that enter and leave the columns' windows in a chunk's rows, loaded a chunk
  // ahead: their loads are in flight while the work-group scans and stores the chunk before.
  uchar4 enter[TILE_COLUMNS][TILE_CHUNK];
  uchar4 leave[TILE_COLUMNS][TILE_CHUNK];
#define PREFETCH(yc)                                              \
  _Pragma("unroll") for (int c = 0; c < TILE_COLUMNS; ++c) {      \
    _Pragma("unroll") for (int r = 0; r < TILE_CHUNK; ++r) {      \
      const int y = min((yc) + r, ye - 1);                        \
      enter[c][r] = LOAD(c, y + RADIUS);                          \
      leave[c][r] = LOAD(c, max(y - 1, ys) - RADIUS);             \
    }                                                             \
  }
  PREFETCH(ys);

  for (int yc = ys; yc < ye; yc += TILE_CHUNK) {
    const int rows = min(TILE_CHUNK, ye - yc);
#pragma unroll
    for (int r = 0; r < TILE_CHUNK; ++r) {
#pragma unroll
      for (int c = 0; c < TILE_COLUMNS; ++c) {
        const int i = lid + c * TILE_GROUP;
        // Unsigned wrap-around in between is harmless: the true sum is never negative.
        if (yc + r > ys) sum[c] += convert_uint4(enter[c][r]) - convert_uint4(leave[c][r]);
        if (r < rows && i < TILE_SPAN) sums[r * TILE_ROW + TILE_AT(i)] = sum[c];
      }
    }
    PREFETCH(yc + TILE_CHUNK);
    barrier(CLK_LOCAL_MEM_FENCE);

    // Inclusive prefix sums along each row: a work-item scans a segment of 8 entries, then adds
    // the totals of the segments before it.
#if WARP_SCAN
    // A row's segments on one warp's lanes, the totals before each added up by shuffles.
    const int r = lid / 32;
    const int s = lid % 32;
    const bool scans = r < rows && s < TILE_SEGMENTS;
#else
    const int r = lid / TILE_SEGMENTS;
    const int s = lid % TILE_SEGMENTS;
    const bool scans = r < rows;
#endif
    __local uint4* row = sums + r * TILE_ROW + TILE_AT(8 * s);
    uint4 prefix[8];
    if (scans) {
      prefix[0] = row[0];
#pragma unroll
      for (int k = 1; k < 8; ++k) prefix[k] = prefix[k - 1] + row[k];
#if !WARP_SCAN
      totals[lid] = prefix[7];
#endif
    }
#if WARP_SCAN
    // Every lane of the warp takes part in the shuffles; those past the row add nothing.
    const uint4 total = scans ? prefix[7] : (uint4)(0);
    uint4 through = total;
#pragma unroll
    for (uint d = 1; d < 32; d <<= 1) {
      const uint4 up = warp_shuffle_up4(through, d);
      if ((uint)s >= d) through += up;
    }
    if (scans) {
      const uint4 before = through - total;
#else
    barrier(CLK_LOCAL_MEM_FENCE);
    if (scans) {
      uint4 before = (uint4)(0);
#pragma unroll
      for (int j = 0; j < TILE_SEGMENTS - 1; ++j) {
        before += j < s ? totals[r * TILE_SEGMENTS + j] : (uint4)(0);
      }
#endif
#pragma unroll
      for (int k = 0; k < 8; ++k) row[k] = prefix[k] + before;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int u = lid; u < rows * (TILE_W / 4); u += TILE_GROUP) {
      const int p = 4 * (u % (TILE_W / 4));
      const int x = x0 + p;
      if (x >= width) continue;
      const __local uint4* scanned = sums + (u / (TILE_W / 4)) * TILE_ROW;
#define P(i) scanned[TILE_AT(i)]
#define MEAN(s) convert_uchar4(((s) + (uint4)(AREA / 2)) / (uint4)(AREA))
      const uint4 before = p > 0 ? P(p - 1) : (uint4)(0);
      const uint4 w0 = P(p + 2 * RADIUS);
      const uint4 w1 = P(p + 1 + 2 * RADIUS);
      const uint4 w2 = P(p + 2 + 2 * RADIUS);
      const uint4 w3 = P(p + 3 + 2 * RADIUS);
      const uchar16 means = (uchar16)(MEAN(w0 - before), MEAN(w1 - P(p)), MEAN(w2 - P(p + 1)),
                                      MEAN(w3 - P(p + 2)));
#undef P
#undef MEAN
      TANDEM_STORE4_RGBA8(dst + (size_t)(yc + u / (TILE_W / 4) - dst_first) * dst_pitch, x,
                          means);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#undef PREFETCH
#undef LOAD
}
#endif
