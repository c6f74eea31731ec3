// Control flow (PTX ISA 9.7.10: bra, call, ret, exit, trap, brkpt). `call` is implemented for
// the two system calls of the CUDA device runtime that compilers emit: vprintf (the CUDA printf
// ABI: a format string and a packed argument buffer) and __assertfail (a failed device-side
// assert); `ret` in a kernel is `exit`.
#include <cstdio>
#include <cstring>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"
#include "core/emu/insns/assert_fail.h"

namespace mgpu::emu {
namespace {

Flow bra(Warp& w, const Insn& in, std::uint32_t mask) {
  const std::uint32_t target = static_cast<std::uint32_t>(in.operand(0).target);
  EMU_FOR_LANES(mask, l) w.pc[l] = target;
  return Flow::Done;
}

std::string decode_bra(const ptx::Instruction& p, Insn& out) {
  if (p.operands.size() != 1 || p.operands[0].kind != ptx::Operand::Kind::Label) return "branch target is not a label";
  out.fn = &bra;
  return "";
}

Flow exit_lanes(Warp& w, const Insn&, std::uint32_t mask) {
  w.alive &= ~mask;
  return Flow::Done;
}

std::string decode_exit(const ptx::Instruction&, Insn& out) {
  out.fn = &exit_lanes;
  return "";
}

Flow trap(Warp& w, const Insn& in, std::uint32_t mask) {
  w.launch().fault(ReportKind::Trap, where(w, in, __builtin_ctz(mask)), "the kernel executed '" + in.src->opcode + "'");
}

std::string decode_trap(const ptx::Instruction&, Insn& out) {
  out.fn = &trap;
  return "";
}

std::uint64_t read_local_param(Warp& w, const Insn& in, const ptx::Operand& sym, int lane, std::uint32_t bytes = 8) {
  std::uint64_t off = read_operand(w, in, sym, lane);
  Resolved r = resolve(w, in, Space::Local, off, bytes, false, lane);
  std::uint64_t v = 0;
  std::memcpy(&v, r.ptr, bytes);
  return v;
}

// A NUL-terminated string at a generic address (at most 4096 bytes are taken).
std::string read_c_string(Warp& w, const Insn& in, std::uint64_t a, int lane) {
  std::string s;
  for (; s.size() < 4096; ++a) {
    char c = static_cast<char>(*resolve(w, in, Space::Generic, a, 1, false, lane).ptr);
    if (!c) break;
    s += c;
  }
  return s;
}

// __assertfail(message, file, line, function, charSize): the CUDA device runtime's handler of a
// failed assert (CUDA C++ Programming Guide, "Assertion": the failing thread prints
// "file:line: function: block: [bx,by,bz], thread: [tx,ty,tz] Assertion `message` failed." and
// the kernel is stopped; the host gets CUDA_ERROR_ASSERT). Every lane that arrives prints its
// line into the device's printf output; the launch then ends with a Trap finding naming the
// message, file and line.
Flow assertfail_call(Warp& w, const Insn& in, std::uint32_t mask) {
  const auto& args = in.operand(1).elems;
  if (args.size() < 4)
    w.launch().fault(ReportKind::Unsupported, where(w, in, __builtin_ctz(mask)), "__assertfail called with fewer than 4 arguments");
  const LaunchConfig& c = w.launch().config;
  std::string message, file, function;
  std::uint64_t line = 0;
  int threads = 0;
  EMU_FOR_LANES(mask, l) {
    message = read_c_string(w, in, read_local_param(w, in, args[0], l), l);
    file = read_c_string(w, in, read_local_param(w, in, args[1], l), l);
    line = read_local_param(w, in, args[2], l, 4);
    function = read_c_string(w, in, read_local_param(w, in, args[3], l), l);
    const std::uint32_t t = static_cast<std::uint32_t>(w.thread(l));
    const std::uint32_t tx = t % c.block[0], ty = (t / c.block[0]) % c.block[1], tz = t / (c.block[0] * c.block[1]);
    char buf[256];
    std::snprintf(buf, sizeof buf, ": block: [%d,%d,%d], thread: [%u,%u,%u] Assertion `", w.cta->id[0], w.cta->id[1], w.cta->id[2],
                  tx, ty, tz);
    w.launch().printf_output += file + ":" + std::to_string(line) + ": " + function + buf + message + "` failed.\n";
    ++threads;
  }
  w.launch().fault(ReportKind::Trap, where(w, in, __builtin_ctz(mask)),
                   std::string(kAssertFailPrefix) + "`" + message + "` at " + file + ":" + std::to_string(line) + " in " + function +
                       " (" + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + " of this warp; the kernel is stopped)");
}

// vprintf(format, args): args are packed with each value aligned to its size; float
// arguments arrive as double (C's default promotion), as the CUDA printf ABI specifies.
Flow vprintf_call(Warp& w, const Insn& in, std::uint32_t mask) {
  const auto& args = in.operand(2).elems;
  EMU_FOR_LANES(mask, l) {
    std::uint64_t fmt = read_local_param(w, in, args.at(0), l);
    std::uint64_t buf = args.size() > 1 ? read_local_param(w, in, args[1], l) : 0;
    std::string f;
    for (std::uint64_t a = fmt;; ++a) {
      char c = static_cast<char>(*resolve(w, in, Space::Generic, a, 1, false, l).ptr);
      if (!c) break;
      f += c;
    }
    std::string out;
    std::uint64_t off = 0;
    auto arg = [&](int bytes) {
      off = (off + bytes - 1) / bytes * bytes;
      std::uint64_t v = 0;
      std::memcpy(&v, resolve(w, in, Space::Generic, buf + off, bytes, false, l).ptr, bytes);
      off += bytes;
      return v;
    };
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '%') { out += f[i]; continue; }
      std::size_t j = i + 1;
      while (j < f.size() && std::strchr("-+ #0123456789.", f[j])) ++j;
      // The flags, width and precision only: the length modifier (h, l, ll, z) picks the
      // argument's size here, and the host conversion below supplies its own (C99 7.19.6.1,
      // which the CUDA Programming Guide's "Formatted Output" follows: %lld takes 8 bytes).
      std::string spec = f.substr(i, j - i);
      bool is_long = false;
      while (j < f.size() && (f[j] == 'l' || f[j] == 'h' || f[j] == 'z')) { is_long |= f[j] == 'l' || f[j] == 'z'; ++j; }
      if (j >= f.size()) break;
      char conv = f[j];
      char tmp[512];
      switch (conv) {
        case '%': out += '%'; break;
        case 'd': case 'i': {
          std::uint64_t v = arg(is_long ? 8 : 4);
          std::snprintf(tmp, sizeof tmp, (spec + "lld").c_str(), is_long ? static_cast<long long>(v) : static_cast<long long>(static_cast<std::int32_t>(v)));
          out += tmp;
          break;
        }
        case 'u': case 'x': case 'X': case 'o': case 'c': {
          std::uint64_t v = arg(is_long ? 8 : 4);
          if (conv == 'c') std::snprintf(tmp, sizeof tmp, (spec + "c").c_str(), static_cast<int>(v));
          else std::snprintf(tmp, sizeof tmp, (spec + "ll" + conv).c_str(), static_cast<unsigned long long>(v));
          out += tmp;
          break;
        }
        case 'f': case 'e': case 'g': case 'F': case 'E': case 'G': case 'a': {
          std::snprintf(tmp, sizeof tmp, (spec + conv).c_str(), as_f64(arg(8)));
          out += tmp;
          break;
        }
        case 'p': std::snprintf(tmp, sizeof tmp, "0x%llx", static_cast<unsigned long long>(arg(8))); out += tmp; break;
        case 's': {
          std::uint64_t s = arg(8);
          for (;; ++s) {
            char c = static_cast<char>(*resolve(w, in, Space::Generic, s, 1, false, l).ptr);
            if (!c) break;
            out += c;
          }
          break;
        }
        default: out += spec + conv;
      }
      i = j;
    }
    w.launch().printf_output += out;
    const auto& rets = in.operand(0).elems;
    if (!rets.empty()) {
      std::uint64_t off_r = read_operand(w, in, rets[0], l);
      Resolved r = resolve(w, in, Space::Local, off_r, 4, false, l);
      std::uint32_t n = static_cast<std::uint32_t>(out.size());
      std::memcpy(r.ptr, &n, 4);
    }
  }
  return Flow::Next;
}

std::string decode_call(const ptx::Instruction& p, Insn& out) {
  // call{.uni} __assertfail, (args);
  if (p.operands.size() == 2 && p.operands[0].kind == ptx::Operand::Kind::Symbol && p.operands[0].name == "__assertfail" &&
      p.operands[1].kind == ptx::Operand::Kind::Vector) {
    out.fn = &assertfail_call;
    return "";
  }
  // call{.uni} (ret), name, (args);
  if (p.operands.size() != 3 || p.operands[1].kind != ptx::Operand::Kind::Symbol)
    return "only call (ret), vprintf, (args) and call __assertfail, (args) are implemented";
  if (p.operands[1].name != "vprintf") return "calls to '" + p.operands[1].name + "' are not implemented (only vprintf and __assertfail)";
  out.fn = &vprintf_call;
  return "";
}

}  // namespace

void register_control() {
  register_decoder("bra", &decode_bra);
  register_decoder("brx", [](const ptx::Instruction&, Insn&) -> std::string { return "indirect branches are not implemented"; });
  register_decoder("ret", &decode_exit);
  register_decoder("exit", &decode_exit);
  register_decoder("trap", &decode_trap);
  register_decoder("brkpt", &decode_trap);
  register_decoder("call", &decode_call);
}

}  // namespace mgpu::emu
