// See t1_expression.hpp. A recursive-descent evaluator over the text (no syntax tree is
// kept: a comprehension's element expression is re-evaluated from its text span per item).
#include "t1_expression.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tune::cli {
namespace {

constexpr int kMaxDepth = 64;

struct Failure {
  std::string message;
};

class Evaluator {
 public:
  Evaluator(std::string_view text, const PyNames& names) : s_(text), whole_(text), names_(names) {}

  PyValue all() {
    PyValue v = expr();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(s_.substr(pos_, 12)) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Failure{why + " at offset " + std::to_string(pos_) + " of '" + std::string(whole_) + "'"};
  }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(std::string_view tok) {
    skip_space();
    return s_.substr(pos_, tok.size()) == tok;
  }
  bool keyword_at(std::string_view kw) {
    skip_space();
    if (s_.substr(pos_, kw.size()) != kw) return false;
    const std::size_t end = pos_ + kw.size();
    return end >= s_.size() ||
           !(std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_');
  }
  bool accept(std::string_view tok) {
    if (!peek(tok)) return false;
    pos_ += tok.size();
    return true;
  }
  bool accept_keyword(std::string_view kw) {
    if (!keyword_at(kw)) return false;
    pos_ += kw.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) fail("expected '" + std::string(tok) + "'");
  }

  struct Depth {
    explicit Depth(Evaluator& e) : e_(e) {
      if (++e_.depth_ > kMaxDepth) e_.fail("expression nested too deeply");
    }
    ~Depth() { --e_.depth_; }
    Evaluator& e_;
  };

  static bool is_num(const PyValue& v) {
    return std::holds_alternative<std::int64_t>(v.v) || std::holds_alternative<double>(v.v) ||
           std::holds_alternative<bool>(v.v);
  }
  static bool is_int(const PyValue& v) {
    return std::holds_alternative<std::int64_t>(v.v) || std::holds_alternative<bool>(v.v);
  }
  static std::int64_t as_int(const PyValue& v) {
    if (const auto* b = std::get_if<bool>(&v.v)) return *b ? 1 : 0;
    return std::get<std::int64_t>(v.v);
  }
  static double as_double(const PyValue& v) {
    if (const auto* d = std::get_if<double>(&v.v)) return *d;
    return static_cast<double>(as_int(v));
  }
  void need_num(const PyValue& v, std::string_view op) {
    if (!is_num(v)) fail("'" + std::string(op) + "' needs numbers, not " + py_repr(v));
  }

  PyValue expr() {
    Depth d(*this);
    PyValue v = and_expr();
    while (accept_keyword("or")) {
      PyValue r = and_expr();
      if (!truthy(v)) v = r;
    }
    return v;
  }
  PyValue and_expr() {
    PyValue v = not_expr();
    while (accept_keyword("and")) {
      PyValue r = not_expr();
      if (truthy(v)) v = r;
    }
    return v;
  }
  PyValue not_expr() {
    Depth d(*this);
    if (accept_keyword("not")) return PyValue{!truthy(not_expr())};
    return comparison();
  }
  static int compare(const PyValue& a, const PyValue& b, bool* comparable) {
    *comparable = true;
    if (is_num(a) && is_num(b)) {
      const double x = as_double(a), y = as_double(b);
      if (is_int(a) && is_int(b)) return as_int(a) < as_int(b) ? -1 : as_int(a) > as_int(b);
      return x < y ? -1 : x > y;
    }
    const auto* sa = std::get_if<std::string>(&a.v);
    const auto* sb = std::get_if<std::string>(&b.v);
    if (sa != nullptr && sb != nullptr) return sa->compare(*sb) < 0 ? -1 : sa->compare(*sb) > 0;
    *comparable = false;
    return 0;
  }
  // `needle in haystack`: an equal element of a list, or a substring of a string.
  bool contains(const PyValue& haystack, const PyValue& needle) {
    if (const auto* list = std::get_if<PyList>(&haystack.v)) {
      for (const PyValue& e : *list) {
        bool comparable = false;
        if (compare(e, needle, &comparable) == 0 && comparable) return true;
      }
      return false;
    }
    const auto* text = std::get_if<std::string>(&haystack.v);
    const auto* part = std::get_if<std::string>(&needle.v);
    if (text == nullptr || part == nullptr)
      fail("'in' needs a list or a string on its right, not " + py_repr(haystack));
    return text->find(*part) != std::string::npos;
  }
  // The comparison operator at the cursor, consumed ("not in" as one); empty when none.
  std::string comparison_operator() {
    for (const char* o : {"==", "!=", "<=", ">=", "<", ">"})
      if (accept(o)) return o;
    if (accept_keyword("in")) return "in";
    const std::size_t at = pos_;
    if (accept_keyword("not")) {
      if (accept_keyword("in")) return "not in";
      pos_ = at;
    }
    return {};
  }
  PyValue comparison() {
    PyValue left = arith();
    bool result = true, any = false;
    for (;;) {
      const std::string op = comparison_operator();
      if (op.empty()) break;
      any = true;
      PyValue right = arith();
      bool comparable = false;
      bool holds;
      if (op == "in" || op == "not in") {
        holds = contains(right, left) == (op == "in");
        result = result && holds;
        left = std::move(right);
        continue;
      }
      const int c = compare(left, right, &comparable);
      if (op == "==" || op == "!=") {
        holds = comparable ? c == 0 : false;
        if (op == "!=") holds = !holds;
      } else {
        if (!comparable) fail("cannot order " + py_repr(left) + " and " + py_repr(right));
        holds = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
      }
      result = result && holds;
      left = std::move(right);
    }
    return any ? PyValue{result} : left;
  }
  PyValue arith() {
    PyValue v = term();
    for (;;) {
      if (accept("+")) {
        v = binary(v, term(), '+');
      } else if (peek("-") && !peek("->")) {
        ++pos_;
        v = binary(v, term(), '-');
      } else {
        return v;
      }
    }
  }
  PyValue term() {
    PyValue v = unary();
    for (;;) {
      if (accept("//")) {
        v = binary(v, unary(), 'f');
      } else if (peek("**")) {
        return v;
      } else if (accept("*")) {
        v = binary(v, unary(), '*');
      } else if (accept("/")) {
        v = binary(v, unary(), '/');
      } else if (accept("%")) {
        v = binary(v, unary(), '%');
      } else {
        return v;
      }
    }
  }
  PyValue unary() {
    Depth d(*this);
    if (accept("-")) {
      PyValue v = unary();
      need_num(v, "-");
      if (is_int(v)) {
        if (as_int(v) == std::numeric_limits<std::int64_t>::min()) fail("integer overflow");
        return PyValue{-as_int(v)};
      }
      return PyValue{-as_double(v)};
    }
    if (accept("+")) return unary();
    PyValue base = subscripted();
    if (accept("**")) return binary(base, unary(), '^');
    return base;
  }
  PyValue binary(const PyValue& a, const PyValue& b, char op) {
    const std::string name = op == 'f' ? "//" : op == '^' ? "**" : std::string(1, op);
    if (op == '+' && std::holds_alternative<std::string>(a.v) &&
        std::holds_alternative<std::string>(b.v))
      return PyValue{std::get<std::string>(a.v) + std::get<std::string>(b.v)};
    if (op == '+' && std::holds_alternative<PyList>(a.v) && std::holds_alternative<PyList>(b.v))
      return concatenated(std::get<PyList>(a.v), std::get<PyList>(b.v));
    if (op == '*' && (std::holds_alternative<PyList>(a.v) || std::holds_alternative<PyList>(b.v)))
      return repeated(a, b);
    need_num(a, name);
    need_num(b, name);
    if (is_int(a) && is_int(b) && op != '/') {
      const std::int64_t x = as_int(a), y = as_int(b);
      std::int64_t r = 0;
      switch (op) {
        case '+':
          if (__builtin_add_overflow(x, y, &r)) fail("integer overflow");
          return PyValue{r};
        case '-':
          if (__builtin_sub_overflow(x, y, &r)) fail("integer overflow");
          return PyValue{r};
        case '*':
          if (__builtin_mul_overflow(x, y, &r)) fail("integer overflow");
          return PyValue{r};
        case 'f':
        case '%': {
          if (y == 0) fail("division by zero");
          if (x == std::numeric_limits<std::int64_t>::min() && y == -1) fail("integer overflow");
          std::int64_t q = x / y, m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;  // Python floors
          return PyValue{op == 'f' ? q : m};
        }
        case '^': {
          if (y < 0) return PyValue{std::pow(static_cast<double>(x), static_cast<double>(y))};
          r = 1;
          for (std::int64_t i = 0; i < y; ++i)
            if (__builtin_mul_overflow(r, x, &r)) fail("integer overflow");
          return PyValue{r};
        }
      }
    }
    const double x = as_double(a), y = as_double(b);
    switch (op) {
      case '+':
        return PyValue{x + y};
      case '-':
        return PyValue{x - y};
      case '*':
        return PyValue{x * y};
      case '/':
        if (y == 0) fail("division by zero");
        return PyValue{x / y};
      case 'f':
        if (y == 0) fail("division by zero");
        return PyValue{std::floor(x / y)};
      case '%':
        if (y == 0) fail("division by zero");
        return PyValue{x - y * std::floor(x / y)};
      default:
        return PyValue{std::pow(x, y)};
    }
  }

  // list + list, as Python concatenates ("[1, 2] + list(range(32, 65, 32))").
  PyValue concatenated(const PyList& a, const PyList& b) {
    PyList out = a;
    for (const PyValue& v : b) push(out, v, *this);
    return PyValue{std::move(out)};
  }

  // list * n and n * list: the list n times (none for n <= 0), as in Python.
  PyValue repeated(const PyValue& a, const PyValue& b) {
    const bool list_first = std::holds_alternative<PyList>(a.v);
    const PyValue& count = list_first ? b : a;
    if (!is_int(count)) fail("a list repeated by " + py_repr(count) + ", not an integer");
    const PyList& items = std::get<PyList>((list_first ? a : b).v);
    PyList out;
    if (items.empty()) return PyValue{std::move(out)};
    for (std::int64_t i = 0; i < as_int(count); ++i)
      for (const PyValue& v : items) push(out, v, *this);
    return PyValue{std::move(out)};
  }

  std::string identifier() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  // An atom and its subscriptions, list[i] (a negative i counts from the end, as in Python):
  // T1 sizes read ProblemSize[0].
  PyValue subscripted() {
    PyValue v = atom();
    while (accept("[")) {
      const PyValue index = expr();
      expect("]");
      const auto* list = std::get_if<PyList>(&v.v);
      if (list == nullptr) fail("subscript of " + py_repr(v) + ", which is not a list");
      const auto* i = std::get_if<std::int64_t>(&index.v);
      if (i == nullptr) fail("list index " + py_repr(index) + " is not an integer");
      const auto size = static_cast<std::int64_t>(list->size());
      const std::int64_t k = *i < 0 ? *i + size : *i;
      if (k < 0 || k >= size) fail("list index " + std::to_string(*i) + " is out of range");
      PyValue element = (*list)[static_cast<std::size_t>(k)];
      v = std::move(element);
    }
    if (peek(".")) fail("attribute access is not supported");
    return v;
  }

  PyValue atom() {
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (c == '\'' || c == '"') return string();
    if (accept("(")) {
      PyValue v = expr();
      expect(")");
      return v;
    }
    if (accept("[")) return list();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::string name = identifier();
      if (name == "True") return PyValue{true};
      if (name == "False") return PyValue{false};
      if (accept("(")) return call(name);
      if (peek(".")) fail("attribute access is not supported");
      if (auto it = bound_.find(name); it != bound_.end()) return it->second;
      if (auto it = names_.find(name); it != names_.end()) return it->second;
      fail("unknown name '" + name + "'");
    }
    fail(std::string("unexpected '") + c + "'");
  }

  PyValue number() {
    const std::size_t start = pos_;
    bool is_float = false;
    while (
        pos_ < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' || s_[pos_] == '_' ||
         ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))) {
      if (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E') is_float = true;
      ++pos_;
    }
    std::string text;
    for (char ch : s_.substr(start, pos_ - start))
      if (ch != '_') text += ch;
    char* end = nullptr;
    errno = 0;
    if (is_float) {
      const double d = std::strtod(text.c_str(), &end);
      if (*end != '\0' || errno != 0) fail("bad number '" + text + "'");
      return PyValue{d};
    }
    const long long i = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || errno != 0) fail("bad integer '" + text + "'");
    return PyValue{static_cast<std::int64_t>(i)};
  }

  PyValue string() {
    const char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return PyValue{out};
  }

  static void push(PyList& list, PyValue v, Evaluator& e) {
    if (list.size() >= kMaxListSize)
      e.fail("a list of more than " + std::to_string(kMaxListSize) + " elements");
    list.push_back(std::move(v));
  }

  // From the cursor, inside a bracket: the offset of the first `for` keyword at its top level
  // and of the ']' that closes it (strings and nested brackets skipped); npos for what is not
  // there (no `for`: a literal list).
  struct BracketScan {
    std::size_t for_at = std::string_view::npos;
    std::size_t close = std::string_view::npos;
  };
  BracketScan scan_bracket() const {
    BracketScan out;
    int depth = 0;
    char quote = 0;
    for (std::size_t i = pos_; i < s_.size(); ++i) {
      const char c = s_[i];
      if (quote != 0) {
        if (c == '\\')
          ++i;
        else if (c == quote)
          quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(' || c == '[') {
        ++depth;
      } else if (c == ')' || c == ']') {
        if (depth-- > 0) continue;
        if (c == ']') out.close = i;
        return out;
      } else if (depth == 0 && out.for_at == std::string_view::npos && s_.substr(i, 3) == "for" &&
                 i > pos_ && std::isspace(static_cast<unsigned char>(s_[i - 1])) &&
                 i + 3 < s_.size() && std::isspace(static_cast<unsigned char>(s_[i + 3]))) {
        out.for_at = i;
      }
    }
    return out;
  }

  // The value of s_[begin, end) with `var` bound to `item`, on top of this evaluator's names:
  // a comprehension's element or condition, for one item.
  PyValue evaluate_span(std::size_t begin, std::size_t end, const std::string& var,
                        const PyValue& item) {
    Evaluator inner(s_.substr(0, end), names_);
    inner.whole_ = whole_;
    inner.bound_ = bound_;
    inner.bound_[var] = item;
    inner.depth_ = depth_;
    inner.pos_ = begin;
    PyValue v = inner.expr();
    inner.skip_space();
    if (inner.pos_ != end)
      inner.fail("unexpected '" + std::string(s_.substr(inner.pos_, 12)) + "'");
    return v;
  }

  // `[ELEMENT for VAR in SOURCE]` or `[ELEMENT for VAR in SOURCE if CONDITION]`, the cursor at
  // ELEMENT and `for_at` the offset of its `for`: one level (a second `for` is refused).
  PyValue comprehension(std::size_t for_at) {
    const std::size_t element = pos_;
    pos_ = for_at + 3;
    const std::string var = identifier();
    if (var.empty()) fail("expected a name after 'for'");
    if (!accept_keyword("in")) fail("expected 'in'");
    const PyValue source = expr();
    const auto* items = std::get_if<PyList>(&source.v);
    if (items == nullptr) fail("a comprehension over " + py_repr(source) + ", not a list");
    if (keyword_at("for")) fail("nested comprehensions (a second 'for') are not supported");
    std::size_t condition = std::string_view::npos;
    const std::size_t close = scan_bracket().close;
    if (close == std::string_view::npos) fail("expected ']' closing the comprehension");
    if (accept_keyword("if")) {
      condition = pos_;
      pos_ = close;
    }
    expect("]");
    const std::size_t after = pos_;
    PyList out;
    for (const PyValue& item : *items) {
      if (condition != std::string_view::npos &&
          !truthy(evaluate_span(condition, close, var, item)))
        continue;
      push(out, evaluate_span(element, for_at, var, item), *this);
    }
    pos_ = after;
    return PyValue{out};
  }

  // After '[': a literal list or a comprehension.
  PyValue list() {
    PyList out;
    if (accept("]")) return PyValue{out};
    const std::size_t for_at = scan_bracket().for_at;
    if (for_at != std::string_view::npos) return comprehension(for_at);
    push(out, expr(), *this);
    while (accept(",")) {
      if (accept("]")) return PyValue{out};
      push(out, expr(), *this);
    }
    expect("]");
    return PyValue{out};
  }

  PyValue call(const std::string& name) {
    PyList args;
    if (!accept(")")) {
      do {
        args.push_back(expr());
      } while (accept(","));
      expect(")");
    }
    if (name == "range") {
      if (args.empty() || args.size() > 3) fail("range takes 1 to 3 arguments");
      for (const auto& a : args)
        if (!is_int(a)) fail("range takes integers, not " + py_repr(a));
      std::int64_t start = 0, stop = 0, step = 1;
      if (args.size() == 1) {
        stop = as_int(args[0]);
      } else {
        start = as_int(args[0]);
        stop = as_int(args[1]);
        if (args.size() == 3) step = as_int(args[2]);
      }
      if (step == 0) fail("range step must not be zero");
      PyList out;
      for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        push(out, PyValue{i}, *this);
        if ((step > 0 && i > std::numeric_limits<std::int64_t>::max() - step) ||
            (step < 0 && i < std::numeric_limits<std::int64_t>::min() - step))
          break;
      }
      return PyValue{out};
    }
    if (name == "min" || name == "max") {
      PyList items = args;
      if (args.size() == 1) {
        const auto* l = std::get_if<PyList>(&args[0].v);
        if (l == nullptr) fail(name + " of " + py_repr(args[0]) + ", not a list");
        items = *l;
      }
      if (items.empty()) fail(name + " of an empty list");
      PyValue best = items[0];
      for (const auto& it : items) {
        bool comparable = false;
        const int c = compare(it, best, &comparable);
        if (!comparable) fail(name + " of values that do not compare");
        if ((name == "min" && c < 0) || (name == "max" && c > 0)) best = it;
      }
      return best;
    }
    if (name == "list") {
      if (args.size() != 1 || !std::holds_alternative<PyList>(args[0].v))
        fail("list takes one list (or range), not " +
             (args.size() == 1 ? py_repr(args[0]) : std::to_string(args.size()) + " arguments"));
      return args[0];
    }
    if (name == "sum") {
      const auto* l = args.size() == 1 ? std::get_if<PyList>(&args[0].v) : nullptr;
      if (l == nullptr) fail("sum takes one list of numbers");
      PyValue total{std::int64_t{0}};
      for (const PyValue& e : *l) total = binary(total, e, '+');
      return total;
    }
    if (name == "abs") {
      if (args.size() != 1 || !is_num(args[0])) fail("abs takes one number");
      if (is_int(args[0]))
        return binary(PyValue{std::int64_t{0}}, args[0], as_int(args[0]) < 0 ? '-' : '+');
      return PyValue{std::abs(as_double(args[0]))};
    }
    if (name == "len") {
      if (args.size() != 1) fail("len takes one argument");
      if (const auto* l = std::get_if<PyList>(&args[0].v))
        return PyValue{static_cast<std::int64_t>(l->size())};
      if (const auto* str = std::get_if<std::string>(&args[0].v))
        return PyValue{static_cast<std::int64_t>(str->size())};
      fail("len of " + py_repr(args[0]));
    }
    if (name == "int") {
      if (args.size() != 1 || !is_num(args[0])) fail("int takes one number");
      if (is_int(args[0])) return PyValue{as_int(args[0])};
      const double d = std::trunc(as_double(args[0]));
      if (!(std::abs(d) < 9.2e18)) fail("int of " + py_repr(args[0]));
      return PyValue{static_cast<std::int64_t>(d)};
    }
    fail("the call '" + name +
         "(...)' is not supported (range, list, min, max, sum, len, abs, int are)");
  }

  std::string_view s_;
  std::string_view whole_;  // the expression errors quote (s_ may end early: a comprehension)
  const PyNames& names_;
  PyNames bound_;  // comprehension variables
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<PyValue> eval_python(std::string_view text, const PyNames& names) {
  try {
    return Evaluator(text, names).all();
  } catch (const Failure& f) {
    return Status(StatusCode::invalid_argument, f.message);
  }
}

bool truthy(const PyValue& v) {
  return std::visit(
      [](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, PyList>)
          return !x.empty();
        else
          return x != 0;
      },
      v.v);
}

std::string py_repr(const PyValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.17g", x);
          return buf;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "'" + x + "'";
        } else {
          std::string out = "[";
          for (std::size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + py_repr(x[i]);
          return out + "]";
        }
      },
      v.v);
}

}  // namespace tune::cli
