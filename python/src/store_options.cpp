#include "store_options.hpp"

#include <utility>

#include "errors.hpp"
#include "tune/sqlite_store.hpp"
#if defined(TUNE_HAVE_POSTGRESQL)
#include "tune/postgres_store.hpp"
#endif

namespace tune::python {
namespace {

std::string path_text(py::handle value, const char* what) {
  try {
    return py::module_::import("os").attr("fspath")(value).cast<std::string>();
  } catch (const py::error_already_set&) {
    throw py::type_error(std::string(what) + ": a str or os.PathLike, got " +
                         py::str(py::type::of(value)).cast<std::string>());
  }
}

bool is_server_address(const std::string& text) {
  return text.starts_with("postgresql://") || text.starts_with("postgres://");
}

}  // namespace

std::shared_ptr<TuningStore> store_option(py::handle value) {
  if (value.is_none()) return nullptr;
  const std::string text = path_text(value, "store");
  if (!is_server_address(text)) return SqliteStore::open(text);
#if defined(TUNE_HAVE_POSTGRESQL)
  // Not echoed in errors: the address may hold a password.
  return check(open_shared_store(open_store_from_env(), text, cache_mode_from_env()));
#else
  throw py::value_error(
      "store: a PostgreSQL server, but this libtune was built without its PostgreSQL component "
      "(CMake option TUNE_POSTGRESQL)");
#endif
}

std::vector<std::string> bundles_option(py::handle value) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  if (py::isinstance<py::str>(value)) throw py::type_error("bundles: a list of paths, not one str");
  for (auto item : value) out.push_back(path_text(item, "bundles entry"));
  return out;
}

}  // namespace tune::python
