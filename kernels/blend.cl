// blend: out = mix(a, f(a, b), opacity) on R, G, B, where a is the first input (the base) and b
// the second (the top layer); alpha is a's. One function per mode, so no per-pixel branch.
// p.s0 is the opacity. Values are not clamped: 8-bit outputs saturate when stored, float
// outputs keep their range.
// fma(), not mad(): it is correctly rounded on every device, so all devices and the host
// reference agree bit for bit. That matters here: mixing 8-bit values with opacities such as
// 0.35 lands exactly on rounding ties (50 * 0.65 = 32.5) often, where an unfused mad() rounds
// the other way. Devices with FMA hardware (GPUs, x86 since Haswell) run it at mad()'s speed.

inline float4 tandem_blend_mix(float4 a, float3 f, float opacity) {
  return (float4)(fma((float3)(opacity), f - a.xyz, a.xyz), a.w);
}

inline float4 tandem_blend_normal(float4 a, float4 b, float16 p) {
  return tandem_blend_mix(a, b.xyz, p.s0);
}

inline float4 tandem_blend_add(float4 a, float4 b, float16 p) {
  return tandem_blend_mix(a, a.xyz + b.xyz, p.s0);
}

// 1 - (1 - a)(1 - b), written as a + b - ab with one rounding fewer.
inline float4 tandem_blend_screen(float4 a, float4 b, float16 p) {
  return tandem_blend_mix(a, fma(-a.xyz, b.xyz, a.xyz + b.xyz), p.s0);
}

inline float4 tandem_blend_multiply(float4 a, float4 b, float16 p) {
  return tandem_blend_mix(a, a.xyz * b.xyz, p.s0);
}
