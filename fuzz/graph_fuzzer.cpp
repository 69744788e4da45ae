// Fuzz target: the filter graph parser (tandem::Graph::parse). A graph that parses must print
// (to_string) as text that parses back to the same graph, and validate for both pixel formats
// without anything but tandem::Error; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tandem/error.hpp"
#include "tandem/graph.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "graph fuzzer: %s\n  first:  %s\n  second: %s\n", what, a.c_str(),
               b.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tandem::Graph graph;
  try {
    graph = tandem::Graph::parse(text);
  } catch (const tandem::Error&) {
    return 0;  // refused with a message: what bad text should get
  }
  // The printed form reads back as the same graph (Graph's documented round trip).
  const std::string printed = graph.to_string();
  tandem::Graph again;
  try {
    again = tandem::Graph::parse(printed);
  } catch (const tandem::Error& e) {
    fail("the printed graph does not parse", printed, e.what());
  }
  if (again.to_string() != printed)
    fail("the printed graph reads back differently", printed, again.to_string());
  if (again.nodes().size() != graph.nodes().size() || !(again.output() == graph.output())) {
    fail("the printed graph has other nodes or another output", printed, again.to_string());
  }
  for (const tandem::PixelFormat format :
       {tandem::PixelFormat::rgba8, tandem::PixelFormat::rgba32f}) {
    try {
      graph.validate(format);
      graph.topological_order();
    } catch (const tandem::Error&) {
    }
  }
  return 0;
}
