#include "spirv_reflect.hpp"

#include "float_atomics.hpp"
#include "spirv_capabilities.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

namespace tune::vk {
namespace {

// Opcodes, decorations and storage classes from the SPIR-V specification (unified headers).
enum : std::uint32_t {
  kOpName = 5,
  kOpEntryPoint = 15,
  kOpCapability = 17,
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeMatrix = 24,
  kOpTypeImage = 25,
  kOpTypeSampler = 26,
  kOpTypeSampledImage = 27,
  kOpTypeArray = 28,
  kOpTypeRuntimeArray = 29,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpExecutionMode = 16,
  kOpConstant = 43,
  kOpSpecConstantTrue = 48,
  kOpSpecConstantFalse = 49,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpExecutionModeId = 331,
  kOpVariable = 59,
  kOpFunction = 54,
  kOpFunctionEnd = 56,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
  kOpTypeCooperativeMatrixKHR = 4456,
  // Pointer results (their result type is a pointer type) and the integer atomics.
  kOpFunctionParameter = 55,
  kOpAccessChain = 65,
  kOpInBoundsAccessChain = 66,
  kOpPtrAccessChain = 67,
  kOpInBoundsPtrAccessChain = 70,
  kOpCopyObject = 83,
  kOpAtomicLoad = 227,
  kOpAtomicStore = 228,
  kOpAtomicXor = 242,  // the last of 227..242 (exchange, compare-exchange, inc/dec, add ... xor)
  kOpAtomicFlagTestAndSet = 318,
  kOpAtomicFlagClear = 319,
  // SPV_EXT_shader_atomic_float_add / _min_max: result type, result, pointer, ...
  kOpAtomicFMinEXT = 5614,
  kOpAtomicFMaxEXT = 5615,
  kOpAtomicFAddEXT = 6035,
};
enum : std::uint32_t {
  kDecSpecId = 1,
  kDecBuiltIn = 11,
  kDecBinding = 33,
  kDecSet = 34,
  kDecOffset = 35
};
enum : std::uint32_t { kModeLocalSize = 17, kModeLocalSizeId = 38, kBuiltInWorkgroupSize = 25 };
enum : std::uint32_t { kModelGLCompute = 5 };
enum : std::uint32_t { kScopeWorkgroup = 2 };
enum : std::uint32_t {
  kScUniformConstant = 0,
  kScUniform = 2,
  kScWorkgroup = 4,
  kScPushConstant = 9,
  kScStorageBuffer = 12,
  kScPhysicalStorageBuffer = 5349,
};

struct Type {
  std::uint32_t op = 0;
  std::vector<std::uint32_t> operands;  // everything after the result id
};

struct Var {
  std::uint32_t id, pointer_type, storage;
};

// One atomic instruction: its opcode, pointer operand and result type (0 for those without
// one: OpAtomicStore, OpAtomicFlagClear).
struct Atomic {
  std::uint32_t op, pointer, result_type;
};

// What reflection needs of a module's instructions, gathered in one pass (scan_module).
struct ModuleTables {
  std::unordered_map<std::uint32_t, Type> types;
  std::unordered_map<std::uint32_t, std::uint64_t> constants;  // 32-bit integer constants
  std::vector<Var> vars;
  std::unordered_map<std::uint32_t, std::uint32_t> binding_of, set_of;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> member_offset;
  std::vector<std::uint32_t> workgroup_size_ids;  // targets of BuiltIn WorkgroupSize
  // OpSpecConstantComposite results and their constituents.
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> spec_composites;
  std::unordered_map<std::uint32_t, std::uint32_t> spec_constants;  // id -> default value
  std::uint32_t local_size_ids[3] = {0, 0, 0};                  // LocalSizeId operands (SPIR-V 1.6)
  std::unordered_map<std::uint32_t, std::string> names;         // OpName
  std::unordered_map<std::uint32_t, std::uint32_t> spec_id_of;  // SpecId decorations
  std::unordered_map<std::uint32_t, std::uint32_t> spec_type;   // spec constant -> its type
  std::vector<std::uint32_t> compute_mains;  // functions an OpEntryPoint GLCompute "main" names
  std::vector<std::uint32_t> functions;      // OpFunction results
  std::vector<std::uint32_t> matrix_scopes;  // the scope ids of OpTypeCooperativeMatrixKHR
  // The results of variables, access chains, function parameters and copies -> their result
  // type (a pointer type for the pointers among them; pointee_of looks up only the atomics'
  // pointer operands and checks for OpTypePointer), and every atomic instruction.
  std::unordered_map<std::uint32_t, std::uint32_t> pointer_type_of;
  std::vector<Atomic> atomics;
  bool in_function = false;  // an OpFunction not yet ended
};

// The literal string of an OpName from word `first` of `w` (nul-terminated, packed 4 per word).
std::string literal_string(const std::uint32_t* w, std::uint32_t first, std::uint32_t count) {
  std::string out;
  for (std::uint32_t i = first; i < count; ++i)
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((w[i] >> (8 * b)) & 0xffu);
      if (c == '\0') return out;
      out += c;
    }
  return out;
}

// An atomic instruction `w` of `count` words (opcode `op`) into m.atomics; nothing for another.
void scan_atomic(const std::uint32_t* w, std::uint32_t count, std::uint32_t op, ModuleTables& m) {
  const bool pointer_first = op == kOpAtomicStore || op == kOpAtomicFlagClear;
  const bool pointer_third =  // result type, result, pointer, ...
      (op >= kOpAtomicLoad && op <= kOpAtomicXor && op != kOpAtomicStore) ||
      op == kOpAtomicFlagTestAndSet || op == kOpAtomicFMinEXT || op == kOpAtomicFMaxEXT ||
      op == kOpAtomicFAddEXT;
  if (pointer_first && count >= 2) m.atomics.push_back({op, w[1], 0});  // pointer, scope, ...
  if (pointer_third && count >= 4) m.atomics.push_back({op, w[3], w[1]});
}

// One instruction `w` of `count` words (opcode `op`) into `m`, or the capabilities and
// LocalSize execution mode it states into `info`.
void scan_instruction(const std::uint32_t* w, std::uint32_t count, std::uint32_t op,
                      ModuleTables& m, SpirvInfo& info) {
  switch (op) {
    case kOpCapability:
      if (count >= 2) info.capabilities.push_back(w[1]);
      break;
    case kOpTypeBool:
    case kOpTypeInt:
    case kOpTypeFloat:
    case kOpTypeVector:
    case kOpTypeMatrix:
    case kOpTypeImage:
    case kOpTypeSampler:
    case kOpTypeSampledImage:
    case kOpTypeArray:
    case kOpTypeRuntimeArray:
    case kOpTypeStruct:
    case kOpTypePointer:
      if (count >= 2) m.types[w[1]] = Type{op, std::vector<std::uint32_t>(w + 2, w + count)};
      break;
    case kOpConstant:
      if (count >= 4) m.constants[w[2]] = w[3];
      break;
    case kOpTypeCooperativeMatrixKHR:  // result, component type, scope, rows, columns, use
      if (count >= 4) m.matrix_scopes.push_back(w[3]);
      break;
    case kOpName:
      if (count >= 3) m.names[w[1]] = literal_string(w, 2, count);
      break;
    case kOpEntryPoint:  // execution model, function, name
      if (count >= 4 && w[1] == kModelGLCompute && literal_string(w, 3, count) == "main")
        m.compute_mains.push_back(w[2]);
      break;
    case kOpFunction:
      if (count >= 3) m.functions.push_back(w[2]);
      m.in_function = true;
      break;
    case kOpFunctionEnd:
      m.in_function = false;
      break;
    case kOpSpecConstant:
      if (count >= 4) m.spec_constants[w[2]] = w[3];
      if (count >= 3) m.spec_type[w[2]] = w[1];
      break;
    case kOpSpecConstantTrue:
    case kOpSpecConstantFalse:
      if (count >= 3) m.spec_type[w[2]] = w[1];
      break;
    case kOpExecutionModeId:
      if (count >= 6 && w[2] == kModeLocalSizeId) {
        m.local_size_ids[0] = w[3];
        m.local_size_ids[1] = w[4];
        m.local_size_ids[2] = w[5];
      }
      break;
    case kOpSpecConstantComposite:
      if (count >= 3) m.spec_composites[w[2]] = std::vector<std::uint32_t>(w + 3, w + count);
      break;
    case kOpExecutionMode:
      if (count >= 6 && w[2] == kModeLocalSize) {
        info.local_size[0] = w[3];
        info.local_size[1] = w[4];
        info.local_size[2] = w[5];
      }
      break;
    case kOpVariable:
      if (count >= 4) m.vars.push_back({w[2], w[1], w[3]});
      if (count >= 3) m.pointer_type_of[w[2]] = w[1];
      break;
    case kOpFunctionParameter:
    case kOpAccessChain:
    case kOpInBoundsAccessChain:
    case kOpPtrAccessChain:
    case kOpInBoundsPtrAccessChain:
    case kOpCopyObject:
      if (count >= 3) m.pointer_type_of[w[2]] = w[1];
      break;
    case kOpDecorate:
      if (count >= 4 && w[2] == kDecBinding) m.binding_of[w[1]] = w[3];
      if (count >= 4 && w[2] == kDecSet) m.set_of[w[1]] = w[3];
      if (count >= 4 && w[2] == kDecSpecId) m.spec_id_of[w[1]] = w[3];
      if (count >= 4 && w[2] == kDecBuiltIn && w[3] == kBuiltInWorkgroupSize)
        m.workgroup_size_ids.push_back(w[1]);
      break;
    case kOpMemberDecorate:
      if (count >= 5 && w[3] == kDecOffset) m.member_offset[{w[1], w[2]}] = w[4];
      break;
    default:
      scan_atomic(w, count, op, m);
      break;
  }
}

// Every instruction after the header into `m` and `info`; internal for a truncated one.
// A module cut at an instruction's boundary inside a function leaves it open.
Status scan_module(std::span<const std::uint32_t> words, ModuleTables& m, SpirvInfo& info) {
  for (std::size_t i = 5; i < words.size();) {
    const std::uint32_t count = words[i] >> 16;
    const std::uint32_t op = words[i] & 0xffffu;
    if (count == 0 || i + count > words.size())
      return Status(StatusCode::internal,
                    "truncated SPIR-V instruction at word " + std::to_string(i));
    scan_instruction(&words[i], count, op, m, info);
    i += count;
  }
  if (m.in_function)
    return Status(StatusCode::internal, "truncated SPIR-V module (a function does not end)");
  return Status::ok_status();
}

// The workgroup size where the module states it by id, and whether it is specialisable.
void resolve_local_size(const ModuleTables& m, SpirvInfo& info) {
  // SPIR-V 1.6 (Vulkan 1.3 targets) states the workgroup size with LocalSizeId.
  if (m.local_size_ids[0] != 0) {
    info.uses_local_size_id = true;
    for (int d = 0; d < 3; ++d) {
      const std::uint32_t id = m.local_size_ids[d];
      if (auto sc = m.spec_constants.find(id); sc != m.spec_constants.end()) {
        info.local_size_is_spec = true;
        info.local_size[d] = sc->second;
        if (auto sid = m.spec_id_of.find(id); sid != m.spec_id_of.end())
          info.local_size_spec_id[d] = sid->second;
      } else if (auto c = m.constants.find(id); c != m.constants.end()) {
        info.local_size[d] = static_cast<std::uint32_t>(c->second);
      }
    }
  }
  for (std::uint32_t id : m.workgroup_size_ids) {
    auto composite = m.spec_composites.find(id);
    if (composite == m.spec_composites.end()) continue;
    info.local_size_is_spec = true;
    for (std::size_t d = 0; d < 3 && d < composite->second.size(); ++d) {
      const std::uint32_t part = composite->second[d];
      if (auto sid = m.spec_id_of.find(part); sid != m.spec_id_of.end())
        info.local_size_spec_id[d] = sid->second;
      else if (auto c = m.constants.find(part); c != m.constants.end())
        info.local_size[d] = static_cast<std::uint32_t>(c->second);  // the composite rules
    }
  }
}

// The scalar specialization constants with a SpecId, sorted by it.
void resolve_spec_constants(const ModuleTables& m, SpirvInfo& info) {
  for (const auto& [id, spec_id] : m.spec_id_of) {
    auto ty = m.spec_type.find(id);
    if (ty == m.spec_type.end()) continue;
    auto t = m.types.find(ty->second);
    if (t == m.types.end()) continue;
    SpecConstant c;
    c.spec_id = spec_id;
    if (auto n = m.names.find(id); n != m.names.end()) c.name = n->second;
    const std::uint32_t width = t->second.operands.empty() ? 0 : t->second.operands[0];
    if (t->second.op == kOpTypeBool) {
      c.kind = SpecConstant::Kind::boolean;
    } else if ((t->second.op == kOpTypeInt || t->second.op == kOpTypeFloat) &&
               (width == 32 || width == 64)) {
      c.bytes = width / 8;
      c.kind = t->second.op == kOpTypeFloat ? SpecConstant::Kind::floating
               : t->second.operands.size() >= 2 && t->second.operands[1] != 0
                   ? SpecConstant::Kind::signed_int
                   : SpecConstant::Kind::unsigned_int;
    } else if (t->second.op == kOpTypeInt || t->second.op == kOpTypeFloat) {
      c.kind = SpecConstant::Kind::unsupported;  // 8 or 16 bits
      c.bytes = width / 8;
    } else {
      continue;
    }
    info.spec_constants.push_back(std::move(c));
  }
  std::sort(info.spec_constants.begin(), info.spec_constants.end(),
            [](const SpecConstant& a, const SpecConstant& b) { return a.spec_id < b.spec_id; });
}

// Size in bytes of a type (no padding; used for Workgroup memory). nullopt when unknown.
std::optional<std::uint64_t> type_size(const ModuleTables& m, std::uint32_t id, int depth) {
  auto it = m.types.find(id);
  if (it == m.types.end() || depth > 16) return std::nullopt;
  const Type& t = it->second;
  switch (t.op) {
    case kOpTypeBool:
      return 4;
    case kOpTypeInt:
    case kOpTypeFloat:
      return t.operands.empty() ? std::nullopt : std::optional<std::uint64_t>(t.operands[0] / 8);
    case kOpTypeVector:
    case kOpTypeMatrix: {
      if (t.operands.size() < 2) return std::nullopt;
      auto e = type_size(m, t.operands[0], depth + 1);
      if (!e) return std::nullopt;
      return *e * t.operands[1];
    }
    case kOpTypeArray: {
      if (t.operands.size() < 2) return std::nullopt;
      auto e = type_size(m, t.operands[0], depth + 1);
      auto n = m.constants.find(t.operands[1]);
      if (!e || n == m.constants.end()) return std::nullopt;  // spec-constant length
      return *e * n->second;
    }
    case kOpTypeStruct: {
      std::uint64_t total = 0;
      for (std::uint32_t member : t.operands) {
        auto e = type_size(m, member, depth + 1);
        if (!e) return std::nullopt;
        total += *e;
      }
      return total;
    }
    default:
      return std::nullopt;
  }
}

// A descriptor variable `v` (StorageBuffer, Uniform or UniformConstant) into `info`.
void add_descriptor(const ModuleTables& m, const Var& v, SpirvInfo& info) {
  auto b = m.binding_of.find(v.id);
  if (b == m.binding_of.end()) return;
  auto s = m.set_of.find(v.id);
  if (s != m.set_of.end() && s->second != 0) info.uses_other_sets = true;
  // SPIR-V 1.3+ storage buffers live in StorageBuffer; older ones are Uniform+BufferBlock.
  // Uniform buffers and images/samplers are not supported by this backend.
  if (v.storage == kScStorageBuffer) {
    info.bindings.push_back(b->second);
  } else {
    info.uses_non_buffer_descriptors = true;
  }
}

// The members of the push-constant block of type `pointee` into `info`.
void add_push_constants(const ModuleTables& m, std::uint32_t pointee, SpirvInfo& info) {
  auto st = m.types.find(pointee);
  if (st == m.types.end() || st->second.op != kOpTypeStruct) return;
  const auto& members = st->second.operands;
  for (std::uint32_t i = 0; i < members.size(); ++i) {
    PushMember pm;
    auto mt = m.types.find(members[i]);
    if (mt != m.types.end() && (mt->second.op == kOpTypeInt || mt->second.op == kOpTypeFloat) &&
        !mt->second.operands.empty()) {
      pm.bytes = mt->second.operands[0] / 8;
      pm.is_float = mt->second.op == kOpTypeFloat;
    } else {
      pm.bytes = 0;  // not a scalar: a launch cannot fill it
    }
    auto off = m.member_offset.find({pointee, i});
    pm.offset = off == m.member_offset.end() ? 0 : off->second;
    info.push.push_back(pm);
    info.push_bytes = std::max(info.push_bytes, (pm.offset + std::max(pm.bytes, 4u) + 3u) & ~3u);
  }
}

// One module-scope variable into `info`, by its storage class.
void add_variable(const ModuleTables& m, const Var& v, SpirvInfo& info) {
  auto pt = m.types.find(v.pointer_type);
  if (pt == m.types.end() || pt->second.op != kOpTypePointer || pt->second.operands.size() < 2)
    return;
  const std::uint32_t pointee = pt->second.operands[1];
  switch (v.storage) {
    case kScStorageBuffer:
    case kScUniform:
    case kScUniformConstant:
      add_descriptor(m, v, info);
      break;
    case kScPushConstant:
      add_push_constants(m, pointee, info);
      break;
    case kScWorkgroup: {
      auto s = type_size(m, pointee, 0);
      if (s) {
        info.shared_bytes += *s;
      } else {
        info.shared_bytes_known = false;
      }
      break;
    }
    default:
      break;
  }
}

// Where an atomic's pointer points: its storage class and pointee type; nullopt when the pointer
// is not traced to a pointer type. Under the logical addressing libtune's devices run, a
// Workgroup pointer comes only from the instructions traced here (pointers chosen by OpSelect /
// OpPhi need VariablePointers, and untyped pointers SPV_KHR_untyped_pointers, neither of which
// libtune enables); what else yields a pointer (OpLoad or a conversion of a
// PhysicalStorageBuffer address, variable pointers to storage buffers) points into a buffer.
struct Pointee {
  std::uint32_t storage, type;
};
std::optional<Pointee> pointee_of(const ModuleTables& m, std::uint32_t pointer) {
  auto pt = m.pointer_type_of.find(pointer);
  auto t = pt == m.pointer_type_of.end() ? m.types.end() : m.types.find(pt->second);
  if (t == m.types.end() || t->second.op != kOpTypePointer || t->second.operands.size() < 2)
    return std::nullopt;
  return Pointee{t->second.operands[0], t->second.operands[1]};
}

// Atomics in `storage` act on workgroup memory (true), on buffers (false), or on neither
// (nullopt: Function, Private, Image and others libtune's devices do not have).
std::optional<bool> acts_on_shared(std::uint32_t storage) {
  switch (storage) {
    case kScWorkgroup:
      return true;
    case kScStorageBuffer:
    case kScUniform:
    case kScPhysicalStorageBuffer:
      return false;
    default:
      return std::nullopt;
  }
}

// The width of scalar type `id` when it is an OpTypeInt (`op`) or OpTypeFloat; 0 otherwise.
std::uint32_t scalar_width(const ModuleTables& m, std::uint32_t id, std::uint32_t op) {
  auto t = m.types.find(id);
  if (t == m.types.end() || t->second.op != op || t->second.operands.empty()) return 0;
  return t->second.operands[0];
}

// Where the module's 64-bit integer atomics act: on buffers, on workgroup memory (each is its
// own device feature). An atomic whose pointer is not traced (pointee_of) counts as one on
// buffers when the module declares Int64Atomics, as does a declaration with no such atomic found:
// the feature a shader with 64-bit atomics needs on most devices, asked for rather than assumed.
void resolve_int64_atomics(const ModuleTables& m, SpirvInfo& info) {
  const bool declared = std::find(info.capabilities.begin(), info.capabilities.end(),
                                  spv_cap::kInt64Atomics) != info.capabilities.end();
  bool unresolved = false;
  for (const Atomic& a : m.atomics) {
    const std::optional<Pointee> p = pointee_of(m, a.pointer);
    if (!p) {
      unresolved = true;
      continue;
    }
    if (scalar_width(m, p->type, kOpTypeInt) != 64) continue;
    if (const std::optional<bool> shared = acts_on_shared(p->storage))
      (*shared ? info.int64_atomics_shared : info.int64_atomics_buffer) = true;
  }
  if (declared && (unresolved || (!info.int64_atomics_buffer && !info.int64_atomics_shared)))
    info.int64_atomics_buffer = true;
}

// The FloatAtomics member an atomic `op` on a float of `bits` needs; nullptr for other widths.
bool FloatAtomics::*float_atomic_member(std::uint32_t op, std::uint32_t bits) {
  const bool add = op == kOpAtomicFAddEXT;
  const bool min_max = op == kOpAtomicFMinEXT || op == kOpAtomicFMaxEXT;
  switch (bits) {
    case 16:
      return add       ? &FloatAtomics::float16_add
             : min_max ? &FloatAtomics::float16_min_max
                       : &FloatAtomics::float16;
    case 32:
      return add       ? &FloatAtomics::float32_add
             : min_max ? &FloatAtomics::float32_min_max
                       : &FloatAtomics::float32;
    case 64:
      return add       ? &FloatAtomics::float64_add
             : min_max ? &FloatAtomics::float64_min_max
                       : &FloatAtomics::float64;
    default:
      return nullptr;
  }
}

// Where the module's float atomics act, by width and operation (load, store and exchange; add;
// min and max): each is its own device feature. The float comes from the pointer's pointee,
// or, where the pointer is not traced, from the instruction's result type (on buffers then, as
// for 64-bit integers); an untraced OpAtomicStore of a float is not seen (it has no result
// type), which logical addressing rules out (pointee_of).
void resolve_float_atomics(const ModuleTables& m, SpirvInfo& info) {
  for (const Atomic& a : m.atomics) {
    const std::optional<Pointee> p = pointee_of(m, a.pointer);
    const std::uint32_t bits = scalar_width(m, p ? p->type : a.result_type, kOpTypeFloat);
    bool FloatAtomics::*member = float_atomic_member(a.op, bits);
    if (member == nullptr) continue;
    const std::optional<bool> shared = p ? acts_on_shared(p->storage) : false;
    if (!shared) continue;
    // A named reference: GCC 12 writes `(c ? x : y).*member` into a temporary copy.
    FloatAtomics& place = *shared ? info.float_atomics_shared : info.float_atomics_buffer;
    place.*member = true;
  }
}

}  // namespace

Result<SpirvInfo> reflect_spirv(std::span<const std::uint32_t> words) {
  if (words.size() < 5 || words[0] != 0x07230203u)
    return Status(StatusCode::internal, "not a SPIR-V module (bad magic number)");
  ModuleTables m;
  SpirvInfo info;
  TUNE_RETURN_IF_ERROR(scan_module(words, m, info));
  resolve_local_size(m, info);
  resolve_int64_atomics(m, info);
  resolve_float_atomics(m, info);
  resolve_spec_constants(m, info);
  info.version = words[1];
  // A scope that is not a plain constant (a specialization constant) counts as workgroup: the
  // checks that follow are the safe side.
  for (std::uint32_t scope : m.matrix_scopes) {
    auto c = m.constants.find(scope);
    if (c == m.constants.end() || c->second == kScopeWorkgroup)
      info.workgroup_scope_matrices = true;
  }
  for (std::uint32_t f : m.compute_mains)
    if (std::find(m.functions.begin(), m.functions.end(), f) != m.functions.end())
      info.has_compute_main = true;
  for (const Var& v : m.vars) add_variable(m, v, info);
  std::sort(info.bindings.begin(), info.bindings.end());
  info.bindings.erase(std::unique(info.bindings.begin(), info.bindings.end()), info.bindings.end());
  return info;
}

}  // namespace tune::vk
