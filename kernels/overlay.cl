// overlay: a picture blended over the frame with its top left corner at (OX, OY) of the frame,
// by the picture's alpha a (straight): rgb = fma(a, over - main, main), alpha = fma(main alpha,
// 1 - a, a) (Porter and Duff's "over"). The picture is a second input of the graph's pixel
// format, or (FROM_FILE) a file's picture held in device memory as normalised float4s. A
// work-item takes GROUP pixels in groups of four, stored through TANDEM_STORE4_*: a point-wise
// chain after it runs in it. Without one, pixels the picture does not cover are copied as they
// are: GROUP 16 (CPUs, 8-bit frames) moves such a work-item's sixteen as one 64-byte line, as
// crop does, for PoCL runs a work-item's own vectors only and costs a little per work-item.
//   PIXEL_RGBA8 1 or 0; FROM_FILE 1 or 0; GROUP 4, or 16 where PIXEL_RGBA8

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
  const int x0 = (int)get_global_id(0) * GROUP;
  const int y = y0 + (int)get_global_id(1);
  const __global pixel_t* restrict in_row = src + (size_t)(y - src_first) * src_pitch;
  __global pixel_t* restrict out_row = dst + (size_t)(y - dst_first) * dst_pitch;
  const bool rows_of_picture = y >= oy && y < oy + oh;
#if GROUP == 16 && !defined(TANDEM_EPILOGUE)
  // Rows are a multiple of 64 bytes, sixteen 8-bit pixels: the line ends inside the pitch.
  if (!rows_of_picture || x0 + 15 < ox || x0 >= ox + ow) {
    *(__global uint16*)(out_row + 4 * x0) = *(const __global uint16*)(in_row + 4 * x0);
    return;
  }
#endif
  for (int x = x0; x < x0 + GROUP; x += 4) {
    const __global pixel_t* restrict in = in_row + 4 * x;
#ifndef TANDEM_EPILOGUE
    if (!rows_of_picture || x + 3 < ox || x >= ox + ow) {
#if PIXEL_RGBA8
      *(__global uchar16*)(out_row + 4 * x) = *(const __global uchar16*)in;
#else
      *(__global float16*)(out_row + 4 * x) = *(const __global float16*)in;
#endif
      continue;
    }
#endif
#if PIXEL_RGBA8
    const float16 v = convert_float16(*(const __global uchar16*)in) * (1.0f / 255.0f);
#else
    const float16 v = tandem_load4_rgba32f(in, 0);
#endif
    float4 px[4] = {v.s0123, v.s4567, v.s89ab, v.scdef};
    if (rows_of_picture) {
      const __global over_t* restrict row = over + (size_t)(y - oy - over_first) * over_pitch;
      for (int k = 0; k < 4; ++k) {
        const int ox_col = x + k - ox;
        if (ox_col >= 0 && ox_col < ow) px[k] = blend_over(px[k], over_pixel(row, ox_col));
      }
    }
    const float16 out = (float16)(px[0], px[1], px[2], px[3]);
#if PIXEL_RGBA8
    TANDEM_STORE4_RGBA8(out_row, x, tandem_levels8_16(out * 255.0f));
#else
    TANDEM_STORE4_RGBA32F(out_row, x, out);
#endif
  }
}
