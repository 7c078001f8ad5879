// Language-independent workloads of the bundled kernels: random inputs, CPU references and the
// error bounds that outputs are checked against.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"

namespace tune::kernels {

std::uint16_t float_to_half(float f) noexcept {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t mant = x & 0x7FFFFFu;
  int exp = static_cast<int>((x >> 23) & 0xFF);
  if (exp == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0u));
  int e = exp - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1);
    std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  std::uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent
  return static_cast<std::uint16_t>(sign | half);
}

float half_to_float(std::uint16_t h) noexcept {
  std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t mant = h & 0x3FFu;
  std::uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      x = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7F800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::uint16_t float_to_bf16(float f) noexcept {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN
  u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

namespace {

constexpr std::uint32_t kNanF32 = 0x7FC00000u;
constexpr std::uint32_t kNanF16x2 = 0x7E007E00u;
constexpr std::uint32_t kNanBf16x2 = 0x7FC07FC0u;

// xoshiro256** seeded through splitmix64: fast, reproducible for a seed.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    std::uint64_t r = rotl(s_[1] * 5, 7) * 9;
    std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  // Uniform in [-1, 1), never exactly zero.
  float uniform() {
    float f = static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
    return f == 0.0f ? 0.5f : f;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

std::string fmt_g(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

Status mismatch(const std::string& what, std::int64_t index, double got, double want, double tol) {
  return Status(StatusCode::wrong_output, what + "[" + std::to_string(index) + "] = " + fmt_g(got) +
                                              ", expected " + fmt_g(want) + " (bound " +
                                              fmt_g(tol) + ")");
}

Result<Buffer> make_buffer(Device& dev, std::uint64_t bytes) {
  // Round up to 4 bytes so fills with a 32-bit pattern cover every element.
  return dev.alloc((bytes + 3) & ~std::uint64_t{3});
}

// c = a + b in f32. Exact: IEEE addition rounds identically on host and device.
class VectorAdd final : public Workload {
 public:
  explicit VectorAdd(std::int64_t n) : n_(n) {}
  std::string size_text() const override { return "n=" + std::to_string(n_); }
  double flops() const override { return static_cast<double>(n_); }
  double bytes() const override { return 12.0 * static_cast<double>(n_); }
  Status setup(Device& dev, std::uint64_t seed) override {
    Rng rng(seed);
    a_.resize(static_cast<std::size_t>(n_));
    b_.resize(a_.size());
    for (auto& v : a_) v = rng.uniform();
    for (auto& v : b_) v = rng.uniform();
    std::uint64_t bytes = a_.size() * 4;
    for (auto* buf : {&da_, &db_, &dc_}) {
      auto r = make_buffer(dev, bytes);
      if (!r.ok()) return r.status();
      *buf = std::move(*r);
    }
    TUNE_RETURN_IF_ERROR(dev.upload(*da_, a_.data(), bytes));
    TUNE_RETURN_IF_ERROR(dev.upload(*db_, b_.data(), bytes));
    TUNE_RETURN_IF_ERROR(poison_outputs(dev));
    args_ = {ArgValue::buf(*da_, ElemType::f32, a_.size()),
             ArgValue::buf(*db_, ElemType::f32, a_.size()),
             ArgValue::buf(*dc_, ElemType::f32, a_.size()), static_cast<std::int32_t>(n_)};
    return {};
  }
  ArgList args() const override { return args_; }
  Status poison_outputs(Device& dev) override { return dev.fill(*dc_, kNanF32, dc_->size_bytes()); }
  Status check(Device& dev) override {
    std::vector<float> c(a_.size());
    TUNE_RETURN_IF_ERROR(dev.download(*dc_, c.data(), c.size() * 4));
    for (std::size_t i = 0; i < c.size(); ++i) {
      float want = a_[i] + b_[i];
      if (!(c[i] == want)) return mismatch("c", static_cast<std::int64_t>(i), c[i], want, 0);
    }
    return {};
  }

 private:
  std::int64_t n_;
  std::vector<float> a_, b_;
  Buffer da_, db_, dc_;
  std::vector<ArgValue> args_;
};

// out[0] = sum(x) in f32 with any summation order: |got - sum| <= n * 2^-23 * sum|x| bounds
// every order (recursive summation error), and a garbage result is far outside it.
class ReduceSum final : public Workload {
 public:
  explicit ReduceSum(std::int64_t n) : n_(n) {}
  std::string size_text() const override { return "n=" + std::to_string(n_); }
  double flops() const override { return static_cast<double>(n_); }
  double bytes() const override { return 4.0 * static_cast<double>(n_) + 4.0; }
  Status setup(Device& dev, std::uint64_t seed) override {
    Rng rng(seed);
    x_.resize(static_cast<std::size_t>(n_));
    for (auto& v : x_) v = rng.uniform();
    auto dx = make_buffer(dev, x_.size() * 4);
    if (!dx.ok()) return dx.status();
    dx_ = std::move(*dx);
    auto dout = make_buffer(dev, 4);
    if (!dout.ok()) return dout.status();
    dout_ = std::move(*dout);
    TUNE_RETURN_IF_ERROR(dev.upload(*dx_, x_.data(), x_.size() * 4));
    // The kernel accumulates: the caller's contract is out = 0 before a launch.
    TUNE_RETURN_IF_ERROR(poison_outputs(dev));
    args_ = {ArgValue::buf(*dx_, ElemType::f32, x_.size()), ArgValue::buf(*dout_, ElemType::f32, 1),
             static_cast<std::int32_t>(n_)};
    return {};
  }
  ArgList args() const override { return args_; }
  // The output accumulates, so "poisoned" means zero: any missing contribution shows.
  Status poison_outputs(Device& dev) override { return dev.fill(*dout_, 0, 4); }
  Status check(Device& dev) override {
    float got = 0;
    TUNE_RETURN_IF_ERROR(dev.download(*dout_, &got, 4));
    double sum = 0, abs_sum = 0;
    for (float v : x_) {
      sum += v;
      abs_sum += std::fabs(v);
    }
    double tol = static_cast<double>(n_) * std::ldexp(1.0, -23) * abs_sum;
    if (!(std::fabs(got - sum) <= tol)) return mismatch("out", 0, got, sum, tol);
    return {};
  }

 private:
  std::int64_t n_;
  std::vector<float> x_;
  Buffer dx_, dout_;
  std::vector<ArgValue> args_;
};

// Row-major C[M,N] = A[M,K] B[K,N]. Bound per element: K * 2^-23 * sum_k |a_ik b_kj| (any
// summation order, f32 accumulation), plus one rounding of the result to f16 or bf16 in any
// direction: |ref| * 2^-10 (f16) or |ref| * 2^-7 (bf16), at least one unit in the last place.
// Not half a unit: Vulkan leaves the rounding of a conversion to a narrower float to the
// implementation, and NVIDIA's driver truncates the cooperative matrices' f32 -> bf16
// conversion (measured on an H100, driver 580.159.04: bench/RESULTS.md). The CUDA kernels
// round to nearest; the bound admits a whole unit for them too.
// Large problems are checked on 4096 sampled elements so that checking stays fast.
class Matmul final : public Workload {
 public:
  Matmul(std::int64_t m, std::int64_t n, std::int64_t k, ElemType t) : m_(m), n_(n), k_(k), t_(t) {}
  std::string size_text() const override {
    return "M=" + std::to_string(m_) + ",N=" + std::to_string(n_) + ",K=" + std::to_string(k_);
  }
  double flops() const override { return 2.0 * static_cast<double>(m_) * n_ * k_; }
  double bytes() const override {
    return static_cast<double>(size_of(t_)) * static_cast<double>(m_ * k_ + k_ * n_ + m_ * n_);
  }
  Status setup(Device& dev, std::uint64_t seed) override {
    Rng rng(seed);
    a_.resize(static_cast<std::size_t>(m_ * k_));
    b_.resize(static_cast<std::size_t>(k_ * n_));
    for (auto* v : {&a_, &b_})
      for (auto& x : *v) {
        x = rng.uniform();
        if (narrow()) x = from_bits(to_bits(x));  // exact device values
      }
    std::size_t es = size_of(t_);
    for (auto [buf, count] : {std::pair{&da_, a_.size()}, std::pair{&db_, b_.size()},
                              std::pair{&dc_, static_cast<std::size_t>(m_ * n_)}}) {
      auto r = make_buffer(dev, count * es);
      if (!r.ok()) return r.status();
      *buf = std::move(*r);
    }
    TUNE_RETURN_IF_ERROR(upload(dev, *da_, a_));
    TUNE_RETURN_IF_ERROR(upload(dev, *db_, b_));
    TUNE_RETURN_IF_ERROR(poison_outputs(dev));
    args_ = {ArgValue::buf(*da_, t_, a_.size()),
             ArgValue::buf(*db_, t_, b_.size()),
             ArgValue::buf(*dc_, t_, static_cast<std::uint64_t>(m_ * n_)),
             static_cast<std::int32_t>(m_),
             static_cast<std::int32_t>(n_),
             static_cast<std::int32_t>(k_)};
    return {};
  }
  ArgList args() const override { return args_; }
  Status poison_outputs(Device& dev) override {
    const std::uint32_t nan = t_ == ElemType::f16    ? kNanF16x2
                              : t_ == ElemType::bf16 ? kNanBf16x2
                                                     : kNanF32;
    return dev.fill(*dc_, nan, dc_->size_bytes());
  }
  Status check(Device& dev) override {
    std::size_t count = static_cast<std::size_t>(m_ * n_);
    std::vector<float> c(count);
    if (narrow()) {
      std::vector<std::uint16_t> h(count);
      TUNE_RETURN_IF_ERROR(dev.download(*dc_, h.data(), count * 2));
      for (std::size_t i = 0; i < count; ++i) c[i] = from_bits(h[i]);
    } else {
      TUNE_RETURN_IF_ERROR(dev.download(*dc_, c.data(), count * 4));
    }
    bool sample = static_cast<double>(m_) * n_ * k_ > 1 << 27;
    Rng rng(0x5eed);
    std::size_t checks = sample ? 4096 : count;
    for (std::size_t s = 0; s < checks; ++s) {
      std::size_t idx = sample ? rng.next() % count : s;
      std::size_t i = idx / static_cast<std::size_t>(n_), j = idx % static_cast<std::size_t>(n_);
      double want = 0, mag = 0;
      for (std::int64_t p = 0; p < k_; ++p) {
        double prod = static_cast<double>(a_[i * k_ + p]) * b_[p * n_ + j];
        want += prod;
        mag += std::fabs(prod);
      }
      double tol = static_cast<double>(k_) * std::ldexp(1.0, -23) * mag;
      if (t_ == ElemType::f16) tol += std::ldexp(std::fabs(want), -10) + 1e-7;
      if (t_ == ElemType::bf16) tol += std::ldexp(std::fabs(want), -7) + 1e-7;
      if (!(std::fabs(c[idx] - want) <= tol))
        return mismatch("C", static_cast<std::int64_t>(idx), c[idx], want, tol);
    }
    return {};
  }

 private:
  Status upload(Device& dev, DeviceBuffer& dst, const std::vector<float>& v) {
    if (narrow()) {
      std::vector<std::uint16_t> h(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) h[i] = to_bits(v[i]);
      return dev.upload(dst, h.data(), h.size() * 2);
    }
    return dev.upload(dst, v.data(), v.size() * 4);
  }

  // f16 and bf16 are stored as 16-bit patterns; f32 as floats.
  bool narrow() const { return t_ == ElemType::f16 || t_ == ElemType::bf16; }
  std::uint16_t to_bits(float x) const {
    return t_ == ElemType::bf16 ? float_to_bf16(x) : float_to_half(x);
  }
  float from_bits(std::uint16_t h) const {
    return t_ == ElemType::bf16 ? bf16_to_float(h) : half_to_float(h);
  }

  std::int64_t m_, n_, k_;
  ElemType t_;
  std::vector<float> a_, b_;
  Buffer da_, db_, dc_;
  std::vector<ArgValue> args_;
};

}  // namespace

std::unique_ptr<Workload> make_vector_add(std::int64_t n) { return std::make_unique<VectorAdd>(n); }
std::unique_ptr<Workload> make_reduce_sum(std::int64_t n) { return std::make_unique<ReduceSum>(n); }
std::unique_ptr<Workload> make_matmul(std::int64_t m, std::int64_t n, std::int64_t k,
                                      ElemType type) {
  return std::make_unique<Matmul>(m, n, k, type);
}

}  // namespace tune::kernels
