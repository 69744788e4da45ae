// Expression: a recursive-descent parser into a postfix program, evaluated on a small stack.
//   sum     = product (('+' | '-') product)*
//   product = power (('*' | '/') power)*
//   power   = ('-' | '+')? unary ('^' unary)*   (the sign applies to the whole power)
//   unary   = ('-' | '+') unary | primary
//   primary = number | name | function '(' sum (',' sum)* ')' | '(' sum ')'
#include "tandem/expression.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "tandem/error.hpp"

namespace tandem {
namespace {

struct Function {
  const char* name;
  int arguments;
};
constexpr std::array<Function, 7> kFunctions = {
    {{"abs", 1}, {"ceil", 1}, {"floor", 1}, {"max", 2}, {"min", 2}, {"round", 1}, {"trunc", 1}}};

double call(int function, const double* a) {
  switch (function) {
    case 0:
      return std::fabs(a[0]);
    case 1:
      return std::ceil(a[0]);
    case 2:
      return std::floor(a[0]);
    case 3:
      return std::max(a[0], a[1]);
    case 4:
      return std::min(a[0], a[1]);
    case 5:
      return std::round(a[0]);
    default:
      return std::trunc(a[0]);
  }
}

std::string joined(std::span<const std::string> names) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  return all.empty() ? "none" : all;
}

}  // namespace

class Expression::Parser {
 public:
  Parser(std::string_view text, std::span<const std::string> names, std::vector<Step>& program)
      : text_(text), names_(names), program_(program) {}

  void parse() {
    sum();
    skip_spaces();
    if (at_ < text_.size()) fail("unexpected '" + std::string(1, text_[at_]) + "'");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("cannot read the expression '" + std::string(text_) + "': " + why + " at " +
                std::to_string(at_ + 1));
  }

  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  // Skips spaces, then takes `c` if it is next.
  bool take(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  // Operands of `next` joined by a level's two operators, left to right.
  void left_to_right(void (Parser::*next)(), char a, Op op_a, char b, Op op_b) {
    (this->*next)();
    for (;;) {
      const Op op = take(a) ? op_a : take(b) ? op_b : Op::number;
      if (op == Op::number) return;
      (this->*next)();
      program_.push_back({op});
    }
  }

  void sum() { left_to_right(&Parser::product, '+', Op::add, '-', Op::subtract); }
  void product() { left_to_right(&Parser::power, '*', Op::multiply, '/', Op::divide); }

  // FFmpeg's order (libavutil/eval.c): a sign before a power applies to the power (-2^2 is
  // -4), and powers go left to right (2^3^2 is 64).
  void power() {
    const bool negative = take('-');
    if (!negative) take('+');
    unary();
    while (take('^')) {
      unary();
      program_.push_back({Op::power});
    }
    if (negative) program_.push_back({Op::negate});
  }

  void unary() {
    if (take('-')) {
      unary();
      program_.push_back({Op::negate});
    } else if (take('+')) {
      unary();
    } else {
      primary();
    }
  }

  void primary() {
    skip_spaces();
    if (at_ == text_.size()) fail("a value is missing");
    const char c = text_[at_];
    if (take('(')) {
      sum();
      if (!take(')')) fail("')' is missing");
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      double value = 0;
      const auto [end, ec] =
          std::from_chars(text_.data() + at_, text_.data() + text_.size(), value);
      if (ec != std::errc()) fail("not a number");
      at_ = static_cast<std::size_t>(end - text_.data());
      program_.push_back({Op::number, value});
      return;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') {
      fail("unexpected '" + std::string(1, c) + "'");
    }
    const std::size_t start = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) {
      ++at_;
    }
    const std::string_view word = text_.substr(start, at_ - start);
    if (take('(')) {
      const auto f = std::find_if(kFunctions.begin(), kFunctions.end(),
                                  [&](const Function& f) { return word == f.name; });
      if (f == kFunctions.end()) {
        at_ = start;
        std::string known;
        for (const Function& k : kFunctions)
          known += (known.empty() ? "" : ", ") + std::string(k.name);
        fail("unknown function '" + std::string(word) + "' (functions: " + known + ")");
      }
      for (int i = 0; i < f->arguments; ++i) {
        if (i > 0 && !take(','))
          fail(std::string(f->name) + " takes " + std::to_string(f->arguments) + " arguments");
        sum();
      }
      if (!take(')')) fail("')' is missing after " + std::string(f->name) + "'s arguments");
      program_.push_back({Op::call, 0, static_cast<int>(f - kFunctions.begin())});
      return;
    }
    const auto n = std::find(names_.begin(), names_.end(), word);
    if (n == names_.end()) {
      at_ = start;
      fail("unknown name '" + std::string(word) + "' (names: " + joined(names_) + ")");
    }
    program_.push_back({Op::name, 0, static_cast<int>(n - names_.begin())});
  }

  std::string_view text_;
  std::span<const std::string> names_;
  std::vector<Step>& program_;
  std::size_t at_ = 0;
};

Expression Expression::parse(std::string_view text, std::span<const std::string> names) {
  Expression e;
  e.text_ = std::string(text);
  Parser(text, names, e.program_).parse();
  return e;
}

double Expression::evaluate(std::span<const double> values) const {
  std::vector<double> stack;
  stack.reserve(program_.size());
  for (const Step& s : program_) {
    if (s.op == Op::number) {
      stack.push_back(s.number);
      continue;
    }
    if (s.op == Op::name) {
      stack.push_back(values[static_cast<std::size_t>(s.index)]);
      continue;
    }
    if (s.op == Op::negate) {
      stack.back() = -stack.back();
      continue;
    }
    if (s.op == Op::call) {
      const int n = kFunctions[static_cast<std::size_t>(s.index)].arguments;
      const double result = call(s.index, stack.data() + stack.size() - n);
      stack.resize(stack.size() - static_cast<std::size_t>(n));
      stack.push_back(result);
      continue;
    }
    const double b = stack.back();
    stack.pop_back();
    double& a = stack.back();
    switch (s.op) {
      case Op::add:
        a = a + b;
        break;
      case Op::subtract:
        a = a - b;
        break;
      case Op::multiply:
        a = a * b;
        break;
      case Op::divide:
        a = a / b;
        break;
      default:
        a = std::pow(a, b);
        break;
    }
  }
  return stack.back();
}

bool Expression::uses(std::size_t name) const {
  return std::any_of(program_.begin(), program_.end(), [&](const Step& s) {
    return s.op == Op::name && static_cast<std::size_t>(s.index) == name;
  });
}

bool Expression::constant() const {
  return std::none_of(program_.begin(), program_.end(),
                      [](const Step& s) { return s.op == Op::name; });
}

}  // namespace tandem
