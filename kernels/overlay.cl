// overlay: a picture blended over the frame with its top left corner at (OX, OY) of the frame,
// by the picture's alpha a (straight): rgb = fma(a, over - main, main), alpha = fma(main alpha,
// 1 - a, a) (Porter and Duff's "over"). The picture is a second input of the graph's pixel
// format, or (FROM_FILE) a file's picture held in device memory as normalised float4s. Four
// pixels a work-item, stored through TANDEM_STORE4_*: a point-wise chain after it runs in it.
//   PIXEL_RGBA8 1 or 0; FROM_FILE 1 or 0

#if PIXEL_RGBA8
typedef uchar pixel_t;
#else
typedef float pixel_t;
#endif

#if FROM_FILE
typedef float4 over_t;
inline float4 over_pixel(const __global over_t* restrict row, int x) { return row[x]; }
#elif PIXEL_RGBA8
typedef uchar over_t;
inline float4 over_pixel(const __global over_t* restrict row, int x) {
  return convert_float4(((const __global uchar4*)row)[x]) * (1.0f / 255.0f);
}
#else
typedef float over_t;
inline float4 over_pixel(const __global over_t* restrict row, int x) {
  return ((const __global float4*)row)[x];
}
#endif

inline float4 blend_over(float4 m, float4 o) {
  return (float4)(fma((float3)(o.w), o.xyz - m.xyz, m.xyz), fma(m.w, 1.0f - o.w, o.w));
}

// Output rows [y0, y0 + rows). The picture's rows are held from over_first (its first row
// that falls in the band), over_pitch elements apart; it is ow x oh.
__kernel void overlay(const __global pixel_t* restrict src, int src_first, int src_pitch,
                      __global pixel_t* restrict dst, int dst_first, int dst_pitch, int y0,
                      const __global over_t* restrict over, int over_first, int over_pitch,
                      int ox, int oy, int ow, int oh TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 4;
  const int y = y0 + (int)get_global_id(1);
  const __global pixel_t* restrict in = src + (size_t)(y - src_first) * src_pitch + 4 * x;
#if PIXEL_RGBA8
  const float16 v = convert_float16(*(const __global uchar16*)in) * (1.0f / 255.0f);
#else
  const float16 v = tandem_load4_rgba32f(in, 0);
#endif
  float4 px[4] = {v.s0123, v.s4567, v.s89ab, v.scdef};
  const int oy_row = y - oy;
  if (oy_row >= 0 && oy_row < oh) {
    const __global over_t* restrict row = over + (size_t)(oy_row - over_first) * over_pitch;
    for (int k = 0; k < 4; ++k) {
      const int ox_col = x + k - ox;
      if (ox_col >= 0 && ox_col < ow) px[k] = blend_over(px[k], over_pixel(row, ox_col));
    }
  }
  const float16 out = (float16)(px[0], px[1], px[2], px[3]);
  __global pixel_t* restrict out_row = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  TANDEM_STORE4_RGBA8(out_row, x, tandem_levels8_16(out * 255.0f));
#else
  TANDEM_STORE4_RGBA32F(out_row, x, out);
#endif
}
