// Runs a filter graph over a video and prints, for every frame as it is written, how its rows
// were split between the OpenCL devices. Ctrl-C stops after the frames in flight and keeps what
// was written. Usage: video_callback input-video output-video [graph] [devices]
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>

#include <tandem/tandem.hpp>
#include <tandem/video_pipeline.hpp>

namespace {
std::atomic<bool> interrupted{false};
}

int main(int argc, char** argv) try {
  if (argc < 3) {
    std::fprintf(stderr, "usage: video_callback input-video output-video [graph] [devices]\n");
    return 2;
  }
  const char* graph_text = argc > 3 ? argv[3] : "gaussian=sigma=2,saturation=1.3";
  tandem::DeviceSet devices = tandem::DeviceSet::open(argc > 4 ? argv[4] : "all");
  tandem::Pipeline pipeline(devices, tandem::Graph::parse(graph_text));

  // Keep the audio's packets so that the writer copies them into the output.
  tandem::VideoReaderOptions read_options;
  read_options.keep_packets = true;
  tandem::VideoReader reader(argv[1], read_options);
  tandem::VideoWriter writer(argv[2], reader);

  tandem::VideoRunOptions run;
  run.stop = &interrupted;
  std::signal(SIGINT, [](int) { interrupted = true; });
  run.on_frame = [&](const tandem::VideoFrameInfo& frame) {
    const double seconds = static_cast<double>(frame.pts) * reader.info().time_base.value();
    std::printf("frame %lld (%.2f s): rows", static_cast<long long>(frame.index), seconds);
    for (double share : frame.split) std::printf(" %.3f", share);
    std::printf("\n");
  };

  const tandem::VideoRunStats stats = tandem::process_video(reader, pipeline, writer, run);
  writer.finish();
  std::printf("%lld frames of %dx%d through %s -> %s%s\n", static_cast<long long>(stats.frames),
              reader.info().width, reader.info().height, graph_text, argv[2],
              interrupted ? " (interrupted)" : "");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "video_callback: error: %s\n", e.what());
  return 1;
}
