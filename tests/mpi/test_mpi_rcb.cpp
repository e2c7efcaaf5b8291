// Recursive coordinate bisection (host/mpi/rcb.hpp) under mpirun: the boxes tile the domain, each
// holds its share of the cost, and they are the same bits for any rank count and any split of the
// particles between the ranks (against the one-process partition each rank makes on its own).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "host/mpi/rcb.hpp"

namespace dem {
namespace {

struct Bed {
  std::vector<Vec3> x;
  std::vector<std::int64_t> cost;
};
// 40,000 particles in 1 x 0.5 x 0.3 m, denser towards the floor and one end, costs 1 to 5 (the
// same on every rank: a fixed seed), a few outside the domain.
Bed bed() {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Bed b;
  for (int k = 0; k < 40000; ++k) {
    const double s = u(rng), h = u(rng);
    b.x.push_back(Vec3{s * s, 0.5 * u(rng), 0.3 * h * h * h});
    b.cost.push_back(1 + k % 5);
  }
  b.x.push_back(Vec3{1.2, 0.1, 0.1});  // beyond the +x face
  b.cost.push_back(3);
  b.x.push_back(Vec3{0.5, -0.1, 0.35});  // below -y, above +z
  b.cost.push_back(2);
  return b;
}

TEST(MpiRcb, BoxesTileTheDomainBalanceTheCostAndAreTheSameForAnyRankCount) {
  const mpi::Comm comm;
  const Bed all = bed();
  Bed mine;  // this rank's particles: every size-th one
  for (std::size_t k = 0; k < all.x.size(); ++k)
    if (int(k % std::size_t(comm.size())) == comm.rank()) {
      mine.x.push_back(all.x[k]);
      mine.cost.push_back(all.cost[k]);
    }
  mpi::RcbBox domain;
  domain.hi[0] = 1;
  domain.hi[1] = 0.5;
  domain.hi[2] = 0.3;
  const mpi::Comm self(MPI_COMM_SELF);
  for (int parts : {1, 2, 3, 4, 7}) {
    const std::vector<mpi::RcbBox> boxes = mpi::rcb_partition(comm, mine.x, mine.cost, domain, parts);
    const std::vector<mpi::RcbBox> one = mpi::rcb_partition(self, all.x, all.cost, domain, parts);
    ASSERT_EQ(boxes.size(), std::size_t(parts));
    double volume = 0;
    for (int b = 0; b < parts; ++b) {
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(boxes[b].lo[k], one[b].lo[k]) << parts << " parts, box " << b;
        EXPECT_EQ(boxes[b].hi[k], one[b].hi[k]) << parts << " parts, box " << b;
        EXPECT_LE(boxes[b].lo[k], boxes[b].hi[k]);
      }
      volume += (boxes[b].hi[0] - boxes[b].lo[0]) * (boxes[b].hi[1] - boxes[b].lo[1]) * (boxes[b].hi[2] - boxes[b].lo[2]);
    }
    EXPECT_NEAR(volume, 0.15, 1e-12) << "the boxes tile the domain";
    // every particle of the domain in exactly one box
    for (std::size_t k = 0; k < all.x.size(); k += 97) {
      int inside = 0;
      for (const mpi::RcbBox& b : boxes) inside += b.contains(all.x[k]);
      if (mpi::RcbBox(domain).contains(all.x[k])) {
        EXPECT_EQ(inside, 1) << "particle " << k;
      }
    }
    // each part's cost its share: within a few particles' cost of the mean (the cuts resolve the
    // box to 1024^-3 of a side, so only the particle at each cut stands between: at most 5 on
    // each of a box's 3 cuts, against a mean of 17,000 at 7 parts)
    const mpi::RcbLoad load = mpi::rcb_load(comm, boxes, mine.x, mine.cost);
    std::int64_t total = 0;
    for (std::int64_t c : load.cost) total += c;
    EXPECT_EQ(total, 3 * 40000 + 5) << "every particle counted once, those outside at the nearest face";
    EXPECT_LT(load.imbalance, 1.002) << parts << " parts";
  }
}

}  // namespace
}  // namespace dem
