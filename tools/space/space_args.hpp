// T1's Arguments as a kernel signature and as filled device buffers and scalars.
//
//   Type        int8..uint64 -> i8..u64, half -> f16, float -> f32, double -> f64; bool, the
//               vector types (float4, ...) and custom are refused.
//   MemoryType  Vector -> a buffer of Size elements (an integer, or an expression over
//               ProblemSize and the parameters, each name its list of values, as Kernel Tuner
//               evaluates it); Scalar -> a scalar (FillValue);
//               Local and Symbol are refused.
//   FillType    Constant -> every element FillValue; Random -> uniform in [0, 1) for floats,
//               0..99 for integers, from RandomSeed (default 42) so runs are repeatable;
//               Generator, Script, BinaryRaw and BinaryHDF are refused.
// Refusals are invalid_argument naming the field ("KernelSpecification.Arguments[2].FillType").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "space_file.hpp"
#include "tune/device.hpp"
#include "tune/kernel.hpp"

namespace tune::cli {

// Argument i's name: T1's Name, or "arg<i>" when it has none.
std::string argument_name(const nlohmann::json& arg, std::size_t i);

// The signature of the Arguments, in order.
Result<KernelSignature> space_signature(const SpaceFile& space);

// The element count of each Vector argument (0 for scalars), Size evaluated.
Result<std::vector<std::uint64_t>> argument_counts(const SpaceFile& space);

// The arguments of one call, their buffers allocated on one device and filled. Owns the
// buffers; the ArgValues borrow them. Destroy before the device. Not thread-safe.
struct SpaceArgs {
  std::vector<Buffer> buffers;  // one per Vector argument, in order
  std::vector<ArgValue> values;
  ArgList list() const { return values; }
};

// Allocates and fills the arguments on `dev` (blocks until the uploads are done).
Result<SpaceArgs> make_space_args(const SpaceFile& space, Device& dev);

}  // namespace tune::cli
