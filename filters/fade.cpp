// fade: a video fading in from a colour or out to it, over frames or seconds, as FFmpeg's fade.
// Point-wise, so it joins the chain around it; its level follows the time of the frame being
// enqueued (Filter::set_frame_time()), so it never runs in a stencil's epilogue.
#include <algorithm>
#include <array>
#include <cmath>

#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

// The colours `color` names, R'G'B' 0..1.
constexpr std::array<std::array<float, 3>, 5> kColours = {
    {{0, 0, 0}, {1, 1, 1}, {0.5f, 0.5f, 0.5f}, {1, 0, 0}, {0, 0, 1}}};

class Fade final : public Filter {
 public:
  explicit Fade(const Params& params)
      : out_(params.integer("type") == 1),
        start_frame_(params.integer("start_frame")),
        frames_(params.integer("nb_frames")),
        start_time_(params["start_time"]),
        duration_(params["duration"]),
        alpha_(params.integer("alpha") != 0) {
    const auto& c = kColours[static_cast<std::size_t>(params.integer("color"))];
    stage_ = {"fade.cl", "tandem_fade", {0, c[0], c[1], c[2], alpha_ ? 1.0f : 0.0f}, {}};
    set_frame_time({});
  }

  const PointwiseStage* pointwise() const override { return &stage_; }
  bool needs_frame_time() const override { return true; }

  // FFmpeg's: over seconds where a duration is given, else over frames; before the fade the
  // picture is the colour (in) or itself (out), after it the other way round.
  void set_frame_time(const FrameTime& time) override {
    const double progress = duration_ > 0
                                ? (time.seconds - start_time_) / duration_
                                : static_cast<double>(time.index - start_frame_) / frames_;
    const double level = std::clamp(progress, 0.0, 1.0);
    stage_.args[0] = static_cast<float>(out_ ? 1 - level : level);
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const float level = stage_.args[0];
    const float colour[3] = {stage_.args[1], stage_.args[2], stage_.args[3]};
    const bool alpha = alpha_;
    for_each_pixel(*inputs[0], output, [=](Pixel px) {
      if (alpha) return Pixel{px.r, px.g, px.b, px.a * level};
      auto fade = [&](float c, float k) { return std::fma(level, c - k, k); };
      return Pixel{fade(px.r, colour[0]), fade(px.g, colour[1]), fade(px.b, colour[2]), px.a};
    });
  }

 private:
  bool out_;
  int start_frame_, frames_;
  double start_time_, duration_;
  bool alpha_;
  PointwiseStage stage_;
};

FilterSpec describe_fade() {
  return {
      .name = "fade",
      .help =
          "Fades video in from a colour or out to it, over frames or (with a duration) "
          "seconds, as FFmpeg's fade; a still image is frame 0 at 0 s.",
      .params = {{.name = "type",
                  .type = ParamType::choice,
                  .help = "in: from the colour to the picture; out: to the colour",
                  .choices = {"in", "out"}},
                 {.name = "start_frame",
                  .type = ParamType::integer,
                  .min = 0,
                  .max = 1e9,
                  .help = "the frame the fade starts at (from 0)"},
                 {.name = "nb_frames",
                  .type = ParamType::integer,
                  .default_value = 25,
                  .min = 1,
                  .max = 1e9,
                  .help = "frames the fade lasts"},
                 {.name = "start_time",
                  .type = ParamType::real,
                  .min = 0,
                  .max = 1e7,
                  .help = "with a duration: the second the fade starts at"},
                 {.name = "duration",
                  .type = ParamType::real,
                  .min = 0,
                  .max = 1e7,
                  .help = "seconds the fade lasts; 0 fades over nb_frames frames instead"},
                 {.name = "color",
                  .type = ParamType::choice,
                  .help = "the colour faded from or to",
                  .choices = {"black", "white", "gray", "red", "blue"}},
                 {.name = "alpha",
                  .type = ParamType::integer,
                  .min = 0,
                  .max = 1,
                  .help = "1 fades the alpha channel alone"}},
      .make = [](const Params& p) { return std::make_unique<Fade>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_fade);

}  // namespace
}  // namespace tandem
