#!/usr/bin/env python3
"""scripts/function_lengths.py on a fixture whose functions' lengths are known: the constructs
a lexical scan can get wrong (constructor initialiser lists with braces, default arguments
`= {}`, raw strings and character literals holding braces, digit separators, lambdas, access
specifiers, templates, brace-initialised members and tables) each next to a function whose
length is checked, and the limits' exit status."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "function_lengths.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import function_lengths  # noqa: E402

FIXTURE = r'''#include <string>
#define BRACE {
namespace outer {
namespace {
constexpr int kTable[] = {1, 2, 3};
struct Point { int x{0}; int y = 1; };
}  // namespace

class Widget : public Base {
 public:
  Widget(int a, std::string b = {}) : a_(a), b_{std::move(b)} {
    step();
  }
  int size() const noexcept { return a_; }

 private:
  int a_;
  std::string b_;
};

template <class T>
T twice(T v) {
  auto f = [](T x) { return x + x; };
  return f(v);
}

const char* text() {
  return R"(not a { brace)" "and '}' neither" ;
}

int digits() {
  char c = '{';
  int n = 1'000'000;
  return n + c;
}

bool Widget::operator==(const Widget& o) const {
  if (a_ == o.a_) {
    return true;
  }
  return false;
}
}  // namespace outer
'''

EXPECTED = {
    ("Widget", 11, 3),
    ("size", 14, 1),
    ("twice", 22, 4),
    ("text", 27, 3),
    ("digits", 31, 5),
    ("Widget::operator==", 37, 6),
}


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fixture.cpp")
        with open(path, "w") as f:
            f.write(FIXTURE)
        found = set(function_lengths.functions(path))
        if found != EXPECTED:
            print("functions found:", sorted(found), "\nexpected:", sorted(EXPECTED))
            return 1
        over = subprocess.run([sys.executable, SCRIPT, "--max-lines", "5", path],
                              capture_output=True, text=True)
        if over.returncode != 1 or "Widget::operator==: 6 lines" not in over.stdout:
            print("--max-lines 5 should name operator== and exit 1:", over.returncode, over.stdout)
            return 1
        within = subprocess.run([sys.executable, SCRIPT, "--max-lines", "6", path],
                                capture_output=True, text=True)
        if within.returncode != 0:
            print("--max-lines 6 should exit 0:", within.returncode, within.stdout)
            return 1
        long_file = subprocess.run(
            [sys.executable, SCRIPT, "--max-lines", "6", "--max-file-lines", "40", path],
            capture_output=True, text=True)
        if long_file.returncode != 1 or "fixture.cpp: 43 lines" not in long_file.stdout:
            print("--max-file-lines 40 should name the file:", long_file.returncode,
                  long_file.stdout)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
