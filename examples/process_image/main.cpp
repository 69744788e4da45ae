// Runs a filter graph on a synthetic frame on every OpenCL device at once and prints how the rows
// were shared. Usage: process_image [graph] [devices]
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include <tandem/tandem.hpp>

int main(int argc, char** argv) try {
  const char* graph_text = argc > 1 ? argv[1] : "gaussian=sigma=2,saturation=1.3";
  const char* device_spec = argc > 2 ? argv[2] : "all";

  tandem::DeviceSet devices = tandem::DeviceSet::open(device_spec);
  tandem::Pipeline pipeline(devices, tandem::Graph::parse(graph_text));

  // Frames from the pipeline have a row pitch every device can use without a copy.
  const int width = 640, height = 360;
  tandem::Frame input = pipeline.make_frame(width, height, tandem::PixelFormat::rgba8);
  for (int y = 0; y < height; ++y) {
    std::uint8_t* px = input.row(y);
    for (int x = 0; x < width; ++x, px += 4) {
      px[0] = static_cast<std::uint8_t>(x * 255 / (width - 1));
      px[1] = static_cast<std::uint8_t>(y * 255 / (height - 1));
      px[2] = static_cast<std::uint8_t>((x / 32 + y / 32) % 2 ? 200 : 40);
      px[3] = 255;
    }
  }
  tandem::Frame output = pipeline.make_frame(width, height, pipeline.output_format(input.format()));

  for (int frame = 0; frame < 8; ++frame) pipeline.process(input, output);

  const tandem::RunReport& report = pipeline.report();
  std::printf("tandem %s: %s on %dx%d, %d frames in %.1f ms\n", tandem::version(), graph_text,
              width, height, report.frames, report.wall_ms);
  for (const tandem::DeviceReport& device : report.devices)
    std::printf("device %s (%s, %s): share %.3f, busy %.2f ms%s\n", device.id.c_str(),
                device.name.c_str(), std::string(tandem::to_string(device.type)).c_str(),
                device.share, device.busy_ms, device.failed ? ", failed" : "");
  const std::uint8_t* centre = output.row(height / 2) + 4 * (width / 2);
  std::printf("centre pixel: %d %d %d %d\n", centre[0], centre[1], centre[2], centre[3]);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "process_image: error: %s\n", e.what());
  return 1;
}
