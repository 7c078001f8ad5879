// TMA tensor maps: a variant's specs, and each launch's maps encoded (or reused).
#include "tensor_maps.hpp"

#include "gpu_device.hpp"
#include "variant_callback.hpp"

namespace tune::gpu {

Result<std::vector<TensorMapSpec>> tensor_map_specs(const GpuApi& api, std::string_view backend,
                                                    const KernelSource& source,
                                                    const Config& config,
                                                    const std::string& variant) {
  std::vector<TensorMapSpec> tensor_maps;
  if (!source.tensor_maps) return tensor_maps;
  if (!api.has_tensor_maps()) {
    return Status(StatusCode::invalid_argument,
                  variant + ": a " + std::string(backend) +
                      " device has no TMA tensor maps (KernelSource::tensor_maps is for CUDA)");
  }
  TUNE_RETURN_IF_ERROR(
      call_variant_callback(source.tensor_maps, config, &tensor_maps, "tensor_maps", variant));
  if (tensor_maps.size() > kMaxTensorMaps) {
    return Status(StatusCode::invalid_argument,
                  variant + ": " + std::to_string(tensor_maps.size()) + " tensor maps; at most " +
                      std::to_string(kMaxTensorMaps) + " are supported");
  }
  return tensor_maps;
}

Status TensorMaps::encode(GpuDevice& device, const std::string& kernel, ArgList args,
                          EncodedTensorMap* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const TensorMapSpec& spec = specs_[i];
    // Messages are built only on failure: a launch of a TMA kernel allocates nothing.
    const auto what = [&] { return kernel + " tensor map " + std::to_string(i); };
    auto arg = [&](int index, ArgKind kind) -> const ArgValue* {
      if (index < 0 || static_cast<std::size_t>(index) >= args.size()) return nullptr;
      return args[index].kind == kind ? &args[index] : nullptr;
    };
    const ArgValue* buf = arg(spec.buffer_arg, ArgKind::buffer);
    const ArgValue* rows_arg = arg(spec.rows_arg, ArgKind::scalar);
    const ArgValue* cols_arg = arg(spec.cols_arg, ArgKind::scalar);
    if (buf == nullptr || buf->buffer == nullptr || rows_arg == nullptr || cols_arg == nullptr) {
      return Status(StatusCode::invalid_argument,
                    what() + ": argument " + std::to_string(spec.buffer_arg) +
                        " must be a buffer and arguments " + std::to_string(spec.rows_arg) +
                        " and " + std::to_string(spec.cols_arg) + " scalars");
    }
    const std::int64_t rows = rows_arg->as_int(), cols = cols_arg->as_int();
    const std::uint64_t elem = size_of(buf->type);
    auto b = device.buffer_of(*buf->buffer, "tensor map");
    if (!b.ok()) return Status(b.status()).with_context(what());
    const DevPtr ptr = (*b)->ptr();
    const auto shape = [&] {
      return std::to_string(rows) + " x " + std::to_string(cols) + " " +
             std::string(to_string(buf->type));
    };
    if (rows < 1 || cols < 1 ||
        static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * elem >
            buf->buffer->size_bytes()) {
      return Status(StatusCode::invalid_argument,
                    what() + ": a " + shape() + " matrix does not fit argument " +
                        std::to_string(spec.buffer_arg) + " (" +
                        std::to_string(buf->buffer->size_bytes()) + " bytes)");
    }
    // TMA's own rules, named here rather than as the driver's CUDA_ERROR_INVALID_VALUE; or a
    // zero map for a kernel that loads such a matrix without TMA (zeros_when_unaligned).
    if (ptr % 16 != 0 || (static_cast<std::uint64_t>(cols) * elem) % 16 != 0) {
      if (spec.zeros_when_unaligned) {
        out[i] = EncodedTensorMap{};
        continue;
      }
      return Status(StatusCode::invalid_argument,
                    what() + " over argument " + std::to_string(spec.buffer_arg) + " (" + shape() +
                        "): TMA needs a 16-byte aligned address and row stride; the row is " +
                        std::to_string(static_cast<std::uint64_t>(cols) * elem) + " bytes");
    }
    EncodedTensorMap& cached = encoded_[i];
    if (!cached.valid || cached.ptr != ptr || cached.rows != static_cast<std::uint64_t>(rows) ||
        cached.cols != static_cast<std::uint64_t>(cols) || cached.type != buf->type) {
      cached.valid = false;
      if (int rc = device.api().encode_tensor_map(cached.bytes, spec, buf->type, ptr,
                                                  static_cast<std::uint64_t>(rows),
                                                  static_cast<std::uint64_t>(cols));
          rc != 0) {
        return device.status().fail(Call::encode_tensor_map, rc, StatusCode::invalid_argument,
                                    what() + " (" + shape() + ", box " +
                                        std::to_string(spec.box_rows) + " x " +
                                        std::to_string(spec.box_cols) + ")");
      }
      cached.ptr = ptr;
      cached.rows = static_cast<std::uint64_t>(rows);
      cached.cols = static_cast<std::uint64_t>(cols);
      cached.type = buf->type;
      cached.valid = true;
    }
    out[i] = cached;
  }
  return {};
}

}  // namespace tune::gpu
