// Device selection by spec string, on synthetic device lists (no OpenCL needed), and on the
// devices present.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "quirks.hpp"
#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

std::vector<DeviceInfo> machine() {
  auto make = [](std::string id, int p, int d, DeviceType type, std::string name,
                 std::string platform) {
    DeviceInfo info;
    info.id = std::move(id);
    info.platform_index = p;
    info.device_index = d;
    info.type = type;
    info.name = std::move(name);
    info.platform = std::move(platform);
    return info;
  };
  return {make("0.0", 0, 0, DeviceType::gpu, "NVIDIA H100 80GB HBM3", "NVIDIA CUDA"),
          make("1.0", 1, 0, DeviceType::cpu, "pthread-skylake", "Portable Computing Language"),
          make("1.1", 1, 1, DeviceType::cpu, "basic-skylake", "Portable Computing Language")};
}

std::string message_of(std::string_view spec) {
  try {
    select_devices(spec, machine());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceSpec, KeywordsIdsAndNames) {
  const auto m = machine();
  EXPECT_EQ(select_devices("all", m), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(select_devices("gpu", m), (std::vector<std::size_t>{0}));
  EXPECT_EQ(select_devices("cpu", m), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(select_devices("1.1,0.0", m), (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(select_devices(" 1.1 , 1.1 ", m), (std::vector<std::size_t>{2}));  // deduplicated
  EXPECT_EQ(select_devices("nvidia", m), (std::vector<std::size_t>{0}));
  EXPECT_EQ(select_devices("BASIC", m), (std::vector<std::size_t>{2}));  // any case
  EXPECT_EQ(select_devices("gpu,basic", m), (std::vector<std::size_t>{0, 2}));
}

TEST(DeviceSpec, ErrorsNameWhatIsAvailable) {
  EXPECT_NE(message_of("").find("empty selection"), std::string::npos);
  EXPECT_NE(message_of("accelerator").find("'accelerator' matches no device"), std::string::npos);
  EXPECT_NE(message_of("2.0").find("'2.0' matches no device"), std::string::npos);
  EXPECT_NE(message_of("radeon").find("available: 0.0 gpu 'NVIDIA H100 80GB HBM3'"),
            std::string::npos);
  const std::string ambiguous = message_of("skylake");
  EXPECT_NE(ambiguous.find("ambiguous"), std::string::npos) << ambiguous;
  EXPECT_NE(ambiguous.find("1.0, 1.1"), std::string::npos) << ambiguous;
  EXPECT_NE(message_of("gpu,,cpu").find("empty item"), std::string::npos);
}

TEST(Devices, EnumerateAndOpenEveryDevice) {
  const auto infos = enumerate_devices();
  ASSERT_FALSE(infos.empty());
  for (const auto& d : infos) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.compute_units, 0u);
    EXPECT_GT(d.base_address_alignment, 0u);
    DeviceSet set = DeviceSet::open(d.id);
    ASSERT_EQ(set.size(), 1u);
    EXPECT_EQ(set[0].info().id, d.id);
    EXPECT_EQ(set.row_alignment() % 64, 0u);
    EXPECT_EQ(set.row_alignment() % d.base_address_alignment, 0u);
    // Queues are in order with profiling, which the scheduler's timings need.
    const auto props = set[0].queue().getInfo<CL_QUEUE_PROPERTIES>();
    EXPECT_TRUE(props & CL_QUEUE_PROFILING_ENABLE);
    EXPECT_FALSE(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  }
  DeviceSet all = DeviceSet::open("all");
  EXPECT_EQ(all.size(), infos.size());
  // Devices of one platform share one context, but for those that get one each (NVIDIA's GPUs).
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < all.size(); ++j) {
      const bool shared = i == j || (all[i].info().platform_index == all[j].info().platform_index &&
                                     !detail::wants_own_context(all[i].info()) &&
                                     !detail::wants_own_context(all[j].info()));
      EXPECT_EQ(shared, all[i].context()() == all[j].context()());
      EXPECT_EQ(shared, all[i].context_index() == all[j].context_index());
    }
  }
}

// Beside GPUs a CPU device runs as a sub-device that leaves a core to the host and one to each
// GPU's driver, where its driver partitions; without GPUs it keeps every unit.
TEST(Devices, ACpuBesideGpusLeavesCoresToTheHost) {
  const auto infos = enumerate_devices();
  const auto gpus = static_cast<unsigned>(std::count_if(
      infos.begin(), infos.end(), [](const DeviceInfo& d) { return d.type == DeviceType::gpu; }));
  DeviceSet all = DeviceSet::open("all");
  ASSERT_EQ(all.size(), infos.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const DeviceInfo& full = infos[i];
    const DeviceInfo& opened = all[i].info();
    ASSERT_EQ(opened.id, full.id);
    if (full.type != DeviceType::cpu || gpus == 0 || opened.cores_left_to_host == 0) {
      // Not beside a GPU, or a driver that does not partition (or too few cores to spare).
      EXPECT_EQ(opened.cores_left_to_host, 0u);
      EXPECT_EQ(opened.compute_units, full.compute_units) << full.id;
      continue;
    }
    std::cout << full.id << " beside " << gpus << " GPU(s): " << opened.compute_units << " of "
              << full.compute_units << " compute units\n";
    EXPECT_EQ(opened.cores_left_to_host, 1 + gpus);
    EXPECT_EQ(opened.compute_units + opened.cores_left_to_host, full.compute_units);
  }
  for (const DeviceInfo& full : infos) {
    if (full.type != DeviceType::cpu) continue;
    DeviceSet alone = DeviceSet::open(full.id);
    EXPECT_EQ(alone[0].info().cores_left_to_host, 0u);
    EXPECT_EQ(alone[0].info().compute_units, full.compute_units);
  }
}

}  // namespace
}  // namespace tandem
