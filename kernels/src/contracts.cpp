#include "contracts.hpp"

#include <stdexcept>
#include <string>

namespace tune::kernels::detail {
namespace {

// Problem sizes are pow2-bucketed on every language: one tuning serves its whole bucket.
void vector_add(BundledKernel& k) {
  k.def.signature = KernelSignature{}
                        .buffer("a", ElemType::f32)
                        .buffer("b", ElemType::f32)
                        .buffer("c", ElemType::f32)
                        .scalar("n", ElemType::i32);
  k.def.key = {KeySpec::pow2("n")};
  k.workload = [](std::span<const std::int64_t> s) { return make_vector_add(s[0]); };
}

void reduce_sum(BundledKernel& k) {
  k.def.signature = KernelSignature{}
                        .buffer("x", ElemType::f32)
                        .buffer("out", ElemType::f32)
                        .scalar("n", ElemType::i32);
  k.def.key = {KeySpec::pow2("n")};
  k.def.reset_to_zero = {"out"};  // out[0] += sum(x)
  k.workload = [](std::span<const std::int64_t> s) { return make_reduce_sum(s[0]); };
}

void matmul(BundledKernel& k, ElemType t) {
  k.def.signature = KernelSignature{}
                        .buffer("A", t)
                        .buffer("B", t)
                        .buffer("C", t)
                        .scalar("M", ElemType::i32)
                        .scalar("N", ElemType::i32)
                        .scalar("K", ElemType::i32);
  k.def.key = {KeySpec::pow2("M"), KeySpec::pow2("N"), KeySpec::pow2("K")};
  k.workload = [t](std::span<const std::int64_t> s) { return make_matmul(s[0], s[1], s[2], t); };
}

}  // namespace

BundledKernel contract(std::string_view name) {
  BundledKernel k;
  k.name = std::string(name);
  k.def.name = k.name;
  if (name == "vector_add")
    vector_add(k);
  else if (name == "reduce_sum")
    reduce_sum(k);
  else if (name == "matmul_f32")
    matmul(k, ElemType::f32);
  else if (name == "matmul_f16" || name == "matmul_f16_coopmat" || name == "matmul_f16_coopmat2" ||
           name == "matmul_wgmma_f16")
    matmul(k, ElemType::f16);
  else if (name == "matmul_wgmma_bf16" || name == "matmul_bf16_coopmat2")
    matmul(k, ElemType::bf16);
  else
    throw std::invalid_argument("no bundled kernel is called '" + std::string(name) + "'");
  return k;
}

}  // namespace tune::kernels::detail
