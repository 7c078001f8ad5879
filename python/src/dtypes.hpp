// Element types between Python and libtune: names, NumPy dtypes, the array interfaces' type
// strings and DLPack's type codes, each mapped to tune::ElemType, with an error naming the
// type that has no mapping (complex, bool, object, vector lanes...).
// Every function needs the GIL held (they raise Python exceptions).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "tune/args.hpp"

namespace tune::python {

namespace py = pybind11;

// A name ("f32", "float32", "half", "bfloat16", "int64"...), a NumPy dtype or a type such as
// numpy.float32. TypeError naming it when libtune has no such element type.
ElemType parse_elem_type(py::handle h, const std::string& what);

// The array-interface type string ("<f4", "<i8", "<u2"); TypeError naming it otherwise.
ElemType elem_type_of_typestr(const std::string& typestr, const std::string& what);

// DLPack's (code, bits, lanes); TypeError naming it otherwise.
ElemType elem_type_of_dlpack(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes,
                             const std::string& what);

// The NumPy dtype an array of `t` is downloaded as: bf16 has none, so bf16 is widened to
// float32 (host_bf16_to_f32 below).
py::dtype numpy_dtype(ElemType t);

// "float32", "bfloat16": the name used in messages.
std::string numpy_name(ElemType t);

}  // namespace tune::python
