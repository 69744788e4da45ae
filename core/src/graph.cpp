// Filter graphs: a cursor parser for ffmpeg's filtergraph syntax, the structural and pixel-format
// checks run before any frame, and a printer whose output parse() reads back to an equal graph.
//
// Links follow ffmpeg: a label joins exactly one output pad to exactly one input pad, and fanning
// out goes through a split filter. validate() holds C++-built graphs to the same rule, so that
// every valid graph has a text form.
#include "tandem/graph.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <utility>

#include "tandem/error.hpp"

namespace tandem {
namespace {

constexpr std::size_t kNoPosition = std::string::npos;

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

bool is_delimiter(char c) {
  return c == ':' || c == ',' || c == ';' || c == '[' || c == ']' || c == '=';
}

/// "1 input", "2 inputs", "no inputs".
std::string count_of(int n, std::string_view noun) {
  if (n == 0) return "no " + std::string(noun) + "s";
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string unknown_filter_message(std::string_view name) {
  std::string message = "unknown filter '" + std::string(name) + "'";
  const std::string closest = FilterRegistry::instance().closest(name);
  if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
  return message;
}

const FilterSpec& find_filter(std::string_view name) {
  const FilterSpec* spec = FilterRegistry::instance().find(name);
  if (!spec) throw Error(unknown_filter_message(name));
  return *spec;
}

int param_index(const FilterSpec& spec, std::string_view key) {
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    if (spec.params[i].name == key) return static_cast<int>(i);
  }
  return -1;
}

std::string unknown_option_message(const FilterSpec& spec, std::string_view key) {
  std::string message = "unknown option '" + std::string(key) + "'";
  if (spec.params.empty()) return message + ": " + spec.name + " takes no options";
  message += " for " + spec.name + " (valid options: ";
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    if (i > 0) message += ", ";
    message += spec.params[i].name;
  }
  return message + ")";
}

/// ParamSpec's own message names the value, the option and the accepted range.
std::string invalid_value_message(const FilterSpec& spec, std::string_view why) {
  return spec.name + ": " + std::string(why);
}

/// Throws `message` pointing at node `index`: a caret under its name when the graph was parsed,
/// the node's index otherwise.
[[noreturn]] void fail_at_node(const Graph& graph, int index, const std::string& message) {
  const GraphNode& node = graph.nodes()[static_cast<std::size_t>(index)];
  if (node.position != kNoPosition && node.position < graph.text().size()) {
    throw Error(error_at(graph.text(), node.position, node.spec->name.size(), message));
  }
  throw Error("node " + std::to_string(index) + ": " + message);
}

std::string describe_pad(PadRef pad) {
  if (pad.node == -1) return "pad " + std::to_string(pad.pad) + " of the graph's input";
  return "output " + std::to_string(pad.pad) + " of node " + std::to_string(pad.node);
}

bool pad_exists(const std::vector<GraphNode>& nodes, PadRef pad) {
  if (pad.node == -1) return pad.pad == 0;
  return pad.node >= 0 && pad.node < static_cast<int>(nodes.size()) && pad.pad >= 0 &&
         pad.pad < nodes[static_cast<std::size_t>(pad.node)].spec->outputs;
}

/// Pads, arity and one-reader-per-pad; cycles are topological_order()'s business.
void check_structure(const Graph& graph) {
  const std::vector<GraphNode>& nodes = graph.nodes();
  if (nodes.empty()) throw Error("empty graph");
  const int count = static_cast<int>(nodes.size());

  for (int i = 0; i < count; ++i) {
    const GraphNode& node = nodes[static_cast<std::size_t>(i)];
    const int declared = node.spec->input_count(node.params);
    const int connected = static_cast<int>(node.inputs.size());
    if (connected < declared) {
      fail_at_node(graph, i,
                   "unconnected input: " + node.spec->name + " takes " +
                       count_of(declared, "input") + " but " + std::to_string(connected) +
                       (connected == 1 ? " is" : " are") + " connected");
    }
    if (connected > declared) {
      fail_at_node(graph, i,
                   "too many inputs: " + node.spec->name + " takes " + count_of(declared, "input") +
                       " but " + std::to_string(connected) + " are connected");
    }
    for (int k = 0; k < connected; ++k) {
      const PadRef pad = node.inputs[static_cast<std::size_t>(k)];
      if (!pad_exists(nodes, pad)) {
        fail_at_node(graph, i,
                     "input " + std::to_string(k) + " reads " + describe_pad(pad) +
                         ", which does not exist");
      }
    }
  }
  const PadRef output = graph.output();
  if (output.node < 0 && output.pad == 0) {
    throw Error("the graph's output is not set: it is still the graph's input");
  }
  if (!pad_exists(nodes, output)) {
    throw Error("the graph's output is " + describe_pad(output) + ", which does not exist");
  }

  // reads[i][p]: how many inputs (and the result) read output p of node i.
  std::vector<std::vector<int>> reads(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) reads[i].assign(nodes[i].spec->outputs, 0);
  int source_reads = 0;
  for (int i = 0; i < count; ++i) {
    for (const PadRef& pad : nodes[static_cast<std::size_t>(i)].inputs) {
      if (pad.node >= 0) {
        ++reads[static_cast<std::size_t>(pad.node)][static_cast<std::size_t>(pad.pad)];
      } else if (++source_reads > 1) {
        fail_at_node(graph, i, "the graph's input is read twice; fan out with a split filter");
      }
    }
  }
  ++reads[static_cast<std::size_t>(output.node)][static_cast<std::size_t>(output.pad)];

  for (int i = 0; i < count; ++i) {
    const GraphNode& node = nodes[static_cast<std::size_t>(i)];
    const std::vector<int>& pads = reads[static_cast<std::size_t>(i)];
    const auto last_read = std::find_if(pads.rbegin(), pads.rend(), [](int n) { return n > 0; });
    if (last_read == pads.rend()) {
      fail_at_node(graph, i, "unconnected output: nothing reads the output of " + node.spec->name);
    }
    const int highest = static_cast<int>(pads.rend() - last_read) - 1;
    for (int p = 0; p <= highest; ++p) {
      const int n = pads[static_cast<std::size_t>(p)];
      if (n == 0) {
        // Labels number the used outputs from 0, so a gap has no text form.
        fail_at_node(graph, i,
                     "unconnected output: nothing reads output " + std::to_string(p) + " of " +
                         node.spec->name + ", but output " + std::to_string(highest) + " is read");
      }
      if (n > 1) {
        fail_at_node(graph, i,
                     "output " + std::to_string(p) + " of " + node.spec->name + " is read " +
                         std::to_string(n) + " times; fan out with a split filter");
      }
    }
  }
}

// ---- the parser ----

/// A word of the text: a filter name, an option key or value.
struct Token {
  std::string_view text;
  std::size_t pos = 0;
};

/// "[name]" as written: `pos` and `length` cover the brackets.
struct LabelToken {
  std::string name;
  std::size_t pos = 0;
  std::size_t length = 0;
};

/// An output pad no filter reads; the graph must have exactly one, its result.
struct OpenOutput {
  PadRef pad;
  std::size_t pos = 0;
  std::size_t length = 0;
  std::string what;  ///< "[b]", "the output of gaussian"
};

/// What one label joins. Readers and producers are kept with their place for error messages.
struct LabelLinks {
  struct End {
    PadRef pad;  ///< for a reader: node and input pad
    LabelToken token;
  };
  std::size_t first_seen = 0;
  std::optional<End> producer;
  std::optional<End> reader;
};

/// Recursive descent over
///   graph  := chain (';' chain)*
///   chain  := filter (',' filter)*
///   filter := label* name ('=' option (':' option)*)? label*
///   option := key '=' value | value
///   label  := '[' name ']'
/// with whitespace allowed between tokens. Labels are resolved once the whole text is read, so a
/// label may be read before the filter that writes it.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  /// Parses the whole text into nodes whose inputs are all connected.
  std::vector<GraphNode> parse_nodes() {
    skip_space();
    if (at_end()) fail(0, text_.size(), "empty graph");
    do {
      parse_chain();
    } while (accept(';'));
    skip_space();
    if (!at_end()) {
      const Token token = next_token();
      fail(token.pos, token.text.size(), "unexpected '" + std::string(token.text) + "'");
    }
    link_labels();
    return std::move(nodes_);
  }

  /// The one output pad nothing reads. Call after the graph is known to be acyclic, so that a
  /// cycle is reported as one rather than as a missing result.
  PadRef result() {
    std::sort(open_.begin(), open_.end(),
              [](const OpenOutput& a, const OpenOutput& b) { return a.pos < b.pos; });
    if (open_.size() == 1) return open_.front().pad;
    if (open_.empty()) fail(0, text_.size(), "the graph has no unconnected output for its result");
    const OpenOutput& extra = open_[0];
    fail(extra.pos, extra.length,
         "unconnected output: nothing reads " + extra.what + " (a graph has one result, and " +
             open_[1].what + " is unconnected too)");
  }

 private:
  [[noreturn]] void fail(std::size_t pos, std::size_t length, const std::string& message) const {
    throw Error(error_at(text_, pos, length, message));
  }

  bool at_end() const { return pos_ >= text_.size(); }

  void skip_space() {
    while (!at_end() && is_space(text_[pos_])) ++pos_;
  }

  /// Skips whitespace, then consumes `c` if it is next.
  bool accept(char c) {
    skip_space();
    if (at_end() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  /// A maximal run of characters that are neither whitespace nor delimiters.
  Token read_word() {
    skip_space();
    if (!at_end() && text_[pos_] == '\'') {
      // A quoted value ('a path: with spaces'), as FFmpeg's: what is between the quotes.
      const std::size_t open = pos_++;
      const std::size_t close = text_.find('\'', pos_);
      if (close == std::string_view::npos) fail(open, text_.size() - open, "unterminated quote");
      pos_ = close + 1;
      return {text_.substr(open + 1, close - open - 1), open + 1};
    }
    const std::size_t start = pos_;
    while (!at_end() && !is_space(text_[pos_]) && !is_delimiter(text_[pos_])) ++pos_;
    return {text_.substr(start, pos_ - start), start};
  }

  /// The token at the cursor, for error messages; does not consume it. Empty at the end.
  Token next_token() {
    skip_space();
    if (!at_end() && is_delimiter(text_[pos_])) return {text_.substr(pos_, 1), pos_};
    const std::size_t start = pos_;
    Token word = read_word();
    pos_ = start;
    return word;
  }

  [[noreturn]] void fail_expected(std::string_view what) {
    const Token token = next_token();
    fail(token.pos, token.text.size(),
         "expected " + std::string(what) + ", found " +
             (token.text.empty() ? std::string("the end of the graph")
                                 : "'" + std::string(token.text) + "'"));
  }

  /// Reads a label whose '[' was just consumed.
  LabelToken read_label() {
    const std::size_t open = pos_ - 1;
    skip_space();
    const std::size_t start = pos_;
    while (!at_end() && !is_space(text_[pos_]) && text_[pos_] != '[' && text_[pos_] != ']') ++pos_;
    const std::string_view name = text_.substr(start, pos_ - start);
    skip_space();
    if (at_end()) fail(open, text_.size() - open, "unterminated link label: missing ']'");
    if (text_[pos_] != ']') fail(pos_, 1, "expected ']' to close the link label");
    ++pos_;
    if (name.empty()) fail(open, pos_ - open, "empty link label");
    return {std::string(name), open, pos_ - open};
  }

  std::vector<LabelToken> read_labels() {
    std::vector<LabelToken> labels;
    while (accept('[')) labels.push_back(read_label());
    return labels;
  }

  void parse_chain() {
    std::optional<PadRef> carried;
    do {
      carried = parse_filter(carried);
    } while (carried);
  }

  /// Parses one filter reading `carried` (the previous filter's output) when it is not first in
  /// its chain. Returns the pad that feeds the next filter when a ',' follows.
  std::optional<PadRef> parse_filter(std::optional<PadRef> carried) {
    const std::vector<LabelToken> in_labels = read_labels();
    const Token name = read_word();
    if (name.text.empty()) fail_expected("a filter name");
    const FilterSpec* spec = FilterRegistry::instance().find(name.text);
    if (!spec) fail(name.pos, name.text.size(), unknown_filter_message(name.text));

    const int index = static_cast<int>(nodes_.size());
    GraphNode node;
    node.spec = spec;
    node.params = Params(spec->params);
    node.position = name.pos;
    if (accept('=')) parse_options(*spec, node.params);
    const std::vector<LabelToken> out_labels = read_labels();
    skip_space();
    const std::size_t comma = pos_;
    const bool continues = accept(',');

    connect_inputs(*spec, name, index, in_labels, carried, node);
    nodes_.push_back(std::move(node));
    return connect_outputs(*spec, name, index, out_labels, continues, comma);
  }

  /// ffmpeg's order: labelled inputs take the first pads, the previous filter's output the next.
  void connect_inputs(const FilterSpec& spec, Token name, int index,
                      const std::vector<LabelToken>& labels, std::optional<PadRef> carried,
                      GraphNode& node) {
    const int takes = spec.input_count(node.params);
    const std::size_t declared = static_cast<std::size_t>(takes);
    if (labels.size() > declared) {
      const LabelToken& extra = labels[declared];
      fail(extra.pos, extra.length,
           "too many input labels: " + spec.name + " takes " + count_of(takes, "input"));
    }
    const std::size_t connected = labels.size() + (carried ? 1 : 0);
    if (connected > declared) {
      const std::string labelled =
          labels.empty() ? ""
                         : count_of(static_cast<int>(labels.size()), "labelled input") + " and ";
      fail(name.pos, name.text.size(),
           "too many inputs: " + spec.name + " takes " + count_of(takes, "input") + " but gets " +
               labelled + "the output of the filter before it");
    }
    node.inputs.assign(declared, PadRef{});
    for (std::size_t k = 0; k < labels.size(); ++k) {
      add_reader(labels[k], PadRef{index, static_cast<int>(k)});
    }
    std::size_t first_open = labels.size();
    if (carried) node.inputs[first_open++] = *carried;
    if (first_open == 0 && declared > 0 && index == 0) {
      node.inputs[0] = PadRef{-1, 0};  // the unlabelled first input is the graph's input
      first_open = 1;
      unlabelled_source_ = true;
    }
    if (first_open < declared) {
      std::string message =
          "unconnected input: " + spec.name + " takes " + count_of(takes, "input") + " but " +
          (first_open == 0 ? std::string("none") : "only " + std::to_string(first_open)) +
          (first_open == 1 ? " is" : " are") + " connected";
      if (first_open == 0) message += " (only the first filter's unlabelled input is the source)";
      fail(name.pos, name.text.size(), message);
    }
  }

  std::optional<PadRef> connect_outputs(const FilterSpec& spec, Token name, int index,
                                        const std::vector<LabelToken>& labels, bool continues,
                                        std::size_t comma) {
    const std::size_t declared = static_cast<std::size_t>(spec.outputs);
    if (labels.size() > declared) {
      const LabelToken& extra = labels[declared];
      fail(extra.pos, extra.length,
           "too many output labels: " + spec.name + " has " + count_of(spec.outputs, "output"));
    }
    for (std::size_t k = 0; k < labels.size(); ++k) {
      add_producer(labels[k], PadRef{index, static_cast<int>(k)});
    }
    // Labels take the first outputs; the next unlabelled one feeds the chain or is left open.
    const PadRef next{index, static_cast<int>(labels.size())};
    if (continues) {
      if (labels.size() == declared) {
        fail(comma, 1,
             "nothing feeds the filter after ',': every output of " + spec.name + " is labelled");
      }
      return next;
    }
    if (labels.empty() && declared > 0) {
      open_.push_back({next, name.pos, name.text.size(), "the output of " + spec.name});
    }
    return std::nullopt;
  }

  void parse_options(const FilterSpec& spec, Params& params) {
    std::vector<bool> given(spec.params.size(), false);
    std::size_t next_positional = 0;
    bool named_seen = false;
    do {
      const Token first = read_word();
      if (first.text.empty()) fail_expected("an option");
      Token key = first;
      Token value = first;
      int index = -1;
      if (accept('=')) {
        value = read_word();
        if (value.text.empty()) fail_expected("a value for '" + std::string(key.text) + "'");
        index = param_index(spec, key.text);
        if (index < 0) fail(key.pos, key.text.size(), unknown_option_message(spec, key.text));
        named_seen = true;
      } else {
        // ffmpeg's positional values fill the table in order until the first key=value.
        if (spec.params.empty()) {
          fail(first.pos, first.text.size(), spec.name + " takes no options");
        }
        if (named_seen) {
          fail(first.pos, first.text.size(),
               "value '" + std::string(first.text) +
                   "' needs a name: after a key=value option, "
                   "every option is key=value");
        }
        if (next_positional >= spec.params.size()) {
          fail(first.pos, first.text.size(),
               "too many values: " + spec.name + " takes " +
                   count_of(static_cast<int>(spec.params.size()), "option"));
        }
        index = static_cast<int>(next_positional++);
      }
      const ParamSpec& param = spec.params[static_cast<std::size_t>(index)];
      if (given[static_cast<std::size_t>(index)]) {
        fail(key.pos, value.pos + value.text.size() - key.pos,
             "option '" + param.name + "' of " + spec.name + " is given twice");
      }
      given[static_cast<std::size_t>(index)] = true;
      try {
        params.set_text(param.name, value.text);
      } catch (const Error& e) {
        fail(value.pos, value.text.size(), invalid_value_message(spec, e.what()));
      }
    } while (accept(':'));
  }

  LabelLinks& links_of(const LabelToken& label) {
    auto [it, inserted] = labels_.try_emplace(label.name);
    if (inserted) it->second.first_seen = label.pos;
    return it->second;
  }

  void add_reader(const LabelToken& label, PadRef input) {
    LabelLinks& links = links_of(label);
    if (links.reader) {
      fail(label.pos, label.length, "link label [" + label.name + "] used twice as an input");
    }
    links.reader = LabelLinks::End{input, label};
  }

  void add_producer(const LabelToken& label, PadRef output) {
    LabelLinks& links = links_of(label);
    if (links.producer) {
      fail(label.pos, label.length, "link label [" + label.name + "] used twice as an output");
    }
    links.producer = LabelLinks::End{output, label};
  }

  /// Joins readers to producers. The one label nothing writes is the graph's input; labels
  /// nothing reads are open outputs.
  void link_labels() {
    std::vector<const LabelLinks*> in_text_order;
    for (const auto& [name, links] : labels_) in_text_order.push_back(&links);
    std::sort(
        in_text_order.begin(), in_text_order.end(),
        [](const LabelLinks* a, const LabelLinks* b) { return a->first_seen < b->first_seen; });

    std::optional<std::string> source_label;
    for (const LabelLinks* links : in_text_order) {
      if (links->producer && links->reader) {
        input_of(links->reader->pad) = links->producer->pad;
      } else if (links->producer) {
        const LabelToken& token = links->producer->token;
        open_.push_back({links->producer->pad, token.pos, token.length, "[" + token.name + "]"});
      } else {
        const LabelToken& token = links->reader->token;
        if (unlabelled_source_ || source_label) {
          const std::string source =
              source_label ? "[" + *source_label + "]" : std::string("the first filter's input");
          fail(token.pos, token.length,
               "unknown link label [" + token.name +
                   "]: no filter outputs it, and the graph's "
                   "input is already " +
                   source);
        }
        source_label = token.name;
        input_of(links->reader->pad) = PadRef{-1, 0};
      }
    }
  }

  PadRef& input_of(PadRef input) {
    return nodes_[static_cast<std::size_t>(input.node)].inputs[static_cast<std::size_t>(input.pad)];
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<GraphNode> nodes_;
  std::map<std::string, LabelLinks, std::less<>> labels_;
  std::vector<OpenOutput> open_;
  bool unlabelled_source_ = false;
};

// ---- the printer ----

std::string format_options(const GraphNode& node) {
  std::string text;
  const std::vector<ParamSpec>& specs = node.spec->params;
  for (std::size_t i = 0; i < specs.size() && i < node.params.values().size(); ++i) {
    if (node.params.is_default(i)) continue;  // parse() starts from the defaults
    text += text.empty() ? "=" : ":";
    text += specs[i].name + "=" + node.params.format(i);
  }
  return text;
}

}  // namespace

std::string error_at(std::string_view text, std::size_t position, std::size_t length,
                     std::string_view message) {
  position = std::min(position, text.size());
  // Only the line holding the position is shown, so that the caret lines up in multi-line text.
  const std::size_t line_start =
      position == 0 ? 0 : text.rfind('\n', position - 1) + 1;  // npos + 1 == 0
  const std::size_t line_end = std::min(text.find('\n', position), text.size());
  std::string line(text.substr(line_start, line_end - line_start));
  std::replace_if(line.begin(), line.end(), is_space, ' ');  // tabs would shift the caret

  const std::size_t column = position - line_start;
  const std::size_t marked = std::max<std::size_t>(1, std::min(length, line_end - position));
  std::string result(message);
  result += "\n  " + line + "\n  " + std::string(column, ' ') + "^" + std::string(marked - 1, '~');
  return result;
}

Graph Graph::parse(std::string_view text) {
  Graph graph;
  graph.text_ = std::string(text);
  Parser parser(graph.text_);
  graph.nodes_ = parser.parse_nodes();
  graph.topological_order();  // reports cycles with a caret
  graph.output_ = parser.result();
  check_structure(graph);  // the parser's checks imply these; kept as a guard
  return graph;
}

void Graph::set_param(std::size_t node, std::string_view name, std::string_view text) {
  if (node >= nodes_.size()) {
    throw Error("the graph has no node " + std::to_string(node) + " (it has " +
                std::to_string(nodes_.size()) + ")");
  }
  nodes_[node].params.set_text(name, text);
}

int Graph::add(std::string_view name, const Params& params, std::vector<PadRef> inputs) {
  const FilterSpec& spec = find_filter(name);
  GraphNode node;
  node.spec = &spec;
  node.params = Params(spec.params);
  // Params{} means the defaults; anything else must follow this filter's table.
  if (!params.specs().empty() || !params.values().empty()) {
    if (params.specs().size() != spec.params.size()) {
      throw Error("parameters for " + spec.name + " must follow its table of " +
                  count_of(static_cast<int>(spec.params.size()), "option") + ", got " +
                  std::to_string(params.specs().size()));
    }
    for (std::size_t i = 0; i < spec.params.size(); ++i) {
      const std::string& key = spec.params[i].name;
      if (params.specs()[i].name != key) {
        throw Error("parameters for " + spec.name + " must follow its table: option " +
                    std::to_string(i) + " is '" + key + "', not '" + params.specs()[i].name + "'");
      }
      try {
        if (spec.params[i].textual()) {
          node.params.set_text(key, params.text(key));
        } else {
          node.params.set(key, params.values()[i]);
        }
      } catch (const Error& e) {
        throw Error(invalid_value_message(spec, e.what()));
      }
    }
  }
  for (const PadRef& pad : inputs) {
    if (pad.node < -1 || pad.pad < 0) {
      throw Error("input of " + spec.name + " reads " + describe_pad(pad) + ", which cannot exist");
    }
  }
  node.inputs = std::move(inputs);
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

int Graph::add(std::string_view name, std::vector<PadRef> inputs,
               std::vector<std::pair<std::string, std::string>> options) {
  const FilterSpec& spec = find_filter(name);
  Params params(spec.params);
  for (const auto& [key, value] : options) {
    if (param_index(spec, key) < 0) throw Error(unknown_option_message(spec, key));
    try {
      params.set_text(key, value);
    } catch (const Error& e) {
      throw Error(invalid_value_message(spec, e.what()));
    }
  }
  return add(name, params, std::move(inputs));
}

std::string Graph::to_string() const {
  // Printed in node order, so parse() numbers the nodes the same. A node continues the previous
  // one's chain (',') when it reads that node's highest used output with its last input pad,
  // exactly the pad the parser feeds from a ','. Every other link gets a label.
  const int count = static_cast<int>(nodes_.size());
  std::vector<int> highest(nodes_.size(), -1);
  std::map<std::pair<int, int>, int> readers;
  auto note_read = [&](PadRef pad) {
    ++readers[{pad.node, pad.pad}];
    if (pad.node >= 0 && pad.node < count) {
      int& h = highest[static_cast<std::size_t>(pad.node)];
      h = std::max(h, pad.pad);
    }
  };
  for (const GraphNode& node : nodes_) {
    for (const PadRef& pad : node.inputs) note_read(pad);
  }
  if (count > 0) note_read(output_);

  std::vector<bool> carries(nodes_.size(), false);  // node i feeds node i + 1 through ','
  for (int i = 0; i + 1 < count; ++i) {
    const GraphNode& next = nodes_[static_cast<std::size_t>(i) + 1];
    const PadRef pad{i, highest[static_cast<std::size_t>(i)]};
    carries[static_cast<std::size_t>(i)] = pad.pad >= 0 && !next.inputs.empty() &&
                                           next.inputs.back() == pad && pad != output_ &&
                                           readers[{pad.node, pad.pad}] == 1;
  }

  auto label = [&](PadRef pad) {
    if (pad == output_) return std::string("[out]");
    if (pad.node < 0) return std::string("[in]");
    std::string name = "[n" + std::to_string(pad.node);
    if (pad.pad > 0) name += "_" + std::to_string(pad.pad);
    return name + "]";
  };

  std::string text;
  for (int i = 0; i < count; ++i) {
    const std::size_t at = static_cast<std::size_t>(i);
    const GraphNode& node = nodes_[at];
    const bool carried_in = i > 0 && carries[at - 1];
    if (i > 0) text += carried_in ? "," : ";";

    // The first filter's only input, when it is the source, may stay unlabelled.
    const bool unlabelled_source = i == 0 && node.inputs.size() == 1 &&
                                   node.inputs[0] == PadRef{-1, 0} && readers[{-1, 0}] == 1;
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      if (carried_in && k + 1 == node.inputs.size()) continue;
      if (unlabelled_source) continue;
      text += label(node.inputs[k]);
    }
    text += node.spec->name + format_options(node);

    // The last filter's only output, when it is the result, may stay unlabelled.
    const bool unlabelled_result = i == count - 1 && highest[at] == 0 && output_ == PadRef{i, 0};
    for (int p = 0; p <= highest[at]; ++p) {
      if (carries[at] && p == highest[at]) continue;
      if (unlabelled_result) continue;
      text += label(PadRef{i, p});
    }
  }
  return text;
}

std::vector<int> Graph::topological_order() const {
  // Kahn's algorithm, taking the lowest ready index first so that chains keep their order.
  const int count = static_cast<int>(nodes_.size());
  std::vector<int> waiting(nodes_.size(), 0);  // inputs read from nodes not yet ordered
  std::vector<std::vector<int>> readers(nodes_.size());
  for (int i = 0; i < count; ++i) {
    for (const PadRef& pad : nodes_[static_cast<std::size_t>(i)].inputs) {
      if (pad.node < 0) continue;
      if (pad.node >= count) {
        fail_at_node(*this, i, "an input reads " + describe_pad(pad) + ", which does not exist");
      }
      ++waiting[static_cast<std::size_t>(i)];
      readers[static_cast<std::size_t>(pad.node)].push_back(i);
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < count; ++i) {
    if (waiting[static_cast<std::size_t>(i)] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int reader : readers[static_cast<std::size_t>(i)]) {
      if (--waiting[static_cast<std::size_t>(reader)] == 0) ready.push(reader);
    }
  }
  if (static_cast<int>(order.size()) == count) return order;

  // Every node left waits on another one left; walking inputs backwards must come round to a
  // node already seen, which lies on a cycle.
  int start = 0;
  while (waiting[static_cast<std::size_t>(start)] == 0) ++start;
  std::vector<int> walk;
  std::vector<int> seen_at(nodes_.size(), -1);
  int at = start;
  while (seen_at[static_cast<std::size_t>(at)] < 0) {
    seen_at[static_cast<std::size_t>(at)] = static_cast<int>(walk.size());
    walk.push_back(at);
    for (const PadRef& pad : nodes_[static_cast<std::size_t>(at)].inputs) {
      if (pad.node >= 0 && waiting[static_cast<std::size_t>(pad.node)] > 0) {
        at = pad.node;
        break;
      }
    }
  }
  std::vector<int> cycle(walk.begin() + seen_at[static_cast<std::size_t>(at)], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // data flow order
  // Blame the node written first, and name the cycle from there.
  const auto first = std::min_element(cycle.begin(), cycle.end(), [&](int a, int b) {
    const std::size_t pa = nodes_[static_cast<std::size_t>(a)].position;
    const std::size_t pb = nodes_[static_cast<std::size_t>(b)].position;
    return pa != pb ? pa < pb : a < b;
  });
  std::rotate(cycle.begin(), first, cycle.end());
  std::string message = "cycle: ";
  for (int node : cycle) message += nodes_[static_cast<std::size_t>(node)].spec->name + " -> ";
  message += nodes_[static_cast<std::size_t>(cycle.front())].spec->name;
  fail_at_node(*this, cycle.front(), message);
}

PixelFormat Graph::validate(PixelFormat input) const {
  check_structure(*this);
  std::vector<PixelFormat> formats(nodes_.size(), input);
  for (int i : topological_order()) {
    const GraphNode& node = nodes_[static_cast<std::size_t>(i)];
    std::vector<PixelFormat> inputs;
    for (const PadRef& pad : node.inputs) {
      inputs.push_back(pad.node < 0 ? input : formats[static_cast<std::size_t>(pad.node)]);
    }
    try {
      const std::unique_ptr<Filter> filter =
          node.spec->make ? node.spec->make(node.params) : nullptr;
      if (!filter) throw Error(node.spec->name + " cannot be instantiated");
      formats[static_cast<std::size_t>(i)] = filter->output_format(inputs);
    } catch (const Error& e) {
      fail_at_node(*this, i, e.what());
    }
  }
  return output_.node < 0 ? input : formats[static_cast<std::size_t>(output_.node)];
}

std::vector<Size> Graph::node_sizes(Size input) const {
  check_structure(*this);
  std::vector<Size> sizes(nodes_.size(), input);
  for (int i : topological_order()) {
    const GraphNode& node = nodes_[static_cast<std::size_t>(i)];
    std::vector<Size> inputs;
    for (const PadRef& pad : node.inputs) {
      inputs.push_back(pad.node < 0 ? input : sizes[static_cast<std::size_t>(pad.node)]);
    }
    try {
      const std::unique_ptr<Filter> filter =
          node.spec->make ? node.spec->make(node.params) : nullptr;
      if (!filter) throw Error(node.spec->name + " cannot be instantiated");
      const Size out = filter->output_size(inputs);
      if (out.width <= 0 || out.height <= 0) {
        throw Error("makes a " + tandem::to_string(out) + " frame of a " +
                    tandem::to_string(inputs.front()) + " input");
      }
      sizes[static_cast<std::size_t>(i)] = out;
    } catch (const Error& e) {
      fail_at_node(*this, i, node.spec->name + ": " + e.what());
    }
  }
  return sizes;
}

Size Graph::output_size(Size input) const {
  const std::vector<Size> sizes = node_sizes(input);
  return output_.node < 0 ? input : sizes[static_cast<std::size_t>(output_.node)];
}

}  // namespace tandem
