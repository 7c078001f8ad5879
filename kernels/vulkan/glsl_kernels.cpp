// The bundled kernels in GLSL (Vulkan): definitions, spaces, launch dims and sizes.
//
// Sources live in kernels/vulkan/*.comp and are embedded at build time (glsl_sources.cpp).
// Every configuration of every space produces output within the workloads' bounds
// (kernels/src/workloads.cpp):
//   vector_add : exact (c[i] == a[i] + b[i], IEEE addition);
//   reduce_sum : |out - sum| <= n * 2^-23 * sum|x| (any summation order);
//   matmul_f32 : per element |C - ref| <= K * 2^-23 * sum_k |a_ik b_kj| (any order, FMA or not);
//   matmul_f16 : the same plus |ref| * 2^-10 for the final f16 rounding (one unit in the last
//     place, whichever the direction: Vulkan does not promise round-to-nearest);
//   matmul_f16_coopmat, matmul_f16_coopmat2 : as matmul_f16 (f16 products are exact in f32;
//     f32 accumulation);
//   matmul_bf16_coopmat2 : the same with |ref| * 2^-7 for the final bf16 rounding (one unit;
//     NVIDIA's driver truncates this conversion).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "contracts.hpp"
#include "tune/kernels/bundled.hpp"

namespace tune::kernels {
namespace glsl {
extern const char* const k_vector_add_comp;
extern const char* const k_reduce_sum_comp;
extern const char* const k_matmul_f32_comp;
extern const char* const k_matmul_f16_comp;
extern const char* const k_matmul_f16_coopmat_comp;
extern const unsigned char k_matmul_f16_coopmat2_spv[];
extern const unsigned long k_matmul_f16_coopmat2_spv_bytes;
extern const unsigned char k_matmul_bf16_coopmat2_spv[];
extern const unsigned long k_matmul_bf16_coopmat2_spv_bytes;
}  // namespace glsl

// Named inside the anonymous namespace: a unity build may put this file and its sibling backend's
// (same kernel names) into one translation unit.
namespace {
namespace glsl_sources {

constexpr std::uint32_t kMaxGridX = 32768;  // well under every device's 65535

// `groups` workgroups as a 2D grid (x first); kernels linearise y * num_x + x and skip the
// surplus groups of the last row through their bounds checks.
Dim3 split_grid(std::uint64_t groups) {
  if (groups == 0) return {0, 1, 1};  // an empty problem: launches nothing (ResultSource::empty)
  const std::uint64_t x = std::min<std::uint64_t>(groups, kMaxGridX);
  const std::uint64_t y = (groups + x - 1) / x;
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), 1};
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

bool workgroup_fits(const Config& c, const DeviceInfo& d) {
  const Dim3& b = c.launch().block;
  return b.product() <= d.max_threads_per_block && b.x <= d.max_block.x && b.y <= d.max_block.y &&
         b.z <= d.max_block.z;
}

KernelSource glsl_source(const char* text) { return KernelSource{Language::glsl, "main", text}; }

std::uint64_t arg_u64(ArgList args, std::size_t i) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(args[i].as_int(), 0));
}

// ---- vector_add: 4 workgroup sizes x 3 elements per thread x vec4 on/off = 24 configs.
BundledKernel vector_add() {
  BundledKernel k = detail::contract("vector_add");
  KernelDef& d = k.def;
  d.sources = {glsl_source(glsl::k_vector_add_comp)};
  d.space.param(std::string(kBlockX), {64, 128, 256, 512})
      .param("EPT", {1, 2, 4})
      .param("VEC4", std::vector<Value>{Value{false}, Value{true}})
      .constrain("workgroup fits the device", workgroup_fits);
  d.dims = [](const Config& c, ArgList args) {
    const std::uint64_t n = arg_u64(args, 3);
    const std::uint64_t units = c.get_bool("VEC4") ? n / 4 : n;
    const std::uint64_t per_group =
        std::uint64_t{c.launch().block.x} * static_cast<std::uint64_t>(c.get_int("EPT", 1));
    return LaunchDims{split_grid(ceil_div(units, per_group)), c.launch().block, 0};
  };
  k.demo_sizes = {{1 << 20}, {1 << 22}};
  k.test_sizes = {{1000}, {4099}};
  k.default_config.set(kBlockX, 256).set("EPT", 1).set("VEC4", Value{false});
  return k;
}

// ---- reduce_sum: 4 workgroup sizes x 3 elements per thread x subgroup ops on/off = 24.
// Elements per invocation start at 16: one float atomic per workgroup is a CAS loop, and on
// lavapipe 65536 contending CAS loops (2^22 elements, 64 per group) take ~0.5 s.
BundledKernel reduce_sum() {
  BundledKernel k = detail::contract("reduce_sum");
  KernelDef& d = k.def;
  d.sources = {glsl_source(glsl::k_reduce_sum_comp)};
  d.space.param(std::string(kBlockX), {64, 128, 256, 512})
      .param("EPT", {16, 64, 256})
      .param("SUBGROUP", std::vector<Value>{Value{false}, Value{true}})
      .constrain("workgroup fits the device", workgroup_fits)
      .constrain("shared memory fits", [](const Config& c, const DeviceInfo& dev) {
        return c.launch().block.x * 4u <= dev.shared_bytes_per_block;
      });
  d.dims = [](const Config& c, ArgList args) {
    const std::uint64_t n = arg_u64(args, 2);
    const std::uint64_t per_group =
        std::uint64_t{c.launch().block.x} * static_cast<std::uint64_t>(c.get_int("EPT", 1));
    return LaunchDims{split_grid(ceil_div(n, per_group)), c.launch().block, 0};
  };
  k.demo_sizes = {{1 << 20}, {1 << 22}};
  k.test_sizes = {{1000}, {300007}};
  k.default_config.set(kBlockX, 256).set("EPT", 16).set("SUBGROUP", Value{false});
  return k;
}

Config matmul_config(int bm, int bn, int bk, int tm, int tn, bool db) {
  Config c;
  c.set("BM", bm).set("BN", bn).set("BK", bk).set("TM", tm).set("TN", tn).set("DB", Value{db});
  c.launch().block = {static_cast<std::uint32_t>(bn / tn), static_cast<std::uint32_t>(bm / tm), 1};
  return c;
}

std::uint64_t matmul_shared_bytes(const Config& c) {
  const auto bm = static_cast<std::uint64_t>(c.get_int("BM"));
  const auto bn = static_cast<std::uint64_t>(c.get_int("BN"));
  const auto bk = static_cast<std::uint64_t>(c.get_int("BK"));
  return (bm * bk + bk * bn) * 4 * (c.get_bool("DB") ? 2 : 1);
}

LaunchDims matmul_dims(const Config& c, ArgList args, std::int64_t tile_m, std::int64_t tile_n) {
  const std::uint64_t m = arg_u64(args, 3), n = arg_u64(args, 4);
  const auto gx = ceil_div(n, static_cast<std::uint64_t>(tile_n));
  const auto gy = ceil_div(m, static_cast<std::uint64_t>(tile_m));
  return LaunchDims{{static_cast<std::uint32_t>(std::max<std::uint64_t>(gx, 1)),
                     static_cast<std::uint32_t>(std::max<std::uint64_t>(gy, 1)), 1},
                    c.launch().block,
                    0};
}

// ---- matmul_f32: 8 tile shapes x {BK=8, BK=8 double-buffered, BK=16 double-buffered} = 24.
BundledKernel matmul_f32() {
  BundledKernel k = detail::contract("matmul_f32");
  KernelDef& d = k.def;
  d.sources = {glsl_source(glsl::k_matmul_f32_comp)};
  struct Tile {
    int bm, bn, tm, tn;
  };
  // Workgroups of 64-256 invocations, 16-64 accumulators per invocation.
  const Tile tiles[] = {{32, 32, 4, 4}, {64, 32, 4, 4},  {32, 64, 4, 4},  {64, 64, 4, 4},
                        {64, 64, 8, 8}, {128, 64, 8, 4}, {64, 128, 4, 8}, {128, 128, 8, 8}};
  std::vector<Config> configs;
  for (const Tile& t : tiles) {
    configs.push_back(matmul_config(t.bm, t.bn, 8, t.tm, t.tn, false));
    configs.push_back(matmul_config(t.bm, t.bn, 8, t.tm, t.tn, true));
    configs.push_back(matmul_config(t.bm, t.bn, 16, t.tm, t.tn, true));
  }
  d.space = ConfigSpace::list(std::move(configs));
  d.space.constrain("workgroup fits the device", workgroup_fits)
      .constrain("shared memory fits", [](const Config& c, const DeviceInfo& dev) {
        return matmul_shared_bytes(c) <= dev.shared_bytes_per_block;
      });
  d.dims = [](const Config& c, ArgList args) {
    return matmul_dims(c, args, c.get_int("BM"), c.get_int("BN"));
  };
  k.demo_sizes = {{256, 256, 256}};
  k.test_sizes = {{33, 47, 65}, {64, 32, 16}};
  k.default_config = matmul_config(32, 32, 8, 4, 4, false);
  return k;
}

// ---- matmul_f16: tile T in {8, 16, 32} x rows per invocation WPT (T x T/WPT workgroup) = 12.
BundledKernel matmul_f16() {
  BundledKernel k = detail::contract("matmul_f16");
  KernelDef& d = k.def;
  d.sources = {glsl_source(glsl::k_matmul_f16_comp)};
  std::vector<Config> configs;
  for (int t : {8, 16, 32}) {
    for (int wpt : {1, 2, 4, 8}) {
      Config c;
      c.set("T", t).set("WPT", wpt);
      c.launch().block = {static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(t / wpt), 1};
      configs.push_back(std::move(c));
    }
  }
  d.space = ConfigSpace::list(std::move(configs));
  d.space.constrain("workgroup fits the device", workgroup_fits)
      .constrain("shared memory fits", [](const Config& c, const DeviceInfo& dev) {
        const auto t = static_cast<std::uint64_t>(c.get_int("T"));
        return 2 * t * t * 4 <= dev.shared_bytes_per_block;
      });
  d.dims = [](const Config& c, ArgList args) {
    return matmul_dims(c, args, c.get_int("T"), c.get_int("T"));
  };
  k.demo_sizes = {{128, 128, 128}};
  k.test_sizes = {{33, 47, 65}, {64, 32, 16}};
  Config def;
  def.set("T", 16).set("WPT", 1);
  def.launch().block = {16, 16, 1};
  k.default_config = def;
  return k;
}

// ---- matmul_f16_coopmat: the matrix units through VK_NV_cooperative_matrix. One config: the
// shape LM x LN x LK, SGM x SGN subgroups of 32 each holding WM x WN accumulators, BK columns
// of A per shared tile, STAGES 1 or 2, VSH: shared tiles as 16-byte words or f16 (see the shader).
Config coopmat_config(MatrixShape s, int sgm, int sgn, int wm, int wn, int bk, int stages,
                      bool vsh) {
  Config c;
  c.set("LM", static_cast<std::int64_t>(s.m))
      .set("LN", static_cast<std::int64_t>(s.n))
      .set("LK", static_cast<std::int64_t>(s.k))
      .set("SGM", sgm)
      .set("SGN", sgn)
      .set("WM", wm)
      .set("WN", wn)
      .set("BK", bk)
      .set("STAGES", stages)
      .set("VSH", Value{vsh});
  c.launch().block = {static_cast<std::uint32_t>(32 * sgm * sgn), 1, 1};
  return c;
}

std::int64_t coopmat_tile_m(const Config& c) {
  return c.get_int("SGM") * c.get_int("WM") * c.get_int("LM");
}
std::int64_t coopmat_tile_n(const Config& c) {
  return c.get_int("SGN") * c.get_int("WN") * c.get_int("LN");
}

// The shader's shared arrays: STAGES x (A tile + B tile) in f16 with 8-element row padding,
// and one f32 accumulator scratch per subgroup.
std::uint64_t coopmat_shared_bytes(const Config& c) {
  const auto bm = static_cast<std::uint64_t>(coopmat_tile_m(c));
  const auto bn = static_cast<std::uint64_t>(coopmat_tile_n(c));
  const auto bk = static_cast<std::uint64_t>(c.get_int("BK"));
  const auto stages = static_cast<std::uint64_t>(c.get_int("STAGES"));
  const auto subgroups = static_cast<std::uint64_t>(c.get_int("SGM") * c.get_int("SGN"));
  const auto lmn = static_cast<std::uint64_t>(c.get_int("LM") * c.get_int("LN"));
  return stages * (bm * (bk + 8) + bk * (bn + 8)) * 2 + subgroups * lmn * 4;
}

bool coopmat_shape_offered(const Config& c, const DeviceInfo& dev) {
  const MatrixShape s{static_cast<std::uint32_t>(c.get_int("LM")),
                      static_cast<std::uint32_t>(c.get_int("LN")),
                      static_cast<std::uint32_t>(c.get_int("LK"))};
  return std::find(dev.matrix_shapes_f16.begin(), dev.matrix_shapes_f16.end(), s) !=
         dev.matrix_shapes_f16.end();
}

// 3 shapes x 14 subgroup layouts x BK {32, 64} x STAGES {1, 2} x VSH = 336 points; a device keeps
// those of the shapes it reports (NVIDIA: 16x8x16, 16x8x8 and 16x16x16 are the usual ones).
BundledKernel matmul_f16_coopmat() {
  BundledKernel k = detail::contract("matmul_f16_coopmat");
  KernelDef& d = k.def;
  d.sources = {glsl_source(glsl::k_matmul_f16_coopmat_comp)};
  struct Layout {
    int sgm, sgn, wm, wn;
  };
  // The last four give each subgroup 64 rows of C (64 x 32 to 64 x 128), the warp tiles of
  // fast mma.sync kernels, on workgroup tiles of 128 x 128 to 128 x 512.
  const Layout layouts[] = {{2, 2, 2, 2}, {2, 2, 4, 2}, {2, 2, 2, 4}, {2, 2, 4, 4}, {4, 2, 2, 2},
                            {2, 4, 2, 2}, {4, 2, 2, 4}, {2, 4, 4, 2}, {1, 2, 4, 4}, {4, 4, 2, 2},
                            {2, 2, 4, 8}, {2, 4, 4, 4}, {4, 2, 4, 4}, {2, 4, 4, 8}};
  std::vector<Config> configs;
  for (MatrixShape s : {MatrixShape{16, 8, 16}, MatrixShape{16, 16, 16}, MatrixShape{16, 8, 8}})
    for (const Layout& l : layouts)
      for (int bk : {32, 64})
        for (int stages : {1, 2})
          for (bool vsh : {false, true})
            configs.push_back(coopmat_config(s, l.sgm, l.sgn, l.wm, l.wn, bk, stages, vsh));
  d.space = ConfigSpace::list(std::move(configs));
  d.space
      .constrain(
          "the device runs the cooperative-matrix shape (f16 x f16 + f32, "
          "VK_NV_cooperative_matrix)",
          coopmat_shape_offered)
      .constrain("subgroups of 32 invocations",
                 [](const Config&, const DeviceInfo& dev) { return dev.warp_size == 32; })
      .constrain("workgroup fits the device", workgroup_fits)
      .constrain("shared memory fits", [](const Config& c, const DeviceInfo& dev) {
        return coopmat_shared_bytes(c) <= dev.shared_bytes_per_block;
      });
  d.dims = [](const Config& c, ArgList args) {
    return matmul_dims(c, args, coopmat_tile_m(c), coopmat_tile_n(c));
  };
  k.demo_sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  // Whole tiles with 16-byte loads, edge tiles, and K or N not a multiple of 8 (element loads).
  k.test_sizes = {{128, 256, 64}, {33, 47, 65}, {64, 32, 16}, {200, 136, 100}, {129, 264, 40}};
  k.default_config = coopmat_config(MatrixShape{16, 8, 16}, 2, 2, 2, 2, 32, 2, false);
  return k;
}

// ---- matmul_f16_coopmat2, matmul_bf16_coopmat2: workgroup-scope matrices through
// VK_NV_cooperative_matrix2, precompiled modules of one source (kernels/vulkan/matmul_coopmat2.comp
// says why). One BM x BN f32 accumulator per workgroup of T invocations, K in steps of BK
// unrolled UNROLL times, tiles in groups of GROUP_M rows.
Config coopmat2_config(int bm, int bn, int bk, int threads, int unroll, int group_m) {
  Config c;
  c.set("BM", bm).set("BN", bn).set("BK", bk).set("UNROLL", unroll).set("GROUP_M", group_m);
  c.launch().block = {static_cast<std::uint32_t>(threads), 1, 1};
  return c;
}

KernelSource spirv_source(const unsigned char* module, unsigned long bytes) {
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.spirv.resize(bytes / 4);
  std::memcpy(src.spirv.data(), module, src.spirv.size() * 4);
  return src;
}

// The device's workgroup-scope shape (of `shapes`: its list for the kernel's element type) for
// this workgroup size divides the tile, which is no larger than the device's largest flexible
// dimension.
bool coopmat2_shape_offered(const Config& c, const std::vector<WorkgroupMatrixShape>& shapes) {
  const auto bm = static_cast<std::uint32_t>(c.get_int("BM"));
  const auto bn = static_cast<std::uint32_t>(c.get_int("BN"));
  const auto bk = static_cast<std::uint32_t>(c.get_int("BK"));
  return std::any_of(shapes.begin(), shapes.end(), [&](const WorkgroupMatrixShape& s) {
    const MatrixShape& g = s.granularity;
    return s.invocations == c.launch().block.product() && g.m != 0 && g.n != 0 && g.k != 0 &&
           bm % g.m == 0 && bn % g.n == 0 && bk % g.k == 0 &&
           std::max({bm, bn, bk}) <= s.max_dimension;
  });
}

// 8 tiles x 3 workgroup sizes (those keeping at most 128 f32 accumulators per invocation:
// beyond, they spill; 128x128 in 64 invocations ran at 0.14x the best, H100 2026-12-06) x
// BK {32, 64} x UNROLL {1, 2, 4} x GROUP_M {0, 8} = 204 points. BK 16 left out: 0.70x the best
// at either tile in the same study. `bf16`: the bf16 module, constrained by
// DeviceInfo::workgroup_matrix_bf16 (else f16, by workgroup_matrix_f16).
BundledKernel matmul_coopmat2(bool bf16) {
  BundledKernel k = detail::contract(bf16 ? "matmul_bf16_coopmat2" : "matmul_f16_coopmat2");
  KernelDef& d = k.def;
  d.sources = {
      bf16 ? spirv_source(glsl::k_matmul_bf16_coopmat2_spv, glsl::k_matmul_bf16_coopmat2_spv_bytes)
           : spirv_source(glsl::k_matmul_f16_coopmat2_spv, glsl::k_matmul_f16_coopmat2_spv_bytes)};
  std::vector<Config> configs;
  for (int bm : {64, 128, 256})
    for (int bn : {64, 128, 256})
      for (int threads : {64, 128, 256}) {
        if (bm * bn / threads > 128) continue;
        for (int bk : {32, 64})
          for (int unroll : {1, 2, 4})
            for (int group_m : {0, 8})
              configs.push_back(coopmat2_config(bm, bn, bk, threads, unroll, group_m));
      }
  d.space = ConfigSpace::list(std::move(configs));
  const auto offered =
      bf16 ? &DeviceInfo::workgroup_matrix_bf16 : &DeviceInfo::workgroup_matrix_f16;
  d.space.constrain(
      std::string("the device runs workgroup-scope matrices of this tile and workgroup size ") +
          (bf16 ? "(bf16 x bf16 + f32, VK_NV_cooperative_matrix2 and VK_KHR_shader_bfloat16)"
                : "(f16 x f16 + f32, VK_NV_cooperative_matrix2)"),
      [offered](const Config& c, const DeviceInfo& dev) {
        return coopmat2_shape_offered(c, dev.*offered);
      });
  d.space.constrain("workgroup fits the device", workgroup_fits);
  d.dims = [](const Config& c, ArgList args) {
    const std::uint64_t m = arg_u64(args, 3), n = arg_u64(args, 4);
    const std::uint64_t tiles = ceil_div(m, static_cast<std::uint64_t>(c.get_int("BM"))) *
                                ceil_div(n, static_cast<std::uint64_t>(c.get_int("BN")));
    return LaunchDims{split_grid(tiles), c.launch().block, 0};
  };
  k.demo_sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  // Whole tiles on the fast path, edge tiles, K not a multiple of BK, K or N not of 8.
  k.test_sizes = {{256, 512, 128}, {128, 256, 64},  {33, 47, 65},
                  {64, 32, 16},    {200, 136, 100}, {129, 264, 40}};
  k.default_config = coopmat2_config(128, 128, 32, 128, 4, 8);
  return k;
}

}  // namespace glsl_sources
}  // namespace

std::vector<BundledKernel> glsl_kernels() {
  std::vector<BundledKernel> out;
  out.push_back(glsl_sources::vector_add());
  out.push_back(glsl_sources::reduce_sum());
  out.push_back(glsl_sources::matmul_f32());
  out.push_back(glsl_sources::matmul_f16());
  out.push_back(glsl_sources::matmul_f16_coopmat());
  out.push_back(glsl_sources::matmul_coopmat2(false));
  out.push_back(glsl_sources::matmul_coopmat2(true));
  return out;
}

}  // namespace tune::kernels
