// The on-disk program cache: hits, rebuilds of corrupt or truncated entries, atomic writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
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

// The programs stored under the cache directory `dir` (its locks/ hold the builds' lock files).
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir / "programs")) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir / "programs")) {
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

// What a damaged entry costs is one rebuild: it is counted as rejected, the program is built
// from source and runs, and the entry is replaced whole (no temporary left, and a fresh cache
// then loads it). Nothing here depends on the binary's bytes, which differ between drivers and
// with the state of the driver's own caches.
TEST_P(ProgramCacheTest, CorruptOrTruncatedEntriesAreRebuilt) {
  DeviceSet set = DeviceSet::open(GetParam());
  ProgramCache(dir_).get(set[0], kSource, "", "test");
  const fs::path entry = entries(dir_).at(0);
  const auto size = fs::file_size(entry);
  ASSERT_GT(size, 64u);

  auto expect_rebuilt = [&](const char* damage) {
    SCOPED_TRACE(damage);
    ProgramCache cache(dir_);
    check_program_runs(set[0], cache.get(set[0], kSource, "", "test"));
    EXPECT_EQ(cache.stats().rejected, 1);
    EXPECT_EQ(cache.stats().builds, 1);
    EXPECT_EQ(cache.stats().disk_hits, 0);
    EXPECT_EQ(entries(dir_), std::vector<fs::path>{entry});  // replaced, no temporary left
    ProgramCache healed(dir_);
    check_program_runs(set[0], healed.get(set[0], kSource, "", "test"));
    EXPECT_EQ(healed.stats().disk_hits, 1);
    EXPECT_EQ(healed.stats().builds, 0);
    EXPECT_EQ(healed.stats().rejected, 0);
  };

  {  // bytes flipped in the middle of the binary
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(entry) / 2));
    const char junk[8] = {'j', 'u', 'n', 'k', 'j', 'u', 'n', 'k'};
    f.write(junk, sizeof junk);
  }
  expect_rebuilt("corrupt");

  fs::resize_file(entry, fs::file_size(entry) / 3);
  expect_rebuilt("truncated");

  {  // bytes appended
    std::ofstream(entry, std::ios::binary | std::ios::app) << "trailing";
  }
  expect_rebuilt("too long");
}

// Regression: a 32-byte entry whose header claims a binary of nearly 4 GiB made the cache
// allocate that much before it looked at the file's length. The header is read from a real
// entry, so only the claimed size is wrong.
TEST_P(ProgramCacheTest, AnEntryClaimingMoreThanItsFileHoldsIsRejectedUnread) {
  DeviceSet set = DeviceSet::open(GetParam());
  ProgramCache(dir_).get(set[0], kSource, "", "test");
  const fs::path entry = entries(dir_).at(0);
  char header[32];
  std::ifstream(entry, std::ios::binary).read(header, sizeof header);
  for (std::uint64_t claimed : {std::uint64_t{0xFFFFFFFF}, std::uint64_t{1} << 62}) {
    std::memcpy(header + 16, &claimed, sizeof claimed);  // magic, key, then the size
    std::ofstream(entry, std::ios::binary | std::ios::trunc).write(header, sizeof header);
    ASSERT_EQ(fs::file_size(entry), 32u);
    ProgramCache cache(dir_);
    check_program_runs(set[0], cache.get(set[0], kSource, "", "test"));
    EXPECT_EQ(cache.stats().rejected, 1);
    EXPECT_EQ(cache.stats().builds, 1);
  }
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

// A program is built again when anything it was built from changes: its source, its options,
// or the platform, device, driver or OpenCL version it was built for.
TEST(ProgramCacheKey, DependsOnEveryPart) {
  DeviceInfo device;
  device.platform = "Portable Computing Language";
  device.name = "cpu-haswell";
  device.driver_version = "3.1";
  device.device_version = "OpenCL 3.0 PoCL";
  const std::uint64_t base = program_cache_key(device, kSource, "-DRADIUS=2");
  EXPECT_EQ(program_cache_key(device, kSource, "-DRADIUS=2"), base);  // stable
  EXPECT_NE(program_cache_key(device, kSource + " ", "-DRADIUS=2"), base);
  EXPECT_NE(program_cache_key(device, kSource, "-DRADIUS=3"), base);
  for (std::string DeviceInfo::*part : {&DeviceInfo::platform, &DeviceInfo::name,
                                        &DeviceInfo::driver_version, &DeviceInfo::device_version}) {
    DeviceInfo other = device;
    other.*part += "x";
    EXPECT_NE(program_cache_key(other, kSource, "-DRADIUS=2"), base);
  }
  // Parts are kept apart: moving text from the options into the platform's name is another key.
  DeviceInfo shifted = device;
  shifted.platform = "2" + device.platform;
  EXPECT_NE(program_cache_key(shifted, kSource, "-DRADIUS="), base);
  // The key names the entry's file, on a real device too.
  DeviceSet set = DeviceSet::open(test::device_ids().front());
  ProgramCache cache("/tmp/tandem-key-test");
  EXPECT_NE(cache.entry_path(set[0], kSource, ""), cache.entry_path(set[0], kSource, "-DX"));
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
