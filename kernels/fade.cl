// fade: R'G'B' moved from the colour towards the picture by the frame's level (0: the colour,
// 1: the picture), out = fma(level, c - colour, colour); or with alpha, the alpha alone scaled
// by the level. Point-wise: the executor's fused kernel calls it on each pixel; the level
// follows the frame's time (filters/fade.cpp).
//   p.s0 level; p.s1, s2, s3 the colour's R, G, B; p.s4 1 to fade alpha instead
inline float4 tandem_fade(float4 px, float16 p) {
  if (p.s4 != 0.0f) return (float4)(px.xyz, px.w * p.s0);
  const float3 colour = (float3)(p.s1, p.s2, p.s3);
  return (float4)(fma((float3)(p.s0), px.xyz - colour, colour), px.w);
}
