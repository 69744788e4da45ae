// saturation: out = Y + amount * (c - Y) for R, G, B with Rec. 709 luma of the stored values;
// alpha unchanged. Point-wise: the executor's fused kernel calls it on each pixel.
inline float4 tandem_saturation(float4 px, float16 p) {
  const float amount = p.s0;
  const float y = mad(0.2126f, px.x, mad(0.7152f, px.y, 0.0722f * px.z));
  float4 out;
  out.x = mad(amount, px.x - y, y);
  out.y = mad(amount, px.y - y, y);
  out.z = mad(amount, px.z - y, y);
  out.w = px.w;
  return out;
}
