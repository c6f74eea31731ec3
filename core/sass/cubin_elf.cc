#include "core/sass/cubin_elf.h"

#include <elf.h>

#include <cstring>
#include <map>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core {
namespace {

constexpr int kEmCuda = 190;              // EM_CUDA
constexpr std::uint8_t kEifmtSval = 0x04;  // .nv.info entry with a sized payload
constexpr std::uint8_t kEiattrRegcount = 0x2f;

[[noreturn]] void not_a_cubin(const std::string& why) { throw Error(ErrorKind::InvalidInput, "not a cubin: " + why); }

template <class T>
T read_at(std::string_view image, std::uint64_t offset, const char* what) {
  if (offset > image.size() || image.size() - offset < sizeof(T))
    not_a_cubin(fmt::format("its {} lies past the end of the file ({} bytes)", what, image.size()));
  T out;
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return out;
}

std::string_view section_bytes(std::string_view image, const Elf64_Shdr& s, const char* what) {
  if (s.sh_offset > image.size() || image.size() - s.sh_offset < s.sh_size)
    not_a_cubin(fmt::format("its {} lies past the end of the file", what));
  return image.substr(s.sh_offset, s.sh_size);
}

std::string_view c_string(std::string_view table, std::uint64_t at) {
  if (at >= table.size()) return {};
  std::string_view s = table.substr(at);
  return s.substr(0, s.find('\0'));
}

}  // namespace

std::vector<CubinFunction> cubin_functions(std::string_view image) {
  if (image.size() < SELFMAG || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0)
    not_a_cubin("no ELF header (a cubin is the ELF file ptxas or nvJitLink writes; PTX text is not one)");
  const auto eh = read_at<Elf64_Ehdr>(image, 0, "ELF header");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) not_a_cubin("a 32-bit ELF file");
  if (eh.e_machine != kEmCuda) not_a_cubin(fmt::format("an ELF file for machine {}, not CUDA ({})", eh.e_machine, kEmCuda));
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) not_a_cubin("unexpected section header size");
  if (eh.e_shoff > image.size() || (image.size() - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
    not_a_cubin(fmt::format("its section headers lie past the end of the file ({} bytes)", image.size()));
  std::vector<Elf64_Shdr> sections;
  for (unsigned i = 0; i < eh.e_shnum; ++i)
    sections.push_back(read_at<Elf64_Shdr>(image, eh.e_shoff + std::uint64_t(i) * sizeof(Elf64_Shdr), "section headers"));
  if (eh.e_shstrndx >= sections.size() || sections[eh.e_shstrndx].sh_type != SHT_STRTAB)
    not_a_cubin("no section name table");
  std::string_view names = section_bytes(image, sections[eh.e_shstrndx], "section name table");
  // Every section that has bytes in the file lies inside it, and each symbol table has
  // ELF64-sized entries and names a string table: nvdisasm refuses a file where any of these
  // fails ("an invalid ELF file"), so they are said here, of the user's file, as bad input.
  for (unsigned i = 1; i < sections.size(); ++i) {
    const Elf64_Shdr& s = sections[i];
    if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL) continue;
    const std::string what = fmt::format("section {} ({})", i, c_string(names, s.sh_name));
    section_bytes(image, s, what.c_str());
    if (s.sh_type == SHT_SYMTAB) {
      if (s.sh_entsize != sizeof(Elf64_Sym))
        not_a_cubin(fmt::format("its symbol table ({}) has entries of {} bytes, not {}", what, s.sh_entsize,
                                sizeof(Elf64_Sym)));
      if (s.sh_link >= sections.size() || sections[s.sh_link].sh_type != SHT_STRTAB)
        not_a_cubin(fmt::format("its symbol table ({}) names no string table (link {})", what, s.sh_link));
    }
  }

  // Symbol index -> name, for the attributes that refer to functions by symbol.
  std::vector<std::string_view> symbols;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_SYMTAB || s.sh_link >= sections.size()) continue;
    std::string_view table = section_bytes(image, s, "symbol table");
    std::string_view strings = section_bytes(image, sections[s.sh_link], "symbol names");
    for (std::uint64_t at = 0; at + sizeof(Elf64_Sym) <= table.size(); at += sizeof(Elf64_Sym))
      symbols.push_back(c_string(strings, read_at<Elf64_Sym>(table, at, "symbol").st_name));
  }
  // ".nv.info": entries of {format, attribute, size or value (2 bytes)}, a sized entry followed
  // by its payload; EIATTR_REGCOUNT's payload is {symbol index, registers}.
  std::map<std::string, int, std::less<>> regcount;
  for (const Elf64_Shdr& s : sections) {
    if (c_string(names, s.sh_name) != ".nv.info") continue;
    std::string_view info = section_bytes(image, s, ".nv.info section");
    for (std::uint64_t at = 0; at + 4 <= info.size();) {
      const auto format = std::uint8_t(info[at]), attribute = std::uint8_t(info[at + 1]);
      if (format != kEifmtSval) {
        at += 4;
        continue;
      }
      const auto size = read_at<std::uint16_t>(info, at + 2, ".nv.info entry");
      if (attribute == kEiattrRegcount && size >= 8) {
        const auto symbol = read_at<std::uint32_t>(info, at + 4, ".nv.info entry");
        if (symbol < symbols.size()) regcount[std::string(symbols[symbol])] = int(read_at<std::uint32_t>(info, at + 8, ".nv.info entry"));
      }
      at += 4 + size;
    }
  }
  std::vector<CubinFunction> out;
  for (const Elf64_Shdr& s : sections) {
    std::string_view name = c_string(names, s.sh_name);
    if (s.sh_type != SHT_PROGBITS || name.substr(0, 6) != ".text.") continue;
    CubinFunction f{std::string(name.substr(6)), int(s.sh_info >> 24)};
    if (auto r = regcount.find(f.name); r != regcount.end()) f.registers = r->second;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace mgpu::core
