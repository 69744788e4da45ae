// bilateral: edge-preserving smoothing. Each output pixel c0 becomes
//   c0 + sum(w (c - c0)) / sum(w)
// over the pixels c of the round window dx^2 + dy^2 <= RADIUS^2 (as OpenCV's; reflect-101
// borders), with
//   w = spatial(dx) * spatial(dy) * 2^(-|c - c0|^2 * RANGE_SCALE2),
// spatial(k) = exp(-k^2 / (2 sigma_s^2)) (so the product is exp(-(dx^2 + dy^2) / (2 sigma_s^2)))
// and |c - c0| the Euclidean distance of the RGB values to the centre pixel's. Alpha passes
// through unchanged.
// Compile-time constants from the host (filters/bilateral.cpp):
//   RADIUS        ceil(2 sigma_s)
//   SPATIAL       RADIUS + 1 floats, spatial(0) .. spatial(RADIUS)
//   REACH         RADIUS + 1 ints: the window's half-width on row dy, floor(sqrt(RADIUS^2 - dy^2))
//   RANGE_SCALE2  log2(e) / (2 sigma_r^2) in the stored units: sigma_r is in normalised
//                 intensity, so for rgba8 it is log2(e) / (2 (255 sigma_r)^2). exp2 of a product
//                 is one multiplication and the hardware's 2^x on GPUs, where exp() takes a
//                 range reduction more.
//   PIXEL_RGBA8   1: uchar pixels (values 0..255 throughout); 0: float pixels
//   PIXELS        neighbouring pixels a work-item: 4, 8 or 16. The host picks 4 on GPUs and
//                 16 elsewhere.
// A work-item keeps its pixels channel by channel (R of all PIXELS pixels in one vector, G in
// another, B in a third): a tap is a few whole-vector operations on a CPU's SIMD lanes, and
// alpha, which no weight reads, is never computed. On rgba8 a byte b becomes the float 2^23 + b
// by setting the exponent bits above it (an integer AND and OR, where int-to-float conversions
// run at a quarter of the float rate on GPUs); differences of two such floats are the exact
// differences of the bytes, and the sums are of w (c - c0), so the bias never enters them.
// It stores through TANDEM_STORE4_*: a point-wise chain after it runs in the same kernel.

__constant float kSpatial[RADIUS + 1] = {SPATIAL};
__constant int kReach[RADIUS + 1] = {REACH};

#if PIXELS == 4
typedef float4 floatn;
typedef uint4 uintn;
#define VLOADN vload4
#define VSTOREN vstore4
#define CONVERT_UINTN_SAT_RTE convert_uint4_sat_rte
#define AS_FLOATN as_float4
#elif PIXELS == 8
typedef float8 floatn;
typedef uint8 uintn;
#define VLOADN vload8
#define VSTOREN vstore8
#define CONVERT_UINTN_SAT_RTE convert_uint8_sat_rte
#define AS_FLOATN as_float8
#elif PIXELS == 16
typedef float16 floatn;
typedef uint16 uintn;
#define VLOADN vload16
#define VSTOREN vstore16
#define CONVERT_UINTN_SAT_RTE convert_uint16_sat_rte
#define AS_FLOATN as_float16
#else
#error PIXELS must be 4, 8 or 16
#endif

// The RGB channels of PIXELS pixels (on rgba8 biased by 2^23, see above).
typedef struct {
  floatn r, g, b;
} channels;

#if PIXEL_RGBA8
typedef uchar pixel_t;
inline channels split(uintn q) {
  const uintn exponent = (uintn)(0x4B000000u);
  channels c;
  c.r = AS_FLOATN((q & 0xFFu) | exponent);
  c.g = AS_FLOATN(((q >> 8) & 0xFFu) | exponent);
  c.b = AS_FLOATN(((q >> 16) & 0xFFu) | exponent);
  return c;
}
// Pixels x .. x + PIXELS - 1 of the row; x any pixel (the loads need 4-byte alignment only).
inline channels load(const __global uchar* restrict row, int x) {
  return split(VLOADN(0, (const __global uint*)row + x));
}
// Pixel i of the group from pixel x[i] of the row (reflected offsets at the borders).
inline channels load_each(const __global uchar* restrict row, const int* x) {
  uint q[PIXELS];
  for (int i = 0; i < PIXELS; ++i) q[i] = ((const __global uint*)row)[x[i]];
  return split(VLOADN(0, q));
}
#else
typedef float pixel_t;
inline channels load_each(const __global float* restrict row, const int* x) {
  float r[PIXELS], g[PIXELS], b[PIXELS];
  for (int i = 0; i < PIXELS; ++i) {
    const float4 p = vload4(x[i], row);
    r[i] = p.x;
    g[i] = p.y;
    b[i] = p.z;
  }
  channels c;
  c.r = VLOADN(0, r);
  c.g = VLOADN(0, g);
  c.b = VLOADN(0, b);
  return c;
}
inline channels load(const __global float* restrict row, int x) {
  int at[PIXELS];
  for (int i = 0; i < PIXELS; ++i) at[i] = x + i;
  return load_each(row, at);
}
#endif

// Adds the tap v with spatial weight `spatial` to the sums of the PIXELS outputs.
inline void accumulate(const channels v, float spatial, const channels centre, floatn* weights,
                       channels* sums) {
  const floatn dr = v.r - centre.r;
  const floatn dg = v.g - centre.g;
  const floatn db = v.b - centre.b;
  const floatn w = spatial * exp2(-(dr * dr + dg * dg + db * db) * RANGE_SCALE2);
  *weights += w;
  sums->r = mad(w, dr, sums->r);
  sums->g = mad(w, dg, sums->g);
  sums->b = mad(w, db, sums->b);
}

__kernel void bilateral(const __global pixel_t* restrict src, int src_first, int src_pitch,
                        __global pixel_t* restrict dst, int dst_first, int dst_pitch, int width,
                        int height, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * PIXELS;
  const int y = y0 + (int)get_global_id(1);
  // Lanes past the right edge compute junk from clamped offsets; groups of four pixels that
  // start before the width are stored, the rest of such a group lands in the row's padding
  // (pitches are multiples of 64 bytes: 16 pixels of rgba8, 4 of rgba32f).
  const __global pixel_t* restrict centre_row = src + (size_t)(y - src_first) * src_pitch;
  const bool interior = x >= RADIUS && x + PIXELS - 1 + RADIUS < width;
  // Offsets reach -RADIUS .. width + PIXELS - 2 + RADIUS across (clamped to width - 1 + RADIUS
  // below), -RADIUS .. height - 1 + RADIUS down.
  const bool near_x = width > RADIUS;
  const bool near_y = height > RADIUS;
  int at[PIXELS];
  for (int i = 0; i < PIXELS; ++i) at[i] = min(x + i, width - 1);
  const channels centre = load_each(centre_row, at);
  floatn weights = (floatn)(0.0f);
  channels sums = {(floatn)(0.0f), (floatn)(0.0f), (floatn)(0.0f)};
  for (int dy = -RADIUS; dy <= RADIUS; ++dy) {
    const __global pixel_t* restrict row =
        src + (size_t)(tandem_reflect(y + dy, height, near_y) - src_first) * src_pitch;
    const float spatial_y = kSpatial[abs(dy)];
    const int reach = kReach[abs(dy)];
    if (interior) {
      for (int dx = -reach; dx <= reach; ++dx) {
        accumulate(load(row, x + dx), spatial_y * kSpatial[abs(dx)], centre, &weights, &sums);
      }
    } else {
      for (int dx = -reach; dx <= reach; ++dx) {
        int tap[PIXELS];
        for (int i = 0; i < PIXELS; ++i) {
          tap[i] = tandem_reflect(min(x + i + dx, width - 1 + RADIUS), width, near_x);
        }
        accumulate(load_each(row, tap), spatial_y * kSpatial[abs(dx)], centre, &weights,
                   &sums);
      }
    }
  }

  // The results, pixel by pixel in groups of four for TANDEM_STORE4_*.
#if PIXEL_RGBA8
  const floatn bias = (floatn)(8388608.0f);
  const uintn alpha = VLOADN(0, (const __global uint*)centre_row + x) & 0xFF000000u;
  // Each channel saturated to 0..255 before it is shifted into place.
#define BYTE(v) min(CONVERT_UINTN_SAT_RTE(v), (uintn)(255u))
  const uintn out = BYTE(centre.r - bias + sums.r / weights) |
                    (BYTE(centre.g - bias + sums.g / weights) << 8) |
                    (BYTE(centre.b - bias + sums.b / weights) << 16) | alpha;
#undef BYTE
  uint words[PIXELS];
  VSTOREN(out, 0, words);
  __global uchar* restrict out_row = dst + (size_t)(y - dst_first) * dst_pitch;
  for (int i = 0; i < PIXELS && x + i < width; i += 4) {
    TANDEM_STORE4_RGBA8(out_row, x + i, as_uchar16(vload4(0, words + i)));
  }
#else
  float r[PIXELS], g[PIXELS], b[PIXELS];
  VSTOREN(centre.r + sums.r / weights, 0, r);
  VSTOREN(centre.g + sums.g / weights, 0, g);
  VSTOREN(centre.b + sums.b / weights, 0, b);
  __global float* restrict out_row = dst + (size_t)(y - dst_first) * dst_pitch;
  for (int i = 0; i < PIXELS && x + i < width; i += 4) {
    float16 v;
    v.s0123 = (float4)(r[i], g[i], b[i], centre_row[4 * min(x + i, width - 1) + 3]);
    v.s4567 = (float4)(r[i + 1], g[i + 1], b[i + 1], centre_row[4 * min(x + i + 1, width - 1) + 3]);
    v.s89ab = (float4)(r[i + 2], g[i + 2], b[i + 2], centre_row[4 * min(x + i + 2, width - 1) + 3]);
    v.scdef = (float4)(r[i + 3], g[i + 3], b[i + 3], centre_row[4 * min(x + i + 3, width - 1) + 3]);
    TANDEM_STORE4_RGBA32F(out_row, x + i, v);
  }
#endif
}

#ifdef BILATERAL_TILE
// The GPU schedule (RADIUS <= 8): a work-group of BT_GX x BT_GY work-items, four pixels a
// work-item across and one row down, first converts its pixels and their halo to float into a
// local-memory tile, one plane per channel, then runs the arithmetic above out of it: per row
// of the window a work-item reads the float4s of each plane that its four pixels' taps reach
// (neighbouring work-items neighbouring 16 bytes) and picks every tap out of them. No byte is
// split or address reflected per tap, and a pixel's load serves all the taps that reach it.
#define BT_GX 16
#define BT_GY 8
#define BT_PAD (4 * ((RADIUS + 3) / 4))  // halo columns on each side, whole float4s
#define BT_SPAN (4 + 2 * BT_PAD)         // the columns a work-item's taps reach
#define BT_W (4 * BT_GX + 2 * BT_PAD)    // a tile row, floats
#define BT_H (BT_GY + 2 * RADIUS)
#define BT_PLANE (BT_W * BT_H)

#if RADIUS > 8
#error bilateral_tiled reaches 8 pixels at most
#endif

// Column j of a window row, j a constant: component j % 4 of the float4 q<j / 4>.
inline float bt_at(float4 q0, float4 q1, float4 q2, float4 q3, float4 q4, int j) {
  const float4 q = j < 4 ? q0 : j < 8 ? q1 : j < 12 ? q2 : j < 16 ? q3 : q4;
  switch (j & 3) {
    case 0: return q.x;
    case 1: return q.y;
    case 2: return q.z;
    default: return q.w;
  }
}
#define BT_AT(q, j) bt_at(q##0, q##1, q##2, q##3, q##4, (j))
// Columns j .. j + 3: one channel of the four pixels a tap reads.
#define BT_AT4(q, j) (float4)(BT_AT(q, j), BT_AT(q, (j) + 1), BT_AT(q, (j) + 2), BT_AT(q, (j) + 3))
// The tile's float4 m of a row, plane p (zero past the columns a work-item reaches).
#define BT_LOAD(p, m) ((m) < BT_SPAN / 4 ? row_at[(p) * (BT_PLANE / 4) + (m)] : (float4)(0.0f))

// The taps of window row dy for this work-item's four pixels; row_at: its first float4 of the
// tile's row, plane 0. Taps and columns are spelled out with constant indices (no loop the
// compiler would have to unroll for the row's values to stay in registers); dy is a constant
// where the kernel calls this.
inline void bilateral_tile_row(__local const float4* row_at, const int dy, const channels centre,
                               floatn* weights, channels* sums) {
  const float spatial_y = kSpatial[abs(dy)];
  const float4 r0 = BT_LOAD(0, 0), r1 = BT_LOAD(0, 1), r2 = BT_LOAD(0, 2), r3 = BT_LOAD(0, 3),
               r4 = BT_LOAD(0, 4);
  const float4 g0 = BT_LOAD(1, 0), g1 = BT_LOAD(1, 1), g2 = BT_LOAD(1, 2), g3 = BT_LOAD(1, 3),
               g4 = BT_LOAD(1, 4);
  const float4 b0 = BT_LOAD(2, 0), b1 = BT_LOAD(2, 1), b2 = BT_LOAD(2, 2), b3 = BT_LOAD(2, 3),
               b4 = BT_LOAD(2, 4);
#define BT_TAP(dx)                                                                       \
  if ((dx) * (dx) + dy * dy <= RADIUS * RADIUS) {                                        \
    const channels v = {BT_AT4(r, BT_PAD + (dx)), BT_AT4(g, BT_PAD + (dx)),              \
                        BT_AT4(b, BT_PAD + (dx))};                                       \
    accumulate(v, spatial_y * kSpatial[min((int)abs(dx), RADIUS)], centre, weights, sums); \
  }
  BT_TAP(-8) BT_TAP(-7) BT_TAP(-6) BT_TAP(-5) BT_TAP(-4) BT_TAP(-3) BT_TAP(-2) BT_TAP(-1)
  BT_TAP(0) BT_TAP(1) BT_TAP(2) BT_TAP(3) BT_TAP(4) BT_TAP(5) BT_TAP(6) BT_TAP(7) BT_TAP(8)
#undef BT_TAP
}

__kernel __attribute__((reqd_work_group_size(BT_GX, BT_GY, 1))) void bilateral_tiled(
    const __global pixel_t* restrict src, int src_first, int src_pitch,
    __global pixel_t* restrict dst, int dst_first, int dst_pitch, int width, int height, int y0,
    int y1 TANDEM_EPILOGUE_PARAMS) {
  __local float4 tile[3 * BT_PLANE / 4];
  __local float* planes = (__local float*)tile;
  const int lx = (int)get_local_id(0);
  const int ly = (int)get_local_id(1);
  const int left = (int)get_group_id(0) * 4 * BT_GX - BT_PAD;
  const int top = y0 + (int)get_group_id(1) * BT_GY - RADIUS;
  // Columns past what valid outputs reach are clamped to the last they reach, rows past what
  // the band's outputs need to the last the band holds; then reflected as in the kernel above.
  const int last = y1 - 1 + RADIUS;
  const bool near_x = width > RADIUS;
  const bool near_y = height > RADIUS;
  for (int e = ly * BT_GX + lx; e < BT_PLANE; e += BT_GX * BT_GY) {
    const int i = e / BT_W;
    const int column = clamp(left + e % BT_W, -RADIUS, width - 1 + RADIUS);
    const int y = tandem_reflect(min(top + i, last), height, near_y);
    const int x = tandem_reflect(column, width, near_x);
    const __global pixel_t* restrict row = src + (size_t)(y - src_first) * src_pitch;
#if PIXEL_RGBA8
    const float4 p = convert_float4(as_uchar4(((const __global uint*)row)[x]));
#else
    const float4 p = ((const __global float4*)row)[x];
#endif
    planes[e] = p.x;
    planes[BT_PLANE + e] = p.y;
    planes[2 * BT_PLANE + e] = p.z;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  const int x = 4 * (int)get_global_id(0);
  const int y = y0 + (int)get_group_id(1) * BT_GY + ly;
  if (x >= width || y >= y1) return;
  __local const float4* centre_at = tile + ((ly + RADIUS) * BT_W + BT_PAD) / 4 + lx;
  const channels centre = {centre_at[0], centre_at[BT_PLANE / 4], centre_at[2 * BT_PLANE / 4]};
  floatn weights = (floatn)(0.0f);
  channels sums = {(floatn)(0.0f), (floatn)(0.0f), (floatn)(0.0f)};
  // Row by row of the window, dy spelled out: with dy a constant, which taps a row has and their
  // weights are constants too.
#define BT_ROW(dy)                                                                       \
  if ((dy) >= -RADIUS && (dy) <= RADIUS) {                                               \
    bilateral_tile_row(tile + (ly + RADIUS + (dy)) * BT_W / 4 + lx, (dy), centre, &weights, \
                       &sums);                                                           \
  }
  BT_ROW(-8) BT_ROW(-7) BT_ROW(-6) BT_ROW(-5) BT_ROW(-4) BT_ROW(-3) BT_ROW(-2) BT_ROW(-1)
  BT_ROW(0) BT_ROW(1) BT_ROW(2) BT_ROW(3) BT_ROW(4) BT_ROW(5) BT_ROW(6) BT_ROW(7) BT_ROW(8)
#undef BT_ROW

  const __global pixel_t* restrict centre_row = src + (size_t)(y - src_first) * src_pitch;
  const floatn out_r = centre.r + sums.r / weights;
  const floatn out_g = centre.g + sums.g / weights;
  const floatn out_b = centre.b + sums.b / weights;
  __global pixel_t* restrict out_row = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  // Alpha from the centre pixels themselves; lanes past the width land in the row's padding.
  const uint4 alpha = *(const __global uint4*)((const __global uint*)centre_row + x) & 0xFF000000u;
#define BYTE(v) min(convert_uint4_sat_rte(v), (uint4)(255u))
  const uint4 out = BYTE(out_r) | (BYTE(out_g) << 8) | (BYTE(out_b) << 16) | alpha;
#undef BYTE
  TANDEM_STORE4_RGBA8(out_row, x, as_uchar16(out));
#else
  float16 v;
  v.s0123 = (float4)(out_r.x, out_g.x, out_b.x, centre_row[4 * x + 3]);
  v.s4567 = (float4)(out_r.y, out_g.y, out_b.y, centre_row[4 * min(x + 1, width - 1) + 3]);
  v.s89ab = (float4)(out_r.z, out_g.z, out_b.z, centre_row[4 * min(x + 2, width - 1) + 3]);
  v.scdef = (float4)(out_r.w, out_g.w, out_b.w, centre_row[4 * min(x + 3, width - 1) + 3]);
  TANDEM_STORE4_RGBA32F(out_row, x, v);
#endif
}
#endif
