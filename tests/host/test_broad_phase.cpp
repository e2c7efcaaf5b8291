// The broad phase never misses a contact: candidate pairs and mesh bins against brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <cmath>
#include <sstream>
#include <utility>

#include <omp.h>

#include "core/grid/hilbert.hpp"
#include "host/omp/broad_phase.hpp"
#include "host/omp/engine.hpp"
#include "host/omp/parallel.hpp"
#include "host/omp/short_sort.hpp"
#include "support/power_law.hpp"

namespace dem::host {
namespace {

TEST(ParallelHelpers, RowOffsetsOfSortedRowsMatchACountAndScan) {
  // Empty rows at the start, between and at the end; no pairs at all; one row holding all.
  const std::vector<std::vector<std::int32_t>> cases = {{}, {0, 0, 0}, {2, 2, 5, 7, 7, 7}, {9}, {0, 1, 2, 3}};
  const std::int64_t n = 10;
  for (const auto& rows : cases) {
    std::vector<std::int32_t> want(n + 1, 0);
    for (std::int32_t r : rows) ++want[r + 1];
    for (std::int64_t i = 0; i < n; ++i) want[i + 1] += want[i];
    for (std::size_t parallel_min : {std::size_t(0), std::size_t(1000)}) {  // on the threads, and serial
      std::vector<std::int32_t> got(3, -7);  // resized by row_offsets
      row_offsets(rows, n, got, parallel_min);
      EXPECT_EQ(got, want) << rows.size() << " pairs, parallel_min " << parallel_min;
    }
  }
}

TEST(ParallelHelpers, TeamScanOfCursorsGivesTheSerialPositionsForAnyTeam) {
  // Counts per (row, thread) and own entries per row, scanned by teams of 1 to 5 threads: the
  // positions must be those of one thread walking rows, then own entries, then threads in order.
  std::mt19937 rng(7);
  const std::int64_t n = 37;
  for (int nt = 1; nt <= 5; ++nt) {
    std::vector<std::vector<std::int32_t>> counts(nt, std::vector<std::int32_t>(n));
    std::vector<std::int32_t> own(n);
    for (auto& c : counts)
      for (auto& v : c) v = static_cast<std::int32_t>(rng() % 4);
    for (auto& v : own) v = static_cast<std::int32_t>(rng() % 3);
    std::vector<std::vector<std::int32_t>> want = counts;
    std::vector<std::int32_t> want_start(n + 1);
    std::int32_t c = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      want_start[i] = c;
      c += own[i];
      for (int u = 0; u < nt; ++u) {
        want[u][i] = c;
        c += counts[u][i];
      }
    }
    want_start[n] = c;
    std::vector<std::vector<std::int32_t>> cursor = counts;
    std::vector<std::int32_t> start(n + 1, -1);
    std::vector<std::int64_t> block_total(nt);
    int team = 0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp single
      team = omp_get_num_threads();
      scan_row_cursors(n, omp_get_thread_num(), omp_get_num_threads(), [&](std::int64_t i) { return own[i]; },
                       cursor, start.data(), block_total);
    }
    if (team != nt) continue;  // (the runtime gave fewer threads: the case is covered by smaller nt)
    EXPECT_EQ(start, want_start) << nt << " threads";
    EXPECT_EQ(cursor, want) << nt << " threads";
  }
}

TEST(ParallelHelpers, SnugResizeKeepsTheCapacityWithinAnEighthOfSpare) {
  std::vector<int> v;
  for (std::size_t n : {1000u, 1010u, 1900u, 4000u, 1200u, 1199u, 3u, 0u, 500u}) {
    resize_snug(v, n);
    ASSERT_EQ(v.size(), n);
    EXPECT_LE(v.capacity(), n + n / 8) << "n " << n;  // a plain resize from 1010 to 1900 gives 2020
  }
  resize_snug(v, 1600);
  const int* data = v.data();
  resize_snug(v, 1650);  // within the room a new allocation leaves: the same memory
  EXPECT_EQ(v.data(), data);
}

TEST(CountingSort, StableAndComplete) {
  const std::vector<std::uint32_t> keys = {3, 1, 3, 0, 1, 3};
  std::vector<std::int32_t> offsets, order;
  counting_sort(keys, 4, offsets, order);
  EXPECT_EQ(offsets, (std::vector<std::int32_t>{0, 1, 3, 3, 6}));
  EXPECT_EQ(order, (std::vector<std::int32_t>{3, 1, 4, 0, 2, 5}));  // stable within each key
}

// Every length a rebuild meets: the rank sort (up to 16 entries, padded slots included) and the
// insertion sort beyond, against std::sort, with the values moved along and the extreme keys.
TEST(ShortSort, RowsAndGatherListsOfEveryLengthMatchStdSort) {
  std::mt19937_64 rng(7);
  for (std::int32_t len = 0; len <= 40; ++len)
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<std::int64_t> key(static_cast<std::size_t>(len));
      std::iota(key.begin(), key.end(), std::numeric_limits<std::int64_t>::max() - len - trial);
      if (trial % 2 && len > 0) key[0] = std::numeric_limits<std::int64_t>::min() + trial;
      if (trial % 3 == 0 && len > 0) key.back() = std::numeric_limits<std::int64_t>::max();
      std::shuffle(key.begin(), key.end(), rng);
      std::vector<std::int32_t> val(key.size()), row(key.size());
      for (std::size_t s = 0; s < key.size(); ++s) val[s] = static_cast<std::int32_t>(key[s] % 1000003);
      for (std::size_t s = 0; s < key.size(); ++s) row[s] = static_cast<std::int32_t>(key[s] & 0x3fffffff);
      std::vector<std::int64_t> want = key;
      std::sort(want.begin(), want.end());
      std::vector<std::int32_t> want_row = row;
      std::sort(want_row.begin(), want_row.end());
      sort_short_list(key.data(), val.data(), len);
      sort_short_list(row.data(), len);
      ASSERT_EQ(key, want) << "length " << len;
      for (std::size_t s = 0; s < key.size(); ++s) ASSERT_EQ(val[s], static_cast<std::int32_t>(key[s] % 1000003));
      ASSERT_EQ(row, want_row) << "length " << len;
    }
}

class PairOracle : public ::testing::TestWithParam<int> {};

// Every pair with |x_a - x_b| < reach_a + reach_b (nearest images where periodic), each once, sorted
// by (a, b): the broad phase's list against the brute-force set.
void expect_oracle_of(BroadPhase& bp, const std::vector<Vec3>& x, const std::vector<real>& reach, const PeriodicBox& box,
                      const std::string& what, bool near_answers = true) {
  bp.set_parallel_min(0);
  bp.set_periodic(box);
  bp.build(x, reach);
  std::vector<std::int32_t> a, b;
  bp.find_pairs(x, reach, a, b);
  std::set<std::pair<int, int>> found, oracle;
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_LT(a[k], b[k]) << what;
    if (k > 0) {
      ASSERT_TRUE(a[k - 1] < a[k] || (a[k - 1] == a[k] && b[k - 1] < b[k])) << what << ": not sorted at " << k;
    }
    ASSERT_TRUE(found.insert({a[k], b[k]}).second) << what << ": duplicate pair";
  }
  const int n = static_cast<int>(x.size());
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (norm2(nearest_image(box, x[i] - x[j])) < (reach[i] + reach[j]) * (reach[i] + reach[j])) oracle.insert({i, j});  // the engine's test
  EXPECT_EQ(found, oracle) << what << " (" << bp.name() << ")";
  EXPECT_GT(oracle.size(), 20u) << what;
  // near(q, radius): every particle within radius + its reach of q (the engine's check of a list
  // some particles have outgrown), at particles' positions and between them, radii up to a reach.
  std::mt19937_64 rng(n);
  std::uniform_real_distribution<double> u(0, 1);
  std::size_t answered = 0, within = 0;
  for (int k = 0; k < 60; ++k) {
    const Vec3 q = k % 2 ? x[rng() % n] : x[rng() % n] + real(0.01) * Vec3{u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
    const real radius = reach[rng() % n] * real(u(rng));
    std::vector<std::int32_t> near{-1};  // appended to
    if (!bp.near(q, radius, near)) continue;
    ++answered;
    ASSERT_EQ(near.front(), -1) << what;
    const std::set<std::int32_t> got(near.begin() + 1, near.end());
    for (int j = 0; j < n; ++j)
      if (norm2(nearest_image(box, q - x[j])) < (radius + reach[j]) * (radius + reach[j])) {
        ++within;
        EXPECT_TRUE(got.count(j)) << what << " (" << bp.name() << "): query " << k << " misses particle " << j;
      }
  }
  if (near_answers) {
    EXPECT_EQ(answered, 60u) << what << " (" << bp.name() << ")";
    EXPECT_GE(within, 30u) << what;  // (each query at a particle finds that one at least)
  }
}

// The uniform grid on a random configuration, with at least `wide_at_least` particles searched on
// their own.
void expect_oracle_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach, std::size_t wide_at_least,
                         bool near_answers = true) {
  UniformGridBroadPhase bp;
  expect_oracle_of(bp, x, reach, PeriodicBox{}, "uniform grid", near_answers);
  EXPECT_GE(bp.wide_count(), wide_at_least);
}

std::vector<Vec3> random_positions(std::mt19937_64& rng, int n, double box, bool two_clusters) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Vec3> x(n);
  for (int i = 0; i < n; ++i) {
    x[i] = Vec3{box * u(rng), box * u(rng), box * u(rng)} - Vec3{0.5, 0.5, 0.5};  // negative coords too
    // Two clusters 1 km apart: a sparse box that takes the hashed-bucket path.
    if (two_clusters && i % 2) x[i] += Vec3{1000, -700, 300};
  }
  return x;
}

TEST_P(PairOracle, UniformGridFindsExactlyTheBruteForcePairs) {
  // Polydisperse (radius ratio 10) random configurations, dense and dilute, with a uniform skin:
  // the largest 1 % of spheres are wide (searched on their own).
  std::mt19937_64 rng(GetParam());
  std::uniform_real_distribution<double> u(0, 1);
  const int n = 1500;
  const std::vector<Vec3> x = random_positions(rng, n, GetParam() % 2 ? 0.2 : 0.5, GetParam() == 5);
  const real skin = 0.003;
  std::vector<real> reach(n);
  for (int i = 0; i < n; ++i) reach[i] = 0.002 + 0.018 * u(rng) * u(rng) + skin / 2;
  expect_oracle_pairs(x, reach, 10);
}

TEST_P(PairOracle, PerParticleSkinsWithFastOutliers) {
  // Equal spheres, each with its own half skin, a few with skins of several radii (fast ones):
  // narrow-narrow pairs from the half stencil, the rest from the wide particles' own searches.
  std::mt19937_64 rng(100 + GetParam());
  std::uniform_real_distribution<double> u(0, 1);
  const int n = 1500;
  const std::vector<Vec3> x = random_positions(rng, n, GetParam() % 2 ? 0.15 : 0.4, GetParam() == 5);
  std::vector<real> reach(n);
  for (int i = 0; i < n; ++i) reach[i] = 0.005 + (u(rng) < 0.03 ? 0.02 * u(rng) : 0.002 * u(rng));
  expect_oracle_pairs(x, reach, 10);
}

TEST_P(PairOracle, AReachOfManyCellsTestsEveryParticle) {
  // One particle reaches across most of the box: its cube of cells outnumbers the particles, so
  // it tests them all directly instead of enumerating cells.
  std::mt19937_64 rng(200 + GetParam());
  std::uniform_real_distribution<double> u(0, 1);
  const int n = 1500;
  const std::vector<Vec3> x = random_positions(rng, n, 0.3, GetParam() == 5);
  std::vector<real> reach(n);
  for (int i = 0; i < n; ++i) reach[i] = 0.004 + 0.001 * u(rng);
  reach[n / 2] = 0.12;
  expect_oracle_pairs(x, reach, 1, false);  // (near() declines: 25 cells each way)
}

INSTANTIATE_TEST_SUITE_P(RandomPolydisperse, PairOracle, ::testing::Values(1, 2, 3, 4, 5));

// Periodic boxes: the pairs against the brute-force set taken through nearest images, for periods of
// many cells (bounded grid, half stencil wrapped), of one or two cells (hashed path), one axis or
// all three, with wide particles among them.
TEST(PairOraclePeriodic, NearestImagePairsOnEveryPath) {
  struct Case {
    double length;
    bool px, py, pz;
    double reach;  // m, the smallest reach (the largest is 12 times that)
  };
  // 0.2 m: eight cells per axis; 0.075 m: three (the fewest for the half stencil); 0.045 m: one;
  // 0.07 m: two (both hashed). The box starts at 0.1 m, not at the origin.
  for (const Case& c : {Case{0.2, true, true, true, 0.004}, Case{0.2, true, false, false, 0.004},
                        Case{0.075, true, true, true, 0.004}, Case{0.045, true, true, true, 0.006},
                        Case{0.07, false, true, true, 0.004}}) {
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(0, 1);
    const int n = 1200;
    const real lo = 0.1, hi = real(0.1 + c.length);
    const PeriodicBox box = make_periodic_box(Vec3{lo, lo, lo}, Vec3{hi, hi, hi}, c.px, c.py, c.pz);
    std::vector<Vec3> x(n);
    std::vector<real> reach(n);
    for (int i = 0; i < n; ++i) {
      x[i] = Vec3{lo, lo, lo} + c.length * Vec3{u(rng), u(rng), u(rng)};
      if (i % 97 == 0) x[i].x = i % 2 ? lo : std::nextafter(box.hi.x, lo);  // on the faces
      reach[i] = c.reach * (1 + 2 * u(rng) * u(rng) * (i % 50 == 0 ? 5.5 : 1));  // a few wide ones
    }
    UniformGridBroadPhase bp;
    expect_oracle_of(bp, x, reach, box, "period " + std::to_string(c.length));
    std::size_t across = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        across += norm(nearest_image(box, x[i] - x[j])) < reach[i] + reach[j] && norm(x[i] - x[j]) >= reach[i] + reach[j];
    EXPECT_GT(across, 10u) << "pairs through a face";
    EXPECT_GT(bp.wide_count(), 0u);
  }
}

// The HGrid against the N^2 oracle (nearest images where periodic) on power-law radius
// distributions f(r) ~ r^alpha between r_min and omega r_min (krijgsman2014 Eq. 29), drawn by
// inverting the cumulative distribution, dense and dilute, with particles on cell boundaries and
// one huge sphere among many small: identical candidate sets.
using test::power_law_radii;

// The HGrid (levels chosen, or `levels`) and the BSP tree against the oracle.
void expect_hgrid_oracle(const std::vector<Vec3>& x, const std::vector<real>& reach, const PeriodicBox& box,
                         const std::string& what, int levels = 0) {
  HGridBroadPhase hgrid(levels);
  expect_oracle_of(hgrid, x, reach, box, what);
  if (levels == 0) {
    BspBroadPhase bsp;
    expect_oracle_of(bsp, x, reach, box, what);
  }
}

TEST(HGridOracle, PowerLawDistributionsDenseAndDilute) {
  for (double omega : {1.0, 3.0, 10.0, 30.0, 100.0})
    for (double alpha : {0.0, -3.0})
      for (double fraction : {0.3, 0.02}) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(omega * 10 - alpha + fraction * 1000));
        std::uniform_real_distribution<double> u(0, 1);
        const int n = 1500;
        const double r_min = 0.001;
        const std::vector<double> r = power_law_radii(rng, n, r_min, omega, alpha);
        double volume = 0;
        for (double v : r) volume += 4.0 / 3.0 * M_PI * v * v * v;
        const double side = std::cbrt(volume / fraction);
        std::vector<Vec3> x(n);
        std::vector<real> reach(n);
        for (int i = 0; i < n; ++i) {
          x[i] = side * Vec3{u(rng), u(rng), u(rng)};
          reach[i] = real(r[i] * 1.05);  // a 5 % skin
        }
        std::ostringstream what;
        what << "omega " << omega << " alpha " << alpha << " fraction " << fraction;
        expect_hgrid_oracle(x, reach, PeriodicBox{}, what.str());
        expect_hgrid_oracle(x, reach, PeriodicBox{}, what.str() + " 3 levels", 3);
      }
}

TEST(HGridOracle, CellBoundariesOneHugeSphereAndPeriodicBoxes) {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0, 1);
  // Spheres centred exactly on cell boundaries of a fixed two-level grid (1 mm and 8 mm cells).
  {
    std::vector<Vec3> x;
    std::vector<real> reach;
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 12; ++j)
        for (int k = 0; k < 6; ++k) {
          x.push_back(Vec3{real(0.001 * i), real(0.001 * j), real(0.008 * k * 0.125)});
          reach.push_back(real((i + j + k) % 7 == 0 ? 0.0035 : 0.00049));
        }
    HGridBroadPhase fixed(0, {0.001, 0.008});
    fixed.set_parallel_min(0);
    fixed.build(x, reach);
    std::vector<std::int32_t> a, b;
    fixed.find_pairs(x, reach, a, b);
    std::set<std::pair<int, int>> found(std::set<std::pair<int, int>>{}), oracle;
    for (std::size_t k = 0; k < a.size(); ++k) found.insert({a[k], b[k]});
    EXPECT_EQ(found.size(), a.size());
    for (int i = 0; i < int(x.size()); ++i)
      for (int j = i + 1; j < int(x.size()); ++j)
        if (norm2(x[i] - x[j]) < (reach[i] + reach[j]) * (reach[i] + reach[j])) oracle.insert({i, j});  // the engine's test
    EXPECT_EQ(found, oracle) << "on cell boundaries";
  }
  // One sphere of 50 mm among 2,000 of 0.5 mm: it meets hundreds of them, each once.
  {
    std::vector<Vec3> x;
    std::vector<real> reach;
    x.push_back(Vec3{0.05, 0.05, 0.05});
    reach.push_back(0.05);
    for (int i = 0; i < 2000; ++i) {
      x.push_back(Vec3{real(0.1 * u(rng)), real(0.1 * u(rng)), real(0.1 * u(rng))});
      reach.push_back(0.0005);
    }
    expect_hgrid_oracle(x, reach, PeriodicBox{}, "one huge sphere");
  }
  // Periodic on one and on three axes, omega 30, alpha -3: pairs through the faces too.
  for (int axes : {1, 3}) {
    const std::vector<double> r = power_law_radii(rng, 1200, 0.001, 30, -3);
    const double side = 0.08;
    const PeriodicBox box = make_periodic_box(Vec3{0.1, 0.1, 0.1}, Vec3{real(0.1 + side), real(0.1 + side), real(0.1 + side)},
                                              true, axes == 3, axes == 3);
    std::vector<Vec3> x(r.size());
    std::vector<real> reach(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
      x[i] = Vec3{0.1, 0.1, 0.1} + side * Vec3{u(rng), u(rng), u(rng)};
      reach[i] = real(r[i] * 1.1);
    }
    expect_hgrid_oracle(x, reach, box, std::to_string(axes) + " periodic axes");
  }
}

TEST(HGridOracle, EmptyLevelsTinyAndHugeGivenCellSizes) {
  // Given sizes far from the particles: a level far below them stays empty and is not searched (it
  // would take billions of cell visits); a top level larger than the period wraps onto itself.
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(0, 0.1);
  std::vector<Vec3> x(800);
  std::vector<real> reach(800);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = Vec3{real(u(rng)), real(u(rng)), real(u(rng))};
    reach[i] = real(i % 40 == 0 ? 0.006 : 0.002);
  }
  HGridBroadPhase tiny(0, {1e-6, 0.005, 0.5});
  expect_oracle_of(tiny, x, reach, PeriodicBox{}, "a tiny and a huge level");
  EXPECT_EQ(tiny.levels().population[0], 0);
  const PeriodicBox box = make_periodic_box(Vec3{0, 0, 0}, Vec3{0.1, 0.1, 0.1}, true, true, false);
  HGridBroadPhase huge(0, {0.005, 1e18});
  expect_oracle_of(huge, x, reach, box, "a level of 1e18 m in a period of 0.1 m");
}

// Bounded keys (each level's cells over the box numbered in turn, boxes clipped to them) where
// the levels have few cells, hashed keys where the box is spread out: the same pairs as the oracle
// either way, including a flat layer (every centre at z = 0: one cell deep, the paper's 2D case).
TEST(HGridOracle, BoundedAndHashedKeys) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<double> r = power_law_radii(rng, 1500, 0.001, 20, -3);
  double volume = 0, area = 0;
  for (double v : r) volume += 4.0 / 3.0 * M_PI * v * v * v, area += M_PI * v * v;
  const double side = std::cbrt(volume / 0.2), side2 = std::sqrt(area / 0.3);  // solid fractions 0.2 and 0.3
  for (const char* layout : {"box", "flat layer", "spread out"}) {
    const std::string what = layout;
    const double l = what == "flat layer" ? side2 : side;
    std::vector<Vec3> x(r.size());
    std::vector<real> reach(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
      x[i] = Vec3{real(l * u(rng)), real(l * u(rng)), what == "flat layer" ? real(0) : real(l * u(rng))};
      reach[i] = real(r[i] * 1.05);
    }
    if (what == "spread out") x[0] = Vec3{1000, 1000, 1000};  // a box of 1e9 m^3: too many cells to number
    for (int levels : {0, 1, 3}) {
      HGridBroadPhase hgrid(levels);
      expect_oracle_of(hgrid, x, reach, PeriodicBox{}, what + ", levels " + std::to_string(levels));
      EXPECT_EQ(hgrid.levels().bounded, what != "spread out") << what;
      if (what == "flat layer") {
        for (int h = 0; h < hgrid.levels().count; ++h) EXPECT_EQ(hgrid.levels().dims[h].z, 1) << h;
      }
    }
  }
  // Periodic on two axes: the wrapped cells are the bounded ones.
  const PeriodicBox box = make_periodic_box(Vec3{0, 0, 0}, Vec3{real(side), real(side), real(side)}, true, true, false);
  std::vector<Vec3> x(r.size());
  std::vector<real> reach(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    x[i] = Vec3{real(side * u(rng)), real(side * u(rng)), real(side * u(rng))};
    reach[i] = real(r[i] * 1.05);
  }
  HGridBroadPhase hgrid(3);
  expect_oracle_of(hgrid, x, reach, box, "periodic x, y, 3 levels");
  EXPECT_TRUE(hgrid.levels().bounded);
  EXPECT_EQ(hgrid.levels().dims[0].x, hgrid.levels().wrap[0].x);
}

TEST(HGridLevels, EqualOccupancyAndTheCostModelsChoice) {
  // Monodisperse: one level. omega = 100, alpha = -3: several levels, increasing sizes, the top
  // one twice the largest reach, and about the same number of particles per cell at each level
  // (s^3 N_h within a factor of 3 of each other: the histogram's bins and the top level's leftover).
  std::mt19937_64 rng(4);
  const std::vector<real> mono(5000, real(0.002));
  EXPECT_EQ(choose_hgrid_levels(mono, 1.0).count, 1);
  const std::vector<double> r = power_law_radii(rng, 20000, 0.0005, 100, -3);
  std::vector<real> reach(r.begin(), r.end());
  double volume = 0;
  for (double v : r) volume += 4.0 / 3.0 * M_PI * v * v * v;
  const HGridLevels g = choose_hgrid_levels(reach, volume / 0.3);
  EXPECT_GE(g.count, 3);
  double r_max = 0;
  for (double v : r) r_max = std::max(r_max, v);
  EXPECT_NEAR(g.cell[g.count - 1], 2 * r_max, 1e-12);
  std::vector<double> occupancy(g.count, 0);
  for (real v : reach) occupancy[hgrid_level(g, v)] += 1;
  for (int h = 0; h < g.count; ++h) {
    if (h) {
      EXPECT_GT(g.cell[h], g.cell[h - 1]);
    }
    occupancy[h] *= std::pow(double(g.cell[h]), 3);
  }
  const auto [lo, hi] = std::minmax_element(occupancy.begin(), occupancy.end());
  EXPECT_LT(*hi / *lo, 3.0) << g.count << " levels";
  // and the predicted work is a small fraction of one level's (linked cells of 2 r_max)
  const HGridLevels one = choose_hgrid_levels(reach, volume / 0.3, 1);
  EXPECT_LT(hgrid_model_cost(reach, volume / 0.3, g), hgrid_model_cost(reach, volume / 0.3, one) / 30);
  // auto: the HGrid for omega 100, alpha -3 (a predicted gain over one level of about 55); the
  // uniform grid for omega 10 (about 3) and for alpha 0 (one level is best), as measured
  EXPECT_TRUE(auto_wants_hgrid(reach, volume / 0.3));
  for (const auto& [omega, alpha] : {std::pair<double, double>{10, -3}, {100, 0}}) {
    const std::vector<double> q = power_law_radii(rng, 20000, 0.0005, omega, alpha);
    double v = 0;
    for (double x : q) v += 4.0 / 3.0 * M_PI * x * x * x;
    EXPECT_FALSE(auto_wants_hgrid(std::vector<real>(q.begin(), q.end()), v / 0.3)) << omega << " " << alpha;
  }
}

TEST(MeshBins, QueryReturnsEveryElementWhoseBoxOverlaps) {
  // Random triangles of mixed sizes in a box, random spheres: the bins must return a superset of
  // the elements the sphere intersects (here: exactly those whose boxes overlap the sphere's box).
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0, 1);
  MeshSet m;
  MeshBody body;
  for (int e = 0; e < 400; ++e) {
    const Vec3 c{u(rng), u(rng), u(rng)};
    const double s = 0.01 + 0.2 * u(rng) * u(rng);
    for (int k = 0; k < 3; ++k) {
      m.ref_vertices.push_back(c + Vec3{s * (u(rng) - 0.5), s * (u(rng) - 0.5), s * (u(rng) - 0.5)});
      m.elem_vertices.push_back(3 * e + k);
    }
    m.elem_offsets.push_back(3 * (e + 1));
    m.elem_body.push_back(0);
  }
  body.vertex_count = static_cast<index_t>(m.ref_vertices.size());
  body.element_count = 400;
  m.bodies.push_back(body);
  m.vertices = m.ref_vertices;
  MeshBins bins;
  bins.build(m, Vec3{0.1, 0.1, 0.1}, Vec3{0.9, 0.9, 0.9}, 0.02);
  std::vector<std::int32_t> got;
  int touching_total = 0;
  for (int q = 0; q < 2000; ++q) {
    const Vec3 c{0.1 + 0.8 * u(rng), 0.1 + 0.8 * u(rng), 0.1 + 0.8 * u(rng)};
    const real r = 0.005 + 0.015 * u(rng);
    bins.query(c, r, got);
    std::sort(got.begin(), got.end());
    ASSERT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end()) << "element reported twice";
    for (int e = 0; e < 400; ++e) {
      const Polygon p = m.polygon(e);
      if (!fast_intersection_test(p, c, r)) continue;
      ++touching_total;
      ASSERT_TRUE(std::binary_search(got.begin(), got.end(), e)) << "missed element " << e << " for query " << q;
    }
  }
  EXPECT_GT(touching_total, 50);
}

TEST(MeshSet, ElementNormalsTurnWithTheirBody) {
  // The engine keeps each element's unit normal per step by rotating its reference normal with the
  // body, instead of recomputing it from the vertices; both must agree (to round-off) at any pose,
  // for triangles and quads, on a body that turns and translates and one that stays put.
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  MeshSet m;
  for (int b = 0; b < 2; ++b) {
    MeshBody body;
    body.first_vertex = static_cast<index_t>(m.ref_vertices.size());
    body.first_element = static_cast<index_t>(m.num_elements());
    for (int e = 0; e < 20; ++e) {
      const Vec3 c{u(rng), u(rng), u(rng)};
      const Vec3 ea = normalized(Vec3{u(rng), u(rng), u(rng)});
      const Vec3 eb = normalized(cross(ea, Vec3{u(rng), u(rng), u(rng)}));
      const int nv = e % 2 ? 4 : 3;  // planar quads and triangles
      const Vec3 corners[4] = {c, c + 0.1 * ea, c + 0.1 * ea + 0.05 * eb, c + 0.05 * eb};
      for (int k = 0; k < nv; ++k) {
        m.elem_vertices.push_back(static_cast<index_t>(m.ref_vertices.size()));
        m.ref_vertices.push_back(nv == 4 ? corners[k] : corners[k == 2 ? 3 : k]);
      }
      m.elem_offsets.push_back(static_cast<index_t>(m.elem_vertices.size()));
      m.elem_body.push_back(b);
    }
    body.vertex_count = static_cast<index_t>(m.ref_vertices.size()) - body.first_vertex;
    body.element_count = 20;
    if (b == 0) {
      body.angular_velocity = Vec3{3, -7, 18.85};
      body.velocity = Vec3{0.1, 0, -0.2};
      body.center0 = Vec3{0.2, 0.1, 0};
    }
    m.bodies.push_back(body);
  }
  m.vertices = m.ref_vertices;
  for (double t : {0.0, 1e-4, 0.0137, 0.5, 2.0}) {
    m.update(t);
    for (std::size_t e = 0; e < m.num_elements(); ++e) {
      const Vec3 fresh = polygon_normal(m.polygon(static_cast<index_t>(e)));
      EXPECT_LT(norm(m.normals[e] - fresh), 1e-13) << "element " << e << " at t = " << t;
    }
  }
  EXPECT_GT(norm(m.normals[0] - m.ref_normals[0]), 0.1);  // the first body did turn
  EXPECT_EQ(m.normals[25].x, m.ref_normals[25].x);        // the second did not
}

}  // namespace
}  // namespace dem::host

namespace dem::host {
namespace {

// The Hilbert order: every cell of an 8 x 8 x 8 block (one point per cell, shuffled) visited once,
// each next to the one before across a face (the curve's defining property; Z order jumps: from
// cell (1,1,0) to (0,0,1) within each 2 x 2 x 2 block, and farther between blocks); the keys of
// the whole 21-bit range distinct on a coarse lattice; any set comes back as a permutation.
TEST(HilbertOrder, StepsFromEachCellToAFaceNeighbour) {
  const real h = 0.01;
  std::vector<Vec3> x;
  std::vector<Int3> cell;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 8; ++k) {
        // (the cells count from the lowest point, a quarter into cell 0: the others lie half-way
        // into theirs, a quarter of a cell from any face after rounding)
        const auto at = [h](int c) { return (c == 0 ? 0.25 : c + 0.5) * h; };
        cell.push_back(Int3{i, j, k});
        x.push_back(Vec3{at(i), at(j), at(k)});
      }
  std::mt19937 rng(5);
  std::vector<std::size_t> shuffle(x.size());
  std::iota(shuffle.begin(), shuffle.end(), 0);
  std::shuffle(shuffle.begin(), shuffle.end(), rng);
  std::vector<Vec3> xs;
  std::vector<Int3> cs;
  for (std::size_t s : shuffle) xs.push_back(x[s]), cs.push_back(cell[s]);
  const std::vector<std::int64_t> order = hilbert_order(xs, h);
  ASSERT_EQ(order.size(), 512u);
  std::vector<int> seen(512, 0);
  for (std::size_t m = 0; m < order.size(); ++m) {
    const Int3 c = cs[order[m]];
    ++seen[(c.x * 8 + c.y) * 8 + c.z];
    if (m == 0) continue;
    const Int3 b = cs[order[m - 1]];
    EXPECT_EQ(std::abs(c.x - b.x) + std::abs(c.y - b.y) + std::abs(c.z - b.z), 1) << "step " << m;
  }
  for (int v : seen) ASSERT_EQ(v, 1);

  std::vector<std::uint64_t> keys;  // 9^3 cells spread over the whole coordinate range
  for (std::uint32_t i = 0; i < 9; ++i)
    for (std::uint32_t j = 0; j < 9; ++j)
      for (std::uint32_t k = 0; k < 9; ++k) keys.push_back(hilbert_key(i * 262143, j * 262143, k * 262143));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());

  // the curve fills the cube of side 2^k at the origin with its first 8^k cells (the device
  // engine's 32-bit keys for grids of at most 1,024 cells an axis: curve_fits_32_bits)
  std::uniform_int_distribution<std::uint32_t> coord(0, kHilbertCoordMax);
  for (int k = 1; k <= 10; ++k)
    for (int t = 0; t < 2000; ++t) {
      const std::uint32_t m = (1u << k) - 1;
      ASSERT_LT(hilbert_key(coord(rng) & m, coord(rng) & m, coord(rng) & m), std::uint64_t(1) << (3 * k)) << k;
    }
  EXPECT_GE(hilbert_key(1024, 0, 0), std::uint64_t(1) << 30);

  std::uniform_real_distribution<real> u(0, 1);
  std::vector<Vec3> many(1000);
  for (Vec3& p : many) p = Vec3{u(rng), u(rng), u(rng)};
  std::vector<std::int64_t> perm = hilbert_order(many, 0.05);
  std::sort(perm.begin(), perm.end());
  for (std::size_t i = 0; i < perm.size(); ++i) ASSERT_EQ(perm[i], static_cast<std::int64_t>(i));
}

}  // namespace
}  // namespace dem::host
