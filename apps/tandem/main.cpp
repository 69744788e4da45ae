// tandem: runs a filter graph on images, every frame split across the machine's OpenCL devices.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "tandem/image_io.hpp"
#include "tandem/tandem.hpp"

namespace fs = std::filesystem;

namespace {

std::string human_bytes(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1ull << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / double(1ull << 20));
  }
  return buf;
}

int list_devices() {
  for (const auto& d : tandem::enumerate_devices()) {
    std::printf("%-5s %-4s %-50s %-30s %3u CU  %9s  align %zu B\n", d.id.c_str(),
                std::string(tandem::to_string(d.type)).c_str(), d.name.c_str(),
                d.platform.c_str(), d.compute_units, human_bytes(d.global_memory).c_str(),
                d.base_address_alignment);
  }
  return 0;
}

int list_filters() {
  for (const tandem::FilterSpec* f : tandem::FilterRegistry::instance().all()) {
    std::printf("%s", f->name.c_str());
    if (f->inputs != 1 || f->outputs != 1) {
      std::printf("  (%d input%s, %d output%s)", f->inputs, f->inputs == 1 ? "" : "s",
                  f->outputs, f->outputs == 1 ? "" : "s");
    }
    std::printf("\n    %s\n", f->help.c_str());
    for (const auto& p : f->params) {
      std::printf("    %-10s %s [%s]\n", p.name.c_str(), p.help.c_str(),
                  p.describe_range().c_str());
    }
  }
  return 0;
}

struct RunOptions {
  std::string input;
  std::string output;
  std::string graph;
  std::string devices = "all";
  std::string split = "adaptive";
  std::string report;
  std::string cl_options;
  bool overwrite = false;
  bool no_fuse = false;
};

void write_report(const fs::path& path, const std::string& json) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << json;
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw tandem::Error("cannot write report '" + path.string() + "'");
    }
  }
  fs::rename(tmp, path);
}

int run(const RunOptions& o) {
  if (o.input.empty() || o.output.empty() || o.graph.empty()) {
    throw tandem::Error("-i INPUT, -o OUTPUT and -f GRAPH are all needed (see tandem --help)");
  }
  if (!tandem::is_image_path(o.output)) {
    throw tandem::Error("cannot write '" + o.output +
                        "': unknown image format (png, jpg, tif, bmp, hdr, exr)");
  }
  std::error_code ec;
  if (fs::exists(o.output, ec) && !o.overwrite) {
    throw tandem::Error("output '" + o.output + "' already exists (use -y to overwrite it)");
  }
  // Everything that can be checked before the work starts is checked first.
  tandem::Graph graph = tandem::Graph::parse(o.graph);
  tandem::Frame input = tandem::read_image(o.input);
  graph.validate(input.format());

  tandem::DeviceSet devices = tandem::DeviceSet::open(o.devices);
  if (!o.cl_options.empty()) tandem::ProgramCache::global().set_extra_options(o.cl_options);
  tandem::PipelineOptions options;
  options.split = o.split;
  options.fuse = !o.no_fuse;
  tandem::Pipeline pipeline(devices, std::move(graph), options);

  tandem::Frame frame = pipeline.make_frame(input.width(), input.height(), input.format());
  for (int y = 0; y < input.height(); ++y) {
    std::copy_n(input.row(y), input.width() * tandem::bytes_per_pixel(input.format()), frame.row(y));
  }
  tandem::Frame output;
  pipeline.process(frame, output);
  tandem::write_image(o.output, output);

  const tandem::RunReport& report = pipeline.report();
  std::fprintf(stderr, "tandem: wrote %s (%dx%d) in %.1f ms\n", o.output.c_str(),
               output.width(), output.height(), report.wall_ms);
  for (const auto& d : report.devices) {
    std::fprintf(stderr, "  %-5s %-40s share %5.1f%%  busy %8.2f ms%s\n", d.id.c_str(),
                 d.name.c_str(), 100 * d.share, d.busy_ms, d.failed ? "  (failed)" : "");
  }
  if (!o.report.empty()) write_report(o.report, report.to_json());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tandem: runs image filters on OpenCL, every frame split across all selected devices "
      "(CPU and GPU together) in proportion to their speed.\n\n"
      "  tandem -i in.png -o out.png -f \"saturation=1.4\"\n"
      "  tandem -i in.hdr -o out.png -f \"tonemap=op=reinhard:key=0.18\" --devices gpu\n"
      "  tandem devices          list OpenCL devices and their ids\n"
      "  tandem filters          list filters and their options\n\n"
      "Graphs use FFmpeg's filtergraph syntax: filters separated by ',', options key=value "
      "separated by ':', the first option may be given by value alone.",
      "tandem"};
  app.set_version_flag("--version", tandem::version());
  RunOptions o;
  app.add_option("-i,--input", o.input, "Input image (PNG, JPEG, TIFF, BMP, Radiance .hdr, OpenEXR)");
  app.add_option("-o,--output", o.output, "Output image; its extension chooses the format");
  app.add_option("-f,--filter", o.graph, "Filter graph, e.g. \"gaussian=sigma=2,saturation=1.3\"");
  app.add_flag("-y,--overwrite", o.overwrite, "Overwrite the output if it exists");
  app.add_option("--devices", o.devices,
                 "Devices: all, cpu, gpu, ids such as 0.1,1.0, or name substrings")
      ->capture_default_str();
  app.add_option("--split", o.split,
                 "How rows are shared: adaptive, static:F1,F2,..., single, chunks:N")
      ->capture_default_str();
  app.add_option("--report", o.report, "Write a JSON run report (devices, shares, times)");
  app.add_flag("--no-fuse", o.no_fuse, "Run each point-wise filter as its own pass");
  app.add_option("--cl-options", o.cl_options, "Extra OpenCL build options for every program");
  auto* devices_cmd = app.add_subcommand("devices", "List OpenCL devices: id, type, name, platform, compute units, memory, alignment");
  auto* filters_cmd = app.add_subcommand("filters", "List filters with their options, ranges and defaults");
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*devices_cmd) return list_devices();
    if (*filters_cmd) return list_filters();
    return run(o);
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "tandem: error: %s\n", e.what());
    if (!e.build_log().empty()) std::fprintf(stderr, "build log:\n%s\n", e.build_log().c_str());
    return 1;
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "tandem: error: %s failed with %s\n", e.what(),
                 tandem::cl_status_name(e.err()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem: error: %s\n", e.what());
    return 1;
  }
}
