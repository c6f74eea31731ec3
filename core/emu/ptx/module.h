// A PTX module as the parser sees it: kernels with their parameters, registers and a flat list
// of instructions whose operands are already resolved (registers to slots, labels to
// instruction indices, variables to their space and offset). Contract: nothing here knows an
// instruction's meaning -- the opcode stays text, split at its dots; exec/decode.h binds
// meaning. Every instruction keeps its PTX source line for reports.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mgpu::emu::ptx {

// Special registers (PTX ISA 10, "Special Registers").
enum class Special : std::uint8_t {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ, CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ,
  LaneId, WarpId, NWarpId, SmId, NSmId, GridId,
  ClusterCtaRank, ClusterNCtaRank, ClusterIdX, ClusterIdY, ClusterIdZ,
  NClusterIdX, NClusterIdY, NClusterIdZ, ClusterCtaIdX, ClusterCtaIdY, ClusterCtaIdZ,
  ClusterNCtaIdX, ClusterNCtaIdY, ClusterNCtaIdZ, IsExplicitCluster,
  DynamicSmemSize, TotalSmemSize, Clock, Clock64, GlobalTimer, LaneMaskLt, LaneMaskEq,
};

enum class VarSpace : std::uint8_t { Shared, Global, Const, Param, Local };

struct Operand {
  enum class Kind : std::uint8_t { None, Reg, Imm, Special, Symbol, Address, Vector, Label, Sink };
  Kind kind = Kind::None;
  bool negate = false;        // !%p
  bool pair = false;          // Vector written `a|b` (two destinations)
  std::int32_t reg = -1;      // Reg, Address base (-1: none)
  Special special{};          // Special
  std::int64_t imm = 0;       // Imm (bits; f32/f64 immediates keep their bit pattern), Address offset
  bool imm_is_f32 = false, imm_is_f64 = false;
  // Symbol or Address base: >= 0 a Module::variables index, <= -2 kernel parameter -(symbol+2),
  // -1 none (a function name in `call`, kept in `name`).
  std::int32_t symbol = -1;
  std::string name;           // Symbol: the name as written
  std::int32_t target = -1;   // Label: instruction index
  std::vector<Operand> elems; // Vector
};

struct Instruction {
  std::string opcode;               // "mbarrier.try_wait.parity.shared::cta.b64"
  std::vector<std::string> parts;   // opcode split at '.' : {"mbarrier","try_wait",...}
  std::vector<Operand> operands;
  std::int32_t guard = -1;          // predicate register slot, -1 when unguarded
  bool guard_negated = false;
  std::int32_t line = 0;            // 1-based line in the PTX text
};

enum class RegType : std::uint8_t { Pred, B8, B16, B32, B64, F16, F16x2, F32, F64 };

struct Param {
  std::string name;
  std::uint32_t offset = 0, size = 0, align = 1;
};

struct Variable {
  std::string name;
  VarSpace space = VarSpace::Shared;
  std::uint64_t size = 0;   // 0 for `.extern .shared ... []` (dynamic shared memory)
  std::uint32_t align = 1;
  bool is_extern = false;
  std::vector<std::uint8_t> init;  // initializer bytes (global/const), may be empty
  std::int32_t line = 0;    // where it is declared, for reports
  std::int32_t kernel = -1; // the kernel whose body declares it (its .local memory), -1 at module scope
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  std::uint32_t param_bytes = 0;
  std::vector<RegType> reg_types;       // per slot
  std::vector<std::string> reg_names;   // per slot, for reports
  std::vector<Instruction> code;
  std::map<std::string, std::int32_t> labels;  // top-scope labels, for reports
  std::uint32_t reqntid[3] = {0, 0, 0}, maxntid[3] = {0, 0, 0};
  std::uint32_t reqnctapercluster[3] = {0, 0, 0};
  bool explicit_cluster = false;
  std::int32_t maxnreg = 0;
};

struct Module {
  std::string version, target;
  std::vector<Variable> variables;     // module scope (.shared / .global / .const)
  std::vector<Kernel> kernels;
  const Kernel* find(const std::string& name) const {
    for (const auto& k : kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
};

}  // namespace mgpu::emu::ptx
