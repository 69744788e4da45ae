// tandem-bench coexec: the graph on each device alone and on all of them together (modes.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "modes.hpp"

#include "tandem/tandem.hpp"

namespace tandem::bench {

// ---- Mode: coexec ----------------------------------------------------------------------------

int run_coexec(const Options& o, const Machine& machine) {
  const auto missing = missing_filters(o.graph);
  if (!missing.empty()) {
    throw tandem::Error("the graph \"" + o.graph + "\" needs " +
                        (missing.size() == 1 ? "filter " : "filters ") + join(missing, ", ") +
                        ", not registered in this build (registered: " + registered_filters() +
                        ")");
  }
  Graph graph = Graph::parse(o.graph);
  graph.validate(tandem::working_format(o.format));
  Devices devices = open_devices(o.devices);
  DeviceSet together = DeviceSet::open(o.devices);
  print_header(machine, devices.all, devices.selected);

  const int warmup = o.warmup;
  const std::vector<Frame> ring = synthetic_frames(
      o.width, o.height, o.format, o.ring, together.row_alignment(), together.host_allocator());
  std::printf("## Co-execution: \"%s\"\n\n", o.graph.c_str());
  std::printf(
      "%s %dx%d frames, a ring of %d synthetic frames (gradients, blocks, noise) in host "
      "memory (pinned by a discrete GPU's context when one is selected); %d warm-up frames, then "
      "%d timed frames; ms per frame from host memory to "
      "host memory.\n\n",
      std::string(tandem::to_string(o.format)).c_str(), o.width, o.height, o.ring, warmup,
      o.frames);

  std::vector<Summary> alone;
  std::printf("each device alone (split single):\n");
  for (std::size_t k = 0; k < devices.alone.size(); ++k) {
    PipelineOptions options;
    options.split = "single";
    options.persist_split = false;
    options.schedule = o.schedule;
    const Timed t = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
    alone.push_back(summarize(t.ms));
    std::printf("  %-52s %s  %7.1f fps\n", device_label(devices.all[devices.selected[k]]).c_str(),
                describe(alone.back()).c_str(), 1000 / alone.back().median);
  }

  // The learned split is not persisted, so that every run starts from the same even split.
  PipelineOptions options;
  options.split = o.split;
  options.persist_split = false;
  options.schedule = o.schedule;
  const Timed co = time_graph(together, graph, options, ring, warmup, o.frames);
  const Summary together_summary = summarize(co.ms);
  const tandem::RunReport& report = co.pipeline->report();
  std::vector<std::string> ids;
  for (const auto& d : together.devices()) ids.push_back(d.info().id);
  std::printf("\nall %zu together (split %s):\n", together.size(), o.split.c_str());
  for (const auto& d : together.devices()) {
    if (d.info().cores_left_to_host > 0) {
      std::printf(
          "  %s runs on %u compute units, leaving %u cores to the host and the GPUs' drivers\n",
          d.info().id.c_str(), d.info().compute_units, d.info().cores_left_to_host);
    }
  }
  std::printf("  %-52s %s  %7.1f fps\n", join(ids, " + ").c_str(),
              describe(together_summary).c_str(), 1000 / together_summary.median);

  // Mean share of rows per device over the timed frames (the trace also holds the warm-up).
  const std::size_t first_timed = report.split_trace.size() - static_cast<std::size_t>(o.frames);
  std::vector<double> share(together.size(), 0.0);
  for (std::size_t f = first_timed; f < report.split_trace.size(); ++f) {
    for (std::size_t d = 0; d < share.size(); ++d) share[d] += report.split_trace[f][d] / o.frames;
  }
  std::printf("  mean share of rows over the timed frames:");
  for (std::size_t d = 0; d < share.size(); ++d) {
    std::printf("  %s %.3f", together[d].info().id.c_str(), share[d]);
  }
  std::printf("\n");
  // Busy time (profiling events) against wall time over the timed frames: when the devices'
  // busy times add up to the wall time, they ran one after the other, not together.
  const double wall = (report.wall_ms - co.warmed.wall_ms) / o.frames;
  double busy_sum = 0;
  std::printf("  busy ms per frame (profiling events):");
  for (std::size_t d = 0; d < report.devices.size(); ++d) {
    const double busy = (report.devices[d].busy_ms - co.warmed.devices[d].busy_ms) / o.frames;
    busy_sum += busy;
    std::printf("  %s %.2f", report.devices[d].id.c_str(), busy);
  }
  std::printf("; wall %.2f; overlap (sum of busy / wall) %.2f\n", wall, busy_sum / wall);
  std::printf("    (overlap near 1 with several devices busy: they ran one after another)\n");
  std::printf(
      "  fixed ms per band (from the frame's first enqueue to its end, what its rows do not "
      "scale):");
  for (std::size_t d = 0; d < report.devices.size(); ++d) {
    const auto& now = report.devices[d];
    const auto& before = co.warmed.devices[d];
    const int bands = now.fixed_bands - before.fixed_bands;
    if (bands > 0) {
      std::printf("  %s %.3f", now.id.c_str(), (now.fixed_ms - before.fixed_ms) / bands);
    } else {
      std::printf("  %s -", now.id.c_str());
    }
  }
  std::printf("\n");
  // The slowest frame and its split: a stall (a new band height, a device probed after sitting
  // out) shows here rather than in the median.
  const auto slowest =
      static_cast<std::size_t>(std::max_element(co.ms.begin(), co.ms.end()) - co.ms.begin());
  std::printf("  slowest timed frame: frame %zu, %.2f ms, split", first_timed + slowest,
              co.ms[slowest]);
  for (double v : report.split_trace[first_timed + slowest]) std::printf(" %.3f", v);
  std::printf("\n");
  for (const auto& f : report.fallbacks) std::printf("  fallback: %s\n", f.c_str());
  print_decisions(report, 8);  // what the split's guard chose

  const std::size_t shown =
      o.trace ? report.split_trace.size() : std::min<std::size_t>(20, report.split_trace.size());
  std::printf("\nsplit trace, first %zu frames (warm-up included; fraction of rows per device: ",
              shown);
  for (std::size_t d = 0; d < together.size(); ++d) {
    std::printf("%s%s", d ? " " : "", together[d].info().id.c_str());
  }
  std::printf("):\n");
  for (std::size_t f = 0; f < shown; ++f) {
    std::printf("  frame %2zu%s:", f, f < first_timed ? " (warm-up)" : "          ");
    for (double v : report.split_trace[f]) std::printf(" %.3f", v);
    if (o.trace && f >= first_timed) std::printf("  %.3f ms", co.ms[f - first_timed]);
    std::printf("\n");
  }

  double throughput_sum = 0;
  double best = INFINITY, best_mean = INFINITY;
  for (const Summary& s : alone) {
    throughput_sum += 1 / s.median;
    best = std::min(best, s.median);
    best_mean = std::min(best_mean, s.mean);
  }
  const double efficiency = (1 / together_summary.median) / throughput_sum;
  std::printf(
      "\nco-execution efficiency (1/T_co) / sum(1/T_i) = %.3f   (1: the devices' frame "
      "rates add up; medians)\n",
      efficiency);
  std::printf("speed-up over the fastest device alone: %.3f\n", best / together_summary.median);
  // What a run of these frames takes, trials of other splits and their stalls included.
  std::printf("speed-up over the fastest device alone, means: %.3f\n",
              best_mean / together_summary.mean);
  std::size_t host_cpus = 0;
  unsigned host_units = 0;
  for (const auto& d : together.devices()) {
    if (d.info().type == tandem::DeviceType::cpu) {
      ++host_cpus;
      host_units += d.info().compute_units;
    }
  }
  if (host_cpus > 1 && host_units > static_cast<unsigned>(machine.usable_cpus)) {
    std::printf(
        "note: %zu CPU devices with %u compute units in all share %d cores: each alone "
        "already uses cores the others need, so sum(1/T_i) counts those cores more than "
        "once and the efficiency stays below 1 even when nothing is wasted.\n",
        host_cpus, host_units, machine.usable_cpus);
  }
  std::printf("\nload at the end: %s\n", load_average().c_str());

  if (!o.json.empty()) {
    Json j = json_header("coexec", machine, o);
    j["graph"] = o.graph;
    j["format"] = std::string(tandem::to_string(o.format));
    j["split"] = o.split;
    j["alone"] = Json::array();
    for (std::size_t k = 0; k < alone.size(); ++k) {
      const auto& info = devices.all[devices.selected[k]];
      j["alone"].push_back({{"id", info.id}, {"name", info.name}, {"time", to_json(alone[k])}});
    }
    j["together"] = to_json(together_summary);
    j["efficiency"] = six_digits(efficiency);
    j["speedup_over_fastest"] = six_digits(best / together_summary.median);
    j["speedup_over_fastest_means"] = six_digits(best_mean / together_summary.mean);
    j["overlap"] = six_digits(busy_sum / wall);
    j["run_report"] = Json::parse(report.to_json());
    write_json(o.json, j);
  }
  return 0;
}

}  // namespace tandem::bench
