// tuning_study: the tuning-time and selection-quality figures of issue 7, measured on any
// tune::Device, printed as markdown tables for bench/RESULTS.md, raw data written under --out.
//
//   tuning_study racing  [--device SPEC] [--large] [--quick] [--kernel NAME] [--out DIR]
//       Per bundled kernel and size: tuning with racing vs exhaustive timing, each from a cold
//       state (fresh device, fresh Autotuner, no persistent cache: compile time included), and
//       again with every variant compiled first (Autotuner::warmup, timed apart). Reports
//       wall time, timed repetitions, device time spent timing, the winners, and the winners
//       re-timed side by side with a long budget (raced / exhaustive median ratio).
//   tuning_study quality [--device SPEC] [--large] [--quick] [--kernel NAME] [--out DIR]
//       >= 20 (kernel, shape) cases, ragged shapes included: tune with default options, then
//       re-time every configuration with a long budget, interleaved in rounds; chosen / best.
//       The winner's and the best configuration's outputs are checked on the CPU reference.
//   tuning_study record  [--device SPEC] [--large] [--quick] [--kernel NAME] [--out DIR]
//                        [--space bundled|wide] [--size MxNxK] [--long-ms MS]
//                        [--max-seconds S] [--resume FILE] [--jobs N]
//       Times every configuration of one kernel's space at one size and writes a replay file
//       (format: studies/replay.hpp) for `search_eval --replay FILE`: variants compile on all
//       cores while each is verified once and timed; rows (median, quantiles, compile time,
//       status or failure reason) are flushed one by one in a fixed shuffled order, so a run
//       cut short leaves a usable sample. --max-seconds stops cleanly; --resume FILE appends
//       the configs FILE lacks. --space wide: matmul_f32 over wider domains of its own
//       parameters (>= 1000 accepted configurations).
//   tuning_study slots   [--device SPEC] [--kernel NAME] [--size MxNxK] [--rounds N] [--out DIR]
//       Whether a turn's place in a round of sustained turns biases its time (issue 15): the
//       clock's course over consecutive turns, then five copies of one kernel and five real
//       configurations through the tuner's showdown and three schedules, N repetitions.
//       Writes slots.json (analysis: studies/slots_summary.py).
//
// Persistent caches are switched off for the whole process (TUNE_CACHE=off, and the drivers'
// own shader caches where an environment variable controls them) so that "cold" means cold.
// Progress goes to stderr; tables to stdout.
//
// One file per subcommand (racing.cpp, quality.cpp, record.cpp); what they share: study.hpp.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>

#include "study.hpp"

using namespace study;

namespace {

void disable_persistent_caches() {
  // libtune's tuning cache and the CUDA/HIP binary cache; Mesa's and NVIDIA's shader caches;
  // the CUDA driver's JIT cache. Set before any device opens.
  ::setenv("TUNE_CACHE", "off", 1);
  ::setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
  ::setenv("__GL_SHADER_DISK_CACHE", "0", 1);
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  ::unsetenv("TUNE_DISABLE");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tuning_study: racing, selection-quality and replay-recording figures (issue 7)"};
  app.require_subcommand(1, 1);
  Options o;
  auto common = [&o](CLI::App* sc) {
    sc->add_option("--device", o.device,
                   "device spec for tune::open_device (default: its own "
                   "choice: TUNE_DEVICE, TUNE_BACKEND, then the first)");
    sc->add_flag("--large", o.large, "GPU-sized problems (vector_add/reduce 2^26, matmul 4096^3)");
    sc->add_flag("--quick", o.quick, "small sizes and short long-budgets (lavapipe)");
    sc->add_option("--kernel", o.kernel, "only this bundled kernel");
    sc->add_option("--out", o.out, "directory for raw data files")->capture_default_str();
    sc->add_option("--rounds", o.rounds, "interleaved rounds of the long re-timing")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    sc->add_option("--long-ms", o.long_ms,
                   "repetition budget per config of the long re-timing (record: of the timing)");
    sc->add_option("--size", o.size, "one problem size, e.g. 4096x4096x4096 or 1048576");
  };
  auto* racing = app.add_subcommand("racing", "tuning wall time, racing vs exhaustive");
  auto* quality = app.add_subcommand("quality", "chosen / best over >= 20 (kernel, shape) cases");
  auto* record = app.add_subcommand("record", "time a kernel's whole space, write a replay file");
  auto* slots = app.add_subcommand("slots", "whether a turn's place in a round biases its time");
  for (auto* sc : {racing, quality, record, slots}) common(sc);
  record->add_option("--space", o.space, "bundled or wide (matmul_f32)")->capture_default_str();
  record->add_option("--max-seconds", o.max_seconds,
                     "stop cleanly this many seconds after start (rows so far are kept)");
  record->add_option("--resume", o.resume,
                     "append to this recording, recording only the configs it lacks");
  record->add_option("--jobs", o.jobs, "cores to use: jobs-1 compile threads (default: all)");
  CLI11_PARSE(app, argc, argv);
  o.command = app.get_subcommands().front()->get_name();
  if (!o.size.empty() && !parse_size(o.size))
    die("--size", Status(StatusCode::invalid_argument, "expected e.g. 256x256x256 or 1048576"));
  disable_persistent_caches();
  g_start = Clock::now();
  if (o.command == "racing") return cmd_racing(o);
  if (o.command == "quality") return cmd_quality(o);
  if (o.command == "slots") return cmd_slots(o);
  return cmd_record(o);
}
