// Defines a filter of its own, "sepia", and uses it in a graph string like a built-in filter:
// next to saturation it fuses into one kernel, and every frame is shared across all OpenCL
// devices. Usage: user_filter input-image output-image [graph]
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>

#include <tandem/image_io.hpp>
#include <tandem/tandem.hpp>

// The filter's OpenCL: a function of one pixel (RGBA, 8-bit values as 0..1) and of the
// arguments p, here p.s0 = amount. Fused filters share one program, hence the prefixed name.
constexpr const char* kSepiaSource = R"(
inline float4 example_sepia(float4 px, float16 p) {
  const float3 toned = (float3)(dot(px.xyz, (float3)(0.393f, 0.769f, 0.189f)),
                                dot(px.xyz, (float3)(0.349f, 0.686f, 0.168f)),
                                dot(px.xyz, (float3)(0.272f, 0.534f, 0.131f)));
  return (float4)(mix(px.xyz, toned, p.s0), px.w);
}
)";

// The same for one pixel on the host: the reference a test compares the kernel with.
tandem::Pixel sepia(tandem::Pixel px, std::span<const float> p) {
  auto mix = [&](float c, float toned) { return c + (toned - c) * p[0]; };
  return {mix(px.r, 0.393f * px.r + 0.769f * px.g + 0.189f * px.b),
          mix(px.g, 0.349f * px.r + 0.686f * px.g + 0.168f * px.b),
          mix(px.b, 0.272f * px.r + 0.534f * px.g + 0.131f * px.b), px.a};
}

int main(int argc, char** argv) try {
  if (argc < 3) {
    std::fprintf(stderr, "usage: user_filter input-image output-image [graph]\n");
    return 2;
  }
  tandem::register_filter(tandem::PointwiseFilterSpec{
      .name = "sepia",
      .help = "Brown tones of an old photograph.",
      .params = {{.name = "amount",
                  .type = tandem::ParamType::real,
                  .default_value = 1,
                  .min = 0,
                  .max = 1,
                  .help = "0 leaves the picture as it is, 1 is all sepia"}},
      .source = kSepiaSource,
      .function = "example_sepia",
      // No .args: the kernel gets the parameters' values in table order.
      .reference = sepia,
  });

  // From here on "sepia" is a filter like any other: parsed, range-checked, split and fused.
  const char* graph_text = argc > 3 ? argv[3] : "sepia=0.8,saturation=1.3";
  tandem::DeviceSet devices = tandem::DeviceSet::open("all");
  tandem::Pipeline pipeline(devices, tandem::Graph::parse(graph_text));

  // Rows aligned for every device: the pipeline uses the frame without a copy.
  const tandem::Frame input = tandem::read_image(argv[1], devices.row_alignment());
  tandem::Frame output;
  pipeline.process(input, output);
  tandem::write_image(argv[2], output);

  std::printf("%s: %s on %dx%d -> %s\n", argv[1], graph_text, input.width(), input.height(),
              argv[2]);
  for (const tandem::DeviceReport& device : pipeline.report().devices)
    std::printf("device %s (%s): share %.3f\n", device.id.c_str(), device.name.c_str(),
                device.share);
  if (output.format() == tandem::PixelFormat::rgba8) {
    const int x = input.width() / 2, y = input.height() / 2;
    const std::uint8_t* before = input.row(y) + 4 * x;
    const std::uint8_t* after = output.row(y) + 4 * x;
    std::printf("centre pixel: %d %d %d -> %d %d %d\n", before[0], before[1], before[2], after[0],
                after[1], after[2]);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "user_filter: error: %s\n", e.what());
  return 1;
}
