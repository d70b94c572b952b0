#include "export/selection.h"

#include <gtest/gtest.h>

namespace kforge::exporter {
namespace {

struct Pool {
  std::vector<TaskEntry> tasks;
  std::vector<Candidate> candidates;
  std::vector<CompactMinHash> signatures;

  uint32_t Task(const std::string& id, std::optional<int> level, const std::string& tag = "") {
    tasks.push_back({id, level, tag, false});
    return static_cast<uint32_t>(tasks.size() - 1);
  }
  /// A correct candidate with `speedup`, solution key `key`, and a signature made from `sig_seed`.
  void Add(uint32_t task, float speedup, uint64_t key, uint8_t sig_seed = 0, bool correct = true) {
    Candidate c;
    c.task = task;
    c.speedup = speedup;
    c.key = key;
    c.correct = correct;
    c.has_solution = true;
    c.turns = 2;
    c.ref.line = static_cast<int>(candidates.size()) + 1;
    candidates.push_back(c);
    CompactMinHash sig;
    for (int i = 0; i < kMinHashSize; ++i) sig[i] = static_cast<uint8_t>(i < 60 ? i : i + sig_seed);
    if (sig_seed >= 100) sig.fill(sig_seed);  // unlike anything else
    signatures.push_back(sig);
  }
};

TEST(SelectionTest, ExactDuplicatesKeepTheFastest) {
  Pool p;
  uint32_t a = p.Task("a", 1), b = p.Task("b", 1);
  p.Add(a, 1.0f, 7);
  p.Add(a, 3.0f, 7);  // same solution, faster: kept
  p.Add(a, 2.0f, 8);
  p.Add(b, 1.0f, 7);  // same key, other task: kept
  Selection s = Select(p.tasks, p.candidates, {}, {});
  EXPECT_EQ(s.kept, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(s.dropped["duplicate"], 1);
}

TEST(SelectionTest, NearDuplicatesKeepTheFastestAboveTheThreshold) {
  Pool p;
  uint32_t a = p.Task("a", 1);
  p.Add(a, 1.0f, 1, /*sig_seed=*/1);  // 60 of 64 positions shared with the next
  p.Add(a, 2.0f, 2, /*sig_seed=*/2);
  p.Add(a, 1.5f, 3, /*sig_seed=*/200);  // different
  SelectionOptions o;
  o.near_dup = 0.9;
  Selection s = Select(p.tasks, p.candidates, p.signatures, o);
  EXPECT_EQ(s.kept, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(s.dropped["near_duplicate"], 1);
  o.near_dup = 0.95;  // 60/64 ~ 0.94: not near enough
  EXPECT_EQ(Select(p.tasks, p.candidates, p.signatures, o).kept.size(), 3u);
}

TEST(SelectionTest, PerTaskKeepsTheBestFirst) {
  Pool p;
  uint32_t a = p.Task("a", 1);
  p.Add(a, 1.0f, 1);
  p.Add(a, NAN, 2);                         // correct, not timed
  p.Add(a, 5.0f, 3, 0, /*correct=*/false);  // incorrect ranks last whatever its speedup
  p.Add(a, 4.0f, 4);
  SelectionOptions o;
  o.per_task = 2;
  Selection s = Select(p.tasks, p.candidates, {}, o);
  EXPECT_EQ(s.kept, (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(s.dropped["per_task"], 2);
  o.per_task = 3;
  EXPECT_EQ(Select(p.tasks, p.candidates, {}, o).kept, (std::vector<uint32_t>{0, 1, 3}));
}

TEST(SelectionTest, BalanceCapsEveryGroupAtTheSmallest) {
  Pool p;
  uint32_t l1a = p.Task("l1/a", 1, "x"), l1b = p.Task("l1/b", 1, "x"), l2 = p.Task("l2/a", 2, "y");
  for (int i = 0; i < 4; ++i) p.Add(l1a, 1.0f + i, 100 + i);
  for (int i = 0; i < 4; ++i) p.Add(l1b, 1.0f + i, 200 + i);
  p.Add(l2, 1.0f, 300);
  p.Add(l2, 2.0f, 301);
  SelectionOptions o;
  o.balance = Balance::kLevel;
  Selection s = Select(p.tasks, p.candidates, {}, o);
  ASSERT_EQ(s.kept.size(), 4u) << "level 1 capped at level 2's 2 records";
  EXPECT_EQ(s.dropped["balance"], 6);
  // Round robin: level 1 keeps the best of each of its two tasks.
  EXPECT_EQ(s.kept, (std::vector<uint32_t>{3, 7, 8, 9}));

  o.balance = Balance::kTag;
  o.balance_cap = 3;
  s = Select(p.tasks, p.candidates, {}, o);
  EXPECT_EQ(s.kept.size(), 5u) << "tag x capped at 3, tag y has 2";
}

TEST(SelectionTest, HeldOutTasksAreDropped) {
  Pool p;
  uint32_t a = p.Task("a", 1), b = p.Task("b", 1);
  p.tasks[b].held_out = true;
  p.Add(a, 1.0f, 1);
  p.Add(b, 1.0f, 2);
  Selection s = Select(p.tasks, p.candidates, {}, {});
  EXPECT_EQ(s.kept, (std::vector<uint32_t>{0}));
  EXPECT_EQ(s.dropped["holdout_similar"], 1);
}

}  // namespace
}  // namespace kforge::exporter
