// box: mean over a (2 RADIUS + 1)^2 window with reflect-101 borders, by running sums: a work-item
// walks along a segment keeping the window's sum, adding the value that enters and taking out
// the one that leaves: two loads a step whatever the radius, plus 2 RADIUS + 1 to start a walk
// (the host picks the segment lengths per device, see walk_lengths in filters/box.cpp).
//   box_vertical    column sums of 2 RADIUS + 1 rows for the band's rows, four pixels per
//                   work-item walking down a segment of rows
//   box_horizontal  sums of 2 RADIUS + 1 column sums, one work-item walking along a segment of
//                   a row, four pixels per step
// rgba8: sums in uint, exact whatever the walk; the mean is rounded to nearest
// ((sum + AREA / 2) / AREA; AREA is odd, so there are no ties).
// rgba32f: float sums with Neumaier's compensation, so that a walk past bright pixels leaves no
// residue on the dark ones after them.
// Compile-time constants: RADIUS, PIXEL_RGBA8; TAPS (RADIUS + 1 ones) for the tiled schedule.
//
// Two schedules (filters/box.cpp picks one per device):
//  - tiles (GPUs, rgba8):
//    RADIUS <= 8: box_tiled, the direct sums of both passes in one launch through a
//    local-memory tile (separable.clh): no walks, every pixel a work-item's.
//    RADIUS <= 128: box_columns then box_row_scan (SCAN_* defined), below: short walks down
//    columns one pixel a work-item, 16-bit column sums, then the row sums out of a prefix sum
//    in local memory: work per pixel independent of the radius, and as many work-items as
//    pixels for the GPU's lanes.
//  - rows: box_vertical then box_horizontal, the running sums above.
// The last kernel stores through TANDEM_STORE4_*: a point-wise chain after the blur runs in it.

#define AREA ((2 * RADIUS + 1) * (2 * RADIUS + 1))

#if PIXEL_RGBA8
typedef uchar pixel_t;
typedef uint sum_t;
typedef uint4 sum4_t;
#define LOAD_ROW4(p) convert_uint16(*(const __global uchar16*)(p))
#else
typedef float pixel_t;
typedef float sum_t;
typedef float4 sum4_t;
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
  *(__global uint16*)(out + (size_t)(ys - dst_first) * dst_pitch) = sum;
  for (int y = ys + 1; y < ye; ++y) {
    // Unsigned wrap-around in between is harmless: the true sum is never negative.
    sum += ROW(y + RADIUS) - ROW(y - 1 - RADIUS);
    *(__global uint16*)(out + (size_t)(y - dst_first) * dst_pitch) = sum;
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
#define COLUMN(i) ((const __global sum4_t*)row)[tandem_reflect((i), width, near)]
#if PIXEL_RGBA8
#define ADVANCE(n) sum += COLUMN((n) + RADIUS) - COLUMN((n) - 1 - RADIUS)
#define MEAN(s) convert_uchar4((s + (uint4)(AREA / 2)) / (uint4)(AREA))
  uint4 sum = COLUMN(xs);
  for (int k = 1; k <= RADIUS; ++k) sum += COLUMN(xs - k) + COLUMN(xs + k);
  for (int x = xs; x < xe; x += 4) {
    uchar16 means;
    means.s0123 = MEAN(sum);
    ADVANCE(x + 1);
    means.s4567 = MEAN(sum);
    ADVANCE(x + 2);
    means.s89ab = MEAN(sum);
    ADVANCE(x + 3);
    means.scdef = MEAN(sum);
    if (x + 4 < xe) ADVANCE(x + 4);
    TANDEM_STORE4_RGBA8(out, x, means);
  }
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

#if PIXEL_RGBA8 && defined(SCAN_GROUP)
// SCAN_ROWS     rows a work-item of box_columns walks down
// SCAN_GROUP    work-items of a box_row_scan work-group, four output pixels each
#define SCAN_SEGMENT (4 * SCAN_GROUP)
#define SCAN_ENTRIES (SCAN_SEGMENT + 2 * RADIUS)
#define SCAN_CHUNK ((SCAN_ENTRIES + SCAN_GROUP - 1) / SCAN_GROUP)

// Column sums of 2 RADIUS + 1 rows (reflected) for rows [ys, ys + SCAN_ROWS) of the band's
// [y0, y1), ys = y0 + SCAN_ROWS * id, one pixel a work-item. At most 255 (2 RADIUS + 1) = 65535
// for RADIUS <= 128: 16 bits hold them. dst is 8 bytes a pixel, its pitch in ushorts.
__kernel void box_columns(const __global uchar* restrict src, int src_first, int src_pitch,
                          __global ushort* restrict dst, int dst_first, int dst_pitch,
                          int width, int height, int y0, int y1) {
  const int x = (int)get_global_id(0);
  const int ys = y0 + (int)get_global_id(1) * SCAN_ROWS;
  if (x >= width || ys >= y1) return;
  const int ye = min(ys + SCAN_ROWS, y1);
  // Row offsets reach -RADIUS .. height - 1 + RADIUS.
  const bool near = height > RADIUS;
  const __global uchar4* restrict column = (const __global uchar4*)src + x;
  __global ushort4* restrict out = (__global ushort4*)dst + x;
#define ROW(r) \
  convert_uint4(column[(size_t)(tandem_reflect((r), height, near) - src_first) * (src_pitch / 4)])
  uint4 sum = ROW(ys);
#pragma unroll 8
  for (int k = 1; k <= RADIUS; ++k) sum += ROW(ys - k) + ROW(ys + k);
  out[(size_t)(ys - dst_first) * (dst_pitch / 4)] = convert_ushort4(sum);
#pragma unroll 4
  for (int y = ys + 1; y < ye; ++y) {
    // Unsigned wrap-around in between is harmless: the true sum is never negative.
    sum += ROW(y + RADIUS) - ROW(y - 1 - RADIUS);
    out[(size_t)(y - dst_first) * (dst_pitch / 4)] = convert_ushort4(sum);
  }
#undef ROW
}

// Means of pixels [x0, x0 + SCAN_SEGMENT) of row y0 + id(1), x0 = SCAN_SEGMENT * group(0): the
// column sums from x0 - RADIUS on (reflected) go to local memory, become an inclusive prefix
// sum P there (each work-item scans a chunk, a Hillis-Steele scan joins the chunks' totals), and
// the window of pixel x0 + p is P[p + 2 RADIUS] - P[p - 1]. Sums stay below 2^32.
__kernel __attribute__((reqd_work_group_size(SCAN_GROUP, 1, 1))) void box_row_scan(
    const __global ushort* restrict src, int src_first, int src_pitch,
    __global uchar* restrict dst, int dst_first, int dst_pitch, int width,
    int y0 TANDEM_EPILOGUE_PARAMS) {
  __local uint4 prefix[SCAN_CHUNK * SCAN_GROUP];
  __local uint4 totals[SCAN_GROUP];
  const int lid = (int)get_local_id(0);
  const int x0 = (int)get_group_id(0) * SCAN_SEGMENT;
  const int y = y0 + (int)get_global_id(1);
  const __global ushort4* restrict row =
      (const __global ushort4*)(src + (size_t)(y - src_first) * src_pitch);
  // Offsets reach -RADIUS .. width - 1 + RADIUS once clamped: one reflection at most.
  const bool near = width > RADIUS;
  for (int i = lid; i < SCAN_ENTRIES; i += SCAN_GROUP) {
    const int column = min(x0 - RADIUS + i, width - 1 + RADIUS);
    prefix[i] = convert_uint4(row[tandem_reflect(column, width, near)]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  __local uint4* chunk = prefix + lid * SCAN_CHUNK;
  uint4 running = (uint4)(0);
  for (int i = 0; i < SCAN_CHUNK; ++i) {
    if (lid * SCAN_CHUNK + i < SCAN_ENTRIES) {
      running += chunk[i];
      chunk[i] = running;
    }
  }
  totals[lid] = running;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 1; step < SCAN_GROUP; step *= 2) {
    const uint4 add = lid >= step ? totals[lid - step] : (uint4)(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    totals[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid > 0) {
    const uint4 before = totals[lid - 1];
    for (int i = 0; i < SCAN_CHUNK; ++i) chunk[i] += before;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  const int p = 4 * lid;
  const int x = x0 + p;
  if (x >= width) return;
#define WINDOW(q) (prefix[(q) + 2 * RADIUS] - ((q) > 0 ? prefix[(q) - 1] : (uint4)(0)))
#define MEAN(s) convert_uchar4(((s) + (uint4)(AREA / 2)) / (uint4)(AREA))
  const uchar16 means =
      (uchar16)(MEAN(WINDOW(p)), MEAN(WINDOW(p + 1)), MEAN(WINDOW(p + 2)), MEAN(WINDOW(p + 3)));
#undef WINDOW
#undef MEAN
  TANDEM_STORE4_RGBA8(dst + (size_t)(y - dst_first) * dst_pitch, x, means);
}
#endif
