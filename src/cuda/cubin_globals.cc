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

StatusOr<std::vector<CubinGlobal>> CubinGlobals(std::string_view cubin) {
  std::optional<std::vector<Elf64_Ehdr>> header = Records<Elf64_Ehdr>(cubin, 0, 1);
  if (!header || std::memcmp(header->front().e_ident, ELFMAG, SELFMAG) != 0) return Bad("not an ELF file");
  const Elf64_Ehdr& h = header->front();
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
    return Bad("not a 64-bit little-endian ELF file");
  if (h.e_shentsize != sizeof(Elf64_Shdr)) return Bad("unexpected section header size");
  std::optional<std::vector<Elf64_Shdr>> sections = Records<Elf64_Shdr>(cubin, h.e_shoff, h.e_shnum);
  if (!sections || h.e_shstrndx >= sections->size()) return Bad("section headers out of bounds");
  const Elf64_Shdr& names = (*sections)[h.e_shstrndx];

  // Which sections hold writable globals.
  std::vector<bool> holds_globals(sections->size(), false);
  const Elf64_Shdr* symtab = nullptr;
  for (size_t i = 0; i < sections->size(); ++i) {
    const Elf64_Shdr& s = (*sections)[i];
    if (s.sh_type == SHT_SYMTAB) symtab = &s;
    std::optional<std::string> name = StringAt(cubin, names, s.sh_name);
    if (!name) return Bad("section name out of bounds");
    holds_globals[i] = *name == ".nv.global" || *name == ".nv.global.init";
  }
  std::vector<CubinGlobal> globals;
  if (symtab == nullptr) return globals;
  if (symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_link >= sections->size())
    return Bad("malformed symbol table");
  std::optional<std::vector<Elf64_Sym>> symbols =
      Records<Elf64_Sym>(cubin, symtab->sh_offset, symtab->sh_size / sizeof(Elf64_Sym));
  if (!symbols) return Bad("symbol table out of bounds");
  const Elf64_Shdr& strings = (*sections)[symtab->sh_link];
  for (const Elf64_Sym& sym : *symbols) {
    if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_size == 0) continue;
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections->size() || !holds_globals[sym.st_shndx]) continue;
    std::optional<std::string> name = StringAt(cubin, strings, sym.st_name);
    if (!name || name->empty()) return Bad("symbol name out of bounds");
    globals.push_back({std::move(*name), sym.st_size});
  }
  return globals;
}

}  // namespace kforge::cuda
