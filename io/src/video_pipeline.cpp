#include "tandem/video_pipeline.hpp"

#include <chrono>
#include <optional>
#include <vector>

#include <tbb/parallel_pipeline.h>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "av_support.hpp"
#include "tandem/error.hpp"

namespace tandem {

namespace {

// Adds the time `stage` takes to `ms`.
template <typename F>
auto timed(double& ms, F&& stage) {
  const auto start = std::chrono::steady_clock::now();
  struct Add {
    double& ms;
    std::chrono::steady_clock::time_point start;
    ~Add() {
      ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
    }
  } add{ms, start};
  return stage();
}

// The plane format the devices take pictures of FFmpeg's format `name` in, if any.
std::optional<PixelFormat> planes_of(const std::string& name) {
  return detail::plane_format_of(av_get_pix_fmt(name.c_str()));
}

}  // namespace

PixelFormat device_format(const VideoReader& reader, const VideoWriter& writer) {
  const VideoInfo& info = reader.info();
  const std::optional<PixelFormat> planes = planes_of(info.pixel_format);
  if (!info.yuv_encoding || !planes || !planes_of(writer.pixel_format())) {
    // Deeper video goes through swscale as float R'G'B', and to the devices as floats.
    return info.bit_depth > 8 && writer.bit_depth() > 8 ? PixelFormat::rgba32f : PixelFormat::rgba8;
  }
  return *planes;
}

FrameTime frame_time(const VideoInfo& info, std::int64_t index, std::int64_t pts,
                     std::int64_t first_pts) {
  if (!info.time_base.valid()) return {index, static_cast<double>(index) / 25};
  return {index, static_cast<double>(pts - first_pts) * info.time_base.num / info.time_base.den};
}

VideoRunStats process_video(VideoReader& reader, Pipeline& pipeline, VideoWriter& writer,
                            const VideoRunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  VideoRunStats stats;
  stats.format = device_format(reader, writer);
  const int slots =
      options.frames_in_flight > 0 ? options.frames_in_flight : pipeline.capacity() + 2;
  const VideoInfo& info = reader.info();
  // The ring: one input and one output frame per frame in flight, made once, so their memory
  // and device buffers are reused for the whole video.
  std::vector<Frame> inputs, outputs;
  const Size out = pipeline.output_size({info.width, info.height});
  for (int i = 0; i < slots; ++i) {
    inputs.push_back(pipeline.make_frame(info.width, info.height, stats.format));
    outputs.push_back(
        pipeline.make_frame(out.width, out.height, pipeline.output_format(stats.format)));
  }
  stats.frame_bytes_in = rows_bytes(stats.format, inputs[0].pitch(), info.height);
  stats.frame_bytes_out = rows_bytes(outputs[0].format(), outputs[0].pitch(), out.height);
  struct Item {
    int slot = 0;
    std::int64_t index = 0;
    std::int64_t pts = 0;
    std::uint64_t ticket = 0;
    std::vector<double> split;
  };
  std::int64_t decoded = 0;
  std::int64_t written = 0;
  std::int64_t passed = 0;  // warm-up frames filtered, not written
  std::int64_t first_pts = 0;
  std::uint64_t last_ticket = 0;
  const VideoSegment* segment = options.segment;
  const std::int64_t first_index = segment ? segment->decode_first_frame : 0;
  // With at most `slots` items in flight and every stage serial in order, item k + slots only
  // enters after item k left the last stage: slot k % slots is free again. Submitting and
  // waiting are separate stages, so that frame N + 1 is submitted (its upload overlapping frame
  // N's kernels) while frame N is waited for.
  try {
    tbb::parallel_pipeline(
        static_cast<std::size_t>(slots),
        tbb::make_filter<void, Item>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) {
          Item item{static_cast<int>(decoded % slots), decoded, 0};
          if ((options.stop && options.stop->load()) ||
              !timed(stats.decode_ms, [&] { return reader.read(inputs[item.slot], item.pts); })) {
            fc.stop();
            return item;
          }
          ++decoded;
          return item;
        }) & tbb::make_filter<Item, Item>(tbb::filter_mode::serial_in_order, [&](Item item) {
          // Its time from the first frame's, for filters that follow it (fade); a segment's
          // frames have the times they have in the whole video.
          if (item.index == 0) first_pts = segment ? segment->origin_pts : item.pts;
          const FrameTime time = frame_time(info, first_index + item.index, item.pts, first_pts);
          item.ticket = timed(stats.submit_ms, [&] {
            return pipeline.submit(inputs[item.slot], outputs[item.slot], time);
          });
          last_ticket = item.ticket;
          return item;
        }) & tbb::make_filter<Item, Item>(tbb::filter_mode::serial_in_order, [&](Item item) {
          timed(stats.wait_ms, [&] { pipeline.wait(item.ticket); });
          item.split = pipeline.split_of(item.ticket);
          return item;
        }) & tbb::make_filter<Item, void>(tbb::filter_mode::serial_in_order, [&](Item item) {
          if (item.index != passed + written) {
            throw Error("internal: frames left the pipeline out of order");
          }
          if (segment && item.pts < segment->from_pts) {  // a warm-up frame
            ++passed;
            reader.take_packets();
            return;
          }
          timed(stats.encode_ms, [&] {
            writer.write(outputs[item.slot], item.pts);
            writer.write(reader.take_packets());
          });
          ++written;
          if (options.on_frame) {
            options.on_frame({written - 1, item.pts, &outputs[item.slot], std::move(item.split)});
          }
        }));
  } catch (...) {
    // A stage failed: frames it left on the devices still write into the ring, which ends
    // with this function.
    try {
      pipeline.wait(last_ticket);
    } catch (...) {
      // The first error is the one to report.
    }
    throw;
  }
  writer.write(reader.take_packets());
  stats.frames = written;
  stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace tandem
