#!/usr/bin/env bash
# with-clocks.sh <out-dir> -- <command...>
#
# Runs <command> with an NVIDIA clock/power log beside it (issue 15: every GPU bench states the
# clock its figures were measured at). While the command runs, `nvidia-smi` samples every
# 200 ms into <out-dir>/clocks.csv; afterwards <out-dir>/clocks-summary.txt (also printed on
# stdout) gives, per GPU, the min / median / max SM clock, memory clock and power draw over the
# command's span, the highest temperature, the performance states seen and the GPU's maximum
# SM clock, so a reader can tell whether the figures were taken at full clock.
# The command's stdout and stderr pass through unchanged; the script exits with its status.
# Without nvidia-smi on PATH it says so on stderr and just runs the command.
set -uo pipefail

usage() {
  echo "usage: $0 <out-dir> -- <command...>" >&2
  exit 2
}
[[ $# -ge 3 && $2 == "--" ]] || usage
out=$1
shift 2
mkdir -p "$out" || exit 2

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "with-clocks: nvidia-smi not found; running without a clock log" >&2
  "$@"
  exit $?
fi

log="$out/clocks.csv"
summary="$out/clocks-summary.txt"
fields=timestamp,index,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu
nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,name,index --format=csv,noheader,nounits \
  >"$out/clocks-max.csv" 2>/dev/null
nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 200 >"$log" 2>/dev/null &
logger=$!
start=$(date -u +%FT%TZ)
"$@"
rc=$?
end=$(date -u +%FT%TZ)
# One more sample after the command, then stop the logger (ours, by its id).
sleep 0.3
kill "$logger" 2>/dev/null
wait "$logger" 2>/dev/null

# Per GPU index: min / median / max of a column (the median of an even count is the mean of
# the middle two). Rows with a non-numeric field ([N/A], [Not Supported]) are skipped for it.
summarise() {
  awk -F', *' -v start="$start" -v end="$end" -v rc="$rc" -v maxfile="$out/clocks-max.csv" '
    # POSIX awk has no asort: an insertion sort (a few thousand samples at most).
    function stat(list,    a, i, j, k, v, med) {
      k = split(list, a, " ")
      for (i = 2; i <= k; i++) {
        v = a[i] + 0
        for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) a[j + 1] = a[j]
        a[j + 1] = v
      }
      med = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
      return sprintf("min %g / median %g / max %g", a[1], med, a[k])
    }
    function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
    BEGIN {
      while ((getline line < maxfile) > 0) {
        split(line, m, ", *")
        maxsm[m[4]] = m[1]; maxmem[m[4]] = m[2]; name[m[4]] = m[3]
      }
    }
    NF >= 7 {
      g = $2; n[g]++; if (!(g in seen)) { order[++gpus] = g; seen[g] = 1 }
      if (num($4)) sm[g] = sm[g] " " $4
      if (num($5)) mem[g] = mem[g] " " $5
      if (num($6)) pw[g] = pw[g] " " $6
      if (num($7) && $7 + 0 > temp[g] + 0) temp[g] = $7
      if (index(" " ps[g] " ", " " $3 " ") == 0) ps[g] = (ps[g] == "" ? $3 : ps[g] " " $3)
    }
    END {
      printf "clock log: %s to %s, command exit status %s\n", start, end, rc
      if (gpus == 0) print "  no samples (the command ran for less than one 200 ms interval?)"
      for (i = 1; i <= gpus; i++) {
        g = order[i]
        printf "GPU %s (%s): %d samples, pstates %s, max temperature %s C\n", g, name[g], n[g], ps[g], temp[g]
        printf "  SM clock MHz:  %s (the GPU max %s)\n", sm[g] == "" ? "n/a" : stat(sm[g]), maxsm[g]
        printf "  mem clock MHz: %s (the GPU max %s)\n", mem[g] == "" ? "n/a" : stat(mem[g]), maxmem[g]
        printf "  power W:       %s\n", pw[g] == "" ? "n/a" : stat(pw[g])
      }
    }' "$log"
}
summarise | tee "$summary"
exit "$rc"
