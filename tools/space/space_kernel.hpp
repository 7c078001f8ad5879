// A space file as a tune::KernelDef that the Autotuner can tune: what makes an imported Kernel
// Tuner T1 problem runnable without a hand-written harness.
//
// The mapping (Kernel Tuner's semantics, README "Running a Kernel Tuner T1 problem"):
//   source      the kernel file's text; Language CUDA -> Language::cuda_hip (CUDA or HIP
//               devices; its directory is searched for #include), Vulkan -> GLSL (entry main);
//               OpenCL is refused. CompilerOptions become the source's options.
//   space       one dimension per parameter, values as T1 lists them (int, uint and bool as
//               integers / booleans, float and string as source text: "0.5", "half"); every
//               value reaches the kernel as `-Dname=value`, as Kernel Tuner defines them.
//   constraints one per T1 condition, evaluated by t1_expression.hpp on the point.
//   dims        block = LocalSize; grid = GlobalSize when GlobalSizeType is CUDA or Vulkan
//               (blocks / workgroups), ceil(GlobalSize / LocalSize) when it is OpenCL (threads).
//               The block is also the configuration's launch block (Vulkan bakes it in).
//   signature   T1's Arguments in order: Vector -> buffer, Scalar -> scalar, of the element type
//               space_args.hpp maps.
// Each refusal is invalid_argument naming the T1 field. The callbacks of the returned KernelDef
// throw (callback_failed) only when an expression fails on a point that import-space did not
// check; they share nothing mutable and are safe from any thread.
#pragma once

#include <string>

#include "space_file.hpp"
#include "tune/kernel.hpp"

namespace tune::cli {

// The parameters and conditions of `space` as a ConfigSpace (the KernelDef's space before the
// launch block joins it): what a search or a replay of the problem needs, no kernel source.
ConfigSpace config_space_of(const SpaceFile& space);

// The KernelDef of `space`, its source read from space.kernel_file.
Result<KernelDef> kernel_def_from_space(const SpaceFile& space);

// The block and grid of `config` (a point of the space); invalid_argument naming the
// expression when one does not evaluate to a positive integer.
Result<LaunchDims> space_launch_dims(const SpaceFile& space, const Config& config);

// The names the expressions read on `config`: its parameters as T1 values, and ProblemSize.
PyNames names_of(const SpaceFile& space, const Config& config);

}  // namespace tune::cli
