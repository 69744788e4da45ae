// The on-disk program cache: hits, rebuilds of corrupt or truncated entries, atomic writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/program_cache.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;

const std::string kSource = R"(
__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }
)";

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  return out;
}

void check_program_runs(Device& device, cl::Program program) {
  cl::Kernel k(program, "twice");
  std::vector<float> data = {1, 2, 3, 4};
  cl::Buffer b(device.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
               sizeof(float) * data.size(), data.data());
  k.setArg(0, b);
  device.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(data.size()));
  device.queue().enqueueReadBuffer(b, CL_TRUE, 0, sizeof(float) * data.size(), data.data());
  EXPECT_EQ(data, (std::vector<float>{2, 4, 6, 8}));
}

class ProgramCacheTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tandem-cache-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(ProgramCacheTest, SecondBuildHitsTheDiskCache) {
  DeviceSet set = DeviceSet::open(GetParam());
  {
    ProgramCache cache(dir_);
    check_program_runs(set[0], cache.get(set[0], kSource, "", "test"));
    EXPECT_EQ(cache.stats().builds, 1);
    check_program_runs(set[0], cache.get(set[0], kSource, "", "test"));
    EXPECT_EQ(cache.stats().memory_hits, 1);
  }
  ASSERT_EQ(entries(dir_).size(), 1u);  // no temporary file left behind
  ProgramCache fresh(dir_);             // a new process, in effect
  check_program_runs(set[0], fresh.get(set[0], kSource, "", "test"));
  EXPECT_EQ(fresh.stats().disk_hits, 1);
  EXPECT_EQ(fresh.stats().builds, 0);
  // Other options are another program.
  fresh.get(set[0], kSource, "-DOTHER=1", "test");
  EXPECT_EQ(fresh.stats().builds, 1);
  EXPECT_EQ(entries(dir_).size(), 2u);
}

TEST_P(ProgramCacheTest, CorruptOrTruncatedEntriesAreRebuilt) {
  DeviceSet set = DeviceSet::open(GetParam());
  ProgramCache(dir_).get(set[0], kSource, "", "test");
  const fs::path entry = entries(dir_).at(0);
  const auto size = fs::file_size(entry);

  {  // flip bytes in the middle of the binary
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const char junk[8] = {'j', 'u', 'n', 'k', 'j', 'u', 'n', 'k'};
    f.write(junk, sizeof junk);
  }
  ProgramCache corrupt(dir_);
  check_program_runs(set[0], corrupt.get(set[0], kSource, "", "test"));
  EXPECT_EQ(corrupt.stats().rejected, 1);
  EXPECT_EQ(corrupt.stats().builds, 1);
  EXPECT_EQ(fs::file_size(entry), size);  // rewritten whole

  fs::resize_file(entry, size / 3);  // truncated
  ProgramCache truncated(dir_);
  check_program_runs(set[0], truncated.get(set[0], kSource, "", "test"));
  EXPECT_EQ(truncated.stats().rejected, 1);
  EXPECT_EQ(truncated.stats().builds, 1);

  ProgramCache healed(dir_);
  healed.get(set[0], kSource, "", "test");
  EXPECT_EQ(healed.stats().disk_hits, 1);
}

TEST_P(ProgramCacheTest, BuildFailureCarriesTheLog) {
  DeviceSet set = DeviceSet::open(GetParam());
  ProgramCache cache(dir_);
  try {
    cache.get(set[0], "__kernel void broken(__global float* x) { x[0] = undefined_name; }", "",
              "broken.cl");
    FAIL() << "a broken program built";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), CL_BUILD_PROGRAM_FAILURE);
    EXPECT_NE(std::string(e.what()).find("building broken.cl"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos);
    EXPECT_NE(e.build_log().find("undefined_name"), std::string::npos) << e.build_log();
  }
  EXPECT_TRUE(!fs::exists(dir_) || entries(dir_).empty());
}

TEST(ProgramCacheKey, DependsOnEveryPart) {
  EXPECT_NE(fnv1a64("a"), fnv1a64("b"));
  EXPECT_EQ(fnv1a64("tandem"), fnv1a64("tandem"));
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, ProgramCacheTest,
                         ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tandem
