// What a bundled kernel is, whatever language it is written in: its name, signature, key,
// the buffers it accumulates into and its workload (CPU reference). Each language's
// definitions start from the contract and add only what is theirs: sources, space, launch
// dims, sizes and the untuned baseline. Written once so that the languages cannot disagree
// (the matmul key once was pow2 on CUDA and exact on Vulkan).
#pragma once

#include <string_view>

#include "tune/kernels/bundled.hpp"

namespace tune::kernels::detail {

// The contract of the bundled kernel `name` ("vector_add", "reduce_sum", "matmul_f32",
// "matmul_f16"): a BundledKernel with name, def.name, def.signature, def.key,
// def.reset_to_zero and workload filled in. Throws std::invalid_argument for another name (a
// programming error in a language's definitions, caught by every test that lists kernels).
BundledKernel contract(std::string_view name);

}  // namespace tune::kernels::detail
