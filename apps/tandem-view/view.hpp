#pragma once
// tandem-view's state and panels: the source, the pipeline of the last graph that worked, the
// frames and their textures, and the run's history for the plots.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "source.hpp"
#include "tandem/tandem.hpp"

namespace tandem::view {

/// The window's layout, fixed arithmetic on its size so that tests/view_check.cpp finds the
/// panels in a screenshot (keep the two in step). The input and output pictures lie side by side
/// in the top 60%, each scaled to fit its half inside an 8 px margin under a 24 px label, and
/// centred; a 4 px bar 2 px left of the output picture shows which device computed which rows
/// of the last frame, in the devices' plot colours (all of it one colour when one device made
/// the whole frame). The controls lie below on the left, the statistics on the right with their
/// two plots (split of rows, busy time per frame) side by side in its bottom 140 px.
struct Layout {
  float width = 0, height = 0;

  float top() const { return static_cast<float>(static_cast<int>(height * 0.6f)); }
  float half() const { return static_cast<float>(static_cast<int>(width / 2)); }
  /// Corners of a w x h picture in panel 0 (input) or 1 (output), on whole pixels.
  void picture(int panel, int w, int h, ImVec2& p0, ImVec2& p1) const;
  /// Corners of plot 0 (split of rows) or 1 (busy time per frame).
  void plot(int index, ImVec2& p0, ImVec2& p1) const;
};

struct ViewOptions {
  std::string input;
  std::string graph;
  std::string devices = "all";
  std::string split = "auto";
  std::string save_path = "tandem-view.png";
};

/// An OpenGL texture showing a frame (float frames are clamped to 0..1).
class Texture {
 public:
  Texture() = default;
  ~Texture();
  Texture(const Texture&) = delete;
  Texture& operator=(const Texture&) = delete;

  void upload(const Frame& frame);
  bool empty() const { return id_ == 0; }
  int width() const { return width_; }
  int height() const { return height_; }
  ImTextureID id() const;

 private:
  unsigned id_ = 0;
  int width_ = 0, height_ = 0;
};

class View {
 public:
  /// Opens the source, the devices and a pipeline for the graph; throws Error when any fails,
  /// before anything is drawn.
  explicit View(const ViewOptions& options);

  /// Takes the next frame when it is due (every call when `unpaced`), processes it when the
  /// frame or the graph changed, and uploads both pictures. Needs the OpenGL context.
  void update(bool unpaced);
  /// Builds this frame's UI (between ImGui::NewFrame and ImGui::Render); `keys` are the GLFW
  /// keys pressed since the last frame.
  void draw(const Layout& layout, const std::vector<int>& keys);
  /// Seconds the window may wait for events before update() has work.
  double idle_seconds() const;
  /// Frames processed since the start.
  std::int64_t processed() const { return processed_; }
  /// The last processing error, empty when none.
  const std::string& failure() const { return failure_; }

 private:
  using Clock = std::chrono::steady_clock;

  /// Replaces the pipeline with one for `graph`; throws Error, keeping the old one, when the
  /// graph does not fit the source.
  void rebuild(Graph graph);
  /// rebuild(), with the error shown under the graph's text box; false when it failed.
  bool apply(Graph graph);
  void process();
  void save();
  void draw_pictures(const Layout& layout);
  void draw_controls(const Layout& layout);
  void draw_parameters();
  void draw_statistics(const Layout& layout);

  ViewOptions options_;
  Source source_;
  DeviceSet devices_;
  std::unique_ptr<Pipeline> pipeline_;
  Frame input_, output_;
  Texture input_texture_, output_texture_;

  std::string text_;        ///< the graph text box
  std::string text_error_;  ///< why text_ does not parse, or why it was not applied
  bool enter_ = false;      ///< Enter was pressed since the last frame
  std::string status_;      ///< the last save or processing message
  std::string failure_;
  bool playing_ = true, step_ = false, dirty_ = false;
  /// A slider being dragged whose filter is not point-wise: every value would build new
  /// programs, so the value is applied when the slider is let go.
  struct PendingEdit {
    int node = -1;
    std::size_t param = 0;
    double value = 0;
  } pending_;
  Clock::time_point due_ = Clock::now();

  std::int64_t processed_ = 0;
  // Per-frame figures, derived from the differences of the pipeline's running totals.
  std::vector<std::vector<float>> busy_history_;  ///< per device, ms per frame
  std::vector<double> busy_total_;
  double wall_total_ = 0, frame_ms_ = 0;
  double fps_ = 0;
  int fps_frames_ = 0;
  Clock::time_point fps_since_ = Clock::now();
};

}  // namespace tandem::view
