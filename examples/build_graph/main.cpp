// Builds a "glow" graph in C++ instead of parsing a string, prints it in the graph syntax, and
// runs it on a synthetic frame.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include <tandem/tandem.hpp>

int main() try {
  using tandem::PadRef;
  // As a string: "split[n0],gaussian=sigma=8,[n0]blend=mode=screen:opacity=0.5".
  tandem::Graph graph;
  const int split = graph.add("split", {PadRef{}});
  const int blur = graph.add("gaussian", {PadRef{split, 1}}, {{"sigma", "8"}});
  const int blend = graph.add("blend", {PadRef{split, 0}, PadRef{blur, 0}},
                              {{"mode", "screen"}, {"opacity", "0.5"}});
  graph.set_output(PadRef{blend, 0});

  const tandem::PixelFormat format = graph.validate(tandem::PixelFormat::rgba8);
  const std::string text = graph.to_string();
  std::printf("graph: %s\n", text.c_str());
  std::printf("output format: %s\n", std::string(tandem::to_string(format)).c_str());
  // The printed form reads back as the same graph.
  if (tandem::Graph::parse(text).to_string() != text) {
    std::fprintf(stderr, "build_graph: the printed graph does not read back the same\n");
    return 1;
  }

  tandem::DeviceSet devices = tandem::DeviceSet::open("all");
  tandem::Pipeline pipeline(devices, graph);
  const int width = 320, height = 240;
  tandem::Frame input = pipeline.make_frame(width, height, tandem::PixelFormat::rgba8);
  for (int y = 0; y < height; ++y) {
    std::uint8_t* px = input.row(y);
    for (int x = 0; x < width; ++x, px += 4) {
      const bool spot =
          (x - width / 2) * (x - width / 2) + (y - height / 2) * (y - height / 2) < 400;
      px[0] = px[1] = px[2] = spot ? 255 : 0;
      px[3] = 255;
    }
  }
  tandem::Frame output = pipeline.make_frame(width, height, format);
  pipeline.process(input, output);
  // The glow spreads the white spot into the black around it: 30 px from the centre is outside
  // the spot (radius 20) but within the blur.
  const std::uint8_t* near = output.row(height / 2) + 4 * (width / 2 + 30);
  const std::uint8_t* far = output.row(0);
  std::printf("near the spot: %d, far from it: %d\n", near[0], far[0]);
  return near[0] > far[0] ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "build_graph: error: %s\n", e.what());
  return 1;
}
