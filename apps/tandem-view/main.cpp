// tandem-view: a desktop demo of tandem. The input and the filtered output side by side, the
// graph edited live with a control per filter parameter, and each device's share of the rows and
// busy time as they change. Dear ImGui on GLFW and OpenGL 3; frames are processed on the UI thread.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <CLI/CLI.hpp>

#include "tandem/image_io.hpp"
#include "tandem/tandem.hpp"
#include "view.hpp"

namespace {

std::string g_glfw_error;
// Keys pressed since the last frame, from GLFW's callback: Dear ImGui 1.86 polls key state once
// a frame and misses a press and release that both fall between two frames.
std::vector<int> g_keys;

/// A GLFW window with an OpenGL 3.3 core context and Dear ImGui on it.
class Window {
 public:
  Window(int width, int height, bool vsync) {
    glfwSetErrorCallback([](int, const char* message) { g_glfw_error = message; });
    if (!glfwInit()) {
      throw tandem::Error("no display (" + g_glfw_error +
                          "); run tandem-view on a desktop or under xvfb-run");
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    window_ = glfwCreateWindow(width, height, "tandem-view", nullptr, nullptr);
    if (!window_) {
      glfwTerminate();
      throw tandem::Error("cannot open an OpenGL 3.3 window (" + g_glfw_error + ")");
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(vsync ? 1 : 0);
    // Installed before Dear ImGui's callback, which chains to it.
    glfwSetKeyCallback(window_, [](GLFWwindow*, int key, int, int action, int) {
      if (action == GLFW_PRESS) g_keys.push_back(key);
    });
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // the layout is fixed; nothing to remember
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 330");
  }
  ~Window() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
  }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  /// Waits up to `timeout` seconds for events and starts a UI frame; false once closed.
  bool begin_frame(double timeout) {
    if (timeout > 0) {
      glfwWaitEventsTimeout(timeout);
    } else {
      glfwPollEvents();
    }
    if (glfwWindowShouldClose(window_)) return false;
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    return true;
  }

  /// Draws the UI frame into the back buffer.
  void render() {
    ImGui::Render();
    glfwGetFramebufferSize(window_, &width_, &height_);
    glViewport(0, 0, width_, height_);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }
  void show() { glfwSwapBuffers(window_); }

  /// Writes what render() drew to an image file.
  void write_screenshot(const std::string& path) const {
    std::vector<std::uint8_t> pixels(std::size_t(width_) * height_ * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    // OpenGL's rows go bottom-up, and the framebuffer's alpha is not the picture's.
    tandem::Frame shot(width_, height_, tandem::PixelFormat::rgba8);
    for (int y = 0; y < height_; ++y) {
      const std::uint8_t* from = pixels.data() + std::size_t(height_ - 1 - y) * width_ * 4;
      std::uint8_t* to = shot.row(y);
      for (int x = 0; x < width_ * 4; x += 4) {
        to[x] = from[x], to[x + 1] = from[x + 1], to[x + 2] = from[x + 2], to[x + 3] = 255;
      }
    }
    tandem::write_image(path, shot);
  }

 private:
  GLFWwindow* window_ = nullptr;
  int width_ = 0, height_ = 0;
};

int run(const tandem::view::ViewOptions& options, const std::string& size,
        const std::string& screenshot, int after) {
  int width = 0, height = 0;
  char end = 0;
  if (std::sscanf(size.c_str(), "%dx%d%c", &width, &height, &end) != 2 || width < 320 ||
      height < 240) {
    throw tandem::Error("--size must be WxH of at least 320x240, not '" + size + "'");
  }
  if (!screenshot.empty() && !tandem::is_image_path(screenshot)) {
    throw tandem::Error("cannot write screenshot '" + screenshot +
                        "': unknown image format (png, jpg, tif, bmp)");
  }
  // The window is declared first so that it outlives the view's textures.
  std::optional<Window> window;
  tandem::view::View view(options);
  window.emplace(width, height, screenshot.empty());
  while (window->begin_frame(screenshot.empty() ? view.idle_seconds() : 0)) {
    view.update(!screenshot.empty());
    if (!screenshot.empty() && !view.failure().empty()) throw tandem::Error(view.failure());
    const ImGuiIO& io = ImGui::GetIO();
    view.draw({io.DisplaySize.x, io.DisplaySize.y}, g_keys);
    g_keys.clear();
    window->render();
    if (!screenshot.empty() && view.processed() >= after) {
      window->write_screenshot(screenshot);
      return 0;
    }
    window->show();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tandem-view: shows a picture and the output of a filter graph side by side, every frame "
      "split across the selected OpenCL devices; the graph and its parameters are edited live.\n\n"
      "  tandem-view -i in.mp4 -f \"gaussian=sigma=2,saturation=1.3\"\n"
      "  tandem-view -i testsrc=1280x720 -f \"bilateral\" --devices cpu\n"
      "  xvfb-run -a tandem-view -i in.png -f saturation=2 --screenshot shot.png --after 10",
      "tandem-view"};
  app.set_version_flag("--version", tandem::version());
  tandem::view::ViewOptions options;
  options.graph = "gaussian=sigma=2,saturation=1.3";
  std::string size = "1280x800", screenshot;
  int after = 10;
  app.add_option("-i,--input", options.input,
                 "Video or image file, or testsrc[=WxH] for a moving test pattern")
      ->required();
  app.add_option("-f,--filter", options.graph, "Filter graph to start with")->capture_default_str();
  app.add_option("--devices", options.devices,
                 "Devices: all, cpu, gpu, ids such as 0.1,1.0, or name substrings")
      ->capture_default_str();
  app.add_option("--split", options.split,
                 "How devices share the work: auto, frames, bands (= adaptive), "
                 "static:F1,F2,..., single, chunks:N")
      ->capture_default_str();
  app.add_option("--save", options.save_path, "Where the Save button writes the output")
      ->capture_default_str();
  app.add_option("--size", size, "Window size WxH")->capture_default_str();
  app.add_option("--screenshot", screenshot,
                 "Process --after frames, write the window to this image file and exit");
  app.add_option("--after", after, "Frames to process before --screenshot")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run(options, size, screenshot, after);
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "tandem-view: error: %s\n", e.what());
    if (!e.build_log().empty()) std::fprintf(stderr, "build log:\n%s\n", e.build_log().c_str());
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "tandem-view: error: %s failed with %s\n", e.what(),
                 tandem::cl_status_name(e.err()).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-view: error: %s\n", e.what());
  }
  return 1;
}
