// tandem-bench stream: frames one at a time against pipelined (modes.hpp).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "modes.hpp"

#include "tandem/tandem.hpp"

namespace tandem::bench {

// ---- Mode: stream ----------------------------------------------------------------------------

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int run_stream(const Options& o, const Machine& machine) {
  Graph graph = Graph::parse(o.graph);
  graph.validate(tandem::working_format(o.format));
  Devices devices = open_devices(o.devices);
  DeviceSet set = DeviceSet::open(o.devices);
  print_header(machine, devices.all, devices.selected);
  const std::vector<Frame> ring = synthetic_frames(o.width, o.height, o.format, o.ring,
                                                   set.row_alignment(), set.host_allocator());
  std::printf("## Stream: \"%s\"\n\n", o.graph.c_str());
  std::printf(
      "%s %dx%d frames from memory, a ring of %d synthetic frames (pinned by a discrete GPU's "
      "context when one is selected); split %s; %d warm-up frames, then %d timed frames. A "
      "timed frame is the host time between two frames leaving the devices (for one frame at "
      "a time: from host memory to host memory).\n\n",
      std::string(tandem::to_string(o.format)).c_str(), o.width, o.height, o.ring, o.split.c_str(),
      o.warmup, o.frames);

  struct Run {
    std::string name;
    int depth = 0;         // frames on the devices through submit/wait; 0: one at a time (process)
    bool threads = false;  // submitting and waiting on threads of their own
    Summary time;
    Summary submit;  // host time in submit() per timed frame (pipelined runs)
    tandem::RunReport report, warmed;
  };
  std::vector<Run> runs{{"one frame at a time (process)", 0, false}};
  for (const int depth : std::set<int>{2, o.frames_on_devices}) {
    runs.push_back({"pipelined on one thread (submit, then wait for the oldest), " +
                        std::to_string(depth) + " frames on the devices",
                    depth, false});
  }
  runs.push_back({"pipelined on two threads (one submits, one waits, as tandem's video path), " +
                      std::to_string(o.frames_on_devices) + " frames on the devices",
                  o.frames_on_devices, true});
  const int ring_size = static_cast<int>(ring.size());
  for (Run& run : runs) {
    PipelineOptions options;
    options.split = o.split;
    options.persist_split = false;
    options.schedule = o.schedule;
    options.frames_on_devices = std::max(run.depth, 1);
    Pipeline pipeline(set, graph, options);
    const PixelFormat out_format = pipeline.output_format(o.format);
    // One output frame per frame on the devices (per device, where they take whole frames).
    const int held = pipeline.capacity();
    std::vector<Frame> outputs;
    for (int i = 0; i < held; ++i) {
      outputs.push_back(pipeline.make_frame(o.width, o.height, out_format));
    }
    const auto input = [&](int i) -> const Frame& {
      return ring[static_cast<std::size_t>(i % ring_size)];
    };
    std::vector<std::uint64_t> tickets(outputs.size(), 0);
    std::vector<double> submit_ms;
    // Frame i goes into output i % depth, once the frame that last used it is complete.
    auto submit = [&](int i) {
      const auto start = std::chrono::steady_clock::now();
      tickets[static_cast<std::size_t>(i) % outputs.size()] =
          pipeline.submit(input(i), outputs[static_cast<std::size_t>(i) % outputs.size()]);
      if (i >= o.warmup) submit_ms.push_back(ms_since(start));
    };
    auto one_thread = [&](int i) {
      if (run.depth == 0) {
        pipeline.process(input(i), outputs[0]);
        return;
      }
      const std::uint64_t last = tickets[static_cast<std::size_t>(i) % outputs.size()];
      if (last) pipeline.wait(last);
      submit(i);
    };
    std::vector<double> ms;
    if (!run.threads) {
      ms = time_frames(o.warmup, o.frames, one_thread, [&] { run.warmed = pipeline.report(); });
      for (auto t : tickets) pipeline.wait(t);
    } else {
      // Warm up on this thread, then time a feeding thread (this one) against a draining one:
      // a timed frame is the time between two frames leaving the devices.
      for (int i = 0; i < o.warmup; ++i) one_thread(i);
      for (auto t : tickets) pipeline.wait(t);
      run.warmed = pipeline.report();
      std::mutex mutex;
      std::condition_variable changed;
      std::deque<std::uint64_t> submitted;
      int drained = 0;
      std::thread drainer([&] {
        auto last = std::chrono::steady_clock::now();
        for (int k = 0; k < o.frames; ++k) {
          std::uint64_t ticket = 0;
          {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return !submitted.empty(); });
            ticket = submitted.front();
            submitted.pop_front();
          }
          pipeline.wait(ticket);
          if (k > 0) ms.push_back(ms_since(last));
          last = std::chrono::steady_clock::now();
          std::lock_guard lock(mutex);
          ++drained;
          changed.notify_all();
        }
      });
      for (int k = 0; k < o.frames; ++k) {
        {
          std::unique_lock lock(mutex);
          changed.wait(lock, [&] { return k - drained < held; });
        }
        submit(o.warmup + k);
        std::lock_guard lock(mutex);
        submitted.push_back(tickets[static_cast<std::size_t>(o.warmup + k) % outputs.size()]);
        changed.notify_all();
      }
      drainer.join();
    }
    run.time = summarize(ms);
    if (!submit_ms.empty()) run.submit = summarize(submit_ms);
    run.report = pipeline.report();
  }

  for (const Run& run : runs) {
    // Frames that leave the devices in bursts make the median interval meaningless: the mean
    // interval (the timed frames' wall time over their number) is the rate.
    std::printf("%s (scheduler: %s):\n  %-40s %s  %7.1f fps (mean %.3f ms)\n", run.name.c_str(),
                run.report.scheduler.c_str(), "all selected devices", describe(run.time).c_str(),
                1000 / run.time.mean, run.time.mean);
    if (run.depth > 0) {
      std::printf("  %-40s %s\n", "host time in submit()", describe(run.submit).c_str());
    }
    const int frames = run.report.frames - run.warmed.frames;
    std::printf(
        "  per frame, mean over the timed frames (profiling events): ms upload / kernels "
        "/ download, share of rows (of frames, where whole)\n");
    for (std::size_t d = 0; d < run.report.devices.size(); ++d) {
      const auto& now = run.report.devices[d];
      const auto& before = run.warmed.devices[d];
      std::printf("    %-50s %7.3f / %7.3f / %7.3f   %.3f\n",
                  device_label(devices.all[devices.selected[d]]).c_str(),
                  (now.upload_ms - before.upload_ms) / frames,
                  (now.kernel_ms - before.kernel_ms) / frames,
                  (now.download_ms - before.download_ms) / frames,
                  (now.share * run.report.frames - before.share * run.warmed.frames) / frames);
    }
    print_decisions(run.report, 6);  // what the schedulers chose
  }
  std::printf("\n");
  for (std::size_t k = 1; k < runs.size(); ++k) {
    std::printf(
        "%d frames on the devices, %s: %.3fx the frame rate of one frame at a time "
        "(means)\n",
        runs[k].depth, runs[k].threads ? "two threads" : "one thread",
        runs[0].time.mean / runs[k].time.mean);
  }
  std::printf("\nload at the end: %s\n", load_average().c_str());

  if (!o.json.empty()) {
    Json j = json_header("stream", machine, o);
    j["graph"] = o.graph;
    j["split"] = o.split;
    j["one_at_a_time"] = to_json(runs[0].time);
    j["pipelined"] = Json::array();
    for (std::size_t k = 1; k < runs.size(); ++k) {
      j["pipelined"].push_back({{"frames_on_devices", runs[k].depth},
                                {"threads", runs[k].threads ? 2 : 1},
                                {"time", to_json(runs[k].time)},
                                {"submit", to_json(runs[k].submit)},
                                {"gain", six_digits(runs[0].time.mean / runs[k].time.mean)},
                                {"run_report", Json::parse(runs[k].report.to_json())}});
    }
    write_json(o.json, j);
  }
  return 0;
}

}  // namespace tandem::bench
