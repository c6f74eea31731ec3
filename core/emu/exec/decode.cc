#include "core/emu/exec/decode.h"

#include <mutex>
#include <unordered_map>

#include "core/emu/check/report.h"

namespace mgpu::emu {

namespace {

std::unordered_map<std::string, Decoder>& table() {
  static std::unordered_map<std::string, Decoder> t;
  return t;
}

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_integer();
    register_float();
    register_convert();
    register_data();
    register_control();
    register_warp();
    register_barrier();
    register_mbarrier();
    register_tma();
    register_wgmma();
    register_warp_mma();
    register_tcgen05();
    register_misc();
  });
}

}  // namespace

void register_decoder(const char* opcode, Decoder d) { table()[opcode] = d; }

bool has_part(const ptx::Instruction& in, const char* part) {
  for (const auto& p : in.parts)
    if (p == part) return true;
  return false;
}

Ty last_type(const ptx::Instruction& in) {
  for (auto it = in.parts.rbegin(); it != in.parts.rend(); ++it) {
    Ty t = parse_type(*it);
    if (t != Ty::None) return t;
  }
  return Ty::None;
}

Space space_of(const ptx::Instruction& in) {
  for (const auto& p : in.parts) {
    if (p == "shared" || p == "shared::cta") return Space::Shared;
    if (p == "shared::cluster") return Space::SharedCluster;
    if (p == "global") return Space::Global;
    if (p == "param" || p == "param::entry" || p == "param::func") return Space::Param;
    if (p == "local") return Space::Local;
    if (p == "const") return Space::Const;
  }
  return Space::Generic;
}

std::vector<Insn> decode(const ptx::Kernel& k) {
  register_all();
  std::vector<Insn> out(k.code.size());
  for (std::size_t i = 0; i < k.code.size(); ++i) {
    const ptx::Instruction& in = k.code[i];
    out[i].src = &in;
    auto it = table().find(in.parts[0]);
    std::string err = it == table().end() ? "no such instruction in the virtual device" : it->second(in, out[i]);
    if (err.empty() && !out[i].fn) err = "decoder left no handler";
    if (!err.empty()) {
      Report r{ReportKind::Unsupported, {}, "'" + in.opcode + "' (" + err + ") in kernel " + k.name};
      r.where.pc = static_cast<int>(i);
      r.where.line = in.line;
      throw Fault(r);
    }
  }
  return out;
}

}  // namespace mgpu::emu
