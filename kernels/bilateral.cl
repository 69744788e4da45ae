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
