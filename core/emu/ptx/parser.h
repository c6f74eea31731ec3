// PTX text -> ptx::Module (PTX ISA 8.x, "Syntax" and "State Spaces, Types, and Variables").
// Contract: parse() accepts what LLVM's NVPTX backend and MLIR's NVVM inline assembly produce
// (directives, `.entry` parameters incl. `.align N .b8 name[K]` byte arrays, `.reg` with `<N>`
// ranges, `{ }` scopes with their own registers and labels, predicated instructions, vector
// and address operands, `.shared`/`.global` variables incl. `.extern .shared` arrays) and
// throws ParseError naming the line for anything else. It resolves names only: it does not
// check that an opcode exists (exec/decode.h does, with the same line numbers). Limits, each a
// ParseError: blocks and operands nested deeper than 256 levels (it never recurses deeper), a
// size that does not fit 64 bits (never saturated or wrapped), parameters beyond CUDA's 32764
// bytes, more than 65536 registers used by one kernel -- a register gets its slot at its
// first use, so `.reg .b32 %r<100000000>` costs nothing until its registers are named -- more
// than 2^20 statements, operands and initializer values in a module, more initial values than an
// array's elements, and directive numbers out of range (.reqntid, .maxntid, .reqnctapercluster
// 1..1024, .maxnreg 1..255, .align a power of two). The text is read a token at a time and the
// tokens read are let go, so memory follows what the module holds, not the file's size; a
// message quotes at most 40 characters of the text.
#pragma once

#include <stdexcept>
#include <string>

#include "core/emu/ptx/module.h"

namespace mgpu::emu::ptx {

struct ParseError : std::runtime_error {
  int line;
  ParseError(int line, const std::string& what);
};

Module parse(const std::string& text);

}  // namespace mgpu::emu::ptx
