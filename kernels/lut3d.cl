// lut3d: R'G'B' through a 3D table of N^3 entries (float4: R, G, B, 0), entry (r, g, b) at
// r + N (g + N b). A channel's value v is on the grid at s = clamp((v - min) * scale, 0, N - 1);
// the entries about s are interpolated (INTERP 0 nearest, 1 trilinear, 2 tetrahedral, as
// FFmpeg's lut3d). Alpha is kept. Four pixels a work-item, stored through TANDEM_STORE4_*: a
// point-wise chain after it runs in it (filters/lut3d.cpp holds the host reference, the same
// operations in the same order).
//   PIXEL_RGBA8 1 or 0; INTERP

#if PIXEL_RGBA8
typedef uchar pixel_t;
#else
typedef float pixel_t;
#endif

inline float3 entry(const __global float4* restrict lut, int n, int r, int g, int b) {
  return lut[(b * n + g) * n + r].xyz;
}

inline float4 lookup(float4 px, const __global float4* restrict lut, int n, float4 scale,
                     float4 lo_value) {
  const float3 s = clamp((px.xyz - lo_value.xyz) * scale.xyz, 0.0f, (float)(n - 1));
  // s >= 0: truncation floors it (clamped again for the padding's lanes, whatever they hold)
  const int3 lo = clamp(convert_int3(s), 0, n - 1);
  const int3 hi = min(lo + 1, n - 1);
  const float3 d = s - convert_float3(lo);
  float3 out;
#if INTERP == 0
  const int3 near = clamp(convert_int3(s + 0.5f), 0, n - 1);
  out = entry(lut, n, near.x, near.y, near.z);
#elif INTERP == 1
  const float3 c000 = entry(lut, n, lo.x, lo.y, lo.z), c100 = entry(lut, n, hi.x, lo.y, lo.z);
  const float3 c001 = entry(lut, n, lo.x, lo.y, hi.z), c101 = entry(lut, n, hi.x, lo.y, hi.z);
  const float3 c010 = entry(lut, n, lo.x, hi.y, lo.z), c110 = entry(lut, n, hi.x, hi.y, lo.z);
  const float3 c011 = entry(lut, n, lo.x, hi.y, hi.z), c111 = entry(lut, n, hi.x, hi.y, hi.z);
  const float3 c00 = fma(c100 - c000, d.x, c000), c01 = fma(c101 - c001, d.x, c001);
  const float3 c10 = fma(c110 - c010, d.x, c010), c11 = fma(c111 - c011, d.x, c011);
  const float3 c0 = fma(c10 - c00, d.y, c00), c1 = fma(c11 - c01, d.y, c01);
  out = fma(c1 - c0, d.z, c0);
#else
  const float r = d.x, g = d.y, b = d.z;
  float3 e1, e2;
  float w0, w1, w2, w3;
  if (r > g) {
    if (g > b) {
      e1 = entry(lut, n, hi.x, lo.y, lo.z), e2 = entry(lut, n, hi.x, hi.y, lo.z);
      w0 = 1 - r, w1 = r - g, w2 = g - b, w3 = b;
    } else if (r > b) {
      e1 = entry(lut, n, hi.x, lo.y, lo.z), e2 = entry(lut, n, hi.x, lo.y, hi.z);
      w0 = 1 - r, w1 = r - b, w2 = b - g, w3 = g;
    } else {
      e1 = entry(lut, n, lo.x, lo.y, hi.z), e2 = entry(lut, n, hi.x, lo.y, hi.z);
      w0 = 1 - b, w1 = b - r, w2 = r - g, w3 = g;
    }
  } else {
    if (b > g) {
      e1 = entry(lut, n, lo.x, lo.y, hi.z), e2 = entry(lut, n, lo.x, hi.y, hi.z);
      w0 = 1 - b, w1 = b - g, w2 = g - r, w3 = r;
    } else if (b > r) {
      e1 = entry(lut, n, lo.x, hi.y, lo.z), e2 = entry(lut, n, lo.x, hi.y, hi.z);
      w0 = 1 - g, w1 = g - b, w2 = b - r, w3 = r;
    } else {
      e1 = entry(lut, n, lo.x, hi.y, lo.z), e2 = entry(lut, n, hi.x, hi.y, lo.z);
      w0 = 1 - g, w1 = g - r, w2 = r - b, w3 = b;
    }
  }
  const float3 e0 = entry(lut, n, lo.x, lo.y, lo.z), e3 = entry(lut, n, hi.x, hi.y, hi.z);
  out = fma(w3, e3, fma(w2, e2, fma(w1, e1, w0 * e0)));
#endif
  return (float4)(out, px.w);
}

// Output rows [y0, y0 + rows), four pixels a work-item.
__kernel void lut3d(const __global pixel_t* restrict src, int src_first, int src_pitch,
                    __global pixel_t* restrict dst, int dst_first, int dst_pitch, int y0,
                    const __global float4* restrict lut, int n, float4 scale,
                    float4 lo_value TANDEM_EPILOGUE_PARAMS) {
  const int x = (int)get_global_id(0) * 4;
  const int y = y0 + (int)get_global_id(1);
  const __global pixel_t* restrict in = src + (size_t)(y - src_first) * src_pitch + 4 * x;
  __global pixel_t* restrict row = dst + (size_t)(y - dst_first) * dst_pitch;
#if PIXEL_RGBA8
  const float16 v = convert_float16(*(const __global uchar16*)in) * (1.0f / 255.0f);
#else
  const float16 v = tandem_load4_rgba32f(in, 0);
#endif
  const float16 out = (float16)(lookup(v.s0123, lut, n, scale, lo_value),
                                lookup(v.s4567, lut, n, scale, lo_value),
                                lookup(v.s89ab, lut, n, scale, lo_value),
                                lookup(v.scdef, lut, n, scale, lo_value));
#if PIXEL_RGBA8
  TANDEM_STORE4_RGBA8(row, x, tandem_levels8_16(out * 255.0f));
#else
  TANDEM_STORE4_RGBA32F(row, x, out);
#endif
}
