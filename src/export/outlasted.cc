// One record per episode, cheaply: each line's id, created_at, timing.wall_s and a hash of its messages
// are read by a SAX handler that builds nothing else; only where an id occurs more than once is a record read in full, to check
// that the copy kept is a valid record.
#include "export/outlasted.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "kforge/common/hash.h"
#include "kforge/dataset/jsonl.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::exporter::internal {

namespace fs = std::filesystem;

namespace {

using nlohmann::json;

/// Seconds since the epoch of a UTC time written "YYYY-MM-DDTHH:MM:SSZ" (created_at); nullopt for
/// any other text.
std::optional<double> UtcSeconds(const std::string& text) {
  std::tm tm = {};
  int end = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &end) != 6 ||
      end != static_cast<int>(text.size()))
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

/// The top-level "id" and "created_at" strings and "timing"."wall_s" number of one JSON line, read as
/// it is parsed; every other value is dropped as soon as the parser has it. For a valid record these
/// are the values dataset::TrajectoryFromJson reads (its parser refuses duplicate keys, so each field
/// occurs once).
class HeaderReader : public nlohmann::json_sax<json> {
 public:
  std::optional<std::string> id;
  std::string created_at;
  double wall_s = 0;
  /// FNV-1a over the parse events of the top-level "messages" (what the teacher wrote): two records
  /// with one id are one episode read twice only when their conversations are the same too.
  uint64_t messages_hash = 14695981039346656037ull;

  bool null() override { return Mix('n', {}); }
  bool boolean(bool v) override { return Mix(v ? 't' : 'f', {}); }
  bool number_integer(number_integer_t v) override { return Number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool string(string_t& v) override {
    Mix('s', v);
    if (depth_ == 1 && top_key_ == "id") id = std::move(v);
    if (depth_ == 1 && top_key_ == "created_at") created_at = std::move(v);
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    Mix('{', {});
    if (++depth_ == 2) in_timing_ = top_key_ == "timing";
    return true;
  }
  bool end_object() override {
    Mix('}', {});
    if (depth_-- == 2) in_timing_ = false;
    return true;
  }
  bool start_array(std::size_t) override {
    Mix('[', {});
    ++depth_;
    return true;
  }
  bool end_array() override {
    Mix(']', {});
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    Mix('k', k);
    if (depth_ == 2 && in_timing_) timing_key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool Number(double v) {
    if (depth_ == 2 && in_timing_ && timing_key_ == "wall_s") wall_s = v;
    return Mix('#', std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
  }
  /// Folds one event of the messages into messages_hash: its kind, then its bytes.
  bool Mix(char kind, std::string_view bytes) {
    if (depth_ < 1 || top_key_ != "messages") return true;
    auto add = [&](unsigned char c) { messages_hash = (messages_hash ^ c) * 1099511628211ull; };
    add(static_cast<unsigned char>(kind));
    for (char c : bytes) add(static_cast<unsigned char>(c));
    add(0);
    return true;
  }

  int depth_ = 0;
  std::string top_key_;     ///< the key of the top-level value being read
  bool in_timing_ = false;  ///< inside the top-level "timing" object itself (not deeper)
  std::string timing_key_;  ///< the key of the timing value being read
};

/// A record of the first pass: its id (the first 128 bits of its SHA-256, so memory stays small
/// whatever the ids' length), when it finished, and where it is.
struct IdEntry {
  uint64_t id_high = 0, id_low = 0;
  double finished = 0;  ///< created_at + wall_s; -inf when created_at is not a time
  uint32_t file = 0;
  int line = 0;
  uint64_t offset = 0;  ///< of the line, to read it again

  auto Key() const { return std::tie(id_high, id_low, finished, file, line); }
  bool SameId(const IdEntry& other) const { return id_high == other.id_high && id_low == other.id_low; }
};

IdEntry EntryOf(const HeaderReader& header, uint32_t file, const dataset::JsonlReader::Line& line) {
  const std::string digest = common::Sha256Hex(*header.id + '\0' + std::to_string(header.messages_hash));
  IdEntry e;
  std::from_chars(digest.data(), digest.data() + 16, e.id_high, 16);
  std::from_chars(digest.data() + 16, digest.data() + 32, e.id_low, 16);
  std::optional<double> created = UtcSeconds(header.created_at);
  e.finished = created ? *created + (std::isfinite(header.wall_s) ? header.wall_s : 0) : -HUGE_VAL;
  e.file = file;
  e.line = line.number;
  e.offset = line.offset;
  return e;
}

/// Every line of `files` that parses as JSON with a top-level string "id": a superset of the valid
/// records, with the same id and finish time as TrajectoryFromJson would give a valid one.
StatusOr<std::vector<IdEntry>> ReadHeaders(const std::vector<fs::path>& files) {
  std::vector<IdEntry> entries;
  for (uint32_t f = 0; f < files.size(); ++f) {
    KFORGE_ASSIGN_OR_RETURN(std::unique_ptr<dataset::JsonlReader> reader, dataset::JsonlReader::Open(files[f]));
    while (std::optional<dataset::JsonlReader::Line> line = reader->NextText()) {
      if (line->torn) continue;
      if (!line->value.ok()) {
        if (line->value.status().code() == Status::Code::kIoError) return line->value.status();
        continue;
      }
      HeaderReader header;
      bool parsed = false;
      try {
        parsed = json::sax_parse(line->text.begin(), line->text.end(), &header);
      } catch (const json::exception&) {
        parsed = false;
      }
      if (parsed && header.id) entries.push_back(EntryOf(header, f, *line));
    }
  }
  return entries;
}

/// Reads `entries` (sorted by file, then line) in full and says which are valid records, as the
/// second pass will find them.
StatusOr<std::vector<bool>> AreValidRecords(const std::vector<fs::path>& files,
                                            const std::vector<const IdEntry*>& entries) {
  std::vector<bool> valid;
  std::unique_ptr<dataset::JsonlReader> reader;
  uint32_t open_file = UINT32_MAX;
  for (const IdEntry* entry : entries) {
    if (entry->file != open_file) {
      KFORGE_ASSIGN_OR_RETURN(reader, dataset::JsonlReader::Open(files.at(entry->file)));
      open_file = entry->file;
    }
    KFORGE_RETURN_IF_ERROR(reader->Seek(entry->offset, entry->line));
    std::optional<dataset::JsonlReader::Line> line = reader->Next();
    if (!line || line->number != entry->line)
      return Status::IoError(files[entry->file].string() + ":" + std::to_string(entry->line) +
                             ": the line changed since it was first read");
    if (!line->value.ok() && line->value.status().code() == Status::Code::kIoError) return line->value.status();
    valid.push_back(line->value.ok() && dataset::TrajectoryFromJson(*line->value, "record").ok());
  }
  return valid;
}

}  // namespace

StatusOr<std::vector<LinePlace>> Outlasted(const std::vector<fs::path>& files) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<IdEntry> entries, ReadHeaders(files));
  std::sort(entries.begin(), entries.end(), [](const IdEntry& a, const IdEntry& b) { return a.Key() < b.Key(); });
  // Each id held by more than one line: its copies entries[begin, end), and the one to keep, tried
  // from the last finished down until it is a valid record (almost always the first try).
  struct Group {
    size_t begin, end, kept;
  };
  std::vector<Group> open;
  for (size_t begin = 0, end = 0; begin < entries.size(); begin = end) {
    for (end = begin + 1; end < entries.size() && entries[end].SameId(entries[begin]);) ++end;
    if (end - begin > 1) open.push_back({begin, end, end - 1});
  }
  std::vector<LinePlace> outlasted;
  while (!open.empty()) {
    std::sort(open.begin(), open.end(), [&](const Group& a, const Group& b) {
      return std::tie(entries[a.kept].file, entries[a.kept].line) < std::tie(entries[b.kept].file, entries[b.kept].line);
    });
    std::vector<const IdEntry*> tried;
    for (const Group& g : open) tried.push_back(&entries[g.kept]);
    KFORGE_ASSIGN_OR_RETURN(const std::vector<bool> valid, AreValidRecords(files, tried));
    std::vector<Group> still_open;
    for (size_t i = 0; i < open.size(); ++i) {
      const Group& g = open[i];
      if (valid[i]) {
        // The copies before the kept one: the valid ones are outlasted, the others are malformed and
        // found so first.
        for (size_t e = g.begin; e < g.kept; ++e) outlasted.emplace_back(entries[e].file, entries[e].line);
      } else if (g.kept - g.begin > 1) {  // at least two copies left below: one may outlast another
        still_open.push_back({g.begin, g.end, g.kept - 1});
      }
    }
    open = std::move(still_open);
  }
  std::sort(outlasted.begin(), outlasted.end());
  return outlasted;
}

}  // namespace kforge::exporter::internal
