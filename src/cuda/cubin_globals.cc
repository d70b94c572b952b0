// CUBIN symbol tables through the ELF64 structures of <elf.h>, every offset checked against the bytes.
#include "cuda/cubin_globals.h"

#include <elf.h>

#include <cstring>
#include <optional>

namespace kforge::cuda {
namespace {

Status Bad(const std::string& what) { return Status::InvalidArgument("CUBIN: " + what); }

/// `count` records of T at `offset`, or none when they do not lie inside the bytes.
template <typename T>
std::optional<std::vector<T>> Records(std::string_view bytes, uint64_t offset, uint64_t count) {
  if (offset > bytes.size() || count > (bytes.size() - offset) / sizeof(T)) return std::nullopt;
  std::vector<T> out(count);
  if (count > 0) std::memcpy(out.data(), bytes.data() + offset, count * sizeof(T));
  return out;
}

/// The NUL-terminated string at `index` of the string table `table`, or none when it runs off it.
std::optional<std::string> StringAt(std::string_view bytes, const Elf64_Shdr& table, uint64_t index) {
  if (table.sh_offset > bytes.size() || table.sh_size > bytes.size() - table.sh_offset) return std::nullopt;
  std::string_view strings = bytes.substr(table.sh_offset, table.sh_size);
  if (index >= strings.size()) return std::nullopt;
  size_t end = strings.find('\0', index);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(strings.substr(index, end - index));
}

}  // namespace

namespace {

/// One symbol of the table, with what the readers below ask of it.
struct Symbol {
  std::string name;
  unsigned char type = 0;
  uint64_t size = 0;
  bool undefined = false;
  bool in_global_section = false;  ///< `.nv.global` (zero at load) or `.nv.global.init`
};

StatusOr<std::vector<Symbol>> Symbols(std::string_view cubin) {
  std::optional<std::vector<Elf64_Ehdr>> header = Records<Elf64_Ehdr>(cubin, 0, 1);
  if (!header || std::memcmp(header->front().e_ident, ELFMAG, SELFMAG) != 0) return Bad("not an ELF file");
  const Elf64_Ehdr& h = header->front();
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
    return Bad("not a 64-bit little-endian ELF file");
  if (h.e_shentsize != sizeof(Elf64_Shdr)) return Bad("unexpected section header size");
  std::optional<std::vector<Elf64_Shdr>> sections = Records<Elf64_Shdr>(cubin, h.e_shoff, h.e_shnum);
  if (!sections || h.e_shstrndx >= sections->size()) return Bad("section headers out of bounds");
  const Elf64_Shdr& names = (*sections)[h.e_shstrndx];

  std::vector<bool> holds_globals(sections->size(), false);
  const Elf64_Shdr* symtab = nullptr;
  for (size_t i = 0; i < sections->size(); ++i) {
    const Elf64_Shdr& s = (*sections)[i];
    if (s.sh_type == SHT_SYMTAB) symtab = &s;
    std::optional<std::string> name = StringAt(cubin, names, s.sh_name);
    if (!name) return Bad("section name out of bounds");
    holds_globals[i] = *name == ".nv.global" || *name == ".nv.global.init";
  }
  std::vector<Symbol> out;
  if (symtab == nullptr) return out;
  if (symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_link >= sections->size())
    return Bad("malformed symbol table");
  std::optional<std::vector<Elf64_Sym>> symbols =
      Records<Elf64_Sym>(cubin, symtab->sh_offset, symtab->sh_size / sizeof(Elf64_Sym));
  if (!symbols) return Bad("symbol table out of bounds");
  const Elf64_Shdr& strings = (*sections)[symtab->sh_link];
  for (const Elf64_Sym& sym : *symbols) {
    std::optional<std::string> name = StringAt(cubin, strings, sym.st_name);
    if (!name) return Bad("symbol name out of bounds");
    Symbol symbol;
    symbol.name = std::move(*name);
    symbol.type = ELF64_ST_TYPE(sym.st_info);
    symbol.size = sym.st_size;
    symbol.undefined = sym.st_shndx == SHN_UNDEF;
    symbol.in_global_section = !symbol.undefined && sym.st_shndx < sections->size() && holds_globals[sym.st_shndx];
    out.push_back(std::move(symbol));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<CubinGlobal>> CubinGlobals(std::string_view cubin) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<Symbol> symbols, Symbols(cubin));
  std::vector<CubinGlobal> globals;
  for (Symbol& sym : symbols) {
    if (sym.type != STT_OBJECT || sym.size == 0 || !sym.in_global_section) continue;
    if (sym.name.empty()) return Bad("symbol name out of bounds");
    globals.push_back({std::move(sym.name), sym.size});
  }
  return globals;
}

StatusOr<std::vector<std::string>> CubinImports(std::string_view cubin) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<Symbol> symbols, Symbols(cubin));
  std::vector<std::string> imports;
  for (Symbol& sym : symbols) {
    if (sym.undefined && sym.type == STT_FUNC && !sym.name.empty()) imports.push_back(std::move(sym.name));
  }
  return imports;
}

}  // namespace kforge::cuda
