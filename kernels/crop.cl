// crop: output pixel (x, y) is input pixel (x + left, y + top). A work-item moves GROUP pixels
// of a row: on CPUs, where an 8-bit row of the rectangle starts on a group of sixteen pixels,
// sixteen in one 64-byte load (WIDE_LOADS 16), where it starts on a group of four, four in one
// 16-byte load (WIDE_LOADS 4); else four a pixel a load (a 4-byte word, or a float4), the last
// group's lanes past the width reading the row's last pixel. Stores through TANDEM_STORE4_*: a
// point-wise chain after it runs here; without one, groups of sixteen are a cache line each,
// stored through TANDEM_STREAM_STORE16 (non-temporal where the output goes to the host).
//   PIXEL_RGBA8 1 or 0; WIDE_LOADS 16 or 4 where PIXEL_RGBA8 and left is a multiple of it, else 0
#if WIDE_LOADS == 16
#define GROUP 16
#else
#define GROUP 4
#endif

#if PIXEL_RGBA8
typedef uchar sample_t;
typedef uint pixel_t;
#define STORE4(row, x, a, b, c, d) TANDEM_STORE4_RGBA8(row, x, as_uchar16((uint4)(a, b, c, d)))
#else
typedef float sample_t;
typedef float4 pixel_t;
#define STORE4(row, x, a, b, c, d) TANDEM_STORE4_RGBA32F(row, x, (float16)(a, b, c, d))
#endif

// Rows [y0, y0 + rows) of a `width` wide output.
__kernel void crop(const __global sample_t* restrict src, int src_first, int src_pitch,
                   __global sample_t* restrict dst, int dst_first, int dst_pitch, int width,
                   int left, int top, int y0 TANDEM_EPILOGUE_PARAMS) {
  const int x = GROUP * (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  const __global sample_t* restrict row =
      src + (size_t)(y + top - src_first) * src_pitch + 4 * left;
  __global sample_t* restrict out = dst + (size_t)(y - dst_first) * dst_pitch;
#if WIDE_LOADS == 16
  // The group ends within the input's last group of sixteen, inside its pitch (a multiple of 64
  // bytes), and so do the output's. PoCL runs a work-item's own vectors only (it does not
  // vectorise across work-items), so a work-item moves what one AVX-512 register holds.
  const uint16 v = *(const __global uint16*)(row + 4 * x);
#ifdef TANDEM_EPILOGUE
  STORE4(out, x, v.s0, v.s1, v.s2, v.s3);
  STORE4(out, x + 4, v.s4, v.s5, v.s6, v.s7);
  STORE4(out, x + 8, v.s8, v.s9, v.sa, v.sb);
  STORE4(out, x + 12, v.sc, v.sd, v.se, v.sf);
#else
  TANDEM_STREAM_STORE16((__global uint16*)(out + 4 * x), v);
#endif
#elif WIDE_LOADS == 4
  // The group ends within the input's last group of four, inside its pitch.
  const uint4 v = *(const __global uint4*)(row + 4 * x);
  STORE4(out, x, v.x, v.y, v.z, v.w);
#else
  const __global pixel_t* restrict p = (const __global pixel_t*)row;
  const int last = width - 1;
  STORE4(out, x, p[x], p[min(x + 1, last)], p[min(x + 2, last)], p[min(x + 3, last)]);
#endif
}
