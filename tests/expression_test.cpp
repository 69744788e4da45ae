// Expression: FFmpeg's arithmetic for sizes and offsets (scale=iw/2:-2), on the host: precedence,
// signs, powers, functions, names, and the errors with what is wrong and where.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tandem/expression.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

const std::vector<std::string> kNames = {"iw", "ih", "a"};
const std::vector<double> kValues = {1920, 1080, 1920.0 / 1080};

double value_of(const std::string& text) {
  return Expression::parse(text, kNames).evaluate(kValues);
}

TEST(Expression, Arithmetic) {
  EXPECT_EQ(value_of("42"), 42);
  EXPECT_EQ(value_of("2.5"), 2.5);
  EXPECT_EQ(value_of("1+2*3"), 7);
  EXPECT_EQ(value_of("(1+2)*3"), 9);
  EXPECT_EQ(value_of("7-2-1"), 4);  // left to right
  EXPECT_EQ(value_of("8/2/2"), 2);
  // FFmpeg's order: powers left to right, a sign before a power applies to all of it.
  EXPECT_EQ(value_of("2^3^2"), 64);
  EXPECT_EQ(value_of("-2^2"), -4);
  EXPECT_EQ(value_of("2^-1"), 0.5);
  EXPECT_EQ(value_of("3*-2"), -6);
  EXPECT_EQ(value_of("--3"), 3);
  EXPECT_EQ(value_of("+3"), 3);
  EXPECT_EQ(value_of(" 1 + 2 "), 3);
  EXPECT_EQ(value_of("1e3/4"), 250);
  EXPECT_TRUE(std::isinf(value_of("1/0")));
}

TEST(Expression, NamesAndFunctions) {
  EXPECT_EQ(value_of("iw/2"), 960);
  EXPECT_EQ(value_of("ih*2/3"), 720);
  EXPECT_DOUBLE_EQ(value_of("ih*a"), 1920);
  EXPECT_EQ(value_of("trunc(iw/7)"), 274);
  EXPECT_EQ(value_of("trunc(-2.5)"), -2);
  EXPECT_EQ(value_of("floor(-2.5)"), -3);
  EXPECT_EQ(value_of("ceil(iw/7)"), 275);
  EXPECT_EQ(value_of("round(2.5)"), 3);
  EXPECT_EQ(value_of("abs(-4)"), 4);
  EXPECT_EQ(value_of("min(iw, 1280)"), 1280);
  EXPECT_EQ(value_of("max(ih,1280)"), 1280);
  EXPECT_EQ(value_of("trunc(ih*4/3/2)*2"), 1440);
  const Expression e = Expression::parse("iw/2+a", kNames);
  EXPECT_TRUE(e.uses(0));
  EXPECT_FALSE(e.uses(1));
  EXPECT_TRUE(e.uses(2));
  EXPECT_FALSE(e.constant());
  EXPECT_TRUE(Expression::parse("2*(3+4)", kNames).constant());
  EXPECT_EQ(e.text(), "iw/2+a");
  // A name without a value yet gives NaN.
  EXPECT_TRUE(std::isnan(e.evaluate(std::vector<double>{NAN, 1080, 1})));
}

// Each error says what is wrong and where (1-based).
TEST(Expression, ErrorsSayWhatAndWhere) {
  const auto error = [](const std::string& text) {
    return error_of([&] { Expression::parse(text, kNames); });
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"iwx/2", {"unknown name 'iwx'", "iw, ih, a", "at 1"}},
      {"iw/2+ow", {"unknown name 'ow'", "at 6"}},
      {"foo(iw)", {"unknown function 'foo'", "trunc", "at 1"}},
      {"(iw", {"')' is missing", "at 4"}},
      {"min(iw)", {"min takes 2 arguments"}},
      {"trunc(iw", {"')' is missing after trunc"}},
      {"iw/", {"a value is missing", "at 4"}},
      {"", {"a value is missing", "at 1"}},
      {"iw ih", {"unexpected 'i'", "at 4"}},
      {"2$", {"unexpected '$'", "at 2"}},
  };
  for (const auto& [text, parts] : cases) {
    const std::string e = error(text);
    EXPECT_NE(e.find("'" + text + "'"), std::string::npos) << text << ": " << e;
    for (const std::string& part : parts) {
      EXPECT_NE(e.find(part), std::string::npos) << text << ": " << e << " (wanted " << part << ")";
    }
  }
}

}  // namespace
}  // namespace tandem::test
