// The run report's JSON, read back with nlohmann::json: what the run did on the devices opened,
// names with any characters, numbers that are not finite; and tandem-bench's JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace tandem {
namespace {

using nlohmann::json;

// An even split over however many devices were opened.
std::string even_split(std::size_t devices) {
  std::string split = "static:";
  for (std::size_t i = 0; i < devices; ++i) split += i ? ",1" : "1";
  return split;
}

TEST(RunReportJson, DescribesTheRunOnTheDevicesOpened) {
  DeviceSet set = DeviceSet::open("all");
  const std::size_t n = set.size();
  PipelineOptions options;
  options.split = even_split(n);
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("saturation=1.3"), options);
  const Frame input = test::random_frame(64, 40, PixelFormat::rgba8, 4);
  Frame output;
  for (int i = 0; i < 3; ++i) pipeline.process(input, output);

  const RunReport& report = pipeline.report();
  const std::string text = report.to_json();
  const json j = json::parse(text);  // throws, failing the test, when it is not JSON
  EXPECT_EQ(j.at("frames").get<int>(), 3);
  EXPECT_GE(j.at("wall_ms").get<double>(), 0.0);
  ASSERT_EQ(j.at("devices").size(), n);
  double shares = 0;
  for (std::size_t d = 0; d < n; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const json& dev = j["devices"][d];
    EXPECT_EQ(dev.at("id").get<std::string>(), set[d].info().id);
    EXPECT_EQ(dev.at("name").get<std::string>(), set[d].info().name);
    EXPECT_EQ(dev.at("type").get<std::string>(), std::string(to_string(set[d].info().type)));
    EXPECT_NEAR(dev.at("share").get<double>(), report.devices[d].share, 1e-6);  // 6 digits
    for (const char* key : {"busy_ms", "upload_ms", "kernel_ms", "download_ms"}) {
      EXPECT_GE(dev.at(key).get<double>(), 0.0) << key;
    }
    // One frame at a time, every band's fixed part is measured: no more than the host waited
    // for the frames (the device's clock against the host's: a little slack).
    EXPECT_EQ(dev.at("fixed_bands").get<int>(), 3);
    EXPECT_GE(dev.at("fixed_ms").get<double>(), 0.0);
    EXPECT_LE(dev.at("fixed_ms").get<double>(), 1.1 * report.wall_ms + 1.0);
    EXPECT_FALSE(dev.at("failed").get<bool>());
    shares += dev["share"].get<double>();
  }
  EXPECT_NEAR(shares, 1.0, 1e-5);
  ASSERT_EQ(j.at("split_trace").size(), 3u);
  for (const json& frame : j["split_trace"]) {
    ASSERT_EQ(frame.size(), n);
    double sum = 0;
    for (const json& f : frame) sum += f.get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  // A fixed split learns nothing (coexec_test's SplitMemory reads an adaptive one's).
  EXPECT_TRUE(j.at("learned_split").is_array());
  EXPECT_TRUE(j["learned_split"].empty());
  EXPECT_TRUE(j.at("fallbacks").is_array());
  EXPECT_TRUE(j["fallbacks"].empty());
  EXPECT_EQ(j.at("scheduler").get<std::string>(), "bands");  // one frame at a time
  EXPECT_TRUE(j.at("decisions").is_array());
  EXPECT_TRUE(j["decisions"].empty());  // a fixed split decides nothing
  // One line per member and per device, however many frames: the split trace is one line.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<std::ptrdiff_t>(11 + n));
}

TEST(RunReportJson, NamesWithQuotesBackslashesAndControlCharactersRoundTrip) {
  const std::string name = "a \"quoted\" \\path\\ tab\tnewline\n\x01\x1f\x7f caf\xc3\xa9 end";
  RunReport report;
  report.frames = 1;
  report.devices.push_back({.id = "0.\"0\"", .name = name, .type = DeviceType::gpu, .share = 1});
  report.split_trace = {{1.0}};
  report.fallbacks = {"device 0.0 (" + name + ") failed: \"x\"\\"};
  const json j = json::parse(report.to_json());
  EXPECT_EQ(j["devices"][0]["id"].get<std::string>(), "0.\"0\"");
  EXPECT_EQ(j["devices"][0]["name"].get<std::string>(), name);
  EXPECT_EQ(j["devices"][0]["type"].get<std::string>(), "gpu");
  EXPECT_EQ(j["fallbacks"][0].get<std::string>(), report.fallbacks[0]);
}

TEST(RunReportJson, NumbersThatAreNotFiniteAreNull) {
  RunReport report;
  report.wall_ms = NAN;
  report.devices.push_back({.id = "0.0", .name = "x", .share = INFINITY, .busy_ms = -INFINITY});
  report.split_trace = {{NAN}};
  const json j = json::parse(report.to_json());
  EXPECT_TRUE(j["wall_ms"].is_null());
  EXPECT_TRUE(j["devices"][0]["share"].is_null());
  EXPECT_TRUE(j["devices"][0]["busy_ms"].is_null());
  EXPECT_TRUE(j["split_trace"][0][0].is_null());
}

TEST(RunReportJson, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  RunReport report;
  report.devices.push_back({.id = "0.0", .name = "ab\xff\xfe"});
  const json j = json::parse(report.to_json());
  EXPECT_EQ(j["devices"][0]["name"].get<std::string>(), "ab\xef\xbf\xbd\xef\xbf\xbd");
}

#ifdef TANDEM_BENCH_PROGRAM
// A scratch directory of this process, removed at the end.
struct ScratchDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("tandem-run-report-test-" + std::to_string(getpid()));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() { std::filesystem::remove_all(path); }
};

// Runs tandem-bench with `args`; returns its exit status, its standard error in `err`.
int run_bench(const std::string& args, const ScratchDir& dir, std::string& err) {
  const std::filesystem::path err_file = dir.path / "stderr";
  const std::string command = std::string("'") + TANDEM_BENCH_PROGRAM + "' " + args + " > '" +
                              (dir.path / "stdout").string() + "' 2> '" + err_file.string() + "'";
  const int status = std::system(command.c_str());
  std::ifstream in(err_file);
  std::ostringstream text;
  text << in.rdbuf();
  err = text.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BenchJson, CoexecWritesADocumentThatParses) {
  ScratchDir dir;
  const std::filesystem::path file = dir.path / "coexec.json";
  std::string err;
  ASSERT_EQ(run_bench("coexec --graph saturation=1.3 --size 64x48 --frames 1 --warmup 0 --ring 1 "
                      "--json '" +
                          file.string() + "'",
                      dir, err),
            0)
      << err;
  std::ifstream in(file);
  const json j = json::parse(in);
  const std::size_t n = test::device_ids().size();
  EXPECT_EQ(j.at("mode").get<std::string>(), "coexec");
  EXPECT_EQ(j.at("size"), json::array({64, 48}));
  EXPECT_EQ(j.at("timed_frames").get<int>(), 1);
  EXPECT_EQ(j.at("warmup_frames").get<int>(), 1);  // at least the ring
  EXPECT_EQ(j.at("graph").get<std::string>(), "saturation=1.3");
  EXPECT_EQ(j.at("alone").size(), n);
  EXPECT_TRUE(j.at("together").at("median_ms").is_number());
  EXPECT_EQ(j.at("together").at("frames").get<int>(), 1);
  const json& report = j.at("run_report");
  EXPECT_EQ(report.at("frames").get<int>(), 2);  // the warm-up frame and the timed one
  EXPECT_EQ(report.at("devices").size(), n);
  EXPECT_EQ(report.at("split_trace").size(), 2u);
}

// Each kernel against the device's limit: the copy bandwidth measured in the same run, the kernel
// time per frame, the compulsory bytes and what they make in GB/s; and the programs' binaries.
TEST(BenchJson, FiltersReportKernelsAgainstTheCopyBandwidth) {
  ScratchDir dir;
  const std::filesystem::path file = dir.path / "filters.json";
  const std::filesystem::path binaries = dir.path / "binaries";
  std::string err;
  // "saturation": the case "saturation 1.3" (rgba8) and the four fused chains with saturation
  // in them (two point-wise ones on rgba32f, two stencils with an epilogue on rgba8).
  ASSERT_EQ(run_bench("filters --only saturation --size 64x48 --frames 1 --warmup 0 --ring 1 "
                      "--json '" + file.string() + "' --dump-binaries '" + binaries.string() + "'",
                      dir, err),
            0)
      << err;
  std::ifstream in(file);
  const json j = json::parse(in);
  const std::size_t n = test::device_ids().size();
  EXPECT_EQ(j.at("mode").get<std::string>(), "filters");
  ASSERT_EQ(j.at("copy").size(), 2 * n);  // per device, a frame of rgba8 and one of rgba32f
  for (const json& c : j["copy"]) {
    SCOPED_TRACE(c.dump());
    EXPECT_TRUE(c.at("device").is_string());
    EXPECT_TRUE(c.at("bytes").is_number_integer());
    EXPECT_TRUE(c.at("gbps").is_number());
    for (const char* method : {"uint4", "float4", "copy_buffer"}) {
      EXPECT_TRUE(c.at("methods").at(method).at("median_ms").is_number()) << method;
      EXPECT_TRUE(c["methods"][method].at("gbps").is_number()) << method;
    }
  }
  ASSERT_EQ(j.at("filters").size(), n);
  for (const json& r : j["filters"]) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r.at("filter").get<std::string>(), "saturation 1.3");
    EXPECT_EQ(r.at("compulsory_bytes").get<std::size_t>(), 64u * 48u * 4u * 2u);
    EXPECT_TRUE(r.at("kernel").at("median_ms").is_number());
    EXPECT_EQ(r["kernel"].at("frames").get<int>(), 1);
    for (const char* key : {"achieved_gbps", "copy_gbps", "percent_of_copy"}) {
      EXPECT_TRUE(r.at(key).is_number()) << key;
    }
  }
  // One per chain of run_filters() (--only "saturation" selects each, named with it) and device.
  ASSERT_EQ(j.at("fusion").size(), 6 * n);
  for (const json& r : j["fusion"]) {
    EXPECT_TRUE(r.at("fused_kernel").at("median_ms").is_number());
    EXPECT_TRUE(r.at("not_fused_kernel").at("median_ms").is_number());
  }
  // Every file listed was written, with the index beside it.
  EXPECT_TRUE(std::filesystem::exists(binaries / "index.tsv"));
  for (const json& f : j.at("binaries").at("files")) {
    EXPECT_TRUE(std::filesystem::exists(binaries / f.at("file").get<std::string>())) << f.dump();
  }
}

TEST(BenchJson, UsageErrorsAreOneLineAndExitTwo) {
  ScratchDir dir;
  for (const std::string args :
       {"", "nosuchmode", "coexec --frames 0", "filters --size 64", "stream --nosuchoption",
        "filters --graph saturation", "coexec --format rgb"}) {
    SCOPED_TRACE("tandem-bench " + args);
    std::string err;
    EXPECT_EQ(run_bench(args, dir, err), 2);
    EXPECT_EQ(err.rfind("tandem-bench: error: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  std::string err;
  EXPECT_EQ(run_bench("coexec --help", dir, err), 0) << err;
}
#endif

}  // namespace
}  // namespace tandem
