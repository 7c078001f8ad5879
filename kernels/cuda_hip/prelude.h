// prelude.h: the small common ground that lets one kernel source compile under NVRTC (CUDA)
// and hiprtc (HIP). Pasted in front of every bundled kernel at build time, so a kernel's
// source text is self-contained and its hash covers the prelude too.
//
// Provides: TUNE_CUDA / TUNE_HIP, TUNE_WARP_SIZE (a compile-time constant the backend defines
// for the target: 32 on NVIDIA, 64 or 32 on AMD), TUNE_KERNEL, warp shuffles, f16 <-> f32
// conversions on 16-bit storage, dynamic shared memory, and asynchronous global->shared copies
// (cp.async on sm_80+, plain loads elsewhere: same results, no overlap).
#if defined(__HIP__) || defined(__HIPCC_RTC__)
#define TUNE_HIP 1
#define TUNE_CUDA 0
#else
#define TUNE_HIP 0
#define TUNE_CUDA 1
#endif

#ifndef TUNE_WARP_SIZE
#define TUNE_WARP_SIZE 32
#endif

#define TUNE_KERNEL extern "C" __global__
#define TUNE_DEVICE __device__ __forceinline__
#define TUNE_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]

// Whether cp.async and mma.sync m16n8k16 (sm_80+) are available in this compilation.
#if TUNE_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TUNE_HAS_CP_ASYNC 1
#define TUNE_HAS_MMA_SYNC 1
#else
#define TUNE_HAS_CP_ASYNC 0
#define TUNE_HAS_MMA_SYNC 0
#endif

TUNE_DEVICE float tune_shfl_down(float v, int delta) {
#if TUNE_CUDA
  return __shfl_down_sync(0xffffffffu, v, delta);
#else
  return __shfl_down(v, delta);
#endif
}

// Sum over the lanes of one warp; lane 0 holds the total.
TUNE_DEVICE float tune_warp_sum(float v) {
#pragma unroll
  for (int d = TUNE_WARP_SIZE / 2; d > 0; d >>= 1) v += tune_shfl_down(v, d);
  return v;
}

// IEEE binary16 kept as its 16 bits (no vendor half headers needed under either compiler).
typedef unsigned short tune_f16;

TUNE_DEVICE float tune_f16_to_f32(tune_f16 h) {
#if TUNE_CUDA
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  return (float)__builtin_bit_cast(_Float16, h);
#endif
}

TUNE_DEVICE tune_f16 tune_f32_to_f16(float f) {
#if TUNE_CUDA
  tune_f16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return __builtin_bit_cast(tune_f16, (_Float16)f);
#endif
}

// Asynchronous copies into shared memory. `valid` false writes zeros (bounds handling).
// Completion: tune_cp_async_commit() closes a group; tune_cp_async_wait<N>() waits until at
// most N groups are pending; a __syncthreads() must follow before other threads read.
TUNE_DEVICE void tune_cp_async_16(void* smem, const void* gmem, bool valid) {
#if TUNE_HAS_CP_ASYNC
  unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(valid ? 16 : 0));
#else
  const int4 v = valid ? *(const int4*)gmem : make_int4(0, 0, 0, 0);
  *(int4*)smem = v;
#endif
}

TUNE_DEVICE void tune_cp_async_4(void* smem, const void* gmem, bool valid) {
#if TUNE_HAS_CP_ASYNC
  unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(valid ? 4 : 0));
#else
  *(float*)smem = valid ? *(const float*)gmem : 0.0f;
#endif
}

TUNE_DEVICE void tune_cp_async_commit() {
#if TUNE_HAS_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
TUNE_DEVICE void tune_cp_async_wait() {
#if TUNE_HAS_CP_ASYNC
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}
