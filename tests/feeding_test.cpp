// Each device is fed by a host thread of its own (issue 13): the bands of one frame are enqueued
// on their devices at once, and a whole frame given to one device does not hold up submit().
// What happens is made by a test filter whose enqueue waits for the others, not left to the
// machine's speed; bounds on waits only keep a serial executor from hanging the suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "device_feeders.hpp"
#include "quirks.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

constexpr auto kSafety = std::chrono::seconds(60);
// How long an enqueue waits for another of its context to begin beside it (which it must not).
constexpr auto kPeerWait = std::chrono::milliseconds(200);

// What the test filter's enqueue does.
struct Script {
  enum class Mode { copy, meet, hold, unbuildable } mode = Mode::copy;
  std::mutex mutex;
  std::condition_variable changed;
  // meet: enqueues that must be under way at once, first those of devices that take their
  // context's lock (one a context), then those of devices that compute while being enqueued
  int expected = 0, expected_computing = 0;
  int arrived = 0, arrived_computing = 0;  // meet: enqueues begun, of each kind
  int locked_total = 0, locked_ended = 0;  // meet: enqueues of the first kind, all and ended
  bool all_met = true;  // meet: every enqueue saw the others of its kind begin before it ended
  bool computing_early = false;  // meet: one of the second kind began before the first had ended
  std::set<std::thread::id> threads;  // meet: where the enqueues ran
  // meet: devices of each context that take its lock (set by the test), the enqueues under way
  // on them, and the most seen at once in one context.
  std::map<int, int> locked_devices;
  std::map<int, int> in_context;
  int most_in_a_context = 0;
  bool released = false;              // hold: the test let the enqueue go on
  bool held_too_long = false;         // hold: the enqueue gave up waiting

  void reset(Mode m, int expect = 0, int expect_computing = 0) {
    std::lock_guard lock(mutex);
    mode = m;
    expected = expect;
    expected_computing = expect_computing;
    arrived = arrived_computing = 0;
    locked_total = locked_ended = 0;
    all_met = true;
    computing_early = false;
    threads.clear();
    locked_devices.clear();
    in_context.clear();
    most_in_a_context = 0;
    released = false;
    held_too_long = false;
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
  void before_enqueue(const Device& device) {
    std::unique_lock lock(mutex);
    switch (mode) {
      case Mode::copy: return;
      case Mode::meet: {
        threads.insert(std::this_thread::get_id());
        if (detail::runs_kernels_at_enqueue(device.info())) {
          computing_early = computing_early || locked_ended < locked_total;
          ++arrived_computing;
          changed.notify_all();
          if (!changed.wait_for(lock, kSafety,
                                [&] { return arrived_computing >= expected_computing; })) {
            all_met = false;
          }
          return;
        }
        const int c = device.context_index();
        most_in_a_context = std::max(most_in_a_context, ++in_context[c]);
        ++arrived;
        changed.notify_all();
        if (!changed.wait_for(lock, kSafety, [&] { return arrived >= expected; })) all_met = false;
        if (locked_devices[c] > 1) {
          // Another device of its context, enqueuing beside it, would begin meanwhile.
          changed.wait_for(lock, kPeerWait, [&] { return in_context[c] > 1; });
        }
        --in_context[c];
        ++locked_ended;
        return;
      }
      case Mode::hold:
        if (!changed.wait_for(lock, kSafety, [&] { return released; })) held_too_long = true;
        return;
      case Mode::unbuildable:
        throw Error(CL_BUILD_PROGRAM_FAILURE, "clBuildProgram", "building t_scripted");
    }
  }
} g_script;

// Copies its input (a stencil-style filter: it has its own enqueue) after what g_script says.
class Scripted final : public Filter {
 public:
  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    g_script.before_enqueue(ctx.device());
    test::enqueue_row_copies(ctx, inputs[0], output);
  }
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    test::copy_rgba8(*inputs[0], output);
  }
};

FilterSpec describe_scripted() {
  return {.name = "t_scripted",
          .help = "copies its input; its enqueue does what the test scripts",
          .make = [](const Params&) { return std::make_unique<Scripted>(); }};
}
TANDEM_REGISTER_FILTER(describe_scripted);

// A point-wise filter whose stage has more arguments than a kernel takes (17 of 16).
class ManyArguments final : public Filter {
 public:
  ManyArguments() {
    stage_.source = "saturation.cl";
    stage_.function = "tandem_saturation";
    stage_.args.assign(17, 1.0f);
  }
  const PointwiseStage* pointwise() const override { return &stage_; }
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    test::copy_rgba8(*inputs[0], output);
  }

 private:
  PointwiseStage stage_;
};

FilterSpec describe_many_arguments() {
  return {.name = "t_many_arguments",
          .help = "a point-wise stage of 17 arguments",
          .make = [](const Params&) { return std::make_unique<ManyArguments>(); }};
}
TANDEM_REGISTER_FILTER(describe_many_arguments);

bool same_pixels(const Frame& a, const Frame& b) {
  for (int y = 0; y < a.height(); ++y) {
    if (std::memcmp(a.row(y), b.row(y), static_cast<std::size_t>(a.width()) * 4) != 0) {
      return false;
    }
  }
  return true;
}

PipelineOptions with_split(std::string split) {
  PipelineOptions o;
  o.split = std::move(split);
  o.persist_split = false;
  return o;
}

// One thread sleeps between jobs, the other spins (a GPU's).
TEST(DeviceFeeders, RunEachDevicesJobsInOrderOnAThreadOfItsOwn) {
  std::vector<std::vector<int>> ran(2);
  std::vector<std::set<std::thread::id>> threads(2);
  {
    detail::DeviceFeeders feeders({false, true});
    for (int i = 0; i < 100; ++i) {
      for (std::size_t d = 0; d < 2; ++d) {
        feeders.post(d, [&, d, i] {
          ran[d].push_back(i);
          threads[d].insert(std::this_thread::get_id());
        });
      }
    }
  }  // runs what was posted, then stops
  for (std::size_t d = 0; d < 2; ++d) {
    ASSERT_EQ(ran[d].size(), 100u);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[d][i], i);
    ASSERT_EQ(threads[d].size(), 1u);
    EXPECT_NE(*threads[d].begin(), std::this_thread::get_id());
  }
  EXPECT_NE(*threads[0].begin(), *threads[1].begin());
}

// Each device's band on its thread: those of devices in different contexts at once, those of
// devices of one context one after the other (Pipeline::Impl::context_lock()); devices that run
// their kernels in the enqueue (PoCL's basic) after all of those, at once.
TEST(Feeding, TheBandsOfOneFrameAreEnqueuedAtOnce) {
  const auto ids = test::device_ids();
  if (ids.size() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  DeviceSet set = DeviceSet::open("all");
  std::string split = "static:";
  for (std::size_t d = 0; d < set.size(); ++d) split += d ? ",1" : "1";  // a band each
  // What can enqueue at once: a context's devices that take its lock count once.
  std::map<int, int> locked_devices;
  int locked = 0, unlocked = 0;
  for (const Device& device : set.devices()) {
    if (detail::runs_kernels_at_enqueue(device.info())) {
      ++unlocked;
    } else {
      ++locked;
      ++locked_devices[device.context_index()];
    }
  }
  const int at_once = static_cast<int>(locked_devices.size());
  Pipeline pipeline(set, Graph::parse("t_scripted"), with_split(split));
  const Frame input = test::random_frame(96, 64, PixelFormat::rgba8, 5);
  Frame output;
  for (int frame = 0; frame < 3; ++frame) {
    g_script.reset(Script::Mode::meet, at_once, unlocked);
    g_script.locked_devices = locked_devices;
    g_script.locked_total = locked;
    pipeline.process(input, output);
    EXPECT_TRUE(g_script.all_met) << "frame " << frame << ": a band waited for another's enqueue";
    EXPECT_FALSE(g_script.computing_early)
        << "frame " << frame << ": a device that computes in its enqueue began before the others "
        << "had enqueued";
    EXPECT_LE(g_script.most_in_a_context, 1) << "frame " << frame;
    EXPECT_EQ(g_script.threads.size(), set.size()) << "frame " << frame;
    EXPECT_TRUE(same_pixels(output, input)) << "frame " << frame;
  }
  g_script.reset(Script::Mode::copy);
}

TEST(Feeding, SubmitDoesNotWaitForAWholeFramesEnqueue) {
  const auto ids = test::device_ids();
  if (ids.size() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  DeviceSet set = DeviceSet::open("all");
  Pipeline pipeline(set, Graph::parse("t_scripted"), with_split("frames"));
  const Frame input = test::random_frame(96, 64, PixelFormat::rgba8, 6);
  Frame output;
  g_script.reset(Script::Mode::hold);
  const std::uint64_t ticket = pipeline.submit(input, output);  // returns with it held
  g_script.release();
  pipeline.wait(ticket);
  EXPECT_FALSE(g_script.held_too_long) << "submit() waited for the frame's enqueue";
  EXPECT_TRUE(same_pixels(output, input));
  g_script.reset(Script::Mode::copy);
}

TEST(Feeding, AWholeFrameThatCannotBeEnqueuedFailsItsWait) {
  const auto ids = test::device_ids();
  if (ids.size() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  DeviceSet set = DeviceSet::open("all");
  Pipeline pipeline(set, Graph::parse("t_scripted"), with_split("frames"));
  const Frame input = test::random_frame(96, 64, PixelFormat::rgba8, 7);
  Frame output;
  g_script.reset(Script::Mode::unbuildable);
  const std::uint64_t ticket = pipeline.submit(input, output);
  try {
    pipeline.wait(ticket);
    ADD_FAILURE() << "wait() returned for a frame that was never enqueued";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), CL_BUILD_PROGRAM_FAILURE);
  }
  // No device left the run for it, and the next frame runs.
  g_script.reset(Script::Mode::copy);
  EXPECT_TRUE(pipeline.report().fallbacks.empty());
  pipeline.process(input, output);
  EXPECT_TRUE(same_pixels(output, input));
}

// A stage whose arguments a kernel cannot take is refused as the graph is compiled for the first
// frame: no frame is left on the devices half-enqueued (a later wait() would wait for it), and no
// device's thread throws.
TEST(Feeding, AStageWithTooManyArgumentsIsRefusedAtTheFirstFrame) {
  DeviceSet set = DeviceSet::open("all");
  const Frame input = test::random_frame(64, 32, PixelFormat::rgba8, 3);
  for (const char* split : {"frames", "bands"}) {
    SCOPED_TRACE(split);
    Pipeline pipeline(set, Graph::parse("t_many_arguments"), with_split(split));
    Frame output;
    try {
      pipeline.wait(pipeline.submit(input, output));
      ADD_FAILURE() << "a stage of 17 arguments ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("at most 16 arguments"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tandem
