// The task-tree walk.
#include "kforge/common/task_tree.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

/// Whether the linked folder `link` leads to `canonical_root` or a folder above it.
bool LeadsToRootOrAbove(const fs::path& link, const fs::path& canonical_root) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(link, ec);
  auto [t_end, r_end] = std::mismatch(target.begin(), target.end(), canonical_root.begin(), canonical_root.end());
  return t_end == target.end() || (std::next(t_end) == target.end() && t_end->empty());
}

}  // namespace

Status WalkTaskTree(const fs::path& root, const std::function<bool(const fs::path&)>& visit) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::NotFound(root.string() + ": no such task folder");
  fs::recursive_directory_iterator it(
      root, fs::directory_options::skip_permission_denied | fs::directory_options::follow_directory_symlink, ec);
  if (ec) return Status::IoError(root.string() + ": " + ec.message());
  const fs::path canonical_root = fs::weakly_canonical(root, ec);
  size_t seen = 0;
  for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return Status::IoError(root.string() + ": " + ec.message());
    if (++seen > kMaxTaskTreeEntries)
      return Status::ResourceExhausted(root.string() + ": more than " + std::to_string(kMaxTaskTreeEntries) +
                                       " entries below it");
    if (it.depth() >= 8) it.disable_recursion_pending();
    if (it->is_symlink(ec) && it->is_directory(ec) && LeadsToRootOrAbove(it->path(), canonical_root))
      it.disable_recursion_pending();
    if (it->is_regular_file(ec) && it->path().filename() == "task.json" && !visit(it->path().parent_path()))
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace kforge::common
