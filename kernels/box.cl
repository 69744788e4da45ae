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
// Compile-time constants: RADIUS, PIXEL_RGBA8.

#define AREA ((2 * RADIUS + 1) * (2 * RADIUS + 1))

// Reflect-101 without a division, valid for |i| <= 2n - 2 (one reflection at either side).
inline int reflect_near(int i, int n) {
  i = abs(i);
  return min(i, 2 * n - 2 - i);
}

inline int reflect(int i, int n, bool near) {
  return near ? reflect_near(i, n) : tandem_reflect101(i, n);
}

#if PIXEL_RGBA8
typedef uchar pixel_t;
typedef uint sum_t;
#define LOAD_ROW4(p) convert_uint16(vload16(0, p))
#else
typedef float pixel_t;
typedef float sum_t;
#define LOAD_ROW4(p) vload16(0, p)

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
#define ROW(r) LOAD_ROW4(column + (size_t)(reflect((r), height, near) - src_first) * src_pitch)
#if PIXEL_RGBA8
  uint16 sum = ROW(ys);
  for (int k = 1; k <= RADIUS; ++k) sum += ROW(ys - k) + ROW(ys + k);
  vstore16(sum, 0, out + (size_t)(ys - dst_first) * dst_pitch);
  for (int y = ys + 1; y < ye; ++y) {
    // Unsigned wrap-around in between is harmless: the true sum is never negative.
    sum += ROW(y + RADIUS) - ROW(y - 1 - RADIUS);
    vstore16(sum, 0, out + (size_t)(y - dst_first) * dst_pitch);
  }
#else
  float16 sum = ROW(ys);
  float16 comp = (float16)(0.0f);
  for (int k = 1; k <= RADIUS; ++k) {
    add16(&sum, &comp, ROW(ys - k));
    add16(&sum, &comp, ROW(ys + k));
  }
  vstore16(sum + comp, 0, out + (size_t)(ys - dst_first) * dst_pitch);
  for (int y = ys + 1; y < ye; ++y) {
    add16(&sum, &comp, ROW(y + RADIUS));
    add16(&sum, &comp, -ROW(y - 1 - RADIUS));
    vstore16(sum + comp, 0, out + (size_t)(y - dst_first) * dst_pitch);
  }
#endif
#undef ROW
}

// Means of pixels [xs, xe) of row y0 + id, xs = segment * id (segment a multiple of 4). The last
// group of a row runs into the row's padding: its values there are not used.
__kernel void box_horizontal(const __global sum_t* restrict src, int src_first, int src_pitch,
                             __global pixel_t* restrict dst, int dst_first, int dst_pitch,
                             int width, int y0, int segment) {
  const int xs = (int)get_global_id(0) * segment;
  const int y = y0 + (int)get_global_id(1);
  const int xe = min(xs + segment, (width + 3) & ~3);
  // Pixel offsets reach -RADIUS .. width + 2 + RADIUS.
  const bool near = width >= RADIUS + 4;
  const __global sum_t* restrict row = src + (size_t)(y - src_first) * src_pitch;
  __global pixel_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#define COLUMN(i) vload4(reflect((i), width, near), row)
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
    vstore16(means, 0, out + 4 * x);
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
    vstore16(means, 0, out + 4 * x);
  }
#endif
#undef ADVANCE
#undef MEAN
#undef COLUMN
}
