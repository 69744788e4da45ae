// pad: output pixel (x, y) is input pixel (x - left, y - top) where that lies in the input, else
// the colour. A work-item moves GROUP pixels of a row, four at a time: inside the input, rgba8's
// four as one vload4 of 4-byte words (one 16-byte load on CPUs, whose loads need no alignment;
// NVIDIA's compiler splits it) and rgba32f's a float4 each; at the input's edges a pixel a load
// at a clamped column and the colour chosen in its place outside the input; rows of the padding
// load nothing. Stores through TANDEM_STORE4_*: a point-wise chain after it runs here, on the
// padding too.
//   PIXEL_RGBA8 1 or 0; GROUP pixels a work-item, 16 (rgba8 on CPUs) or 4

#if PIXEL_RGBA8
typedef uchar sample_t;
typedef uint pixel_t;
typedef uchar4 colour_t;
#define PIXEL_OF(colour) as_uint(colour)
#define STORE4(row, x, a, b, c, d) TANDEM_STORE4_RGBA8(row, x, as_uchar16((uint4)(a, b, c, d)))
#else
typedef float sample_t;
typedef float4 pixel_t;
typedef float4 colour_t;
#define PIXEL_OF(colour) (colour)
#define STORE4(row, x, a, b, c, d) TANDEM_STORE4_RGBA32F(row, x, (float16)(a, b, c, d))
#endif

// Four output pixels from x of an output row whose input row is `row` (sx = x - left).
inline void pad4(__global sample_t* restrict out, int x, const __global pixel_t* restrict row,
                 int sx, int in_width, pixel_t fill TANDEM_EPILOGUE_PARAMS) {
  if (sx >= 0 && sx + 4 <= in_width) {
    // The four pixels inside the input (PoCL, 2 cores, pad=2048:1200:64:60 of 1080p: 0.58 ms
    // against 1.2-1.5 ms a pixel at a time).
#if PIXEL_RGBA8
    const uint4 v = vload4(0, row + sx);
    STORE4(out, x, v.x, v.y, v.z, v.w);
#else
    STORE4(out, x, row[sx], row[sx + 1], row[sx + 2], row[sx + 3]);
#endif
    return;
  }
#define AT(k) \
  (sx + (k) >= 0 && sx + (k) < in_width ? row[clamp(sx + (k), 0, in_width - 1)] : fill)
  STORE4(out, x, AT(0), AT(1), AT(2), AT(3));
#undef AT
}

// Rows [y0, y0 + rows) of the output; the in_width x in_height input at left, top. GROUP pixels
// a work-item: 16 on CPUs for rgba8 (one 64-byte load where they lie inside the input: PoCL runs
// a work-item's own vectors only, it does not vectorise across work-items), else 4.
__kernel void pad(const __global sample_t* restrict src, int src_first, int src_pitch,
                  __global sample_t* restrict dst, int dst_first, int dst_pitch, int in_width,
                  int in_height, int left, int top, int y0,
                  colour_t colour TANDEM_EPILOGUE_PARAMS) {
  const int x = GROUP * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const pixel_t fill = PIXEL_OF(colour);
  __global sample_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
  const int sy = y - top;
  if (sy < 0 || sy >= in_height) {
    for (int g = 0; g < GROUP; g += 4) STORE4(out, x + g, fill, fill, fill, fill);
    return;
  }
  const __global pixel_t* restrict row =
      (const __global pixel_t*)(src + (size_t)(sy - src_first) * src_pitch);
  const int sx = x - left;
#if GROUP == 16
  if (sx >= 0 && sx + 16 <= in_width) {
    const uint16 v = vload16(0, row + sx);
    STORE4(out, x, v.s0, v.s1, v.s2, v.s3);
    STORE4(out, x + 4, v.s4, v.s5, v.s6, v.s7);
    STORE4(out, x + 8, v.s8, v.s9, v.sa, v.sb);
    STORE4(out, x + 12, v.sc, v.sd, v.se, v.sf);
    return;
  }
#endif
  for (int g = 0; g < GROUP; g += 4) {
    pad4(out, x + g, row, sx + g, in_width, fill TANDEM_EPILOGUE_ARGS);
  }
}

// Rows [y0, y0 + rows) wholly in the padding, where the executor holds no input rows.
__kernel void pad_fill(__global sample_t* restrict dst, int dst_first, int dst_pitch, int y0,
                       colour_t colour TANDEM_EPILOGUE_PARAMS) {
  const int x = GROUP * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const pixel_t fill = PIXEL_OF(colour);
  for (int g = 0; g < GROUP; g += 4) {
    STORE4(dst + (size_t)(y - dst_first) * dst_pitch, x + g, fill, fill, fill, fill);
  }
}
