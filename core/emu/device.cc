#include "core/emu/device.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/emu/exec/decode.h"
#include "core/emu/exec/launch.h"
#include "core/emu/ptx/parser.h"

namespace mgpu::emu {

namespace {

std::uint64_t round_up(std::uint64_t x, std::uint64_t align) { return (x + align - 1) / align * align; }

// Why no GPU could hold declaration `v` (empty when one can): sizes are 64-bit (ptx/parser.h),
// so nothing here wraps.
std::string declaration_error(const ptx::Variable& v) {
  if (v.space == ptx::VarSpace::Shared && v.size > kMaxSharedPerBlock)
    return "'.shared " + v.name + "' is " + std::to_string(v.size) + " bytes: more than a block's shared memory on any " +
           "GPU the virtual device presents (" + std::to_string(kMaxSharedPerBlock) + " bytes on sm_90a and sm_100a)";
  if (v.space == ptx::VarSpace::Local && v.size > kMaxLocalPerThread)
    return "'.local " + v.name + "' is " + std::to_string(v.size) + " bytes per thread: CUDA allows at most " +
           std::to_string(kMaxLocalPerThread) + " bytes (512 KiB) of local memory per thread";
  return "";
}

}  // namespace

LoadedModule& Device::load(const std::string& text) {
  auto m = std::make_unique<LoadedModule>();
  m->ptx = ptx::parse(text);
  auto refuse = [](const ptx::Variable& v, std::string why) {
    Report r{ReportKind::Unsupported, {}, std::move(why)};
    r.where.line = v.line;
    throw Fault(r);
  };
  // .global and .const variables take device memory at load: all of a module's together, each
  // size below 2^64 (ptx/parser.h) and summed with a cap, so nothing wraps.
  std::uint64_t global = 0, constant = 0;
  for (const auto& v : m->ptx.variables) {
    if (std::string why = declaration_error(v); !why.empty()) refuse(v, why);
    const std::uint64_t size = std::min<std::uint64_t>(v.size, std::uint64_t{1} << 62);
    if (v.space == ptx::VarSpace::Global && (global += round_up(size, 256)) > kDeviceMemory)
      refuse(v, "the module's .global variables take " + (global == round_up(size, 256) ? std::to_string(v.size) : "more than " + std::to_string(kDeviceMemory)) +
                    " bytes with '" + v.name.substr(0, 40) + "': more than the virtual device's memory (" + std::to_string(kDeviceMemory) + " bytes)");
    if (v.space == ptx::VarSpace::Const && (constant += size) > kMaxConstBytes)
      refuse(v, "the module's .const variables take " + (constant == size ? std::to_string(v.size) : "more than " + std::to_string(kMaxConstBytes)) +
                    " bytes with '" + v.name.substr(0, 40) + "': CUDA's constant memory holds " + std::to_string(kMaxConstBytes) + " bytes (64 KiB)");
  }
  for (const auto& k : m->ptx.kernels) m->code.push_back(decode(k));
  m->global_vars.assign(m->ptx.variables.size(), 0);
  for (std::size_t i = 0; i < m->ptx.variables.size(); ++i) {
    const auto& v = m->ptx.variables[i];
    if (v.space != ptx::VarSpace::Global && v.space != ptx::VarSpace::Const) continue;
    std::uint64_t a = memory_.alloc(std::max<std::uint64_t>(v.size, 1));
    if (!v.init.empty()) std::memcpy(memory_.find(a, v.init.size()), v.init.data(), v.init.size());
    m->global_vars[i] = a;
  }
  modules_.push_back(std::move(m));
  return *modules_.back();
}

bool Device::holds(const LoadedModule* m) const {
  for (const auto& held : modules_)
    if (held.get() == m) return true;
  return false;
}

bool Device::unload(const LoadedModule* m) {
  for (auto it = modules_.begin(); it != modules_.end(); ++it)
    if (it->get() == m) {
      for (std::uint64_t a : m->global_vars)
        if (a) memory_.free(a);
      modules_.erase(it);
      return true;
    }
  return false;
}

std::uint32_t Device::static_shared_bytes(const LoadedModule& m) {
  std::uint64_t off = 0;
  for (const auto& v : m.ptx.variables)
    if (v.space == ptx::VarSpace::Shared && v.size > 0) off = round_up(off, v.align) + v.size;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(off, std::numeric_limits<std::uint32_t>::max()));
}

LaunchResult Device::launch(const LoadedModule& m, const std::string& kernel, const LaunchConfig& config, void* const* args) {
  LaunchResult result;
  Launch L;
  L.module = &m.ptx;
  L.global = &memory_;
  L.config = config;
  std::size_t ki = 0;
  for (; ki < m.ptx.kernels.size(); ++ki)
    if (m.ptx.kernels[ki].name == kernel) break;
  auto fail = [&](ReportKind k, std::string msg) {
    result.ok = false;
    result.reports.push_back(Report{k, {}, std::move(msg)});
    return result;
  };
  if (ki == m.ptx.kernels.size()) return fail(ReportKind::Unsupported, "no kernel named '" + kernel + "' in the module");
  const ptx::Kernel& k = m.ptx.kernels[ki];
  L.kernel = &k;
  L.code = &m.code[ki];
  // Launch shape (CUDA: cuLaunchKernelEx with the cluster attribute; PTX .reqnctapercluster).
  if (k.reqnctapercluster[0] && config.cluster[0] * config.cluster[1] * config.cluster[2] == 1)
    for (int i = 0; i < 3; ++i) L.config.cluster[i] = k.reqnctapercluster[i];
  const auto& c = L.config;
  std::uint32_t threads = c.block[0] * c.block[1] * c.block[2];
  if (threads == 0 || threads > 1024) return fail(ReportKind::Unsupported, "block of " + std::to_string(threads) + " threads (1 to 1024)");
  for (int i = 0; i < 3; ++i) {
    if (c.grid[i] == 0 || c.cluster[i] == 0 || c.grid[i] % c.cluster[i])
      return fail(ReportKind::Unsupported, "grid dimension " + std::to_string(i) + " (" + std::to_string(c.grid[i]) +
                                               ") is not a positive multiple of the cluster's (" + std::to_string(c.cluster[i]) + ")");
    if (k.reqntid[i] && k.reqntid[i] != c.block[i])
      return fail(ReportKind::Unsupported, "the kernel requires " + std::to_string(k.reqntid[i]) + " threads in dimension " + std::to_string(i) +
                                               " (.reqntid), launched with " + std::to_string(c.block[i]));
  }
  if (c.cluster[0] * c.cluster[1] * c.cluster[2] > 16) return fail(ReportKind::Unsupported, "clusters of more than 16 CTAs");
  // Shared memory: static variables first, dynamic shared memory after them. Summed in 64 bits
  // and checked before anything narrower holds them: nothing wraps.
  L.shared_vars.assign(m.ptx.variables.size(), 0);
  L.local_vars.assign(m.ptx.variables.size(), 0);
  std::uint64_t off = 0, local = 0;
  std::uint64_t dyn_align = 16;
  for (std::size_t i = 0; i < m.ptx.variables.size(); ++i) {
    const auto& v = m.ptx.variables[i];
    if (v.space == ptx::VarSpace::Shared && v.size > 0) {
      off = round_up(off, v.align);
      L.shared_vars[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(off, kMaxSharedPerBlock));
      off = std::min<std::uint64_t>(off + v.size, std::uint64_t{1} << 40);
    } else if (v.space == ptx::VarSpace::Shared) {
      dyn_align = std::max<std::uint64_t>(dyn_align, v.align);
    } else if (v.space == ptx::VarSpace::Local && v.kernel == static_cast<std::int32_t>(ki)) {  // this kernel's
      local = round_up(local, v.align);
      L.local_vars[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(local, kMaxLocalPerThread));
      local = std::min<std::uint64_t>(local + v.size, std::uint64_t{1} << 40);
    }
  }
  off = round_up(off, dyn_align);
  const std::uint64_t smem = off + c.dynamic_smem;
  if (smem > kMaxSharedPerBlock)
    return fail(ReportKind::Unsupported, std::to_string(smem) + " bytes of shared memory per block (sm_90a allows " +
                                             std::to_string(kMaxSharedPerBlock) + ")");
  if (local > kMaxLocalPerThread)
    return fail(ReportKind::Unsupported, std::to_string(local) + " bytes of local memory per thread (CUDA allows " +
                                             std::to_string(kMaxLocalPerThread) + ", 512 KiB)");
  for (std::size_t i = 0; i < m.ptx.variables.size(); ++i)
    if (m.ptx.variables[i].space == ptx::VarSpace::Shared && m.ptx.variables[i].size == 0)
      L.shared_vars[i] = static_cast<std::uint32_t>(off);
  L.static_smem = static_cast<std::uint32_t>(off);
  L.smem_bytes = static_cast<std::uint32_t>(smem);
  L.local_bytes = static_cast<std::uint32_t>(local);
  L.global_vars = m.global_vars;
  L.params.assign(std::max<std::uint32_t>(k.param_bytes, 1), 0);
  for (std::size_t i = 0; i < k.params.size(); ++i) std::memcpy(L.params.data() + k.params[i].offset, args[i], k.params[i].size);
  try {
    run_launch(L);
  } catch (const Fault& f) {
    result.ok = false;
    result.reports.push_back(f.report);
  }
  for (auto& r : L.reports) result.reports.push_back(std::move(r));
  result.printf_output = std::move(L.printf_output);
  result.instructions = L.steps;
  result.thread_instructions = L.thread_steps;
  result.banks = bank_report(L.banks_by_pc, *L.code, k);
  return result;
}

}  // namespace mgpu::emu
