#!/usr/bin/env bash
# scripts/with-clocks.sh against a fake nvidia-smi (fake-nvidia-smi, canned samples): the
# summary's arithmetic per GPU, the command's output and exit status passed through, and the
# plain run when nvidia-smi is absent.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../scripts/with-clocks.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- summary:" >&2
  cat "$tmp/out/clocks-summary.txt" >&2 2>/dev/null
  exit 1
}
expect() {  # expect <file> <line>: the exact line is in the file
  grep -qxF -- "$2" "$1" || fail "expected the line '$2' in $1"
}

mkdir -p "$tmp/bin"
ln -s "$here/fake-nvidia-smi" "$tmp/bin/nvidia-smi"
# The command sleeps past one logging interval, prints, and exits 3.
out=$(PATH="$tmp/bin:$PATH" "$script" "$tmp/out" -- sh -c 'sleep 0.3; echo hello; exit 3')
rc=$?
[[ $rc == 3 ]] || fail "exit status $rc, not the command's 3"
grep -qx hello <<<"$out" || fail "the command's output did not pass through"
s=$tmp/out/clocks-summary.txt
[[ -s $s && -s $tmp/out/clocks.csv ]] || fail "no summary or log in $tmp/out"
# GPU 0: SM 1980 1755 1410 1980 -> median (1755+1980)/2 = 1867.5; power skips [N/A]:
# 650.5 700 120.25 -> median 650.5.
expect "$s" "GPU 0 (NVIDIA H200): 4 samples, pstates P0 P2, max temperature 66 C"
expect "$s" "  SM clock MHz:  min 1410 / median 1867.5 / max 1980 (the GPU max 1980)"
expect "$s" "  mem clock MHz: min 3201 / median 3201 / max 3201 (the GPU max 3201)"
expect "$s" "  power W:       min 120.25 / median 650.5 / max 700"
expect "$s" "GPU 1 (NVIDIA H200): 1 samples, pstates P0, max temperature 40 C"
expect "$s" "  SM clock MHz:  min 1755 / median 1755 / max 1755 (the GPU max 1980)"
grep -q "command exit status 3" "$s" || fail "the summary does not state the exit status"
grep -qF "GPU 0 (NVIDIA H200)" <<<"$out" || fail "the summary was not printed on stdout"

# No nvidia-smi: a note on stderr, the command runs, its status comes back.
mkdir -p "$tmp/empty"
for tool in sh mkdir; do ln -s "$(command -v $tool)" "$tmp/empty/$tool"; done
err=$(PATH="$tmp/empty" "$BASH" "$script" "$tmp/none" -- sh -c 'exit 5' 2>&1 >/dev/null)
rc=$?
[[ $rc == 5 ]] || fail "without nvidia-smi: exit status $rc, not 5"
grep -q "nvidia-smi not found" <<<"$err" || fail "without nvidia-smi: no note ($err)"

# A wrong command line is refused.
"$script" "$tmp/x" echo hi >/dev/null 2>&1 && fail "a command line without -- was accepted"
echo "with-clocks.sh: all checks passed"
