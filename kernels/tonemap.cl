// tonemap: linear light (float frames, or 8-bit sRGB linearised first) to 8-bit sRGB.
// Every operator first multiplies linear R, G, B by 2^exposure and clips negatives to 0; the
// result is clamped to [0, 1] and sRGB-encoded. Alpha passes through.
// Arguments (filters/tonemap.cpp fills them):
//   p.s0  2^exposure
//   p.s1  1 when the input is 8-bit sRGB (linearise), 0 for linear float input
//   reinhard: p.s2 key / Lavg, p.s3 1 / white^2 (0: no white point)
//   hable:    p.s2 1 / f(W)
//   drago:    p.s2 Lavg / Lmax, p.s3 1 / log10(Lmax / Lavg + 1) (both 0 for a black frame),
//             p.s4 the bias exponent log(bias) / log(0.5), p.s5 1 / Lavg
// Expressions use mad() where the host reference uses std::fma and avoid any other a*b+c, so
// that the reference mirrors the kernel step by step.

inline float3 tandem_tonemap_input(float4 px, float16 p) {
  float3 c = px.xyz;
  if (p.s1 != 0.0f) c = tandem_srgb_to_linear3(c);
  return fmax(c * p.s0, 0.0f);
}

inline float tandem_tonemap_luminance(float3 c) {
  return mad(0.2126f, c.x, mad(0.7152f, c.y, 0.0722f * c.z));
}

inline float4 tandem_tonemap_output(float3 c, float alpha) {
  const float3 encoded = tandem_linear_to_srgb3(clamp(c, 0.0f, 1.0f));
  return (float4)(encoded, alpha);
}

// Reinhard et al. 2002, global: L = key / Lavg * Lw, Ld = L (1 + L / white^2) / (1 + L), and
// each channel scaled by Ld / Lw = key / Lavg * (1 + L / white^2) / (1 + L).
inline float4 tandem_tonemap_reinhard(float4 px, float16 p) {
  const float3 c = tandem_tonemap_input(px, p);
  const float l = p.s2 * tandem_tonemap_luminance(c);
  const float ratio = p.s2 * mad(l, p.s3, 1.0f) / (1.0f + l);
  return tandem_tonemap_output(c * ratio, px.w);
}

// Narkowicz's fit of the ACES filmic curve, per channel.
inline float4 tandem_tonemap_aces(float4 px, float16 p) {
  const float3 x = tandem_tonemap_input(px, p);
  const float3 y = x * mad(2.51f, x, 0.03f) / mad(x, mad(2.43f, x, 0.59f), 0.14f);
  return tandem_tonemap_output(y, px.w);
}

// Hable's Uncharted 2 curve (A 0.15, B 0.50, C 0.10, D 0.20, E 0.02, F 0.30) of 2x, over f(W).
inline float3 tandem_hable_curve(float3 x) {
  return mad(x, mad(0.15f, x, 0.05f), 0.004f) / mad(x, mad(0.15f, x, 0.50f), 0.06f) -
         0.02f / 0.30f;
}

inline float4 tandem_tonemap_hable(float4 px, float16 p) {
  const float3 x = tandem_tonemap_input(px, p);
  return tandem_tonemap_output(tandem_hable_curve(2.0f * x) * p.s2, px.w);
}

// Drago et al. 2003 with Ldmax = 100, on luminance scaled by the world adaptation luminance
// (the log-average), as the paper does: with Lw' = Lw / Lavg, Lmax' = Lmax / Lavg,
// Ld = log(Lw' + 1) / log10(Lmax' + 1) / log(2 + 8 (Lw' / Lmax')^(log(bias) / log(0.5))),
// and channels scaled by Ld / Lw.
inline float4 tandem_tonemap_drago(float4 px, float16 p) {
  const float3 c = tandem_tonemap_input(px, p);
  const float lw = tandem_tonemap_luminance(c);
  const float l = lw * p.s5;
  const float ld = p.s3 * log1p(l) / log(mad(8.0f, exp2(log2(l * p.s2) * p.s4), 2.0f));
  const float ratio = lw > 0.0f ? ld / lw : 0.0f;
  return tandem_tonemap_output(c * ratio, px.w);
}

inline float4 tandem_tonemap_linear(float4 px, float16 p) {
  return tandem_tonemap_output(tandem_tonemap_input(px, p), px.w);
}

// Frame statistics: for each row y0 + get_global_id(1), (sum of log(1e-4 + Lw), max Lw) of the
// luminance the curves see. Two steps so that a device has work-items enough: each of `chunks`
// work-items per row reduces its stretch of the row, then one work-item per row adds the
// stretches in order. The order of every sum is fixed, so a row's result does not depend on the
// band it falls in.
#define TANDEM_TONEMAP_STATS(NAME, TYPE, LOAD)                                                \
  __kernel void NAME(const __global TYPE* restrict in, int in_first, int in_pitch, int width, \
                     int y0, float16 p, int chunks, __global float2* restrict partial) {      \
    const int chunk = (int)get_global_id(0);                                                  \
    const int row = (int)get_global_id(1);                                                    \
    const __global TYPE* src = in + (size_t)(y0 + row - in_first) * in_pitch;                 \
    const int stretch = (width + chunks - 1) / chunks;                                        \
    const int x1 = min(width, (chunk + 1) * stretch);                                         \
    float sum = 0.0f;                                                                         \
    float peak = 0.0f;                                                                        \
    for (int x = chunk * stretch; x < x1; ++x) {                                              \
      const float lw = tandem_tonemap_luminance(tandem_tonemap_input(LOAD, p));               \
      sum += log(1e-4f + lw);                                                                 \
      peak = fmax(peak, lw);                                                                  \
    }                                                                                         \
    partial[row * chunks + chunk] = (float2)(sum, peak);                                      \
  }

TANDEM_TONEMAP_STATS(tandem_tonemap_stats_rgba8, uchar,
                     convert_float4(vload4(x, src)) * (1.0f / 255.0f))
TANDEM_TONEMAP_STATS(tandem_tonemap_stats_rgba32f, float, vload4(x, src))

__kernel void tandem_tonemap_stats_rows(const __global float2* restrict partial, int chunks,
                                        __global float2* restrict rows_out) {
  const int row = (int)get_global_id(1);
  const __global float2* r = partial + row * chunks;
  float2 total = r[0];
  for (int c = 1; c < chunks; ++c) total = (float2)(total.x + r[c].x, fmax(total.y, r[c].y));
  rows_out[row] = total;
}
