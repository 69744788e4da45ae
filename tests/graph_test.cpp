// Filter graphs: parsing ffmpeg's syntax, printing it back, and the checks run before any frame.
// Uses test-local filters ("t_*") so that it depends on no other filter's work, and no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/graph.hpp"

namespace tandem {

// Readable PadRefs in failure messages.
void PrintTo(const PadRef& pad, std::ostream* out) {
  *out << "{" << pad.node << ", " << pad.pad << "}";
}

namespace {

enum class FormatRule {
  same,      ///< all inputs must share a format, which the output keeps
  to_float,  ///< always rgba32f, whatever comes in
};

class TestFilter final : public Filter {
 public:
  explicit TestFilter(FormatRule rule) : rule_(rule) {}

  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (rule_ == FormatRule::to_float) return PixelFormat::rgba32f;
    for (PixelFormat format : inputs) {
      if (format != inputs.front()) throw Error("inputs must share one pixel format");
    }
    return inputs.front();
  }
  void reference(std::span<const Frame* const>, Frame&) const override {}

 private:
  FormatRule rule_;
};

FilterSpec test_filter(std::string name, std::vector<ParamSpec> params, int inputs, int outputs,
                       FormatRule rule = FormatRule::same) {
  FilterSpec spec;
  spec.name = std::move(name);
  spec.help = "a graph_test filter";
  spec.params = std::move(params);
  spec.inputs = inputs;
  spec.outputs = outputs;
  spec.make = [rule](const Params&) { return std::make_unique<TestFilter>(rule); };
  return spec;
}

void register_test_filters() {
  static const bool registered = [] {
    FilterRegistry& registry = FilterRegistry::instance();
    registry.add(test_filter(
        "t_blur",
        {{.name = "sigma", .default_value = 1, .min = 0, .max = 64, .min_exclusive = true},
         {.name = "radius", .type = ParamType::integer, .default_value = 3, .min = 0, .max = 32}},
        1, 1));
    registry.add(test_filter("t_tone",
                             {{.name = "op",
                               .type = ParamType::choice,
                               .default_value = 0,
                               .choices = {"reinhard", "aces", "linear"}},
                              {.name = "exposure", .default_value = 0, .min = -8, .max = 8}},
                             1, 1, FormatRule::to_float));
    registry.add(test_filter("t_blend",
                             {{.name = "mode",
                               .type = ParamType::choice,
                               .default_value = 0,
                               .choices = {"normal", "screen", "multiply"}},
                              {.name = "opacity", .default_value = 1, .min = 0, .max = 1}},
                             2, 1));
    registry.add(test_filter("t_split", {}, 1, 2));
    registry.add(test_filter("t_copy", {}, 1, 1));
    registry.add(test_filter("t_gen", {}, 0, 1, FormatRule::to_float));
    return true;
  }();
  (void)registered;
}

const FilterSpec* spec_of(std::string_view name) {
  return FilterRegistry::instance().find(name);
}

/// An Error thrown by parse(), split into its three lines.
struct ParseFailure {
  std::string message;  ///< first line
  std::string shown;    ///< the text line, without its indent
  std::size_t column = 0;
  std::size_t length = 0;  ///< '^' and the '~' after it
};

ParseFailure parse_failure(std::string_view text) {
  std::string what;
  try {
    Graph::parse(text);
    ADD_FAILURE() << "parse accepted \"" << text << "\"";
    return {};
  } catch (const Error& e) {
    what = e.what();
  }
  ParseFailure failure;
  const std::size_t first = what.find('\n');
  const std::size_t second = what.find('\n', first + 1);
  if (first == std::string::npos || second == std::string::npos ||
      what.find('\n', second + 1) != std::string::npos) {
    ADD_FAILURE() << "not three lines: \"" << what << "\"";
    return {};
  }
  failure.message = what.substr(0, first);
  const std::string shown = what.substr(first + 1, second - first - 1);
  const std::string carets = what.substr(second + 1);
  EXPECT_EQ(shown.rfind("  ", 0), 0u) << what;
  EXPECT_EQ(carets.rfind("  ", 0), 0u) << what;
  failure.shown = shown.substr(std::min<std::size_t>(2, shown.size()));
  const std::size_t caret = carets.find('^');
  EXPECT_NE(caret, std::string::npos) << what;
  EXPECT_EQ(carets.find_first_not_of(' '), caret) << what;
  EXPECT_EQ(carets.find_first_not_of('~', caret + 1), std::string::npos) << what;
  failure.column = caret - 2;
  failure.length = carets.size() - caret;
  return failure;
}

/// Byte offset of the `nth` occurrence of `token` in `text`.
std::size_t offset_of(std::string_view text, std::string_view token, int nth = 0) {
  std::size_t at = text.find(token);
  for (int i = 0; i < nth && at != std::string_view::npos; ++i) at = text.find(token, at + 1);
  EXPECT_NE(at, std::string_view::npos) << "'" << token << "' not in \"" << text << "\"";
  return at;
}

/// Expects parse(text) to fail with `message`, the caret under the `nth` `token` of `text`.
void expect_parse_error(std::string_view text, std::string_view message, std::string_view token,
                        int nth = 0) {
  SCOPED_TRACE("parsing \"" + std::string(text) + "\"");
  const ParseFailure failure = parse_failure(text);
  EXPECT_EQ(failure.message, message);
  EXPECT_EQ(failure.shown, text);
  // An empty token stands for the end of the text.
  EXPECT_EQ(failure.column, token.empty() ? text.size() : offset_of(text, token, nth));
  EXPECT_EQ(failure.length, std::max<std::size_t>(1, token.size()));
}

std::string validate_error(const Graph& graph, PixelFormat input) {
  try {
    graph.validate(input);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "validate accepted \"" << graph.to_string() << "\"";
  return {};
}

/// Every digit of the values, so that a failed comparison shows what differs.
std::string exact(const Params& params) {
  std::ostringstream out;
  out.precision(17);
  for (double value : params.values()) out << value << " ";
  return out.str();
}

void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (std::size_t i = 0; i < a.nodes().size(); ++i) {
    SCOPED_TRACE("node " + std::to_string(i));
    const GraphNode& x = a.nodes()[i];
    const GraphNode& y = b.nodes()[i];
    EXPECT_EQ(x.spec, y.spec);
    EXPECT_TRUE(x.params == y.params) << exact(x.params) << " vs " << exact(y.params);
    EXPECT_EQ(x.inputs, y.inputs);
  }
  EXPECT_EQ(a.output(), b.output());
}

/// parse(to_string()) gives an equal graph, and printing that again gives the same text.
void expect_round_trip(const Graph& graph) {
  const std::string printed = graph.to_string();
  SCOPED_TRACE("printed as \"" + printed + "\"");
  const Graph back = Graph::parse(printed);
  expect_same_graph(graph, back);
  EXPECT_EQ(back.to_string(), printed);
  EXPECT_EQ(back.validate(PixelFormat::rgba32f), graph.validate(PixelFormat::rgba32f));
}

class GraphTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { register_test_filters(); }
};

// ---- error_at ----

TEST(ErrorAt, MarksTheTokenWithCaretAndTildes) {
  EXPECT_EQ(error_at("abc def", 4, 3, "bad"), "bad\n  abc def\n      ^~~");
  EXPECT_EQ(error_at("abc def", 0, 1, "bad"), "bad\n  abc def\n  ^");
}

TEST(ErrorAt, ShowsOneCaretForEmptyTokensAndAtTheEnd) {
  EXPECT_EQ(error_at("abc", 1, 0, "m"), "m\n  abc\n   ^");
  EXPECT_EQ(error_at("abc", 3, 0, "m"), "m\n  abc\n     ^");
  EXPECT_EQ(error_at("abc", 3, 5, "m"), "m\n  abc\n     ^");
  EXPECT_EQ(error_at("ab", 10, 1, "m"), "m\n  ab\n    ^");
  EXPECT_EQ(error_at("", 0, 0, "empty graph"), "empty graph\n  \n  ^");
}

TEST(ErrorAt, ShowsOnlyTheLineHoldingThePosition) {
  EXPECT_EQ(error_at("abc\ndef", 5, 1, "m"), "m\n  def\n   ^");
  EXPECT_EQ(error_at("abc\ndef", 1, 10, "m"), "m\n  abc\n   ^~");  // clipped at the line end
  EXPECT_EQ(error_at("abc\ndef", 3, 1, "m"), "m\n  abc\n     ^");  // the newline itself
}

TEST(ErrorAt, TurnsTabsIntoSpacesSoTheCaretLinesUp) {
  EXPECT_EQ(error_at("a\tb", 2, 1, "m"), "m\n  a b\n    ^");
}

// ---- parsing ----

TEST_F(GraphTest, ParsesAChainWithNamedOptions) {
  const std::string text = "t_blur=sigma=2:radius=5,t_tone=op=aces:exposure=-1.5";
  const Graph graph = Graph::parse(text);
  ASSERT_EQ(graph.nodes().size(), 2u);
  const GraphNode& blur = graph.nodes()[0];
  const GraphNode& tone = graph.nodes()[1];
  EXPECT_EQ(blur.spec, spec_of("t_blur"));
  EXPECT_EQ(blur.params["sigma"], 2);
  EXPECT_EQ(blur.params["radius"], 5);
  EXPECT_EQ(blur.inputs, (std::vector<PadRef>{{-1, 0}}));
  EXPECT_EQ(blur.position, 0u);
  EXPECT_EQ(tone.spec, spec_of("t_tone"));
  EXPECT_EQ(tone.params["op"], 1);
  EXPECT_EQ(tone.params["exposure"], -1.5);
  EXPECT_EQ(tone.inputs, (std::vector<PadRef>{{0, 0}}));
  EXPECT_EQ(tone.position, text.find("t_tone"));
  EXPECT_EQ(graph.output(), (PadRef{1, 0}));
  EXPECT_EQ(graph.text(), text);
}

TEST_F(GraphTest, PositionalValuesFillTheTableInOrder) {
  const Graph both = Graph::parse("t_blur=2.5:7");
  EXPECT_EQ(both.nodes()[0].params["sigma"], 2.5);
  EXPECT_EQ(both.nodes()[0].params["radius"], 7);

  const Graph mixed = Graph::parse("t_blur=2.5:radius=7");
  EXPECT_EQ(mixed.nodes()[0].params["sigma"], 2.5);
  EXPECT_EQ(mixed.nodes()[0].params["radius"], 7);

  const Graph named = Graph::parse("t_blur=radius=7");
  EXPECT_EQ(named.nodes()[0].params["sigma"], 1);  // the default
  EXPECT_EQ(named.nodes()[0].params["radius"], 7);

  const Graph choice = Graph::parse("t_tone=linear:2");
  EXPECT_EQ(choice.nodes()[0].params["op"], 2);
  EXPECT_EQ(choice.nodes()[0].params["exposure"], 2);

  // The library's own saturation filter, as ffmpeg users write it.
  const Graph saturation = Graph::parse("saturation=1.3");
  ASSERT_EQ(saturation.nodes().size(), 1u);
  EXPECT_EQ(saturation.nodes()[0].params["amount"], 1.3);
}

TEST_F(GraphTest, ToleratesWhitespaceAroundTokens) {
  const Graph compact =
      Graph::parse("[in]t_split[a][b];[a]t_blur=sigma=3[g];[b][g]t_blend=screen:0.5");
  const std::string spaced =
      "\n  [in] t_split [a] [ b ] ;\n\t[a] t_blur = sigma = 3 [g] ; [b][g] t_blend = screen "
      ": 0.5 \n";
  const Graph graph = Graph::parse(spaced);
  expect_same_graph(compact, graph);
  EXPECT_EQ(graph.nodes()[0].position, spaced.find("t_split"));
  EXPECT_EQ(graph.nodes()[1].position, spaced.find("t_blur"));
  EXPECT_EQ(graph.nodes()[2].position, spaced.find("t_blend"));
}

TEST_F(GraphTest, ParsesLabelledGraphs) {
  const Graph graph = Graph::parse(
      "[in]t_split[a][b];[a]t_blur=sigma=8[g];[b][g]t_blend=mode=screen:opacity=0.5[out]");
  ASSERT_EQ(graph.nodes().size(), 3u);
  EXPECT_EQ(graph.nodes()[0].spec, spec_of("t_split"));
  EXPECT_EQ(graph.nodes()[0].inputs, (std::vector<PadRef>{{-1, 0}}));
  EXPECT_EQ(graph.nodes()[1].spec, spec_of("t_blur"));
  EXPECT_EQ(graph.nodes()[1].params["sigma"], 8);
  EXPECT_EQ(graph.nodes()[1].inputs, (std::vector<PadRef>{{0, 0}}));
  EXPECT_EQ(graph.nodes()[2].spec, spec_of("t_blend"));
  EXPECT_EQ(graph.nodes()[2].params["mode"], 1);
  EXPECT_EQ(graph.nodes()[2].params["opacity"], 0.5);
  EXPECT_EQ(graph.nodes()[2].inputs, (std::vector<PadRef>{{0, 1}, {1, 0}}));
  EXPECT_EQ(graph.output(), (PadRef{2, 0}));
}

TEST_F(GraphTest, AnyLabelNothingWritesIsTheSource) {
  const Graph graph = Graph::parse("[frame]t_blur");
  EXPECT_EQ(graph.nodes()[0].inputs, (std::vector<PadRef>{{-1, 0}}));
  EXPECT_EQ(graph.output(), (PadRef{0, 0}));
}

TEST_F(GraphTest, LabelsMayBeReadBeforeTheyAreWritten) {
  const Graph graph = Graph::parse("[x][y]t_blend;[in]t_split[x][y]");
  EXPECT_EQ(graph.nodes()[0].inputs, (std::vector<PadRef>{{1, 0}, {1, 1}}));
  EXPECT_EQ(graph.nodes()[1].inputs, (std::vector<PadRef>{{-1, 0}}));
  EXPECT_EQ(graph.output(), (PadRef{0, 0}));  // the unlabelled output, though not the last
  EXPECT_EQ(graph.topological_order(), (std::vector<int>{1, 0}));
}

TEST_F(GraphTest, ChainsCarryTheFirstUnlabelledOutputAfterLabelledInputs) {
  // ffmpeg's order: labels take a filter's first pads; the chain feeds the next one.
  const Graph graph = Graph::parse("t_split[a],t_blur,[a]t_blend");
  EXPECT_EQ(graph.nodes()[1].inputs, (std::vector<PadRef>{{0, 1}}));
  EXPECT_EQ(graph.nodes()[2].inputs, (std::vector<PadRef>{{0, 0}, {1, 0}}));
  EXPECT_EQ(graph.output(), (PadRef{2, 0}));

  const Graph unlabelled = Graph::parse("t_split,t_blur");  // a split may use one output
  EXPECT_EQ(unlabelled.nodes()[1].inputs, (std::vector<PadRef>{{0, 0}}));
}

TEST_F(GraphTest, TheResultMayBeALabelOrAnUnlabelledOutput) {
  EXPECT_EQ(Graph::parse("[in]t_split[a][b];[a]t_blur[c];[c][b]t_blend[out]").output(),
            (PadRef{2, 0}));
  EXPECT_EQ(Graph::parse("[in]t_split[a][b];[a]t_blur[c];[c]t_copy,[b]t_blend").output(),
            (PadRef{3, 0}));
}

TEST_F(GraphTest, AFilterWithoutInputsNeedsNoSource) {
  const Graph graph = Graph::parse("t_gen,t_blur");
  EXPECT_TRUE(graph.nodes()[0].inputs.empty());
  EXPECT_EQ(graph.nodes()[1].inputs, (std::vector<PadRef>{{0, 0}}));
  EXPECT_EQ(graph.validate(PixelFormat::rgba8), PixelFormat::rgba32f);
}

// ---- printing ----

TEST_F(GraphTest, PrintsAChainAsAChainOfNonDefaultOptions) {
  const Graph graph = Graph::parse(" t_blur = 2 : radius = 3 , t_tone=op=aces, saturation=1.3");
  EXPECT_EQ(graph.to_string(), "t_blur=sigma=2,t_tone=op=aces,saturation=amount=1.3");
  EXPECT_EQ(Graph::parse("t_copy").to_string(), "t_copy");
}

TEST_F(GraphTest, PrintsLabelsOnlyWhereAChainCannotCarryTheLink) {
  const Graph graph = Graph::parse(
      "[in]t_split[a][b];[a]t_blur=sigma=8[g];[b][g]t_blend=mode=screen:opacity=0.5[out]");
  EXPECT_EQ(graph.to_string(),
            "t_split[n0][n0_1];[n0]t_blur=sigma=8,[n0_1]t_blend=mode=screen:opacity=0.5");
}

TEST_F(GraphTest, ParsedGraphsRoundTrip) {
  for (const char* text : {
           "t_blur",
           "t_blur=sigma=2:radius=5,t_tone=op=aces:exposure=-1.5,saturation=1.3",
           "[in]t_split[a][b];[a]t_blur=sigma=8[g];[b][g]t_blend=mode=screen:opacity=0.5[out]",
           "[x][y]t_blend=multiply;[in]t_split[x][y]",
           "t_split[a],t_blur[b];[a][b]t_blend",
           "t_split[a],t_blur,[a]t_blend=opacity=0.25",
           "t_split,t_blur=0.125",
           "t_gen,t_blur",
           "[in]t_split[a][b];[b]t_split[c][d];[a][c]t_blend[e];[e][d]t_blend=multiply:0.75",
           "[in]t_split[a][b];[a]t_blur[c];[c]t_copy,[b]t_blend",
           "[src][k]t_blend;[j]t_tone[k];[m]t_copy[j];t_gen[m]",
           "scale='min(iw,1280)':ih/2:flags=lanczos",
       }) {
    SCOPED_TRACE(text);
    expect_round_trip(Graph::parse(text));
  }
}

TEST_F(GraphTest, GraphsBuiltInCppPrintAndRoundTrip) {
  Graph graph;
  const int split = graph.add("t_split", {{-1, 0}});
  const int blur = graph.add("t_blur", {{split, 0}}, {{"sigma", "2.5"}, {"radius", "9"}});
  Params blend_params(spec_of("t_blend")->params);
  blend_params.set("mode", 2);
  blend_params.set("opacity", 0.1 + 0.2);  // not the double that "0.3" parses to
  const int blend = graph.add("t_blend", blend_params, {{split, 1}, {blur, 0}});
  graph.set_output({blend, 0});

  EXPECT_EQ(graph.nodes()[1].params["sigma"], 2.5);
  EXPECT_EQ(graph.nodes()[1].params["radius"], 9);
  EXPECT_TRUE(graph.nodes()[2].params == blend_params);
  EXPECT_EQ(graph.nodes()[0].position, std::string::npos);
  EXPECT_TRUE(graph.text().empty());
  EXPECT_EQ(graph.validate(PixelFormat::rgba8), PixelFormat::rgba8);
  expect_round_trip(graph);
}

TEST_F(GraphTest, CppChainsPrintAsChains) {
  Graph graph;
  graph.add("t_blur", {{-1, 0}}, {{"sigma", "2"}});
  graph.add("saturation", {{0, 0}}, {{"amount", "1.5"}});
  graph.set_output({1, 0});
  EXPECT_EQ(graph.to_string(), "t_blur=sigma=2,saturation=amount=1.5");
  expect_round_trip(graph);
}

TEST_F(GraphTest, CppGraphsReadingLaterNodesRoundTrip) {
  Graph graph;
  graph.add("t_tone", {{1, 0}}, {{"exposure", "1"}});
  graph.add("t_blur", {{-1, 0}}, {{"sigma", "0.333333333333"}});
  graph.set_output({0, 0});
  EXPECT_EQ(graph.topological_order(), (std::vector<int>{1, 0}));
  expect_round_trip(graph);
}

// ---- parse errors: one per class, with the caret under the token ----

TEST_F(GraphTest, UnknownFilterSuggestsTheClosestName) {
  try {
    Graph::parse("t_blr=sigma=2");
    FAIL() << "parse accepted an unknown filter";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "unknown filter 't_blr' (did you mean 't_blur'?)\n"
                 "  t_blr=sigma=2\n"
                 "  ^~~~~");
  }
  expect_parse_error("t_blur,t_tnoe", "unknown filter 't_tnoe' (did you mean 't_tone'?)", "t_tnoe");
  expect_parse_error("t_blur,qqqqqqqq", "unknown filter 'qqqqqqqq'", "qqqqqqqq");
}

TEST_F(GraphTest, ErrorsInMultiLineTextShowTheirLine) {
  const ParseFailure failure = parse_failure("[in]t_split[a][b];\n[a]t_blr[g];\n[b][g]t_blend");
  EXPECT_EQ(failure.message, "unknown filter 't_blr' (did you mean 't_blur'?)");
  EXPECT_EQ(failure.shown, "[a]t_blr[g];");
  EXPECT_EQ(failure.column, 3u);
  EXPECT_EQ(failure.length, 5u);
}

TEST_F(GraphTest, UnknownOptionListsTheValidOnes) {
  expect_parse_error("t_blur=sigma=2:radiuss=3",
                     "unknown option 'radiuss' for t_blur (valid options: sigma, radius)",
                     "radiuss");
  expect_parse_error("t_copy=x=1", "unknown option 'x': t_copy takes no options", "x");
  expect_parse_error("t_copy=1", "t_copy takes no options", "1");
}

TEST_F(GraphTest, BadValuesPointAtTheValueAndDescribeTheAcceptedOnes) {
  struct Case {
    const char* text;
    const char* value;
    const char* accepted;  // part of what ParamSpec says it accepts
  };
  for (const Case& c : {
           Case{"t_blur=sigma=100", "100", "64"},              // out of range
           Case{"t_blur=sigma=0", "0", "64"},                  // the excluded minimum
           Case{"t_blur = sigma = abc ", "abc", "64"},         // not a number
           Case{"t_blur=radius=2.5", "2.5", "32"},             // not an integer
           Case{"t_blur,t_tone=op=nope", "nope", "reinhard"},  // not a choice
           Case{"t_blur,t_tone=1e3", "1e3", "reinhard"},       // positional, not a choice
       }) {
    SCOPED_TRACE(c.text);
    const ParseFailure failure = parse_failure(c.text);
    const std::string filter =
        std::string(c.text).find("t_tone") != std::string::npos ? "t_tone: " : "t_blur: ";
    EXPECT_EQ(failure.message.rfind(filter, 0), 0u) << failure.message;
    EXPECT_NE(failure.message.find(std::string("'") + c.value + "'"), std::string::npos)
        << failure.message;
    EXPECT_NE(failure.message.find(c.accepted), std::string::npos) << failure.message;
    EXPECT_EQ(failure.column, offset_of(c.text, c.value));
    EXPECT_EQ(failure.length, std::string_view(c.value).size());
  }
}

TEST_F(GraphTest, MalformedOptionLists) {
  expect_parse_error("t_blur=0.5:4:9", "too many values: t_blur takes 2 options", "9");
  expect_parse_error("t_blur=sigma=2:4",
                     "value '4' needs a name: after a key=value option, every option is "
                     "key=value",
                     "4");
  expect_parse_error("t_blur=2:sigma=3", "option 'sigma' of t_blur is given twice", "sigma=3");
  expect_parse_error("t_blur=sigma=", "expected a value for 'sigma', found the end of the graph",
                     "");
  expect_parse_error("t_blur=", "expected an option, found the end of the graph", "");
  expect_parse_error("t_blur=:2", "expected an option, found ':'", ":");
  expect_parse_error("t_blur=sigma=2:", "expected an option, found the end of the graph", "");
}

TEST_F(GraphTest, TrailingGarbage) {
  expect_parse_error("t_blur=sigma=2 x", "unexpected 'x'", "x");
  expect_parse_error("t_blur]", "unexpected ']'", "]");
  expect_parse_error("t_blur=sigma=2=3", "unexpected '='", "=", 2);
  expect_parse_error("t_blur[a] t_tone", "unexpected 't_tone'", "t_tone");
  expect_parse_error("t_blur,", "expected a filter name, found the end of the graph", "");
  expect_parse_error("t_blur;;t_tone", "expected a filter name, found ';'", ";", 1);
  expect_parse_error("[in]", "expected a filter name, found the end of the graph", "");
}

TEST_F(GraphTest, EmptyGraph) {
  expect_parse_error("", "empty graph", "");
  const ParseFailure blank = parse_failure("   ");
  EXPECT_EQ(blank.message, "empty graph");
  EXPECT_EQ(blank.column, 0u);
}

TEST_F(GraphTest, MalformedLabels) {
  expect_parse_error("[in", "unterminated link label: missing ']'", "[in");
  expect_parse_error("[in t_blur", "expected ']' to close the link label", "t");
  expect_parse_error("[]t_blur", "empty link label", "[]");
}

TEST_F(GraphTest, UnconnectedInputs) {
  expect_parse_error("t_blend=opacity=0.5",
                     "unconnected input: t_blend takes 2 inputs but only 1 is connected",
                     "t_blend");
  expect_parse_error("[in]t_blend",
                     "unconnected input: t_blend takes 2 inputs but only 1 is connected",
                     "t_blend");
  expect_parse_error("t_blur;t_tone",
                     "unconnected input: t_tone takes 1 input but none are connected (only the "
                     "first filter's unlabelled input is the source)",
                     "t_tone");

  const ParseFailure tabbed = parse_failure("t_blur ,\tt_blend");
  EXPECT_EQ(tabbed.message, "unconnected input: t_blend takes 2 inputs but only 1 is connected");
  EXPECT_EQ(tabbed.shown, "t_blur , t_blend");
  EXPECT_EQ(tabbed.column, 9u);
  EXPECT_EQ(tabbed.length, 7u);
}

TEST_F(GraphTest, TooManyPadsForTheFilter) {
  expect_parse_error("[a][b]t_blur", "too many input labels: t_blur takes 1 input", "[b]");
  expect_parse_error("t_blur[a][b]", "too many output labels: t_blur has 1 output", "[b]");
  expect_parse_error("[in]t_split[a][b][c]", "too many output labels: t_split has 2 outputs",
                     "[c]");
  expect_parse_error("t_split[a],[a]t_blur",
                     "too many inputs: t_blur takes 1 input but gets 1 labelled input and the "
                     "output of the filter before it",
                     "t_blur");
  expect_parse_error("t_blur[a],t_tone",
                     "nothing feeds the filter after ',': every output of t_blur is labelled", ",");
  expect_parse_error("t_gen,t_gen",
                     "too many inputs: t_gen takes no inputs but gets the output of the filter "
                     "before it",
                     "t_gen", 1);
}

TEST_F(GraphTest, UnconnectedOutputs) {
  expect_parse_error("[in]t_split[a][b];[a]t_blur",
                     "unconnected output: nothing reads [b] (a graph has one result, and the "
                     "output of t_blur is unconnected too)",
                     "[b]");
  expect_parse_error("[in]t_split[a][b];[a]t_blur;[b]t_tone",
                     "unconnected output: nothing reads the output of t_blur (a graph has one "
                     "result, and the output of t_tone is unconnected too)",
                     "t_blur");
}

TEST_F(GraphTest, LabelUsedTwice) {
  expect_parse_error("[in]t_split[a][a]", "link label [a] used twice as an output", "[a]", 1);
  expect_parse_error("[in]t_split[a][b];[a]t_blur[c];[b]t_blur[c]",
                     "link label [c] used twice as an output", "[c]", 1);
  expect_parse_error("[in]t_split[a][b];[a]t_blur[c];[a][c]t_blend",
                     "link label [a] used twice as an input", "[a]", 2);
  expect_parse_error("[in]t_split[a][b];[in]t_blur", "link label [in] used twice as an input",
                     "[in]", 1);
}

TEST_F(GraphTest, UnknownLinkLabel) {
  expect_parse_error("[in]t_blur[a];[a][x]t_blend",
                     "unknown link label [x]: no filter outputs it, and the graph's input is "
                     "already [in]",
                     "[x]");
  expect_parse_error("t_blur[a];[a][x]t_blend",
                     "unknown link label [x]: no filter outputs it, and the graph's input is "
                     "already the first filter's input",
                     "[x]");
}

TEST_F(GraphTest, Cycles) {
  expect_parse_error("[in][b]t_blend[a];[a]t_blur[b]", "cycle: t_blend -> t_blur -> t_blend",
                     "t_blend");
  expect_parse_error("[a]t_blur[a]", "cycle: t_blur -> t_blur", "t_blur");
  // A cycle with nodes before and after it.
  expect_parse_error("[in]t_split[a][b];[a][c]t_blend,t_split[e][d];[e]t_tone[c];[b][d]t_blend",
                     "cycle: t_blend -> t_split -> t_tone -> t_blend", "t_blend");
}

// ---- building in C++ ----

TEST_F(GraphTest, AddRejectsUnknownFiltersOptionsAndValues) {
  Graph graph;
  auto add_error = [&](auto&&... args) -> std::string {
    try {
      graph.add(args...);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "add accepted";
    return {};
  };
  EXPECT_EQ(add_error("t_blr", std::vector<PadRef>{{-1, 0}}),
            "unknown filter 't_blr' (did you mean 't_blur'?)");
  EXPECT_EQ(add_error("t_blur", std::vector<PadRef>{{-1, 0}},
                      std::vector<std::pair<std::string, std::string>>{{"radiuss", "3"}}),
            "unknown option 'radiuss' for t_blur (valid options: sigma, radius)");
  const std::string bad_value =
      add_error("t_blur", std::vector<PadRef>{{-1, 0}},
                std::vector<std::pair<std::string, std::string>>{{"sigma", "0"}});
  EXPECT_EQ(bad_value.rfind("t_blur: ", 0), 0u) << bad_value;
  EXPECT_NE(bad_value.find("'0'"), std::string::npos) << bad_value;
  EXPECT_EQ(add_error("t_blur", Params(spec_of("t_blend")->params), std::vector<PadRef>{{-1, 0}}),
            "parameters for t_blur must follow its table: option 0 is 'sigma', not 'mode'");
  EXPECT_EQ(
      add_error("t_blur", Params(spec_of("saturation")->params), std::vector<PadRef>{{-1, 0}}),
      "parameters for t_blur must follow its table of 2 options, got 1");
  EXPECT_EQ(add_error("t_blur", std::vector<PadRef>{{-2, 0}}),
            "input of t_blur reads output 0 of node -2, which cannot exist");
  EXPECT_TRUE(graph.nodes().empty());
}

TEST_F(GraphTest, AddWithEmptyParamsTakesTheDefaults) {
  Graph graph;
  graph.add("t_blur", Params{}, {{-1, 0}});
  EXPECT_TRUE(graph.nodes()[0].params == Params(spec_of("t_blur")->params));
  EXPECT_EQ(graph.nodes()[0].params.specs().data(), spec_of("t_blur")->params.data());
}

// ---- validation ----

TEST_F(GraphTest, ValidatePropagatesPixelFormats) {
  EXPECT_EQ(Graph::parse("t_blur").validate(PixelFormat::rgba8), PixelFormat::rgba8);
  EXPECT_EQ(Graph::parse("t_blur").validate(PixelFormat::rgba32f), PixelFormat::rgba32f);
  EXPECT_EQ(Graph::parse("t_blur,t_tone").validate(PixelFormat::rgba8), PixelFormat::rgba32f);
  const Graph mixed = Graph::parse("[in]t_split[a][b];[a]t_tone[t];[b][t]t_blend");
  EXPECT_EQ(mixed.validate(PixelFormat::rgba32f), PixelFormat::rgba32f);
}

TEST_F(GraphTest, ValidatePointsAtTheFilterThatRejectsItsInputs) {
  const std::string text = "[in]t_split[a][b];[a]t_tone[t];[b][t]t_blend=screen";
  EXPECT_EQ(validate_error(Graph::parse(text), PixelFormat::rgba8),
            "inputs must share one pixel format\n  " + text + "\n  " +
                std::string(text.find("t_blend"), ' ') + "^~~~~~~");

  Graph built;
  built.add("t_split", {{-1, 0}});
  built.add("t_tone", {{0, 0}});
  built.add("t_blend", {{0, 1}, {1, 0}});
  built.set_output({2, 0});
  EXPECT_EQ(validate_error(built, PixelFormat::rgba8),
            "node 2: inputs must share one pixel format");
}

TEST_F(GraphTest, ValidateChecksThePadsOfCppGraphs) {
  auto graph_of = [](auto build) {
    Graph graph;
    build(graph);
    return graph;
  };
  EXPECT_EQ(validate_error(Graph{}, PixelFormat::rgba8), "empty graph");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blend", {{-1, 0}});
                             g.set_output({0, 0});
                           }),
                           PixelFormat::rgba8),
            "node 0: unconnected input: t_blend takes 2 inputs but 1 is connected");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_split", {{-1, 0}});
                             g.add("t_blur", {{0, 0}, {0, 1}});
                             g.set_output({1, 0});
                           }),
                           PixelFormat::rgba8),
            "node 1: too many inputs: t_blur takes 1 input but 2 are connected");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{5, 0}});
                             g.set_output({0, 0});
                           }),
                           PixelFormat::rgba8),
            "node 0: input 0 reads output 0 of node 5, which does not exist");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{-1, 0}});
                             g.add("t_blur", {{0, 1}});
                             g.set_output({1, 0});
                           }),
                           PixelFormat::rgba8),
            "node 1: input 0 reads output 1 of node 0, which does not exist");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{-1, 0}});
                           }),
                           PixelFormat::rgba8),
            "the graph's output is not set: it is still the graph's input");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{-1, 0}});
                             g.set_output({0, 2});
                           }),
                           PixelFormat::rgba8),
            "the graph's output is output 2 of node 0, which does not exist");
}

TEST_F(GraphTest, ValidateWantsEveryUsedOutputReadOnce) {
  auto graph_of = [](auto build) {
    Graph graph;
    build(graph);
    return graph;
  };
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{-1, 0}});
                             g.add("t_tone", {{-1, 0}});
                             g.add("t_blend", {{0, 0}, {1, 0}});
                             g.set_output({2, 0});
                           }),
                           PixelFormat::rgba8),
            "node 1: the graph's input is read twice; fan out with a split filter");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{-1, 0}});
                             g.add("t_blend", {{0, 0}, {0, 0}});
                             g.set_output({1, 0});
                           }),
                           PixelFormat::rgba8),
            "node 0: output 0 of t_blur is read 2 times; fan out with a split filter");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_blur", {{-1, 0}});
                             g.add("t_tone", {{0, 0}});
                             g.set_output({0, 0});
                           }),
                           PixelFormat::rgba8),
            "node 0: output 0 of t_blur is read 2 times; fan out with a split filter");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_split", {{-1, 0}});
                             g.add("t_blur", {{0, 0}});
                             g.add("t_gen", {});
                             g.set_output({1, 0});
                           }),
                           PixelFormat::rgba8),
            "node 2: unconnected output: nothing reads the output of t_gen");
  EXPECT_EQ(validate_error(graph_of([](Graph& g) {
                             g.add("t_split", {{-1, 0}});
                             g.add("t_blur", {{0, 1}});
                             g.set_output({1, 0});
                           }),
                           PixelFormat::rgba8),
            "node 0: unconnected output: nothing reads output 0 of t_split, but output 1 is "
            "read");
}

TEST_F(GraphTest, CyclesInCppGraphs) {
  Graph graph;
  graph.add("t_blend", {{-1, 0}, {1, 0}});
  graph.add("t_split", {{0, 0}});
  graph.set_output({1, 1});
  try {
    graph.topological_order();
    FAIL() << "topological_order accepted a cycle";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "node 0: cycle: t_blend -> t_split -> t_blend");
  }
  EXPECT_EQ(validate_error(graph, PixelFormat::rgba8),
            "node 0: cycle: t_blend -> t_split -> t_blend");
}

TEST_F(GraphTest, TopologicalOrderPutsReadersAfterWhatTheyRead) {
  const Graph graph =
      Graph::parse("[e][d]t_blend;[a][c]t_blend[e];[b]t_split[c][d];[in]t_split[a][b]");
  const std::vector<int> order = graph.topological_order();
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1, 0}));
  // The same property, checked directly.
  std::vector<int> rank(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    rank[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    for (const PadRef& pad : graph.nodes()[i].inputs) {
      if (pad.node >= 0) {
        EXPECT_LT(rank[static_cast<std::size_t>(pad.node)], rank[i]);
      }
    }
  }
  EXPECT_EQ(Graph::parse("t_blur,t_tone,t_copy").topological_order(), (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace tandem
