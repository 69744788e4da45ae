#pragma once
// Filter graphs: ffmpeg's filtergraph syntax, or built in C++; validated before any frame runs.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/filter.hpp"

namespace tandem {

/// An output pad: `node` -1 is the graph's source (its input frame).
struct PadRef {
  int node = -1;
  int pad = 0;
  bool operator==(const PadRef&) const = default;
};

struct GraphNode {
  const FilterSpec* spec = nullptr;
  Params params;
  std::vector<PadRef> inputs;
  /// Byte offset of the filter's name in the parsed string (npos when built in C++).
  std::size_t position = std::string::npos;
};

class Graph {
 public:
  Graph() = default;
  /// Parses ffmpeg's filtergraph syntax: "gaussian=sigma=2,saturation=1.3" or labelled graphs
  /// "[in]split[a][b];[a]gaussian=8[g];[b][g]blend=mode=screen[out]". An unlabelled first input
  /// is the source, an unlabelled last output the result. Throws Error whose message names the
  /// place in the string with a caret under it.
  static Graph parse(std::string_view text);

  /// Adds a node of filter `name` with `params` reading `inputs`; returns its index.
  int add(std::string_view name, const Params& params, std::vector<PadRef> inputs);
  /// Adds a node with default parameters set from "key=value" pairs.
  int add(std::string_view name, std::vector<PadRef> inputs,
          std::vector<std::pair<std::string, std::string>> options = {});
  void set_output(PadRef output) { output_ = output; }
  /// Sets parameter `name` of node `node` from `text`, checked as parsing checks it; throws
  /// Error for an unknown node or parameter or a value out of range.
  void set_param(std::size_t node, std::string_view name, std::string_view text);

  const std::vector<GraphNode>& nodes() const { return nodes_; }
  PadRef output() const { return output_; }
  /// The source string when parsed, empty when built in C++.
  const std::string& text() const { return text_; }

  /// Prints the graph in the syntax parse() reads; parse(to_string()) gives an equal graph.
  std::string to_string() const;
  /// Checks pads, cycles, and pixel formats for an input of `input`; returns the output format.
  PixelFormat validate(PixelFormat input) const;
  /// Every node's output size (by node index) for a source of `input`'s size; throws Error
  /// naming the node and the sizes where a node cannot take its inputs' sizes or would make an
  /// empty frame.
  std::vector<Size> node_sizes(Size input) const;
  /// The graph's output size for a source of `input`'s size (see node_sizes()).
  Size output_size(Size input) const;
  /// Nodes in an order where every node comes after the nodes it reads.
  std::vector<int> topological_order() const;

 private:
  std::vector<GraphNode> nodes_;
  PadRef output_{};
  std::string text_;
};

/// An error message pointing into `text` at `position`: "message\n  text\n  ^~~~".
std::string error_at(std::string_view text, std::size_t position, std::size_t length,
                     std::string_view message);

}  // namespace tandem
