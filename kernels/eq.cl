// eq: FFmpeg's eq on R'G'B': the pixel's Y' (Rec. 709 weights) takes the curve
//   l = contrast * (Y' - 0.5) + 0.5 + brightness, then where l > 0
//   l = (1 - gamma_weight) * l + gamma_weight * l^(1 / gamma), else 0,
// and its colour difference scales by saturation: out = l + saturation * (c - Y') for R, G, B
// (Cb and Cr are multiples of B' - Y' and R' - Y'); alpha unchanged. Point-wise: the executor's
// fused kernel calls it on each pixel.
//   p.s0 brightness, s1 contrast, s2 saturation, s3 1 / gamma, s4 gamma_weight
inline float4 tandem_eq(float4 px, float16 p) {
  const float y = mad(0.2126f, px.x, mad(0.7152f, px.y, 0.0722f * px.z));
  float l = mad(p.s1, y - 0.5f, 0.5f + p.s0);
  // gamma 1 leaves l as it is, without a pow() that may be a few ulp off.
  if (p.s3 != 1.0f) l = l > 0.0f ? mad(l, 1.0f - p.s4, powr(l, p.s3) * p.s4) : 0.0f;
  else l = fmax(l, 0.0f);
  float4 out;
  out.x = mad(p.s2, px.x - y, l);
  out.y = mad(p.s2, px.y - y, l);
  out.z = mad(p.s2, px.z - y, l);
  out.w = px.w;
  return out;
}
