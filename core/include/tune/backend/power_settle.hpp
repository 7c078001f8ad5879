// How long a GPU's power management takes to follow one kernel, for backend authors: what
// DeviceInfo::power_settle_ms holds (the length of the showdown's sustained turns is twice
// it; TimingExpert::showdown_sustain_ms).
//
// Measured on an H200 (bench/RESULTS.md, `tune-lab turns`, 2026-12-02): after heat, two
// 8192^3 wgmma matmul tile orders tie within 0.5% in turns of 1 or 5 launches; in turns of
// 25 launches (45 ms) the one that draws more power is 2.9% slower over its last five launches,
// in turns of 100 (180 ms) 6%. Turns of 50 ms (25 ms here) were too short for that split:
// `tune-lab stability --quality --heat-ms 1000` on the wgmma matmul (2026-12-02, 5eb395d^) made 5
// wrong picks in 10 at 8192^3 with them (GROUP_M=1, 5.3% slower run back to back) and 1 in 10 with
// 100 ms turns (at 4096^3 0 and 1 in 10), so 50 ms: 100 ms turns, about 2 x contestants x 100 ms
// per near-tie. Other vendors' GPUs are unmeasured: the same value stands for them until someone
// measures.
#pragma once

namespace tune {

inline constexpr double kGpuPowerSettleMs = 50.0;

}  // namespace tune
