#include "core/emu/ptx/parser.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <unordered_map>

namespace mgpu::emu::ptx {

ParseError::ParseError(int line, const std::string& what)
    : std::runtime_error("PTX line " + std::to_string(line) + ": " + what), line(line) {}

namespace {

// How deep `{ }` blocks, and operands (vectors, addresses, negations), may nest: as deep as the
// MLIR path allows (core/mlir_to_ptx.cc), far beyond what compilers write, and shallow enough
// that no text can exhaust the stack or make name lookups walk long scope chains.
constexpr int kMaxNesting = 256;
// The distinct registers one kernel may use. Each gets a slot in every thread of the virtual
// device (8 bytes a lane, with its checkers' state), so a declaration costs nothing until its
// registers are used; LLVM and MLIR kernels use hundreds to a few thousand.
constexpr std::size_t kMaxRegisters = 65536;
// A kernel's parameters (CUDA 12.1 and later, compute capability 7.0 and up).
constexpr std::uint64_t kMaxParamBytes = 32764;
// The statements (instructions, labels, declarations, `{ }` blocks), operands and initializer
// values one module may hold: a thousand times what a matmul kernel of ours has, and few enough
// that the parsed module stays within a few hundred MB whatever the text.
constexpr std::size_t kMaxItems = std::size_t{1} << 20;

struct Token {
  enum Kind { Ident, Number, Punct, String, End } kind = End;
  std::string text;
  int line = 0;
};

// Text from the PTX as a message quotes it: cut after 40 characters, so a 60 MB run of dots (one
// token) or a name as long makes a one-line message, not a 60 MB one.
// Bytes that are not printable ASCII (a NUL, a byte-order mark) are written \xNN: a message is text.
std::string clip(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return text.size() > 40 ? out + "..." : out;
}
std::string quote(const std::string& text) { return "'" + clip(text) + "'"; }
// A token as a message shows it: a string keeps its quotes, the end of the text is named.
std::string shown(const Token& t) {
  if (t.kind == Token::End) return "the end of the text";
  return t.kind == Token::String ? quote("\"" + t.text + "\"") : quote(t.text);
}

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

// Reads the text one token at a time, as the parser asks for them: text that goes wrong early
// fails early, and the parser lets go of the tokens it has read, so a file of a hundred million
// ';' costs no more memory than a file of ten (whole-file token lists took 55 bytes a character).
class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  // The next token; End (again and again) at the end of the text.
  Token lex() {
    const std::string& s = s_;
    const std::size_t n = s.size();
    std::size_t i = i_;
    while (i < n) {
      char c = s[i];
      if (c == '\n') { ++line_; ++i; continue; }
      if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
      if (c == '/' && i + 1 < n && s[i + 1] == '/') {
        while (i < n && s[i] != '\n') ++i;
        continue;
      }
      if (c == '/' && i + 1 < n && s[i + 1] == '*') {
        i += 2;
        while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) { if (s[i] == '\n') ++line_; ++i; }
        i += 2;
        continue;
      }
      Token t;
      t.line = line_;
      if (c == '"') {
        std::size_t j = i + 1;
        while (j < n && s[j] != '"') j += (s[j] == '\\') ? 2 : 1;
        t.kind = Token::String;
        t.text = s.substr(i + 1, j - i - 1);
        i = j + 1;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        std::size_t j = i;
        while (j < n && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
        t.kind = Token::Number;
        t.text = s.substr(i, j - i);
        i = j;
      } else if (ident_start(c)) {
        std::size_t j = i + 1;
        for (;;) {
          if (j < n && ident_char(s[j])) { ++j; continue; }
          // "::" inside an opcode or state space (shared::cta, mbarrier::complete_tx::bytes)
          if (j + 2 < n && s[j] == ':' && s[j + 1] == ':' && ident_char(s[j + 2])) { j += 2; continue; }
          break;
        }
        t.kind = Token::Ident;
        t.text = s.substr(i, j - i);
        i = j;
      } else {
        t.kind = Token::Punct;
        t.text = std::string(1, c);
        ++i;
      }
      i_ = i;
      return t;
    }
    i_ = i;
    Token end;
    end.line = line_;
    return end;
  }

 private:
  const std::string& s_;
  std::size_t i_ = 0;
  int line_ = 1;
};

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '.') {
      if (i > start) parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

bool parse_number(const std::string& t, Operand& op) {
  op.kind = Operand::Kind::Imm;
  const char* p = t.c_str();
  char* end = nullptr;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F') && t.size() == 10) {
    op.imm = static_cast<std::int64_t>(std::strtoull(p + 2, &end, 16));
    op.imm_is_f32 = true;
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'd' || t[1] == 'D') && t.size() == 18) {
    op.imm = static_cast<std::int64_t>(std::strtoull(p + 2, &end, 16));
    op.imm_is_f64 = true;
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    errno = 0;
    op.imm = static_cast<std::int64_t>(std::strtoull(p + 2, &end, 16));
    if (errno == ERANGE) return false;  // beyond 64 bits: strtoull saturates, nothing may wrap
  } else if (t.find('.') != std::string::npos || t.find('e') != std::string::npos) {
    double d = std::strtod(p, &end);
    std::memcpy(&op.imm, &d, 8);
    op.imm_is_f64 = true;
  } else {
    errno = 0;
    op.imm = static_cast<std::int64_t>(std::strtoull(p, &end, 10));
    if (errno == ERANGE) return false;
  }
  if (end && (*end == 'U' || *end == 'u')) ++end;
  return end && *end == '\0';
}

const std::unordered_map<std::string, Special>& specials() {
  static const std::unordered_map<std::string, Special> m = {
      {"%tid.x", Special::TidX}, {"%tid.y", Special::TidY}, {"%tid.z", Special::TidZ},
      {"%ntid.x", Special::NtidX}, {"%ntid.y", Special::NtidY}, {"%ntid.z", Special::NtidZ},
      {"%ctaid.x", Special::CtaidX}, {"%ctaid.y", Special::CtaidY}, {"%ctaid.z", Special::CtaidZ},
      {"%nctaid.x", Special::NctaidX}, {"%nctaid.y", Special::NctaidY}, {"%nctaid.z", Special::NctaidZ},
      {"%laneid", Special::LaneId}, {"%warpid", Special::WarpId}, {"%nwarpid", Special::NWarpId},
      {"%smid", Special::SmId}, {"%nsmid", Special::NSmId}, {"%gridid", Special::GridId},
      {"%cluster_ctarank", Special::ClusterCtaRank}, {"%cluster_nctarank", Special::ClusterNCtaRank},
      {"%clusterid.x", Special::ClusterIdX}, {"%clusterid.y", Special::ClusterIdY}, {"%clusterid.z", Special::ClusterIdZ},
      {"%nclusterid.x", Special::NClusterIdX}, {"%nclusterid.y", Special::NClusterIdY}, {"%nclusterid.z", Special::NClusterIdZ},
      {"%cluster_ctaid.x", Special::ClusterCtaIdX}, {"%cluster_ctaid.y", Special::ClusterCtaIdY},
      {"%cluster_ctaid.z", Special::ClusterCtaIdZ}, {"%cluster_nctaid.x", Special::ClusterNCtaIdX},
      {"%cluster_nctaid.y", Special::ClusterNCtaIdY}, {"%cluster_nctaid.z", Special::ClusterNCtaIdZ},
      {"%is_explicit_cluster", Special::IsExplicitCluster}, {"%dynamic_smem_size", Special::DynamicSmemSize},
      {"%total_smem_size", Special::TotalSmemSize}, {"%clock", Special::Clock}, {"%clock64", Special::Clock64},
      {"%globaltimer", Special::GlobalTimer}, {"%lanemask_lt", Special::LaneMaskLt}, {"%lanemask_eq", Special::LaneMaskEq},
  };
  return m;
}

std::uint32_t type_bytes(const std::string& t) {
  if (t == ".b8" || t == ".u8" || t == ".s8") return 1;
  if (t == ".b16" || t == ".u16" || t == ".s16" || t == ".f16" || t == ".bf16") return 2;
  if (t == ".b32" || t == ".u32" || t == ".s32" || t == ".f32" || t == ".f16x2" || t == ".bf16x2") return 4;
  if (t == ".b64" || t == ".u64" || t == ".s64" || t == ".f64") return 8;
  if (t == ".pred") return 1;
  return 0;
}

RegType reg_type(const std::string& t, int line) {
  if (t == ".pred") return RegType::Pred;
  if (t == ".f32") return RegType::F32;
  if (t == ".f64") return RegType::F64;
  if (t == ".f16" || t == ".bf16") return RegType::F16;
  if (t == ".f16x2" || t == ".bf16x2") return RegType::F16x2;
  switch (type_bytes(t)) {
    case 1: return RegType::B8;
    case 2: return RegType::B16;
    case 4: return RegType::B32;
    case 8: return RegType::B64;
  }
  throw ParseError(line, "unknown register type " + quote(t));
}

// A pending name reference, resolved when the kernel body is complete.
struct NameRef {
  std::size_t insn;
  std::vector<std::size_t> path;  // operand index, then element index for vectors/addresses
  std::string name;
  int scope;
  int line;
};

class Parser {
 public:
  explicit Parser(const std::string& text) : lex_(text) {}

  Module run() {
    while (peek().kind != Token::End) top_level();
    return std::move(mod_);
  }

 private:
  Lexer lex_;
  std::deque<Token> toks_;  // the tokens read ahead, and up to kKeepRead before pos_
  std::size_t pos_ = 0;     // the current token's index in toks_
  static constexpr std::size_t kKeepRead = 4096;
  std::size_t items_ = 0;   // statements, operands and values read (kMaxItems)
  Module mod_;

  // Per-kernel state.
  Kernel* k_ = nullptr;
  std::vector<int> scope_parent_;
  // Registers: those used so far have a slot (scope_regs_); a declaration only records the
  // names it declares, one by one or as a `%r<N>` range (prefix -> N), until a use.
  struct RegRange {
    RegType type;
    std::uint64_t count;
  };
  std::vector<std::unordered_map<std::string, int>> scope_regs_, scope_labels_;
  std::vector<std::unordered_map<std::string, RegType>> scope_declared_;
  std::vector<std::unordered_map<std::string, RegRange>> scope_ranges_;
  std::vector<std::unordered_map<std::string, int>> scope_vars_;  // body-local variables
  int operand_depth_ = 0;
  std::vector<NameRef> refs_;
  std::vector<Variable> local_vars_;  // .local / call .param variables of this kernel

  // The token `ahead` after the current one (End past the end), valid until the next next().
  const Token& look(std::size_t ahead = 0) {
    while (toks_.size() <= pos_ + ahead && (toks_.empty() || toks_.back().kind != Token::End)) toks_.push_back(lex_.lex());
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  // Tokens are returned as values: the parser lets go of those it has read (kKeepRead).
  Token peek(std::size_t ahead = 0) { return look(ahead); }
  Token next() {
    Token t = look();
    if (t.kind != Token::End && ++pos_ >= kKeepRead) {
      toks_.erase(toks_.begin(), toks_.begin() + static_cast<std::ptrdiff_t>(pos_));
      pos_ = 0;
    }
    return t;
  }
  bool accept(const std::string& p) {
    const Token& t = look();
    if (t.kind != Token::End && t.kind != Token::String && t.text == p) { next(); return true; }
    return false;
  }
  // One more statement, operand or value of the module: at most kMaxItems, so that no text makes
  // the parsed module (a few hundred bytes an instruction) outgrow the machine.
  void count_item(int line) {
    if (++items_ > kMaxItems)
      throw ParseError(line, "the module has more than " + std::to_string(kMaxItems) +
                                 " statements, operands and values: the virtual device reads at most " + std::to_string(kMaxItems) +
                                 " (a kernel from MLIR or LLVM has a few thousand)");
  }
  void expect(const std::string& p) {
    if (!accept(p)) throw ParseError(peek().line, "expected '" + p + "', found " + shown(peek()));
  }
  std::string ident() {
    if (peek().kind != Token::Ident) throw ParseError(peek().line, "expected a name, found " + shown(peek()));
    return next().text;
  }
  std::uint64_t number() {
    Operand op;
    bool neg = accept("-");
    if (peek().kind != Token::Number || !parse_number(peek().text, op))
      throw ParseError(peek().line, "expected a number, found " + shown(peek()));
    next();
    return static_cast<std::uint64_t>(neg ? -op.imm : op.imm);
  }
  // A directive's number in 1..max (never wrapped into a narrower field: `.reqntid 4294967297`
  // is not 1).
  std::uint32_t bounded(const std::string& what, std::uint32_t max) {
    const int line = peek().line;
    const bool neg = peek().text == "-";
    const std::uint64_t v = number();
    if (neg || v < 1 || v > max)
      throw ParseError(line, what + " " + (neg ? "-" + std::to_string(-v) : std::to_string(v)) + " is out of range (1.." +
                                 std::to_string(max) + ")");
    return static_cast<std::uint32_t>(v);
  }
  // `.align N`: a power of two, as ptxas requires.
  std::uint32_t alignment() {
    const int line = peek().line;
    const std::uint32_t a = bounded(".align", std::uint32_t{1} << 30);
    if (a & (a - 1)) throw ParseError(line, ".align " + std::to_string(a) + " is not a power of two");
    return a;
  }
  void skip_statement() {
    while (peek().kind != Token::End && !accept(";")) next();
  }
  // An array's element count (or a register range's): a whole number that fits 64 bits, never
  // saturated or negated into one.
  std::uint64_t size_count(int line, const std::string& what) {
    Operand op;
    const Token& t = peek();
    if (t.kind != Token::Number || !parse_number(t.text, op) || op.imm_is_f32 || op.imm_is_f64)
      throw ParseError(line, "the size of " + what + " must be a whole number from 0 to 18446744073709551615, not " + shown(t));
    next();
    return static_cast<std::uint64_t>(op.imm);
  }

  void top_level() {
    const Token& t = peek();
    count_item(t.line);
    if (t.kind != Token::Ident) throw ParseError(t.line, "unexpected " + shown(t) + " at module scope");
    if (t.text == ".version") { next(); mod_.version = next().text; return; }
    if (t.text == ".target") {
      next();
      mod_.target = ident();
      while (accept(",")) ident();
      return;
    }
    if (t.text == ".address_size") { next(); number(); return; }
    if (t.text == ".file" || t.text == ".section") { skip_statement(); return; }
    // Linkage, then an entry, a function or a variable.
    bool is_extern = false;
    while (peek().text == ".visible" || peek().text == ".extern" || peek().text == ".weak" || peek().text == ".common") {
      if (peek().text == ".extern") is_extern = true;
      next();
    }
    if (peek().text == ".entry") { next(); entry(); return; }
    if (peek().text == ".func") { next(); function(); return; }
    if (peek().text == ".shared" || peek().text == ".global" || peek().text == ".const") {
      mod_.variables.push_back(variable(is_extern));
      return;
    }
    throw ParseError(t.line, "unsupported module-scope directive " + shown(peek()));
  }

  // .shared .align 16 .b8 name[N] (= {...})? ;
  Variable variable(bool is_extern) {
    Variable v;
    v.is_extern = is_extern;
    int line = peek().line;
    v.line = line;
    std::string space = next().text;
    v.space = space == ".shared" ? VarSpace::Shared : space == ".global" ? VarSpace::Global
            : space == ".const" ? VarSpace::Const : space == ".param" ? VarSpace::Param : VarSpace::Local;
    if (accept(".ptr")) {}
    std::uint32_t elem = 0;
    while (peek().kind == Token::Ident && peek().text[0] == '.') {
      std::string d = next().text;
      if (d == ".align") v.align = alignment();
      else if (type_bytes(d)) elem = type_bytes(d);
      else if (d == ".v2" || d == ".v4") throw ParseError(line, "vector variables are not supported");
    }
    if (!elem) throw ParseError(line, "variable without a type");
    v.name = ident();
    std::uint64_t count = 1;
    bool unsized = false;
    if (accept("[")) {
      if (accept("]")) unsized = true;
      else { count = size_count(line, quote(v.name)); expect("]"); }
    }
    if (count > std::numeric_limits<std::uint64_t>::max() / elem)
      throw ParseError(line, quote(v.name) + " is " + std::to_string(count) + " elements of " + std::to_string(elem) +
                                 " bytes: more than 2^64 bytes");
    v.size = unsized ? 0 : count * elem;
    if (v.align < elem) v.align = elem;
    if (accept("=")) {
      std::vector<std::uint64_t> vals;
      if (accept("{")) {
        if (!accept("}")) {
          do { count_item(line); vals.push_back(number()); } while (accept(","));
          expect("}");
        }
      } else {
        vals.push_back(number());
      }
      // As ptxas: an array without a size takes its initializer's; more values than elements
      // is an error (they were copied past the variable's memory).
      if (unsized && v.space != VarSpace::Shared) v.size = vals.size() * elem;
      else if (vals.size() > count || unsized)
        throw ParseError(line, quote(v.name) + " has " + std::to_string(vals.size()) + " initial values for " +
                                   (unsized ? std::string("no") : std::to_string(count)) + " elements");
      for (auto val : vals)
        for (std::uint32_t b = 0; b < elem; ++b) v.init.push_back(static_cast<std::uint8_t>(val >> (8 * b)));
    }
    expect(";");
    return v;
  }

  // .func (ret) name (params) [;|{ body }] -- declarations (vprintf) are kept as names only.
  void function() {
    if (accept("(")) { while (!accept(")")) next(); }
    std::string name = ident();
    if (accept("(")) { while (!accept(")")) next(); }
    while (peek().kind == Token::Ident && peek().text[0] == '.') skip_statement_directive();
    if (accept(";")) return;
    // A function body: skipped; a call to it is reported by the decoder.
    int depth = 0;
    do {
      if (peek().text == "{") ++depth;
      if (peek().text == "}") --depth;
      next();
    } while (depth > 0 && peek().kind != Token::End);
  }
  void skip_statement_directive() {
    next();
    while (peek().kind == Token::Number || peek().text == ",") next();
  }

  void entry() {
    mod_.kernels.emplace_back();
    k_ = &mod_.kernels.back();
    k_->name = ident();
    scope_parent_.assign(1, -1);
    scope_regs_.assign(1, {});
    scope_declared_.assign(1, {});
    scope_ranges_.assign(1, {});
    scope_labels_.assign(1, {});
    scope_vars_.assign(1, {});
    refs_.clear();
    local_vars_.clear();
    expect("(");
    if (!accept(")")) {
      do { param(); } while (accept(","));
      expect(")");
    }
    // Performance directives.
    while (peek().kind == Token::Ident && peek().text[0] == '.') {
      std::string d = next().text;
      auto three = [&](std::uint32_t* out) {  // threads or CTAs per dimension: CUDA allows at most 1024
        out[0] = bounded(d, 1024);
        out[1] = out[2] = 1;
        if (accept(",")) out[1] = bounded(d, 1024);
        if (accept(",")) out[2] = bounded(d, 1024);
      };
      if (d == ".reqntid") three(k_->reqntid);
      else if (d == ".maxntid") three(k_->maxntid);
      else if (d == ".reqnctapercluster") { three(k_->reqnctapercluster); k_->explicit_cluster = true; }
      else if (d == ".explicitcluster") k_->explicit_cluster = true;
      else if (d == ".maxnreg") k_->maxnreg = static_cast<std::int32_t>(bounded(d, 255));  // PTX: at most 255
      else if (d == ".minnctapersm" || d == ".maxnctapersm" || d == ".maxclusterrank") number();
      else if (d == ".noreturn" || d == ".pragma") { if (peek().kind == Token::String) next(); accept(";"); }
      else throw ParseError(peek().line, "unsupported kernel directive " + quote(d));
    }
    expect("{");
    body(0);
    resolve();
    for (const auto& [name, idx] : scope_labels_[0]) k_->labels[name] = idx;
    // Body-local variables become module variables (shared) or stay per thread (local/param).
    k_ = nullptr;
  }

  void param() {
    int line = peek().line;
    count_item(line);
    expect(".param");
    Param p;
    std::uint32_t elem = 0;
    while (peek().kind == Token::Ident && peek().text[0] == '.') {
      std::string d = next().text;
      if (d == ".align") p.align = alignment();
      else if (d == ".ptr" || d == ".global" || d == ".shared" || d == ".const" || d == ".local") {}
      else if (type_bytes(d)) elem = type_bytes(d);
      else throw ParseError(line, "unsupported parameter attribute " + quote(d));
    }
    if (!elem) throw ParseError(line, "parameter without a type");
    p.name = ident();
    std::uint64_t count = 1;
    if (accept("[")) { count = size_count(line, "parameter " + quote(p.name)); expect("]"); }
    if (p.align < elem) p.align = elem;
    const std::uint64_t offset = (std::uint64_t{k_->param_bytes} + p.align - 1) / p.align * p.align;
    if (count > kMaxParamBytes / elem || offset + count * elem > kMaxParamBytes)
      throw ParseError(line, "the parameters of kernel " + clip(k_->name) + " take more than " + std::to_string(kMaxParamBytes) +
                                 " bytes with " + quote(p.name) + " (CUDA's limit for a kernel's parameters)");
    p.size = static_cast<std::uint32_t>(count * elem);
    p.offset = static_cast<std::uint32_t>(offset);
    k_->param_bytes = p.offset + p.size;
    k_->params.push_back(p);
  }

  int new_scope(int parent) {
    scope_parent_.push_back(parent);
    scope_regs_.emplace_back();
    scope_declared_.emplace_back();
    scope_ranges_.emplace_back();
    scope_labels_.emplace_back();
    scope_vars_.emplace_back();
    return static_cast<int>(scope_parent_.size()) - 1;
  }

  // The slot of register `name` as seen from `scope` (innermost declaration first), given at
  // its first use; -1 when no enclosing scope declares it.
  int find_reg(int scope, const std::string& name, int line) {
    for (int s = scope; s >= 0; s = scope_parent_[s]) {
      if (auto it = scope_regs_[s].find(name); it != scope_regs_[s].end()) return it->second;
      if (auto d = scope_declared_[s].find(name); d != scope_declared_[s].end()) return use_reg(s, name, d->second, line);
      if (std::optional<RegType> r = in_range(s, name)) return use_reg(s, name, *r, line);
    }
    return -1;
  }

  // The type of `name` when a `%r<N>` declaration of scope s declares it: the prefix, then an
  // index below N written as the range names it (decimal, no leading zero).
  std::optional<RegType> in_range(int s, const std::string& name) const {
    const auto& ranges = scope_ranges_[s];
    if (ranges.empty()) return std::nullopt;
    std::size_t digits = name.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
    for (std::size_t p = digits; p < name.size(); ++p) {
      const std::size_t len = name.size() - p;
      if ((len > 1 && name[p] == '0') || len > 19) continue;
      auto it = ranges.find(name.substr(0, p));
      if (it != ranges.end() && std::stoull(name.substr(p)) < it->second.count) return it->second.type;
    }
    return std::nullopt;
  }

  int use_reg(int s, const std::string& name, RegType type, int line) {
    if (k_->reg_types.size() >= kMaxRegisters)
      throw ParseError(line, "kernel " + clip(k_->name) + " uses more than " + std::to_string(kMaxRegisters) +
                                 " registers: the virtual device keeps every register a kernel uses in each of its "
                                 "threads, and takes at most " + std::to_string(kMaxRegisters) + " per kernel");
    const int slot = static_cast<int>(k_->reg_types.size());
    scope_regs_[s][name] = slot;
    k_->reg_types.push_back(type);
    k_->reg_names.push_back(name);
    return slot;
  }

  // The kernel's body; a `{ }` block opens a scope of its own. Iterative, and blocks nest at
  // most kMaxNesting deep, so no text can exhaust the stack.
  void body(int scope) {
    int depth = 0;
    for (;;) {
      const Token& t = peek();
      if (t.kind == Token::End) throw ParseError(t.line, "unexpected end of text inside a kernel body");
      if (accept("}")) {
        if (depth == 0) return;
        --depth;
        const int closed = scope;
        scope = scope_parent_[scope];
        // A block that declared nothing and that nothing refers to is let go: `{ }` repeated
        // costs no memory.
        if (closed + 1 == static_cast<int>(scope_parent_.size()) && scope_regs_[closed].empty() &&
            scope_declared_[closed].empty() && scope_ranges_[closed].empty() && scope_labels_[closed].empty() &&
            scope_vars_[closed].empty() && (refs_.empty() || refs_.back().scope != closed)) {
          scope_parent_.pop_back();
          scope_regs_.pop_back();
          scope_declared_.pop_back();
          scope_ranges_.pop_back();
          scope_labels_.pop_back();
          scope_vars_.pop_back();
        }
        continue;
      }
      count_item(t.line);
      if (accept("{")) {
        if (depth == kMaxNesting)
          throw ParseError(t.line, "{ } blocks nested deeper than " + std::to_string(kMaxNesting) + " levels in kernel " +
                                       clip(k_->name) + ": the virtual device reads at most " + std::to_string(kMaxNesting));
        ++depth;
        scope = new_scope(scope);
        continue;
      }
      if (t.kind == Token::Ident && peek(1).text == ":" && peek(1).kind == Token::Punct) {
        std::string name = next().text;
        next();
        // ptxas refuses a label defined twice in one scope, or named like a register of that
        // scope ("Duplicate definition of label"); an inner { } block may shadow an outer one.
        if (scope_labels_[scope].count(name) || scope_declared_[scope].count(name) || in_range(scope, name))
          throw ParseError(t.line, "duplicate definition of label " + quote(name) + " in kernel " + clip(k_->name) +
                                       (scope_labels_[scope].count(name) ? ": a label of that name is already defined "
                                                                           "in this { } block"
                                                                         : ": a register of this { } block has that name"));
        scope_labels_[scope][name] = static_cast<int>(k_->code.size());
        continue;
      }
      if (t.text == ".reg") { reg_decl(scope); continue; }
      if (t.text == ".pragma") { skip_statement(); continue; }
      if (t.text == ".shared" || t.text == ".local" || t.text == ".param" || t.text == ".global") {
        Variable v = variable(false);
        v.kernel = static_cast<std::int32_t>(mod_.kernels.size()) - 1;
        if (v.space == VarSpace::Shared || v.space == VarSpace::Global) {
          scope_vars_[scope][v.name] = static_cast<int>(mod_.variables.size());
          mod_.variables.push_back(v);
        } else {
          // Per-thread memory: .local arrays and the .param buffers of a call sequence.
          v.space = VarSpace::Local;
          scope_vars_[scope][v.name] = static_cast<int>(mod_.variables.size());
          mod_.variables.push_back(v);
        }
        continue;
      }
      instruction(scope);
    }
  }

  void reg_decl(int scope) {
    int line = next().line;
    if (accept(".v2") || accept(".v4")) throw ParseError(line, "vector registers are not supported");
    RegType type = reg_type(next().text, line);
    do {
      count_item(line);
      std::string name = ident();
      if (accept("<")) {
        const std::uint64_t count = size_count(line, quote(name + "<...>"));
        expect(">");
        scope_ranges_[scope][name] = {type, count};
      } else {
        if (scope_labels_[scope].count(name))
          throw ParseError(line, "register " + quote(name) + " of kernel " + clip(k_->name) +
                                     " has the name of a label of the same { } block (ptxas: duplicate definition)");
        scope_declared_[scope][name] = type;
      }
    } while (accept(","));
    expect(";");
  }

  void instruction(int scope) {
    Instruction insn;
    insn.line = peek().line;
    if (accept("@")) {
      insn.guard_negated = accept("!");
      std::string p = ident();
      insn.guard = find_reg(scope, p, insn.line);
      if (insn.guard < 0) throw ParseError(insn.line, "unknown predicate " + quote(p));
    }
    if (peek().kind != Token::Ident) throw ParseError(insn.line, "expected an instruction, found " + shown(peek()));
    insn.opcode = next().text;
    insn.parts = split_dots(insn.opcode);
    std::size_t index = k_->code.size();
    if (!accept(";")) {
      do {
        std::size_t i = insn.operands.size();
        Operand op = operand(scope, index, {i});
        if (accept("|")) {  // a destination pair: setp p|q, elect.sync d|p
          Operand pair;
          pair.kind = Operand::Kind::Vector;
          pair.pair = true;
          pair.elems.push_back(std::move(op));
          pair.elems.push_back(operand(scope, index, {i, 1}));
          op = std::move(pair);
        }
        insn.operands.push_back(std::move(op));
      } while (accept(","));
      expect(";");
    }
    k_->code.push_back(std::move(insn));
  }

  Operand operand(int scope, std::size_t insn, std::vector<std::size_t> path) {
    Operand op;
    int line = peek().line;
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } depth{++operand_depth_};
    if (operand_depth_ > kMaxNesting)
      throw ParseError(line, "an operand nested deeper than " + std::to_string(kMaxNesting) + " levels");
    count_item(line);
    if (accept("!")) { op = operand(scope, insn, path); op.negate = true; return op; }
    if (accept("-")) {
      if (peek().kind != Token::Number) throw ParseError(line, "expected a number after '-'");
      if (!parse_number(next().text, op)) throw ParseError(line, "bad number");
      if (op.imm_is_f32) op.imm ^= 0x80000000ll;
      else if (op.imm_is_f64) op.imm ^= static_cast<std::int64_t>(0x8000000000000000ull);
      else op.imm = -op.imm;
      return op;
    }
    if (peek().kind == Token::Number) {
      std::string t = next().text;
      if (!parse_number(t, op)) throw ParseError(line, "bad number " + quote(t));
      return op;
    }
    if (accept("(")) {  // call (ret), name, (args)
      op.kind = Operand::Kind::Vector;
      if (!accept(")")) {
        do {
          auto p = path;
          p.push_back(op.elems.size());
          op.elems.push_back(operand(scope, insn, p));
        } while (accept(","));
        expect(")");
      }
      return op;
    }
    if (accept("{")) {
      op.kind = Operand::Kind::Vector;
      do {
        auto p = path;
        p.push_back(op.elems.size());
        op.elems.push_back(operand(scope, insn, p));
      } while (accept(","));
      expect("}");
      return op;
    }
    if (accept("[")) {
      op.kind = Operand::Kind::Address;
      if (peek().kind == Token::Number) {
        op.imm = static_cast<std::int64_t>(number());
      } else {
        std::string base = ident();
        int r = find_reg(scope, base, line);
        if (r >= 0) op.reg = r;
        else refs_.push_back({insn, path, base, scope, line});
        if (accept("+")) op.imm = static_cast<std::int64_t>(number());
        else if (accept("-")) op.imm = -static_cast<std::int64_t>(number());
      }
      if (accept(",")) {  // tensor coordinates: [tensorMap, {c0, c1, ...}]
        Operand coords = operand(scope, insn, path);
        if (coords.kind != Operand::Kind::Vector) throw ParseError(line, "expected '{' coordinates '}'");
        op.elems = std::move(coords.elems);
      }
      expect("]");
      return op;
    }
    if (peek().kind != Token::Ident) throw ParseError(line, "unexpected " + shown(peek()) + " in an operand");
    std::string name = next().text;
    if (name == "_") { op.kind = Operand::Kind::Sink; return op; }
    int r = find_reg(scope, name, line);
    if (r >= 0) { op.kind = Operand::Kind::Reg; op.reg = r; return op; }
    auto sp = specials().find(name);
    if (sp != specials().end()) { op.kind = Operand::Kind::Special; op.special = sp->second; return op; }
    if (name[0] == '%') throw ParseError(line, "unknown register " + quote(name));
    op.kind = Operand::Kind::Symbol;  // a label, variable, parameter or function: resolved later
    op.name = name;
    refs_.push_back({insn, path, name, scope, line});
    return op;
  }

  Operand& at(std::size_t insn, const std::vector<std::size_t>& path) {
    Operand* op = &k_->code[insn].operands[path[0]];
    for (std::size_t i = 1; i < path.size(); ++i) op = &op->elems[path[i]];
    return *op;
  }

  // Names: labels (innermost scope first), body variables, parameters, module variables,
  // functions (kept as symbols with index -1 for `call`).
  void resolve() {
    for (const auto& ref : refs_) {
      Operand& op = at(ref.insn, ref.path);
      bool is_addr = op.kind == Operand::Kind::Address;
      bool found = false;
      for (int s = ref.scope; s >= 0 && !found; s = scope_parent_[s]) {
        auto l = scope_labels_[s].find(ref.name);
        if (l != scope_labels_[s].end() && !is_addr) {
          op.kind = Operand::Kind::Label;
          op.target = l->second;
          found = true;
          break;
        }
        auto v = scope_vars_[s].find(ref.name);
        if (v != scope_vars_[s].end()) { op.symbol = v->second; found = true; }
      }
      if (found) continue;
      for (std::size_t i = 0; i < k_->params.size(); ++i)
        if (k_->params[i].name == ref.name) {
          op.symbol = -2 - static_cast<int>(i);  // parameters: -2, -3, ...
          found = true;
        }
      if (found) continue;
      for (std::size_t i = 0; i < mod_.variables.size(); ++i)
        if (mod_.variables[i].name == ref.name) { op.symbol = static_cast<int>(i); found = true; }
      if (found) continue;
      if (!is_addr && k_->code[ref.insn].parts[0] == "call") continue;  // function name
      throw ParseError(ref.line, "unknown name " + quote(ref.name));
    }
  }
};

}  // namespace

Module parse(const std::string& text) { return Parser(text).run(); }

}  // namespace mgpu::emu::ptx
