#include "verify.hpp"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <vector>

#include "call_context.hpp"
#include "convert.hpp"
#include "host_array.hpp"

namespace tune::python {
namespace {

// wrong_output when `out` and `expected` (flat, the same size) differ beyond the tolerances.
Status compare(const std::string& name, const py::array& out, const py::array& expected,
               double rtol, double atol) {
  py::module_ np = py::module_::import("numpy");
  py::object flat = out.attr("reshape")(-1);
  py::object close = np.attr("isclose")(flat, expected, py::arg("rtol") = rtol,
                                        py::arg("atol") = atol, py::arg("equal_nan") = true);
  if (close.attr("all")().cast<bool>()) return Status();
  py::object bad = np.attr("flatnonzero")(np.attr("logical_not")(close));
  const auto first = bad[py::int_(0)].cast<std::size_t>();
  std::ostringstream msg;
  msg << "output '" << name << "' differs from the reference at " << py::len(bad) << " of "
      << py::len(flat) << " elements; first at index " << first << ": "
      << py::str(flat[py::int_(first)]).cast<std::string>() << ", expected "
      << py::str(expected[py::int_(first)]).cast<std::string>() << " (rtol " << rtol << ", atol "
      << atol << ")";
  return Status(StatusCode::wrong_output, msg.str());
}

}  // namespace

DeviceHook make_verify(std::shared_ptr<const ArgMeta> meta, PyRef verify) {
  return [meta, verify](Device& dev, ArgList args, const Config& c) -> Status {
    const CallContext* ctx = CallContext::current();
    const bool has_refs = ctx != nullptr && !ctx->references.empty();
    if (!has_refs && !verify) return Status();
    // The outputs to read: the referenced ones, and every output for the kernel's verify.
    std::vector<std::size_t> read;
    if (has_refs)
      for (const auto& r : ctx->references) read.push_back(r.arg);
    if (verify)
      for (auto i : meta->outputs)
        if (std::find(read.begin(), read.end(), i) == read.end()) read.push_back(i);
    std::vector<std::vector<std::byte>> host(read.size());
    for (std::size_t j = 0; j < read.size(); ++j) {
      const ArgValue& a = args[read[j]];
      host[j].resize(a.count * size_of(a.type));
      TUNE_RETURN_IF_ERROR(dev.download(*a.buffer, host[j].data(), host[j].size()));
    }
    return with_gil([&]() -> Status {
      py::dict outputs;
      std::vector<py::array> arrays;
      for (std::size_t j = 0; j < read.size(); ++j) {
        const std::size_t i = read[j];
        std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(args[i].count)};
        if (ctx != nullptr && i < ctx->shapes.size() && !ctx->shapes[i].empty())
          shape = ctx->shapes[i];
        arrays.push_back(numpy_array(args[i].type, shape, host[j].data()));
        outputs[py::str(meta->decls[i].name)] = arrays.back();
      }
      if (has_refs)
        for (std::size_t j = 0; j < ctx->references.size(); ++j)
          TUNE_RETURN_IF_ERROR(compare(meta->decls[read[j]].name, arrays[j],
                                       ctx->references[j].expected, ctx->rtol, ctx->atol));
      if (verify) {
        py::object ok = (*verify)(config_to_dict(c), outputs);
        if (!ok.is_none() && !py::bool_(ok))
          return Status(StatusCode::wrong_output, "verify returned False");
      }
      return Status();
    });
  };
}

std::function<bool(ArgList)> make_verify_applies(bool has_verify) {
  if (has_verify) return {};  // always checks
  return [](ArgList) {
    const CallContext* ctx = CallContext::current();
    return ctx != nullptr && !ctx->references.empty();
  };
}

}  // namespace tune::python
