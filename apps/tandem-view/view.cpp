#include "view.hpp"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <imgui_stdlib.h>

#include "display.hpp"
#include "tandem/image_io.hpp"

namespace tandem::view {
namespace {

// Plot colours in device order (tests/view_check.cpp looks for the first two).
constexpr ImU32 kDeviceColours[] = {IM_COL32(240, 140, 40, 255), IM_COL32(60, 150, 230, 255),
                                    IM_COL32(90, 200, 110, 255), IM_COL32(200, 90, 200, 255)};
constexpr ImU32 kPlotBackground = IM_COL32(24, 24, 28, 255);
constexpr ImU32 kLabel = IM_COL32(220, 220, 220, 255);
const ImVec4 kErrorColour{1.0f, 0.45f, 0.4f, 1.0f};
constexpr std::size_t kHistory = 240;  // frames the plots show
constexpr float kBandEdge = 4;         // px: the bar of bands beside the output picture
constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoMove |
                                    ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                    ImGuiWindowFlags_NoSavedSettings;

ImU32 device_colour(std::size_t device) {
  return kDeviceColours[device % std::size(kDeviceColours)];
}

// Each frame's fractions of rows stacked bottom-up, one column per frame.
void draw_split_plot(ImDrawList* list, ImVec2 p0, ImVec2 p1,
                     const std::vector<std::vector<double>>& trace) {
  list->AddRectFilled(p0, p1, kPlotBackground);
  const std::size_t n = std::min(trace.size(), kHistory), first = trace.size() - n;
  const float column = (p1.x - p0.x) / static_cast<float>(std::max<std::size_t>(n, 1));
  for (std::size_t i = 0; i < n; ++i) {
    const float x0 = p0.x + column * i, x1 = x0 + column;
    float y = p1.y;
    for (std::size_t d = 0; d < trace[first + i].size(); ++d) {
      const float h = static_cast<float>(trace[first + i][d]) * (p1.y - p0.y);
      list->AddRectFilled({x0, y - h}, {x1, y}, device_colour(d));
      y -= h;
    }
  }
}

// Beside the output picture (p0, p1) of `height` rows, a bar as tall as the picture: each device's
// band of the last frame in its colour, or the whole bar in the colour of the device that made the
// frame when devices take whole frames. Outside the picture, so that no pixel of it is hidden.
void draw_band_edges(ImDrawList* list, ImVec2 p0, ImVec2 p1, int height,
                     const std::vector<double>& split) {
  if (split.empty() || height <= 0) return;
  const std::vector<int> bounds = band_boundaries(height, split);
  const float scale = (p1.y - p0.y) / static_cast<float>(height);
  for (std::size_t d = 0; d + 1 < bounds.size(); ++d) {
    if (bounds[d + 1] == bounds[d]) continue;
    list->AddRectFilled({p0.x - kBandEdge - 2, p0.y + bounds[d] * scale},
                        {p0.x - 2, p0.y + bounds[d + 1] * scale}, device_colour(d));
  }
}

// One line per device, scaled to the largest value shown.
void draw_time_plot(ImDrawList* list, ImVec2 p0, ImVec2 p1,
                    const std::vector<std::vector<float>>& history) {
  list->AddRectFilled(p0, p1, kPlotBackground);
  float top = 1e-3f;
  for (const auto& values : history) {
    for (float v : values) top = std::max(top, v);
  }
  const float w = p1.x - p0.x - 4, h = p1.y - p0.y - 4;
  std::vector<ImVec2> points;
  for (std::size_t d = 0; d < history.size(); ++d) {
    const auto& values = history[d];
    points.clear();
    for (std::size_t i = 0; i < values.size(); ++i) {
      points.push_back({p0.x + 2 + w * i / std::max<std::size_t>(values.size() - 1, 1),
                        p1.y - 2 - h * values[i] / top});
    }
    list->AddPolyline(points.data(), static_cast<int>(points.size()), device_colour(d), 0, 2.0f);
  }
  char title[64];
  std::snprintf(title, sizeof title, "busy time per frame (top: %.2f ms)", top);
  list->AddText({p0.x, p0.y - 18}, kLabel, title);
}

}  // namespace

void Layout::picture(int panel, int w, int h, ImVec2& p0, ImVec2& p1) const {
  const float x0 = panel ? half() : 0, x1 = panel ? width : half();
  const float area_x = x0 + 8, area_y = 32, area_w = x1 - x0 - 16, area_h = top() - 8 - area_y;
  const float scale = std::min(area_w / w, area_h / h);
  const float dw = static_cast<int>(w * scale + 0.5f), dh = static_cast<int>(h * scale + 0.5f);
  p0 = {static_cast<float>(static_cast<int>(area_x + (area_w - dw) / 2)),
        static_cast<float>(static_cast<int>(area_y + (area_h - dh) / 2))};
  p1 = {p0.x + dw, p0.y + dh};
}

void Layout::plot(int index, ImVec2& p0, ImVec2& p1) const {
  const float x0 = half() + 8, x1 = width - 8, middle = static_cast<int>((x0 + x1) / 2);
  p0 = {index ? middle + 4 : x0, height - 148};
  p1 = {index ? x1 : middle - 4, height - 8};
}

Texture::~Texture() {
  if (id_) glDeleteTextures(1, &id_);
}

void Texture::upload(const Frame& picture) {
  const Frame frame = for_display(picture);
  if (!id_) {
    glGenTextures(1, &id_);
    glBindTexture(GL_TEXTURE_2D, id_);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  }
  glBindTexture(GL_TEXTURE_2D, id_);
  // Rows go straight from the frame, at its padded pitch.
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH,
                static_cast<GLint>(frame.pitch() / bytes_per_pixel(frame.format())));
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, frame.width(), frame.height(), 0, GL_RGBA,
               GL_UNSIGNED_BYTE, frame.data());
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  width_ = frame.width(), height_ = frame.height();
}

ImTextureID Texture::id() const {
  return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(id_));
}

View::View(const ViewOptions& options)
    : options_(options), source_(options.input), devices_(DeviceSet::open(options.devices)) {
  text_ = options.graph;
  rebuild(Graph::parse(text_));
  input_ = pipeline_->make_frame(source_.width(), source_.height(), source_.format());
  source_.next(input_);
}

void View::rebuild(Graph graph) {
  graph.validate(source_.format());
  const Size size = graph.output_size({source_.width(), source_.height()});
  PipelineOptions pipeline_options;
  pipeline_options.split = options_.split;
  auto pipeline = std::make_unique<Pipeline>(devices_, std::move(graph), pipeline_options);
  Frame output =
      pipeline->make_frame(size.width, size.height, pipeline->output_format(source_.format()));
  pipeline_ = std::move(pipeline);
  output_ = std::move(output);
  busy_history_.clear();
  busy_total_.clear();
  wall_total_ = 0;
  pending_ = {};
  dirty_ = true;
}

bool View::apply(Graph graph) {
  try {
    rebuild(std::move(graph));
  } catch (const std::exception& e) {
    text_error_ = e.what();
    return false;
  }
  text_error_.clear();
  return true;
}

void View::update(bool unpaced) {
  const auto now = Clock::now();
  // A still image plays at 30 frames a second too: each frame is processed again.
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1 / (source_.frame_rate() > 0 ? source_.frame_rate() : 30)));
  if (step_ || (playing_ && (unpaced || now >= due_))) {
    source_.next(input_);
    due_ = std::max(due_ + period, now);
    step_ = false;
    dirty_ = true;
  }
  if (dirty_) process();
}

void View::process() {
  dirty_ = false;
  try {
    pipeline_->process(input_, output_);
  } catch (const std::exception& e) {
    failure_ = e.what();
    status_ = "processing failed: " + failure_;
    playing_ = false;
    return;
  }
  failure_.clear();
  ++processed_;
  input_texture_.upload(input_);
  output_texture_.upload(output_);

  const RunReport& report = pipeline_->report();
  busy_total_.resize(report.devices.size(), 0);
  busy_history_.resize(report.devices.size());
  for (std::size_t d = 0; d < report.devices.size(); ++d) {
    // A pipeline's first frame also builds its programs: it is left out of the plot.
    auto& history = busy_history_[d];
    if (report.frames > 1) {
      history.push_back(static_cast<float>(report.devices[d].busy_ms - busy_total_[d]));
    }
    if (history.size() > kHistory) history.erase(history.begin());
    busy_total_[d] = report.devices[d].busy_ms;
  }
  frame_ms_ = report.wall_ms - wall_total_;
  wall_total_ = report.wall_ms;

  ++fps_frames_;
  const double seconds = std::chrono::duration<double>(Clock::now() - fps_since_).count();
  if (seconds >= 0.5) {
    fps_ = fps_frames_ / seconds;
    fps_frames_ = 0;
    fps_since_ = Clock::now();
  }
}

double View::idle_seconds() const {
  if (dirty_ || step_) return 0;
  if (!playing_) return 0.25;
  return std::max(0.0, std::chrono::duration<double>(due_ - Clock::now()).count());
}

void View::save() {
  try {
    write_image(options_.save_path, output_);
    status_ = "saved " + options_.save_path;
  } catch (const std::exception& e) {
    status_ = e.what();
  }
}

void View::draw(const Layout& layout, const std::vector<int>& keys) {
  enter_ = std::find(keys.begin(), keys.end(), GLFW_KEY_ENTER) != keys.end() ||
           std::find(keys.begin(), keys.end(), GLFW_KEY_KP_ENTER) != keys.end();
  for (int key : keys) {
    if (ImGui::GetIO().WantTextInput) break;
    if (key == GLFW_KEY_SPACE) playing_ = !playing_;
    if (key == GLFW_KEY_RIGHT) playing_ = false, step_ = true;
    if (key == GLFW_KEY_S) save();
  }
  draw_pictures(layout);
  draw_controls(layout);
  draw_statistics(layout);
}

void View::draw_pictures(const Layout& layout) {
  ImDrawList* list = ImGui::GetBackgroundDrawList();
  const std::string labels[] = {"input: " + source_.name(),
                                "output: " + pipeline_->graph().to_string()};
  const Texture* textures[] = {&input_texture_, &output_texture_};
  for (int panel = 0; panel < 2; ++panel) {
    const float x0 = panel ? layout.half() : 0, x1 = panel ? layout.width : layout.half();
    const ImVec4 clip{x0, 0, x1 - 8, 32};
    list->AddText(ImGui::GetFont(), ImGui::GetFontSize(), {x0 + 8, 10}, kLabel,
                  labels[panel].c_str(), nullptr, 0, &clip);
    if (textures[panel]->empty()) continue;
    ImVec2 p0, p1;
    layout.picture(panel, textures[panel]->width(), textures[panel]->height(), p0, p1);
    list->AddImage(textures[panel]->id(), p0, p1);
    if (panel == 1 && !pipeline_->report().split_trace.empty()) {
      draw_band_edges(list, p0, p1, textures[panel]->height(),
                      pipeline_->report().split_trace.back());
    }
  }
}

void View::draw_controls(const Layout& layout) {
  ImGui::SetNextWindowPos({0, layout.top()});
  ImGui::SetNextWindowSize({layout.half(), layout.height - layout.top()});
  ImGui::Begin("controls", nullptr, kFixed);
  if (ImGui::Button(playing_ ? "Pause" : "Play", {60, 0})) playing_ = !playing_;
  ImGui::SameLine();
  if (ImGui::Button("Step")) playing_ = false, step_ = true;
  ImGui::SameLine();
  if (ImGui::Button("Save")) save();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputText("##save", &options_.save_path);
  ImGui::TextDisabled("Space play/pause, Right step, S save the output");
  if (!status_.empty()) ImGui::TextUnformatted(status_.c_str());

  ImGui::Separator();
  ImGui::TextUnformatted("Graph (Enter applies it)");
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::InputText("##graph", &text_)) {
    try {
      Graph::parse(text_).validate(source_.format());
      text_error_.clear();
    } catch (const Error& e) {
      text_error_ = e.what();
    }
  }
  if (ImGui::IsItemDeactivatedAfterEdit() && text_error_.empty()) {
    apply(Graph::parse(text_));
    // Enter applied it: the box keeps the keyboard, so that what is typed next is text, not a
    // shortcut (an `s` is not Save), until it loses the focus.
    if (enter_) ImGui::SetKeyboardFocusHere(-1);
  }
  if (!text_error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColour);
    ImGui::TextUnformatted(text_error_.c_str());
    ImGui::PopStyleColor();
    ImGui::TextDisabled("still running: %s", pipeline_->graph().to_string().c_str());
  }
  ImGui::Separator();
  draw_parameters();
  ImGui::End();
}

// One control per parameter, from each filter's table. A change rebuilds the graph from its
// nodes with the new value and puts its text in the text box: at once for point-wise filters
// (their values are kernel arguments), when the slider is let go for the others.
void View::draw_parameters() {
  const Graph& graph = pipeline_->graph();
  PendingEdit edit;
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const GraphNode& node = graph.nodes()[n];
    if (node.spec->params.empty()) continue;
    const bool live = node.spec->make(node.params)->pointwise() != nullptr;
    ImGui::PushID(static_cast<int>(n));
    ImGui::TextUnformatted(node.spec->name.c_str());
    for (std::size_t k = 0; k < node.spec->params.size(); ++k) {
      const ParamSpec& p = node.spec->params[k];
      if (p.textual()) {
        // A file's path or an expression: typed in the graph's text box.
        ImGui::LabelText(p.name.c_str(), "%s", node.params.text(p.name).c_str());
        continue;
      }
      const auto is_pending = [&] {
        return pending_.node == static_cast<int>(n) && pending_.param == k;
      };
      double value = is_pending() ? pending_.value : node.params.values()[k];
      bool changed = false;
      if (p.type == ParamType::real) {
        float v = static_cast<float>(value);
        changed =
            ImGui::SliderFloat(p.name.c_str(), &v, static_cast<float>(p.min),
                               static_cast<float>(p.max), "%.3g", ImGuiSliderFlags_AlwaysClamp);
        // The shortest decimal that gives the same float: 3.98, not 3.9800000190734863.
        char text[32];
        *std::to_chars(text, text + sizeof text - 1, v).ptr = 0;
        value = std::clamp(std::strtod(text, nullptr), p.min, p.max);
        if (p.min_exclusive && value <= p.min) value = p.min + (p.max - p.min) * 1e-3;
      } else if (p.type == ParamType::integer) {
        int v = static_cast<int>(value);
        changed = ImGui::SliderInt(p.name.c_str(), &v, static_cast<int>(p.min),
                                   static_cast<int>(p.max), "%d", ImGuiSliderFlags_AlwaysClamp);
        value = v;
      } else {
        int v = static_cast<int>(value);
        changed = ImGui::Combo(
            p.name.c_str(), &v,
            [](void* choices, int i, const char** text) {
              *text = (*static_cast<const std::vector<std::string>*>(choices))[i].c_str();
              return true;
            },
            const_cast<std::vector<std::string>*>(&p.choices), static_cast<int>(p.choices.size()));
        value = v;
      }
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s [%s]", p.help.c_str(), p.describe_range().c_str());
      }
      if (changed && (live || p.type == ParamType::choice)) {
        edit = {static_cast<int>(n), k, value};
      } else if (changed) {
        pending_ = {static_cast<int>(n), k, value};
      }
      if (ImGui::IsItemDeactivatedAfterEdit() && is_pending()) edit = pending_;
    }
    ImGui::PopID();
  }
  if (edit.node < 0) return;
  Graph edited;
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    Params params = graph.nodes()[n].params;
    if (static_cast<int>(n) == edit.node) params.set(params.specs()[edit.param].name, edit.value);
    edited.add(graph.nodes()[n].spec->name, params, graph.nodes()[n].inputs);
  }
  edited.set_output(graph.output());
  std::string text = edited.to_string();
  if (apply(std::move(edited))) text_ = std::move(text);
}

void View::draw_statistics(const Layout& layout) {
  ImGui::SetNextWindowPos({layout.half(), layout.top()});
  ImGui::SetNextWindowSize({layout.width - layout.half(), layout.height - layout.top()});
  ImGui::Begin("statistics", nullptr, kFixed);
  char rate[32] = "paused";
  if (playing_) std::snprintf(rate, sizeof rate, "%.1f fps", fps_);
  ImGui::Text("%s, %.2f ms per frame, frame %lld, %s, split %s", rate, frame_ms_,
              static_cast<long long>(processed_), std::string(to_string(input_.format())).c_str(),
              options_.split.c_str());
  const RunReport& report = pipeline_->report();
  if (ImGui::BeginTable("devices", 5, ImGuiTableFlags_SizingFixedFit)) {
    for (const char* name : {"", "device", "share", "ms/frame", "busy ms"}) {
      ImGui::TableSetupColumn(name);
    }
    ImGui::TableHeadersRow();
    for (std::size_t d = 0; d < report.devices.size(); ++d) {
      const DeviceReport& device = report.devices[d];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::ColorButton("##colour", ImGui::ColorConvertU32ToFloat4(device_colour(d)),
                         ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker, {12, 12});
      ImGui::TableNextColumn();
      ImGui::Text("%s %s%s", device.id.c_str(), device.name.c_str(),
                  device.failed ? " (failed)" : "");
      ImGui::TableNextColumn();
      const auto& trace = report.split_trace;
      ImGui::Text("%5.1f%%", trace.empty() || d >= trace.back().size() ? 0 : 100 * trace.back()[d]);
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", busy_history_.size() > d && !busy_history_[d].empty()
                              ? busy_history_[d].back()
                              : 0.0f);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", device.busy_ms);
    }
    ImGui::EndTable();
  }
  for (const std::string& line : report.fallbacks) {
    ImGui::TextColored(kErrorColour, "%s", line.c_str());
  }

  ImDrawList* list = ImGui::GetWindowDrawList();
  ImVec2 p0, p1;
  layout.plot(0, p0, p1);
  list->AddText({p0.x, p0.y - 18}, kLabel, "split of rows per frame");
  draw_split_plot(list, p0, p1, report.split_trace);
  layout.plot(1, p0, p1);
  draw_time_plot(list, p0, p1, busy_history_);
  ImGui::End();
}

}  // namespace tandem::view
