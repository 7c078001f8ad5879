#!/usr/bin/env python3
"""Every ```cpp and ```python snippet of README.md and docs/**/*.md, extracted so a test can
compile and run it: examples in the documentation never rot.

A snippet may be preceded (directly, on the line before its fence) by an HTML comment that
readers never see:

  <!-- snippet: program -->            a whole program (the default when it has `int main(`)
  <!-- snippet: fragment              statements: compiled as the body of a function; the
  auto& dev = docs_assumed<tune::Device>();
  -->                                 comment's other lines are the hidden declarations the
                                      fragment assumes (the default, with none, otherwise);
                                      docs_assumed<T>() names an object of type T
  <!-- snippet: declarations -->       C++ at namespace scope (structs, functions, globals)
  <!-- snippet: ... requires=cuda -->  needs that part of libtune to compile: vulkan, cuda,
                                       hip, mpi, testing (compiled only where it is built, else
                                       skipped)

A program is run; one that needs a device this build or machine lacks (a tune::Error, or in
Python a libtune.TuneError, with code unavailable or not_found) counts as skipped.

Python snippets are byte-compiled; a `program` (the default) is also run against the built
module. Commands:

  snippets.py cpp --out DIR           write DIR/snippets_<group>.cpp, one translation unit per
                                      group (core, vulkan, cuda, hip, mpi, testing)
  snippets.py run-cpp --group G --exe PATH --build DIR [--skip REASON]
                                      build the group's target, run its programs
  snippets.py python --pythonpath DIR [--skip REASON]
                                      byte-compile every Python snippet and run the programs
"""
import argparse
import dataclasses
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUPS = ("core", "vulkan", "cuda", "hip", "mpi", "testing")
SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests


@dataclasses.dataclass
class Snippet:
    file: str           # relative to the repository root
    line: int           # first line of the code (after the fence)
    lang: str           # cpp | python
    code: str
    kind: str           # program | fragment | declarations
    group: str          # core | vulkan | cuda | hip | mpi | testing
    prelude: str = ""   # hidden declarations of a fragment
    prelude_line: int = 0

    @property
    def where(self):
        return f"{self.file}:{self.line}"


def markdown_files():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


MARK = re.compile(r"<!--\s*snippet:\s*(?P<kind>[\w-]+)(?P<opts>[^\n]*?)\s*(?:-->)?$")


def parse_marker(lines, fence_index):
    """The marker comment ending on the line before the fence: (kind, requires, prelude,
    prelude's first line) or None."""
    end = fence_index - 1
    if end < 0 or not lines[end].rstrip().endswith("-->"):
        return None
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    m = MARK.match(lines[start].strip())
    if start < 0 or not m:
        return None
    req = re.search(r"requires=(\w+)", m.group("opts"))
    body = lines[start + 1:end] if start != end else []
    return m.group("kind"), req.group(1) if req else "core", "\n".join(body), start + 2


def extract(path):
    rel = path.relative_to(ROOT).as_posix()
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(cpp|python)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang = len(m.group(1)), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        code = "\n".join(line[indent:] for line in lines[i + 1:j])
        marker = parse_marker(lines, i)
        if marker:
            kind, group, prelude, pline = marker
        else:
            kind, group, prelude, pline = None, "core", "", 0
        if kind is None:
            kind = "program" if (lang == "python" or "int main(" in code) else "fragment"
        if kind not in ("program", "fragment", "declarations"):
            sys.exit(f"{rel}:{i}: unknown snippet kind '{kind}'")
        if group not in GROUPS:
            sys.exit(f"{rel}:{i}: unknown requires={group} (one of {', '.join(GROUPS)})")
        out.append(Snippet(rel, i + 2, lang, code, kind, group, prelude, pline))
        i = j + 1
    return out


def all_snippets():
    found = []
    for f in markdown_files():
        found += extract(f)
    return found


def split_includes(code):
    """(#include lines, the code with each of them blanked so line numbers hold)."""
    includes, body = [], []
    for line in code.splitlines():
        if line.lstrip().startswith("#include"):
            includes.append(line.strip())
            body.append("")
        else:
            body.append(line)
    return includes, "\n".join(body)


def implicit_return(body):
    """main() may end without `return`; the renamed function may not: its closing brace (the
    program's last line) gets a `return 0;` on the same line, so line numbers hold."""
    lines = body.rstrip().split("\n")
    if lines and lines[-1] == "}":
        lines[-1] = "return 0; }"
    return "\n".join(lines)


def cpp_unit(snippets, group):
    """One translation unit: every snippet in its own namespace; whole programs' main renamed
    and called by a dispatcher main (argument: the program's number)."""
    includes = {"#include <cstdio>", "#include <cstring>", "#include <tune/tune.hpp>"}
    parts, programs = [], []
    for n, s in enumerate(snippets):
        inc, body = split_includes(s.code)
        includes.update(inc)
        ns = f"docs_snippet_{n}"
        parts.append(f"// {s.where} ({s.kind})")
        if s.kind == "program":
            body = implicit_return(body)
            parts += [f"namespace {ns} {{", "#define main program_main",
                      f'#line {s.line} "{s.file}"', body, "#undef main", "}  // namespace"]
            takes_args = re.search(r"int main\(\s*int", s.code) is not None
            programs.append((ns, s.where, takes_args))
        elif s.kind == "declarations":
            parts += [f"namespace {ns} {{", f'#line {s.line} "{s.file}"', body, "}  // namespace"]
        else:
            pinc, pbody = split_includes(s.prelude)
            includes.update(pinc)
            parts += [f"namespace {ns} {{", "[[maybe_unused]] void fragment() {"]
            if s.prelude.strip():
                parts += [f'#line {s.prelude_line} "{s.file}"', pbody]
            parts += [f'#line {s.line} "{s.file}"', body, "}", "}  // namespace"]
    head = [f"// Generated by tests/docs/snippets.py: the {group} snippets of README.md and docs/.",
            *sorted(includes), "",
            "// An object a fragment's hidden declarations assume exists; fragments are compiled,",
            "// never called, and the compiler cannot tell what this refers to.",
            "template <class T>",
            "T& docs_assumed() {",
            "  static T* volatile object = nullptr;",
            "  return *object;",
            "}", ""]
    table = ["", "int main(int argc, char** argv) {",
             "  if (argc < 2) {"]
    for i, (_, where, _) in enumerate(programs):
        table.append(f'    std::printf("{i} {where}\\n");')
    table += ["    return 0;", "  }", "  const char* which = argv[1];"]
    # A program that needs a device this build or machine lacks ends in a tune::Error whose
    # code says so: that is a skip with its reason (exit 77), anything else a failure.
    table.append("  try {")
    for i, (ns, _, takes_args) in enumerate(programs):
        call = f"{ns}::program_main(argc - 1, argv + 1)" if takes_args else f"{ns}::program_main()"
        table.append(f'    if (std::strcmp(which, "{i}") == 0) return {call};')
    table += ["  } catch (const tune::Error& e) {",
              "    const tune::StatusCode code = e.status().code();",
              "    if (code != tune::StatusCode::unavailable && code != tune::StatusCode::not_found) throw;",
              '    std::printf("no device: %s\\n", e.what());',
              "    return 77;", "  }",
              '  std::fprintf(stderr, "no program %s\\n", which);', "  return 2;", "}"]
    return "\n".join(head + parts + table) + "\n"


def write_cpp(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    snippets = [s for s in all_snippets() if s.lang == "cpp"]
    for g in GROUPS:
        text = cpp_unit([s for s in snippets if s.group == g], g)
        path = out / f"snippets_{g}.cpp"
        if not path.exists() or path.read_text() != text:  # unchanged: no rebuild
            path.write_text(text)


def run_cpp(group, exe, build, skip_reason):
    snippets = [s for s in all_snippets() if s.lang == "cpp" and s.group == group]
    if skip_reason:
        print(f"SKIPPED: {len(snippets)} C++ snippet(s) need {group}: {skip_reason}")
        for s in snippets:
            print(f"  not compiled: {s.where}")
        return SKIP
    if not snippets:
        print(f"SKIPPED: no C++ snippet needs {group}")
        return SKIP
    target = pathlib.Path(exe).stem
    print(f"compiling {len(snippets)} C++ snippet(s) ({target})", flush=True)
    r = subprocess.run(["cmake", "--build", build, "--target", target])
    if r.returncode != 0:
        print(f"FAILED: the {group} snippets do not compile (errors above name the .md lines)")
        return 1
    listing = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
    programs = [line.split(" ", 1) for line in listing if line]
    failed = skipped = 0
    for number, where in programs:
        r = subprocess.run([exe, number], capture_output=True, text=True, timeout=240)
        text = (r.stdout + r.stderr).strip().replace("\n", "\n    ")
        if r.returncode == SKIP:
            skipped += 1
            print(f"  skipped {where} (exit 77): {text}")
        elif r.returncode != 0:
            failed += 1
            print(f"  FAILED {where} (exit {r.returncode}):\n    {text}")
        else:
            print(f"  ran {where}: {text.splitlines()[-1] if text else 'ok'}")
    print(f"{len(snippets)} compiled; {len(programs)} program(s): "
          f"{len(programs) - failed - skipped} ran, {skipped} skipped, {failed} failed")
    return 1 if failed else 0


def run_python(pythonpath, skip_reason):
    snippets = [s for s in all_snippets() if s.lang == "python"]
    failed = 0
    for s in snippets:  # byte-compile every one, whether or not the module is built
        try:
            compile(s.code, s.where, "exec")
        except SyntaxError as e:
            failed += 1
            print(f"  FAILED to compile {s.where}: {e}")
    print(f"{len(snippets)} Python snippet(s) byte-compiled, {failed} failed")
    if failed:
        return 1
    if skip_reason:
        print(f"SKIPPED running them: {skip_reason}")
        return SKIP
    env = dict(os.environ, PYTHONPATH=pythonpath, PYTHONDONTWRITEBYTECODE="1")
    probe = subprocess.run([sys.executable, "-c", "import libtune"], env=env, capture_output=True,
                           text=True)
    if probe.returncode != 0:
        print(f"SKIPPED running them: the module does not import: {probe.stderr.strip()}")
        return SKIP
    ran = skipped = 0
    for s in snippets:
        if s.kind != "program":
            print(f"  byte-compiled only ({s.kind}): {s.where}")
            continue
        # A snippet that needs a device this build or machine lacks ends in a TuneError whose
        # code says so: that is a skip with its reason, anything else a failure.
        wrapper = ("import sys, libtune\n"
                   "try:\n    exec(compile(sys.stdin.read(), %r, 'exec'), {'__name__': '__main__'})\n"
                   "except libtune.TuneError as e:\n"
                   "    if e.code in ('unavailable', 'not_found'):\n"
                   "        print('no device:', e); sys.exit(77)\n"
                   "    raise\n") % s.where
        r = subprocess.run([sys.executable, "-c", wrapper], input=s.code, env=env,
                           capture_output=True, text=True, timeout=240, cwd=ROOT)
        text = (r.stdout + r.stderr).strip().replace("\n", "\n    ")
        if r.returncode == SKIP:
            skipped += 1
            print(f"  skipped {s.where}: {text}")
        elif r.returncode != 0:
            failed += 1
            print(f"  FAILED {s.where} (exit {r.returncode}):\n    {text}")
        else:
            ran += 1
            print(f"  ran {s.where}")
    print(f"ran {ran}, skipped {skipped}, failed {failed}")
    if failed:
        return 1
    return SKIP if ran == 0 else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cpp")
    c.add_argument("--out", required=True)
    r = sub.add_parser("run-cpp")
    r.add_argument("--group", required=True, choices=GROUPS)
    r.add_argument("--exe", default="")
    r.add_argument("--build", default="")
    r.add_argument("--skip", default="")
    p = sub.add_parser("python")
    p.add_argument("--pythonpath", default="")
    p.add_argument("--skip", default="")
    sub.add_parser("list")
    a = ap.parse_args()
    if a.cmd == "cpp":
        write_cpp(a.out)
        return 0
    if a.cmd == "run-cpp":
        return run_cpp(a.group, a.exe, a.build, a.skip)
    if a.cmd == "python":
        return run_python(a.pythonpath, a.skip)
    for s in all_snippets():
        print(f"{s.where}\t{s.lang}\t{s.kind}\t{s.group}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
