// C = A B on Hopper (sm_90a) with fp16 or bf16 inputs and output and fp32 accumulation; A is
// MxK, B is KxN, C is MxN, all row-major. The element type is f16 unless WG_BF16 is defined
// (the bf16 bundled kernel passes -DWG_BF16=1 among its source options).
//
// Warp-specialised and persistent, the structure of CUTLASS's sm90 "TMA warp-specialized"
// GEMM written out in inline PTX (no headers, NVRTC compiles it in about a second):
// - Warpgroup 0 is the producer: one thread streams A and B tiles (BM x BK of A, BK x BN of
//   B; BK = 32, 64 or 128, default 64) into WG_STAGES shared-memory stages with TMA
//   (cp.async.bulk.tensor), each stage guarded
//   by a "full" mbarrier (TMA completes its transaction bytes) and an "empty" mbarrier (the
//   consumers release it). For shapes TMA cannot address (below) all 128 threads of the
//   warpgroup copy the tiles instead.
// - Warpgroups 1..WG_CONSUMERS are consumers: each owns BM / WG_CONSUMERS rows of the tile and
//   issues wgmma.mma_async (m64 x BN x k16) straight from shared memory through matrix
//   descriptors, keeping one k-tile of wgmmas in flight, then stores its fp32 accumulators as
//   fp16/bf16 pairs to global memory, guarded against M and N (the producer already loads the
//   next tile meanwhile).
// - Tiles are visited persistently: block b takes tiles b, b + gridDim.x, ... in GROUP_M order
//   (GROUP_M tile rows at a time, Triton's L2-friendly order).
// - Ping-pong (WG_PINGPONG = 1; two consumers, no clusters; CUTLASS's "pingpong" schedule):
//   each consumer computes whole BM x BN tiles, the block's tiles dealt to the consumers in
//   turn, and their main loops take turns through a "turn" mbarrier per consumer, so one
//   consumer's epilogue runs while the other's wgmmas keep the tensor cores busy. Without it
//   both consumers store at once and the tensor cores wait: short main loops (K = 512: eight
//   k-tiles of 64) lose a large share of each tile to it. The producer is unchanged.
// - TMA-store epilogue (WG_TMA_STORE = 1; clusters too): each consumer writes its tile as
//   fp16/bf16 into its own shared-memory buffer, laid out as 128-byte-swizzled TMA boxes, and
//   one of its threads stores the boxes with cp.async.bulk.tensor (a bulk group) while the
//   consumer goes on to its next tile's main loop; the buffer is reused once the previous
//   stores have read it (cp.async.bulk.wait_group.read). The plain epilogue stores a 4-byte
//   pair per instruction from registers, half a sector per row of a warp, with the tensor
//   cores idle: at K = 512 (eight k-tiles of 64) that was a third of each tile's time. A C
//   that TMA cannot address (N % 8 != 0, or C not 16-byte aligned: the host passes a zero map)
//   takes the plain stores. With clusters the buffers lie outside the stages (the peer's
//   multicasts never reach them) and a pair's tile past M stores nothing (m0 >= M).
// - Clusters (CLUSTER_M = 2; launched with LaunchDims::cluster = {2, 1, 1}): the two blocks of
//   a cluster take tile rows 2u and 2u + 1 of one tile column together, walking such pairs
//   ("units") persistently in GROUP_M order in lockstep (cluster c takes units c, c +
//   clusters, ...). They share B: each block's producer loads its share of B's 64-column
//   chunks (half, contiguous; rank 0 the larger with BN = 192) and multicasts them into both
//   blocks' stages (cp.async.bulk.tensor .multicast::cluster, ctaMask 0b11), completing bytes on
//   both blocks' full barriers, which expect A's bytes and all of B's. Since either producer writes
//   into both blocks' stages, each consumer warp releases a stage on both blocks' empty barriers
//   (mapa + mbarrier.arrive.shared::cluster; empty barriers count 4 x WG_CONSUMERS x 2 arrivals; a
//   later phase's arrival cannot overtake an earlier phase's, as a block's next full phase needs
//   the peer's multicast, issued only after the peer's empty phase completed). Cluster barriers
//   (barrier.cluster arrive/wait) follow the barriers' initialisation and precede every thread's
//   exit, and the producer thread first waits for its last stages' releases, so no block exits
//   while its peer may still multicast to it or arrive on its barriers. With an odd number of tile
//   rows the last pair's second tile lies past M: its block still takes part in everything
//   (loads its share of B, waits, computes on a stale A it skipped loading, releases) and
//   stores nothing. The copy path (below) multicasts nothing: each block copies its own A
//   and all of B, and its consumers release their own block's stages alone (without the
//   multicast nothing would order the phases of cross-block releases; the blocks share only
//   the cluster barriers). A block launched without its cluster returns at once, storing
//   nothing.
// - Split K (SPLIT_K = 2 or 4; LaunchDims::cluster = {SPLIT_K, 1, 1}; no CLUSTER_M, ping-pong or
//   TMA store): the blocks of a cluster take the same tile, block r the k-tiles of slice r,
//   walking tiles persistently in lockstep as the pairs above. After a tile's main loop each
//   block's consumers write their partial accumulators into its stages and every block sums
//   its share of the tile from all blocks' partials (distributed shared memory) and stores it
//   (wg_split_k_store). For shapes of few tiles and long K, where one block per tile leaves
//   most SMs idle.
//
// Shared-memory layouts (as TMA writes them; every tile starts at a 1024-byte boundary so the
// swizzle phase TMA and wgmma compute from the address agree):
// - A tile, "K-major" for wgmma, leading byte offset unused (1), k-step = +32 bytes within a
//   swizzled row: BK = 64: BM rows of 64 elements (128 bytes), 128-byte swizzle
//   (CU_TENSOR_MAP_SWIZZLE_128B, descriptor layout type 1), stride byte offset 1024 (between
//   8-row groups). BK = 128: two such slices (k 0-63 and 64-127) one after the other, one TMA
//   box each. BK = 32: BM rows of 32 elements (64 bytes), 64-byte swizzle
//   (CU_TENSOR_MAP_SWIZZLE_64B, layout type 2), stride byte offset 512.
// - B tile: BN / 64 chunks of BK k-rows x 64 n (one TMA box each, BK x 128 bytes), 128-byte
//   swizzled, "MN-major" for wgmma (N is contiguous in row-major B): the instruction's
//   transpose-B bit is set, leading byte offset BK x 128 (between 64-column chunks), stride
//   byte offset 1024 (between 8-k groups), k-step = 16 rows = +2048 bytes.
//
// Edges: TMA zero-fills everything outside the matrices (rows >= M, k >= K, columns >= N), so
// the main loop has no bounds checks; the stores are guarded. Any M, N, K >= 1 works:
// - TMA needs 16-byte aligned addresses and row strides: K % 8 == 0 and N % 8 == 0. Other
//   shapes (and a misaligned A or B) take the copy path, decided once per launch from the
//   arguments (kernel-uniform): the producer warpgroup's 128 threads read the tiles in
//   chunks of 8 elements of a row, WG_COPY_BATCH chunks' loads in flight per thread, each
//   chunk from the one or two 16-byte ALIGNED blocks that cover its bytes (predicated
//   ld.global.nc.v4: the first where the chunk has a valid element, the second only where its
//   valid elements reach into it; none past M or K), shifted into place and zeroed past the
//   matrix (k >= K or n >= N: the next row's elements). wg_chunk.h holds that arithmetic,
//   shared with a CPU test, and why reading a whole aligned block never faults. They write
//   the chunks in exactly the swizzled layout TMA would, then fence the writes to the async
//   proxy (wgmma reads shared memory through it) and arrive on the stage's full barrier,
//   which then counts 128 plain arrivals instead of one expect_tx. The host passes zero
//   tensor maps for such shapes (TensorMapSpec::zeros_when_unaligned) and this path never
//   touches them. The consumers and the empty barriers do not know which path filled a stage.
// - An odd N misaligns the epilogue's paired 4-byte stores: it stores 2-byte halves then.
// Aligned shapes take the TMA path as before; what they gained is a uniform branch per stage
// in the producer thread and one per stored pair in the epilogue (ptxas: consumer registers
// 93/155/155/154 for 128x128x2, 256x128, 128x128x1, 128x256 against 90/154/154/154 before).
//
// Kernel parameters: the six of the matmul signature, then two CUtensorMaps by value
// (__grid_constant__), which libtune's CUDA backend encodes per call from A and B
// (KernelSource::tensor_maps; see cuda_hip_kernels.cpp), zeros where TMA cannot address them.
#include "prelude.h"
#include "wg_chunk.h"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "matmul_wgmma needs sm_90a (wgmma, TMA): compile with the arch-specific target"
#endif

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef WG_CONSUMERS
#define WG_CONSUMERS 2
#endif
#ifndef TUNE_NUM_STAGES
#define TUNE_NUM_STAGES 4
#endif
#ifndef BK
#define BK 64
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#if CLUSTER_M != 1 && CLUSTER_M != 2
#error "CLUSTER_M must be 1 or 2"
#endif
#ifndef WG_PINGPONG
#define WG_PINGPONG 0
#endif
#if WG_PINGPONG && (CLUSTER_M != 1 || WG_CONSUMERS < 2)
#error "WG_PINGPONG needs two or more consumer warpgroups and no clusters"
#endif
#ifndef WG_TMA_STORE
#define WG_TMA_STORE 0
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#if SPLIT_K != 1 && SPLIT_K != 2 && SPLIT_K != 4
#error "SPLIT_K must be 1, 2 or 4"
#endif
#if SPLIT_K > 1 && (CLUSTER_M != 1 || WG_PINGPONG || WG_TMA_STORE)
#error "SPLIT_K takes no CLUSTER_M, WG_PINGPONG or WG_TMA_STORE"
#endif
#define WG_CLUSTER (CLUSTER_M * SPLIT_K)  // blocks per cluster

#ifdef WG_BF16
#define WG_PTX_T "bf16"
#define WG_CVT_X2 "cvt.rn.bf16x2.f32"
#else
#define WG_PTX_T "f16"
#define WG_CVT_X2 "cvt.rn.f16x2.f32"
#endif

#define WG_BK BK  // k per stage
#if WG_BK == 32
// One 64-byte swizzled slice of A per stage (rows of 32 elements).
#define WG_A_ROW_BYTES 64
#define WG_A_SWIZZLE_MODE 2ull  // the descriptor's layout type: 64-byte swizzle
#elif WG_BK == 64 || WG_BK == 128
// One or two 128-byte swizzled slices of A per stage (rows of 64 elements each).
#define WG_A_ROW_BYTES 128
#define WG_A_SWIZZLE_MODE 1ull  // 128-byte swizzle
#else
#error "BK must be 32, 64 or 128"
#endif
#define WG_A_SLICES (WG_BK * 2 / WG_A_ROW_BYTES)  // A slices per stage (one TMA box each)
#define WG_A_SLICE_BYTES (BM * WG_A_ROW_BYTES)
#define WG_KS_PER_SLICE (WG_A_ROW_BYTES / 32)  // k16 steps per slice: +32 bytes each
#define WG_STAGES TUNE_NUM_STAGES
#define WG_THREADS (128 * (WG_CONSUMERS + 1))
#if WG_PINGPONG
#define WG_ROWS BM  // ping-pong: each consumer owns whole tiles
#define WG_TILE_CONSUMERS 1
#define WG_ROW0(c) 0  // consumer c's first row within a tile
#else
#define WG_ROWS (BM / WG_CONSUMERS)  // rows of the tile one consumer owns
#define WG_TILE_CONSUMERS WG_CONSUMERS
#define WG_ROW0(c) ((c)*WG_ROWS)
#endif
#define WG_MI (WG_ROWS / 64)  // m64 wgmmas per k-step per consumer
#define WG_ACC (BN / 2)       // fp32 accumulators per thread per m64 block
#define WG_A_BYTES (BM * WG_BK * 2)
#define WG_B_CHUNK_BYTES (WG_BK * 64 * 2)  // BK k-rows x 64 columns
#define WG_B_BYTES (WG_BK * BN * 2)
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
// The TMA-store epilogue's buffers (WG_TMA_STORE = 1): one per consumer, its WG_ROWS x BN tile
// as BN / 64 boxes of WG_ROWS rows x 128 bytes, 128-byte swizzled (each box 1024-byte aligned).
#define WG_EPI_BOX_BYTES (WG_ROWS * 128)
#define WG_EPI_CONSUMER_BYTES (WG_ROWS * BN * 2)
#define WG_EPI_BYTES (WG_TMA_STORE * WG_CONSUMERS * WG_EPI_CONSUMER_BYTES)

// A CUtensorMap as the kernel sees it: 128 opaque bytes, 64-byte aligned.
struct __align__(64) wg_tensor_map {
  unsigned long long opaque[16];
};

TUNE_DEVICE unsigned wg_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// --- mbarriers (shared::cta) ----------------------------------------------------------------
TUNE_DEVICE void wg_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
TUNE_DEVICE void wg_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
TUNE_DEVICE void wg_mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase of parity `parity` has completed (a fresh barrier counts the phase
// before its first as completed with parity 1, so producers start waiting on parity 1).
TUNE_DEVICE void wg_mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// --- Clusters (CLUSTER_M = 2) ---------------------------------------------------------------
TUNE_DEVICE unsigned wg_cluster_reg_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
TUNE_DEVICE unsigned wg_cluster_reg_size() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
TUNE_DEVICE unsigned wg_cluster_reg_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
TUNE_DEVICE unsigned wg_cluster_reg_count() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}
// Every thread of the cluster's blocks: arrive (release: this thread's earlier writes, its
// mbarrier initialisations and remote arrivals included) and wait (acquire) for the others. Not the
// .aligned form: the producer thread runs it alone in its warp.
TUNE_DEVICE void wg_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// An arrival on the mbarrier at the same offset `bar` in block `rank` of the cluster (this
// block's own included): mapa turns the offset into that block's shared::cluster address.
// The arrival's ordering is the default, release at CTA scope, as CUTLASS's
// PipelineTmaAsync::consumer_release: it only says that this warp's wgmmas, waited for, have
// read the stage, which the peer's producer then overwrites with TMA: that rests on
// wgmma.wait_group having completed the reads, not on the release. A consumer that wrote shared
// memory for the other block to read would need `.release.cluster` and a proxy fence.
// `.release.cluster` compiled to MEMBAR.ALL.GPU before every arrival, a fence that waits for the
// thread's outstanding memory operations: the clustered configurations ran at 0.3-0.65x the
// speed of the same tiles unclustered with it (bench/RESULTS.md, the wgmma matmul's clusters).
TUNE_DEVICE void wg_mbar_arrive_cluster(unsigned bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}

// --- TMA ------------------------------------------------------------------------------------
// One box of `map` at (x = inner/column coordinate, y = row) into shared memory at `dst`,
// completing its bytes on mbarrier `bar`. Out-of-range elements are written as zeros.
TUNE_DEVICE void wg_tma_load_2d(unsigned dst, const wg_tensor_map* map, unsigned bar, int x,
                                int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%3, %4}], [%2];\n" ::"r"(dst),
      "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y)
      : "memory");
}

// The same box written to the same offset `dst` of every block in `mask` (bit i: cluster rank
// i), each completing its bytes on its own mbarrier at offset `bar`.
TUNE_DEVICE void wg_tma_load_2d_multicast(unsigned dst, const wg_tensor_map* map, unsigned bar,
                                          int x, int y, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y), "h"(mask)
      : "memory");
}

// --- The TMA-store epilogue (WG_TMA_STORE = 1) ----------------------------------------------
// One box of shared memory at `src` to `map` at (x = column, y = row): asynchronous (a bulk
// group); elements outside the matrix are not written.
TUNE_DEVICE void wg_tma_store_2d(const wg_tensor_map* map, unsigned src, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          (unsigned long long)map),
      "r"(src), "r"(x), "r"(y)
      : "memory");
}
TUNE_DEVICE void wg_bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's committed stores have read their shared memory (it may be written again).
TUNE_DEVICE void wg_bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// This thread's committed stores are complete.
TUNE_DEVICE void wg_bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// The 128 threads of one consumer warpgroup (named barrier `id`, 1 + the consumer's index; 0
// is __syncthreads').
TUNE_DEVICE void wg_bar_sync(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

// --- wgmma ----------------------------------------------------------------------------------
// A shared-memory matrix descriptor: start address, leading and stride byte offsets (16-byte
// units), base offset 0 (tiles are 1024-byte aligned), layout type `mode` (1: 128-byte
// swizzle, 2: 64-byte swizzle).
TUNE_DEVICE unsigned long long wg_desc(unsigned addr, unsigned lbo, unsigned sbo,
                                       unsigned long long mode = 1ull) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (mode << 62);
}
// The descriptor of a consumer's A for m64 block `mi` and k16 step `ks` of a stage, from its
// rows' start `a_tile`: slice ks / WG_KS_PER_SLICE, +32 bytes per step within the slice.
TUNE_DEVICE unsigned long long wg_a_desc(unsigned a_tile, int mi, int ks) {
#if WG_A_SLICES == 1 && WG_A_ROW_BYTES == 128
  // BK = 64, written as before tile K existed (the general form, though equal in value,
  // compiles to other SASS for one consumer warpgroup).
  return wg_desc(a_tile + mi * 64 * 128 + ks * 32, 16, 1024);
#else
  return wg_desc(a_tile + (ks / WG_KS_PER_SLICE) * WG_A_SLICE_BYTES + mi * 64 * WG_A_ROW_BYTES +
                     (ks % WG_KS_PER_SLICE) * 32,
                 16, 8 * WG_A_ROW_BYTES, WG_A_SWIZZLE_MODE);
#endif
}
TUNE_DEVICE void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
TUNE_DEVICE void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
TUNE_DEVICE void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across a wgmma wait or fence
// (the registers are written asynchronously; CUTLASS's warpgroup_fence_operand).
TUNE_DEVICE void wg_fence_acc(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// D[64] += A(desc) x B(desc), m64n128k16; B transposed (MN-major, tnspB = 1).
TUNE_DEVICE void wg_mma_n128(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_PTX_T "." WG_PTX_T
      " "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(da), "l"(db), "r"(1));
}

// D[128] += A(desc) x B(desc), m64n256k16; B transposed (MN-major, tnspB = 1).
TUNE_DEVICE void wg_mma_n256(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_PTX_T "." WG_PTX_T
      " "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
      "%127"
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(1));
}

// D[96] += A(desc) x B(desc), m64n192k16; B transposed (MN-major, tnspB = 1).
TUNE_DEVICE void wg_mma_n192(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k16.f32." WG_PTX_T "." WG_PTX_T
      " "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
      "}, %96, %97, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(da), "l"(db), "r"(1));
}

#if BN == 128
#define WG_MMA wg_mma_n128
#elif BN == 192
#define WG_MMA wg_mma_n192
#elif BN == 256
#define WG_MMA wg_mma_n256
#else
#error "BN must be 128, 192 or 256"
#endif

// Tile index -> (tile row, tile column) in GROUP_M order.
TUNE_DEVICE void wg_tile_coords(int tile, int tiles_m, int tiles_n, int* tm, int* tn) {
  const int group = GROUP_M * tiles_n;
  const int first_m = (tile / group) * GROUP_M;
  const int rows = min(tiles_m - first_m, GROUP_M);
  *tm = first_m + (tile % group) % rows;
  *tn = (tile % group) / rows;
}

// --- The copy path (shapes TMA cannot address) ----------------------------------------------
// Whether TMA can address A (M x K) and B (K x N): 16-byte aligned addresses and row strides,
// the host's rule for encoding the maps (gpu_device.cpp tensor_maps_for), so the kernel never
// uses a map the host left as zeros.
TUNE_DEVICE bool wg_tma_ok(const unsigned short* A, const unsigned short* B, int N, int K) {
  return (K % 8) == 0 && (N % 8) == 0 && ((unsigned long long)A % 16) == 0 &&
         ((unsigned long long)B % 16) == 0;
}

// The four words of the 16-byte aligned `block` of A or B into v where `load` holds (the
// predicate inside the instruction: no branch between a batch's loads), v left alone otherwise
// (wg_chunk_load). A and B are read-only for the kernel's lifetime: the non-coherent path is
// safe.
struct wg_load16 {
  TUNE_DEVICE void operator()(const unsigned short* block, bool load, unsigned* v) const {
    asm("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n"
        "@p ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];\n}\n"
        : "+r"(v[0]), "+r"(v[1]), "+r"(v[2]), "+r"(v[3])
        : "l"(block), "r"((int)load));
  }
};

// Starts loading eight consecutive elements from `src`, the first `valid` (0..8) of them in
// the matrix: one or two aligned 16-byte loads, none for valid = 0 (wg_chunk.h; rows of a
// matrix with an odd length start at any even byte). wg_chunk_finish shifts them into place.
TUNE_DEVICE void wg_load_chunk(const unsigned short* src, int valid, wg_chunk& c) {
  wg_chunk_load(src, valid, wg_load16{}, c);
}

// A loaded chunk, shifted into place, into shared memory at `dst`.
TUNE_DEVICE void wg_store_chunk(unsigned dst, const wg_chunk& c) {
  unsigned w[4];
  wg_chunk_finish(c, w);
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(w[0]), "r"(w[1]),
               "r"(w[2]), "r"(w[3])
               : "memory");
}

TUNE_DEVICE int wg_clamp8(int n) { return n < 0 ? 0 : (n > 8 ? 8 : n); }

// 16-byte chunks a producer thread copies per batch: all its loads of a batch (one or two
// 16-byte loads per chunk) are issued before its stores, so several are in flight. A loop over
// fewer than 128 x WG_COPY_BATCH chunks per stage takes smaller batches (wg_batch). No
// setmaxnreg: the producer has the kernel's registers, which the consumers set (90-157).
// ptxas 13.0 for sm_90a gives the copy loop alone (a producer-only kernel, 2026-12-06) 64-71
// registers at a batch of 4 (36-43 with the former 2-byte loads), 112-122 at 8, no spills
// (a batch of 16 spills). 8: on an H100 at 4095x4097x4095 f16, 122.0 TFLOP/s against 97.4 at 4
// (bench/RESULTS.md).
#ifndef WG_COPY_BATCH
#define WG_COPY_BATCH 8
#endif
// The batch for a stage of `chunks` chunks: the largest that divides each thread's share
// (chunks / 128) and is at most WG_COPY_BATCH (BN = 192: B's 12 per thread in batches of 6).
TUNE_DEVICE constexpr int wg_batch(int chunks) {
  int b = chunks / 128 < WG_COPY_BATCH ? chunks / 128 : WG_COPY_BATCH;
  while (b > 1 && (chunks / 128) % b != 0) --b;
  return b;
}

// One stage's tiles by the producer warpgroup's thread `t` (of 128), in the layout TMA writes.
// 128-byte swizzle: within each 8-row x 128-byte atom (1024-byte aligned), the 16-byte chunk
// index is XORed with the row's index in the atom; 64-byte swizzle (A when BK = 32): rows of
// 64 bytes, the chunk index (0..3) XORed with bits 1-2 of the row (address bits 7-8). A:
// WG_A_SLICES slices of BM rows (from m0), each row WG_A_ROW_BYTES of k (slice h from
// k0 + 64 h). B: BN / 64 chunks of BK rows (one per k) of 64 columns, 128-byte swizzled.
// Consecutive threads take consecutive 16-byte chunks of a row, so a warp's global reads are
// contiguous.
TUNE_DEVICE void wg_copy_stage(const unsigned short* __restrict__ A,
                               const unsigned short* __restrict__ B, int M, int N, int K, int m0,
                               int n0, int k0, unsigned a_dst, unsigned b_dst, int t) {
  constexpr int b_batch = wg_batch(WG_BK * BN / 8);
  static_assert((WG_BK * BN / 8) % (128 * b_batch) == 0, "B chunks split evenly in batches");
  wg_chunk ch[WG_COPY_BATCH];
  unsigned dst[WG_COPY_BATCH];
#if WG_A_SLICES == 1 && WG_A_ROW_BYTES == 128
  // BK = 64: one 128-byte swizzled slice, written as before tile K existed (the general loop
  // below, though equal in value, compiles to other SASS).
  constexpr int a_batch = wg_batch(BM * 8);
  static_assert((BM * 8) % (128 * a_batch) == 0, "A chunks split evenly in batches");
#pragma unroll 1
  for (int q0 = t; q0 < BM * 8; q0 += 128 * a_batch) {
#pragma unroll
    for (int i = 0; i < a_batch; ++i) {
      const int q = q0 + 128 * i;
      const int r = q / 8, c = q % 8;  // tile row, 16-byte chunk of it
      const int m = m0 + r, k = k0 + 8 * c;
      const int valid = m < M ? wg_clamp8(K - k) : 0;
      wg_load_chunk(valid > 0 ? A + (long long)m * K + k : A, valid, ch[i]);
      dst[i] = a_dst + r * 128 + ((c ^ (r % 8)) * 16);
    }
#pragma unroll
    for (int i = 0; i < a_batch; ++i) wg_store_chunk(dst[i], ch[i]);
  }
#else
  constexpr int a_cpr = WG_A_ROW_BYTES / 16;  // 16-byte chunks per row of an A slice
  constexpr int a_chunks = WG_A_SLICES * BM * a_cpr;
  constexpr int a_batch = wg_batch(a_chunks);
  static_assert(a_chunks % (128 * a_batch) == 0, "A chunks split evenly in batches");
#pragma unroll 1
  for (int q0 = t; q0 < a_chunks; q0 += 128 * a_batch) {
#pragma unroll
    for (int i = 0; i < a_batch; ++i) {
      const int q = q0 + 128 * i;
      const int h = q / (BM * a_cpr), rq = q % (BM * a_cpr);  // slice, chunk within it
      const int r = rq / a_cpr, c = rq % a_cpr;               // tile row, 16-byte chunk of it
      const int m = m0 + r, k = k0 + 64 * h + 8 * c;
      const int valid = m < M ? wg_clamp8(K - k) : 0;
      wg_load_chunk(valid > 0 ? A + (long long)m * K + k : A, valid, ch[i]);
      // 128-byte swizzle: chunk ^ row % 8; 64-byte: chunk ^ bits 1-2 of the row.
      const int sw = WG_A_ROW_BYTES == 128 ? (c ^ (r % 8)) : (c ^ ((r >> 1) % 4));
      dst[i] = a_dst + h * WG_A_SLICE_BYTES + r * WG_A_ROW_BYTES + sw * 16;
    }
#pragma unroll
    for (int i = 0; i < a_batch; ++i) wg_store_chunk(dst[i], ch[i]);
  }
#endif
#pragma unroll 1
  for (int q0 = t; q0 < WG_BK * (BN / 8); q0 += 128 * b_batch) {
#pragma unroll
    for (int i = 0; i < b_batch; ++i) {
      const int q = q0 + 128 * i;
      const int kk = q / (BN / 8), cn = q % (BN / 8);  // k row of the tile, 8-column chunk
      const int k = k0 + kk, n = n0 + 8 * cn;
      const int valid = k < K ? wg_clamp8(N - n) : 0;
      wg_load_chunk(valid > 0 ? B + (long long)k * N + n : B, valid, ch[i]);
      dst[i] = b_dst + (cn / 8) * WG_B_CHUNK_BYTES + kk * 128 + (((cn % 8) ^ (kk % 8)) * 16);
    }
#pragma unroll
    for (int i = 0; i < b_batch; ++i) wg_store_chunk(dst[i], ch[i]);
  }
}

TUNE_DEVICE unsigned wg_pack_x2(float lo, float hi) {
  unsigned r;
  asm(WG_CVT_X2 " %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// The plain stores' pair `v` (two packed elements) at `dst`, column `col` of a row in range.
// With N even the pair is one aligned 4-byte store (the column is even, so both are in range
// when the first is); with N odd a pair straddles 4-byte words on odd rows: two 2-byte stores,
// the second guarded too.
TUNE_DEVICE void wg_store_pair(unsigned short* dst, bool paired, int col, int N, unsigned v) {
  if (col >= N) return;
  if (paired) {
    *(unsigned*)dst = v;
  } else {
    dst[0] = (unsigned short)(v & 0xFFFFu);
    if (col + 1 < N) dst[1] = (unsigned short)(v >> 16);
  }
}

#if SPLIT_K > 1
// Split K's epilogue. The cluster's SPLIT_K blocks hold partial sums of one tile (block r of
// k-tiles slice r). Each consumer thread writes its accumulators into this block's stages, as
// float4 groups at [consumer][group][thread] (the stages are free: every load of the unit has
// been waited for and computed, and the producers load again only after the second cluster
// barrier); then block r sums groups [r G / SPLIT_K, (r + 1) G / SPLIT_K) of every block's
// partials (ld.shared::cluster) and stores them, so each element of C is stored once, by one
// block, in a fixed order of the partials (the same result whatever the timing). The first
// cluster barrier (release / acquire at cluster scope) publishes the partials, the second says
// they have been read; every thread of the cluster takes part in both, the producers' too.
TUNE_DEVICE void wg_split_k_store(float (&acc)[WG_MI][WG_ACC], unsigned parts, int c, int m0,
                                  int n0, int M, int N, unsigned short* C, int krank) {
  constexpr int per_mi = WG_ACC / 4;          // float4 groups per m64 block
  constexpr int groups = WG_MI * per_mi;      // per thread
  constexpr unsigned group_bytes = 128 * 16;  // one group of the consumer's 128 threads
  static_assert(WG_CONSUMERS * groups * group_bytes <= WG_STAGES * WG_STAGE_BYTES,
                "the partial tiles fit in the stages");
  const int t = threadIdx.x % 128, lane = t % 32;
  // Every consumer's wgmmas have read the stages (each waited for its own) before any writes.
  asm volatile("bar.sync 1, %0;\n" ::"r"(128 * WG_CONSUMERS) : "memory");
  const unsigned mine = parts + (unsigned)(c * groups) * group_bytes + (unsigned)t * 16;
#pragma unroll
  for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
    for (int j = 0; j < per_mi; ++j) {
      const float* a = &acc[mi][4 * j];
      asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(
                       mine + (unsigned)(mi * per_mi + j) * group_bytes),
                   "f"(a[0]), "f"(a[1]), "f"(a[2]), "f"(a[3])
                   : "memory");
    }
  wg_cluster_sync();
  const int g0 = krank * groups / SPLIT_K, g1 = (krank + 1) * groups / SPLIT_K;
  const int row = m0 + (t / 32) * 16 + lane / 4;  // d[0]'s row in the first m64 block
  const int col0 = n0 + (lane % 4) * 2;
  const bool paired = (N & 1) == 0;
#pragma unroll
  for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
    for (int j = 0; j < per_mi; ++j) {
      const int g = mi * per_mi + j;
      if (g < g0 || g >= g1) continue;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int q = 0; q < SPLIT_K; ++q) {
        float p[4];
        asm volatile(
            "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %4, %5;\n"
            "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
            : "=f"(p[0]), "=f"(p[1]), "=f"(p[2]), "=f"(p[3])
            : "r"(mine + (unsigned)g * group_bytes), "r"(q)
            : "memory");
        for (int e = 0; e < 4; ++e) v[e] += p[e];
      }
      const int col = col0 + 8 * j;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = row + mi * 64 + half * 8;
        if (r < M)
          wg_store_pair(C + (long long)r * N + col, paired, col, N,
                        wg_pack_x2(v[2 * half], v[2 * half + 1]));
      }
    }
  wg_cluster_sync();
}
#endif

#if WG_TMA_STORE
// The TMA-store epilogue of consumer `c` (its rows from m0, columns from n0): its accumulators
// as fp16/bf16 into its buffer `buf` in the layout a 128-byte-swizzled TMA box has (16-byte
// chunk index XOR row % 8: a warp's 4-byte stores of one j hit 32 different banks), then one
// thread stores the BN / 64 boxes asynchronously and the consumer goes on to its next tile's
// main loop while they drain. Before writing, that thread waits until the previous tile's
// stores have read the buffer (they have had a whole main loop to do it). Rows and columns
// past M and N are clipped by TMA; a consumer's rows wholly past M (the second consumer's in
// the last tile row, or both consumers' in a cluster pair's tile past M) store nothing.
TUNE_DEVICE void wg_epilogue_tma(float (&acc)[WG_MI][WG_ACC], unsigned buf,
                                 const wg_tensor_map* map, int c, int m0, int n0, int M, int lane) {
  const bool leader = threadIdx.x % 128 == 0;
  if (leader) wg_bulk_wait_read();
  wg_bar_sync(1 + c);
  const int warp_row = (threadIdx.x / 32 % 4) * 16 + lane / 4;  // d[0]'s row in an m64 block
  const unsigned lane_col = (lane % 4) * 4;                     // its byte in a 16-byte chunk
#pragma unroll
  for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = mi * 64 + warp_row + half * 8;
      const unsigned row = buf + r * 128 + lane_col;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const unsigned v = wg_pack_x2(acc[mi][4 * j + 2 * half], acc[mi][4 * j + 2 * half + 1]);
        const unsigned dst = row + (j / 8) * WG_EPI_BOX_BYTES + (((j % 8) ^ (r % 8)) * 16);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(dst), "r"(v) : "memory");
      }
    }
  // The TMA reads the buffer through the async proxy: make these writes visible to it, then
  // let the leader issue the stores once every thread's are in.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  wg_bar_sync(1 + c);
  if (leader && m0 < M) {
#pragma unroll
    for (int b = 0; b < BN / 64; ++b)
      wg_tma_store_2d(map, buf + b * WG_EPI_BOX_BYTES, n0 + 64 * b, m0);
    wg_bulk_commit();
  }
}
#endif

TUNE_KERNEL void __launch_bounds__(WG_THREADS, 1)
    matmul_wgmma(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
                 unsigned short* __restrict__ C, int M, int N, int K,
                 const __grid_constant__ wg_tensor_map tma_a,
                 const __grid_constant__ wg_tensor_map tma_b,
                 const __grid_constant__ wg_tensor_map tma_c) {
  static_assert(WG_ROWS % 64 == 0 && BM % WG_ROWS == 0, "each consumer owns whole m64 blocks");
  static_assert(WG_MI * WG_ACC <= 128, "at most 128 accumulators per consumer thread");
  static_assert(WG_STAGES >= 2, "the pipeline needs at least two stages");
  static_assert(BM <= 256, "one TMA box covers the A tile's rows");
#ifdef TUNE_SHARED_BYTES
  static_assert(TUNE_SHARED_BYTES >= 1024 + WG_STAGES * (WG_STAGE_BYTES + 16) + WG_EPI_BYTES +
                                         WG_PINGPONG * 8 * WG_CONSUMERS,
                "dynamic shared memory covers the alignment slack, the stages and barriers");
#endif
#if WG_CLUSTER > 1
  // Launched without its cluster (LaunchDims::cluster): the multicasts, remote arrivals and
  // remote reads below would address blocks that do not exist. Store nothing instead.
  if (wg_cluster_reg_size() != WG_CLUSTER) return;
  // This block's tile row within the pair (CLUSTER_M), or its slice of k (SPLIT_K).
  const int rank = CLUSTER_M > 1 ? (int)wg_cluster_reg_rank() : 0;
  const int krank = SPLIT_K > 1 ? (int)wg_cluster_reg_rank() : 0;
  const int cluster_id = (int)wg_cluster_reg_id(), clusters = (int)wg_cluster_reg_count();
#define WG_FIRST_UNIT cluster_id
#define WG_UNIT_STRIDE clusters
#else
  const int rank = 0, krank = 0;
  // Read where they are used, as before clusters existed (the same SASS).
#define WG_FIRST_UNIT ((int)blockIdx.x)
#define WG_UNIT_STRIDE ((int)gridDim.x)
#endif
  extern __shared__ __align__(1024) unsigned char wg_raw[];
  // Swizzled tiles need 1024-byte alignment; the dynamic window only promises 16.
  const unsigned raw = wg_smem(wg_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned epi0 = base + WG_STAGES * WG_STAGE_BYTES;  // the epilogue buffers, if any
  const unsigned full0 = epi0 + WG_EPI_BYTES;               // full[s] = full0 + 8 s
  const unsigned empty0 = full0 + 8 * WG_STAGES;
#if WG_PINGPONG
  const unsigned turn0 = empty0 + 8 * WG_STAGES;  // turn[c] = turn0 + 8 c: see the consumers
#endif

  const int wg = threadIdx.x / 128;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool tma = wg_tma_ok(A, B, N, K);  // else the copy path (kernel-uniform)
  // The host's rule for C's map (zeros otherwise): the TMA-store epilogue, else plain stores.
  const bool tma_store = WG_TMA_STORE && (N % 8) == 0 && ((unsigned long long)C % 16) == 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < WG_STAGES; ++s) {
      // TMA: the producer's one expect_tx; copy path: each producer thread's arrival.
      wg_mbar_init(full0 + 8 * s, tma ? 1 : 128);
      // One arrive per consumer warp; with TMA, of every block of the cluster (a pair's
      // producers both write into each block's stage: see the producer). The copy path
      // writes only its own block's stages: its releases stay in the block.
      wg_mbar_init(empty0 + 8 * s, 4 * WG_TILE_CONSUMERS * (tma ? CLUSTER_M : 1));
    }
#if WG_PINGPONG
    for (int t = 0; t < WG_CONSUMERS; ++t) wg_mbar_init(turn0 + 8 * t, 128);
#endif
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (tma) {  // zeros on the copy path: nothing to prefetch
      asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)&tma_a) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)&tma_b) : "memory");
    }
    if (tma_store)
      asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)&tma_c) : "memory");
  }
#if WG_CLUSTER > 1
  // The barriers of both blocks are initialised before either block arrives on or multicasts
  // to the other's.
  wg_cluster_sync();
#define WG_EXIT()      \
  do {                 \
    wg_cluster_sync(); \
    return;            \
  } while (0)
#else
  __syncthreads();
#define WG_EXIT() return
#endif

  // Units of work: single tiles, or with clusters pairs of tiles (tile rows 2u and 2u + 1 of
  // one tile column), walked in GROUP_M order over units by both blocks of a cluster in
  // lockstep (same units, same k-tiles). A pair's second tile past the last tile row is still
  // loaded (B; A is skipped), computed and released like any other, and stores nothing.
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int units_m = (tiles_m + CLUSTER_M - 1) / CLUSTER_M;
  const int units = units_m * tiles_n;
  const int ktiles = (K + WG_BK - 1) / WG_BK;
  // Split K: block krank of a cluster takes k-tiles [kt0, kt1) of every unit (the cluster's
  // blocks one tile); a slice may be empty (fewer k-tiles than blocks): its partial is zero.
  const int kt0 = krank * ktiles / SPLIT_K, kt1 = (krank + 1) * ktiles / SPLIT_K;

  if (wg == 0) {  // producer: thread 0 issues every TMA load, or all 128 threads copy
#if SPLIT_K > 1
    const bool loads = !tma || threadIdx.x == 0;  // the others keep the cluster barriers only
#else
    if (tma && threadIdx.x != 0) WG_EXIT();
    constexpr bool loads = true;
#endif
    int it = 0;  // k-tiles loaded so far, over every tile of this block
    for (int unit = WG_FIRST_UNIT; unit < units; unit += WG_UNIT_STRIDE) {
      int tm, tn;
      wg_tile_coords(unit, units_m, tiles_n, &tm, &tn);
      tm = tm * CLUSTER_M + rank;
      const int m0 = tm * BM, n0 = tn * BN;
      for (int kt = kt0; loads && kt < kt1; ++kt, ++it) {
        const int s = it % WG_STAGES;
        const unsigned phase = (unsigned)(it / WG_STAGES) & 1u;
        wg_mbar_wait(empty0 + 8 * s, phase ^ 1u);
        const unsigned full = full0 + 8 * s;
        const unsigned a_dst = base + s * WG_STAGE_BYTES;
        const unsigned b_dst = a_dst + WG_A_BYTES;
        if (tma) {
#if CLUSTER_M > 1
          // B is the pair's: each block loads its share of the 64-column chunks (half of them,
          // contiguous; BN = 192: rank 0 the first two, rank 1 the third) and multicasts them to
          // both, so both barriers expect all of B (the peer's share may land before this
          // expect_tx: the phase cannot complete without this arrival). A is this block's
          // own, skipped past the last tile row (the stage's stale A is computed, not stored).
          const bool a_in = tm < tiles_m;
          wg_mbar_expect_tx(full, a_in ? WG_STAGE_BYTES : WG_B_BYTES);
          if (a_in) {
#pragma unroll
            for (int h = 0; h < WG_A_SLICES; ++h)
              wg_tma_load_2d(a_dst + h * WG_A_SLICE_BYTES, &tma_a, full, kt * WG_BK + 64 * h, m0);
          }
          // Rank 0's chunks; with an even count the bound is (rank + 1) * share, as before the
          // odd count existed (the same code for BN = 128 and 256).
          constexpr int share = (BN / 64 + 1) / 2;
          const int j_end = (BN / 64) % 2 == 0 ? (rank + 1) * share : (rank == 0 ? share : BN / 64);
#pragma unroll
          for (int j = rank * share; j < j_end; ++j)
            wg_tma_load_2d_multicast(b_dst + j * WG_B_CHUNK_BYTES, &tma_b, full, n0 + 64 * j,
                                     kt * WG_BK, (unsigned short)0x3);
#else
          wg_mbar_expect_tx(full, WG_STAGE_BYTES);
#pragma unroll
          for (int h = 0; h < WG_A_SLICES; ++h)
            wg_tma_load_2d(a_dst + h * WG_A_SLICE_BYTES, &tma_a, full, kt * WG_BK + 64 * h, m0);
#pragma unroll
          for (int j = 0; j < BN / 64; ++j)
            wg_tma_load_2d(b_dst + j * WG_B_CHUNK_BYTES, &tma_b, full, n0 + 64 * j, kt * WG_BK);
#endif
        } else {  // each block copies its own A and all of B, multicasting nothing
          wg_copy_stage(A, B, M, N, K, m0, n0, kt * WG_BK, a_dst, b_dst, threadIdx.x);
          // The wgmmas read the stage through the async proxy: make this thread's generic
          // writes visible to it before the arrival (release) the consumers wait on (acquire).
          asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
          wg_mbar_arrive(full);
        }
      }
#if SPLIT_K > 1
      // The consumers reduce the unit's partial tiles through the stages (wg_split_k_store):
      // the stages are loaded again only once every block's partials have been read, and the
      // TMA writes (async proxy) come after those generic accesses.
      wg_cluster_sync();
      wg_cluster_sync();
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
    }
#if CLUSTER_M > 1
    // Producer tail: wait until both blocks' consumers have released the last WG_STAGES
    // stages, so no remote arrival on this block's barriers is still on its way at exit.
    if (threadIdx.x == 0) {
      for (int i = 0; i < WG_STAGES; ++i, ++it)
        wg_mbar_wait(empty0 + 8 * (it % WG_STAGES), ((unsigned)(it / WG_STAGES) & 1u) ^ 1u);
    }
#endif
    WG_EXIT();
  }

  // Consumers: release a stage to every producer that writes into it (with clusters and TMA,
  // both blocks' producers: each multicasts its share of B to both). No arrival of a later phase
  // can land on either barrier before its earlier phase completes: this block's full barrier
  // for a stage's next use needs the peer's multicast, which the peer's producer issues only
  // after its own empty barrier's phase completed. The copy path has no such ordering across
  // blocks (nor needs one): its releases stay in the block.
#if CLUSTER_M > 1
#define WG_RELEASE(bar)                                                   \
  do {                                                                    \
    if (tma) {                                                            \
      for (int r = 0; r < CLUSTER_M; ++r) wg_mbar_arrive_cluster(bar, r); \
    } else {                                                              \
      wg_mbar_arrive(bar);                                                \
    }                                                                     \
  } while (0)
#else
#define WG_RELEASE(bar) wg_mbar_arrive(bar)
#endif
  const int c = wg - 1;
  const int row_in_wg = (warp % 4) * 16 + lane / 4;  // accumulator row of d[0] in an m64 block
  const int col_in_wg = (lane % 4) * 2;              // accumulator column of d[0]
  float acc[WG_MI][WG_ACC];
#if WG_PINGPONG
  // Ping-pong: consumer c takes this block's tiles c, c + WG_CONSUMERS, ... whole, so one
  // consumer's epilogue overlaps another's main loop (the tensor cores idle through the
  // epilogue otherwise, which short main loops such as K = 512 feel most). Block tile j's
  // k-tiles are the producer's loads j * ktiles onwards. The main loops take turns in tile
  // order: tile j's waits for tile j - 1's to have passed its last full-barrier wait (an
  // arrival of that consumer's 128 threads on turn[j % WG_CONSUMERS]). Besides keeping the
  // tensor cores to one main loop at a time, the turns keep the parity waits sound: a consumer
  // waits on a full barrier at most one phase ahead of the phases completed, as the stage's
  // earlier loads were all waited for by the main loops before it.
  for (int j = c, unit = WG_FIRST_UNIT + c * WG_UNIT_STRIDE; unit < units;
       j += WG_CONSUMERS, unit += WG_CONSUMERS * WG_UNIT_STRIDE) {
    int it = j * ktiles;
    int tm, tn;
    wg_tile_coords(unit, units_m, tiles_n, &tm, &tn);
    const int m0 = tm * BM, n0 = tn * BN;
    // Tile j - 1's arrival is the ((j - 1) / WG_CONSUMERS)-th on this consumer's turn barrier.
    if (j > 0) wg_mbar_wait(turn0 + 8 * c, (unsigned)((j - 1) / WG_CONSUMERS) & 1u);
#else
  int it = 0;
  for (int unit = WG_FIRST_UNIT; unit < units; unit += WG_UNIT_STRIDE) {
    int tm, tn;
    wg_tile_coords(unit, units_m, tiles_n, &tm, &tn);
    tm = tm * CLUSTER_M + rank;
    const int m0 = tm * BM + WG_ROW0(c), n0 = tn * BN;
#endif
#pragma unroll
    for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
      for (int i = 0; i < WG_ACC; ++i) acc[mi][i] = 0.0f;

    for (int kt = kt0; kt < kt1; ++kt, ++it) {
      const int s = it % WG_STAGES;
      wg_mbar_wait(full0 + 8 * s, (unsigned)(it / WG_STAGES) & 1u);
      // This consumer's rows of the stage's A (ping-pong: all of them).
      const unsigned a_tile = base + s * WG_STAGE_BYTES + WG_ROW0(c) * WG_A_ROW_BYTES;
      const unsigned b_tile = base + s * WG_STAGE_BYTES + WG_A_BYTES;
#pragma unroll
      for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
        for (int i = 0; i < WG_ACC; ++i) wg_fence_acc(acc[mi][i]);
      wg_fence();
#pragma unroll
      for (int ks = 0; ks < WG_BK / 16; ++ks) {
        const unsigned long long db = wg_desc(b_tile + ks * 2048, WG_B_CHUNK_BYTES, 1024);
#pragma unroll
        for (int mi = 0; mi < WG_MI; ++mi) WG_MMA(acc[mi], wg_a_desc(a_tile, mi, ks), db);
      }
      wg_commit();
      // The previous k-tile's wgmmas are done: release its stage to the producer.
      wg_wait<1>();
#pragma unroll
      for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
        for (int i = 0; i < WG_ACC; ++i) wg_fence_acc(acc[mi][i]);
      if (kt > kt0 && lane == 0) WG_RELEASE(empty0 + 8 * ((it - 1) % WG_STAGES));
    }
#if WG_PINGPONG
    wg_mbar_arrive(turn0 + 8 * ((c + 1) % WG_CONSUMERS));  // the next tile's main loop may go
#endif
    wg_wait<0>();
#pragma unroll
    for (int mi = 0; mi < WG_MI; ++mi)
#pragma unroll
      for (int i = 0; i < WG_ACC; ++i) wg_fence_acc(acc[mi][i]);
    // (An empty slice of split K loaded nothing and releases nothing.)
    if ((SPLIT_K == 1 || kt1 > kt0) && lane == 0) WG_RELEASE(empty0 + 8 * ((it - 1) % WG_STAGES));

#if SPLIT_K > 1
    wg_split_k_store(acc, base, c, m0, n0, M, N, C, krank);
    continue;
#endif
#if WG_TMA_STORE
    if (tma_store) {
      wg_epilogue_tma(acc, epi0 + c * WG_EPI_CONSUMER_BYTES, &tma_c, c, m0, n0, M, lane);
      continue;
    }
#endif
    // Epilogue: d[4j + {0,1}] at (row, 8j + col + {0,1}), d[4j + {2,3}] eight rows below, by
    // wg_store_pair. (One loop with a uniform branch per pair: two loops, one per case, cost
    // the consumers up to 8 registers.)
    const bool paired = (N & 1) == 0;
#pragma unroll
    for (int mi = 0; mi < WG_MI; ++mi) {
      const int r0 = m0 + mi * 64 + row_in_wg;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = r0 + half * 8;
        if (r >= M) continue;
        unsigned short* crow = C + (long long)r * N + n0 + col_in_wg;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = n0 + col_in_wg + 8 * j;
          if (col >= N) continue;
          wg_store_pair(crow + 8 * j, paired, col, N,
                        wg_pack_x2(acc[mi][4 * j + 2 * half], acc[mi][4 * j + 2 * half + 1]));
        }
      }
    }
  }
#if WG_TMA_STORE
  // The last tile's stores complete before the block's shared memory goes away.
  if (tma_store && threadIdx.x % 128 == 0) wg_bulk_wait();
#endif
#if WG_CLUSTER > 1
  // No block exits while another may still arrive on its barriers (CLUSTER_M); every thread of
  // the cluster passes the same number of cluster barriers (the producers' WG_EXIT is this one).
  wg_cluster_sync();
#endif
}
