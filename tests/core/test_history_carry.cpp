// The history carry of a pair list's rebuild (core/engine/phases.hpp): a new row merged with the
// old one, and the device engine's packed old rows, which keep only the entries that are not blank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/engine/phases.hpp"

namespace dem {
namespace {

bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(HistoryCarry, BlankIsEveryBitZeroAndNotTouching) {
  std::vector<Vec3> xi = {{0, 0, 0}, {0, -0.0, 0}, {0, 0, 0}, {0, 0, 0}, {1e-300, 0, 0}};
  std::vector<Vec3> roll = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, -0.0}, {0, 0, 0}};
  std::vector<std::uint8_t> touching = {0, 0, 1, 0, 0};
  const SplitHistory both{xi.data(), roll.data()};
  EXPECT_TRUE(history_is_blank(both, touching.data(), 0));
  EXPECT_FALSE(history_is_blank(both, touching.data(), 1));  // -0.0 keeps its sign when carried
  EXPECT_FALSE(history_is_blank(both, touching.data(), 2));  // touching, with a zero spring
  EXPECT_FALSE(history_is_blank(both, touching.data(), 3));  // the second history
  EXPECT_FALSE(history_is_blank(both, touching.data(), 4));
  const SplitHistory first_only{xi.data(), nullptr};
  EXPECT_TRUE(history_is_blank(first_only, touching.data(), 3));
}

// Random rows: the new row carried from the packed old row (its partners' ids by index, as the
// device engine reads them) has every bit of the one carried from the whole old row.
TEST(HistoryCarry, APackedOldRowCarriesWhatTheWholeRowCarries) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> id_of(0, 60), kind(0, 5);
  std::uniform_real_distribution<double> value(-1, 1);
  int carried_nonblank = 0, dropped = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::int64_t> old_ids;
    for (int k = 0; k < 12; ++k) old_ids.push_back(id_of(rng));
    std::sort(old_ids.begin(), old_ids.end());
    old_ids.erase(std::unique(old_ids.begin(), old_ids.end()), old_ids.end());
    const std::size_t m = old_ids.size();
    std::vector<Vec3> xi(m), roll(m);
    std::vector<std::uint8_t> touching(m);
    for (std::size_t k = 0; k < m; ++k) {
      switch (kind(rng)) {
        case 0: break;                                        // blank
        case 1: xi[k] = Vec3{-0.0, 0, 0}; break;               // a signed zero
        case 2: touching[k] = 1; break;                        // touching, zero spring
        case 3: roll[k] = Vec3{0, value(rng), 0}; break;       // the second history only
        default: xi[k] = Vec3{value(rng), value(rng), value(rng)}, touching[k] = kind(rng) < 3;
      }
    }
    // the packed row
    const SplitHistory whole{xi.data(), roll.data()};
    std::vector<std::int64_t> packed_ids;
    std::vector<Vec3> packed_xi, packed_roll;
    std::vector<std::uint8_t> packed_touching;
    for (std::size_t k = 0; k < m; ++k) {
      if (history_is_blank(whole, touching.data(), static_cast<std::int64_t>(k))) {
        ++dropped;
        continue;
      }
      packed_ids.push_back(old_ids[k]);
      packed_xi.push_back(xi[k]);
      packed_roll.push_back(roll[k]);
      packed_touching.push_back(touching[k]);
    }
    // the new row: some old partners, some new, by id, its entries holding partner indices
    std::vector<std::int64_t> new_ids;
    for (int k = 0; k < 10; ++k) new_ids.push_back(id_of(rng));
    std::sort(new_ids.begin(), new_ids.end());
    new_ids.erase(std::unique(new_ids.begin(), new_ids.end()), new_ids.end());
    const std::size_t n = new_ids.size();
    std::vector<std::int64_t> id_by_index(n);
    std::vector<std::int32_t> index(n);
    for (std::size_t k = 0; k < n; ++k) {  // partner indices in reverse: the ids come through them
      index[k] = static_cast<std::int32_t>(n - 1 - k);
      id_by_index[n - 1 - k] = new_ids[k];
    }
    std::vector<Vec3> xi_a(n, Vec3{9, 9, 9}), roll_a(n, Vec3{9, 9, 9}), xi_b = xi_a, roll_b = roll_a;
    std::vector<std::uint8_t> t_a(n, 7), t_b(n, 7);
    carry_history_row(new_ids.data(), static_cast<std::int64_t>(n), old_ids.data(), whole, touching.data(),
                      static_cast<std::int64_t>(m), SplitHistory{xi_a.data(), roll_a.data()}, t_a.data());
    carry_history_row(GatheredKeys<std::int64_t>{index.data(), id_by_index.data()}, static_cast<std::int64_t>(n),
                      packed_ids.data(), SplitHistory{packed_xi.data(), packed_roll.data()}, packed_touching.data(),
                      static_cast<std::int64_t>(packed_ids.size()), SplitHistory{xi_b.data(), roll_b.data()}, t_b.data());
    for (std::size_t k = 0; k < n; ++k) {
      ASSERT_TRUE(same_bits(xi_a[k], xi_b[k])) << "round " << round << ", entry " << k;
      ASSERT_TRUE(same_bits(roll_a[k], roll_b[k])) << "round " << round << ", entry " << k;
      ASSERT_EQ(t_a[k], t_b[k]) << "round " << round << ", entry " << k;
      carried_nonblank += !history_is_blank(SplitHistory{xi_a.data(), roll_a.data()}, t_a.data(), static_cast<std::int64_t>(k));
    }
  }
  EXPECT_GT(carried_nonblank, 1000);  // (both kinds seen)
  EXPECT_GT(dropped, 1000);
}

}  // namespace
}  // namespace dem
