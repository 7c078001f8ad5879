// The tune::Device values that travel to the worker, encoded on the wire (wire.hpp): launch
// dims, argument lists (buffers as worker buffer ids), timing plans and kernel sources. One
// put/get pair per type, used by both ends so their layouts cannot drift apart.
//
// Buffer ids: the parent names every buffer and kernel with a u64 of its own choosing;
// `buffer_id` maps a DeviceBuffer of the caller's side to its id (the proxy's buffers carry
// it; anything else is refused by the proxy before encoding). Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "isolation/wire.hpp"
#include "tune/device.hpp"

namespace tune::detail {

void put_dims(WireWriter& w, const LaunchDims& d);
LaunchDims get_dims(WireReader& r);

// Scalars as bits; buffers as `id_of(buffer)`.
void put_args(WireWriter& w, ArgList args,
              const std::function<std::uint64_t(const DeviceBuffer*)>& id_of);
// Arguments whose `buffer` fields are filled by `buffer_of(id)` (null for an unknown id: the
// caller refuses the request). Stored in `out`, which must outlive the ArgList made of it.
bool get_args(WireReader& r, const std::function<DeviceBuffer*(std::uint64_t)>& buffer_of,
              std::vector<ArgValue>* out);

// A KernelSource without module_globals (a callback): the globals travel as their bytes,
// computed in the parent for one configuration.
void put_source(WireWriter& w, const KernelSource& s);
KernelSource get_source(WireReader& r);
void put_globals(WireWriter& w, const std::vector<ModuleGlobal>& g);
std::vector<ModuleGlobal> get_globals(WireReader& r);

void put_resources(WireWriter& w, const KernelResources& k);
KernelResources get_resources(WireReader& r);

}  // namespace tune::detail
