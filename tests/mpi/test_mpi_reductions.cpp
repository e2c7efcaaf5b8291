// The reductions across MPI ranks (host/mpi/comm.hpp) give the single-process bits, whatever the
// rank count and however the terms are split between the ranks: the body loads' integer words,
// exact sums of doubles (the diagnostics' energies), and the loads' units that every rank must
// use (LoadSizing agreed from each rank's own particles). Run by ctest under `mpirun -np N` for N = 1 to 4 (tests/mpi/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "host/mpi/comm.hpp"

namespace dem {
namespace {

// Contact loads on three bodies, the same on every rank (a fixed seed): forces of mixed signs
// and sizes up to 500 N, torques up to 800 N m.
struct Loads {
  std::vector<Vec3> force, torque;
  std::vector<int> body;
};
Loads loads(std::size_t n) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-40, 0), b(0, 2);
  Loads l;
  for (std::size_t k = 0; k < n; ++k) {
    l.force.push_back(Vec3{500 * u(rng) * std::ldexp(1.0, e(rng)), 500 * u(rng), u(rng)});
    l.torque.push_back(Vec3{800 * u(rng), 0, 800 * u(rng) * std::ldexp(1.0, e(rng))});
    l.body.push_back(b(rng));
  }
  return l;
}

TEST(MpiReductions, BodyLoadsSummedOnEveryRankGiveTheOneProcessBits) {
  const mpi::Comm comm;
  const Loads l = loads(60000);
  const LoadQuantum q = quanta_for_bodies(LoadQuantum{}, 500, 1.6);
  std::vector<BodyLoadSum> one(3);
  for (std::size_t k = 0; k < l.force.size(); ++k) add_body_load(one[l.body[k]], l.force[k], l.torque[k], q);
  // Two splits between the ranks: every size-th term, and contiguous blocks, each rank's share
  // summed backwards.
  for (const bool blocks : {false, true}) {
    std::vector<BodyLoadSum> mine(3);
    const std::size_t n = l.force.size(), per = (n + std::size_t(comm.size()) - 1) / std::size_t(comm.size());
    for (std::size_t j = n; j-- > 0;) {
      const bool is_mine = blocks ? j / per == std::size_t(comm.rank()) : j % std::size_t(comm.size()) == std::size_t(comm.rank());
      if (is_mine) add_body_load(mine[l.body[j]], l.force[j], l.torque[j], q);
    }
    comm.sum(mine);
    for (int b = 0; b < 3; ++b) {
      Vec3 f, t, want_f, want_t;
      body_load_value(mine[b], q, f, t);
      body_load_value(one[b], q, want_f, want_t);
      EXPECT_EQ(f.x, want_f.x) << "body " << b << (blocks ? ", blocks" : ", interleaved");
      EXPECT_EQ(f.y, want_f.y);
      EXPECT_EQ(f.z, want_f.z);
      EXPECT_EQ(t.x, want_t.x);
      EXPECT_EQ(t.z, want_t.z);
      EXPECT_NE(f.x, 0);
    }
  }
}

TEST(MpiReductions, ExactSumsOverTheRanksGiveTheOneProcessTotal) {
  // Energies of 30,000 particles spanning 40 decades: each rank sums every size-th one, in
  // reverse; the total over the ranks is the one-process exact sum's, bit for bit.
  const mpi::Comm comm;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> energy(30000);
  for (double& e : energy) e = std::pow(10.0, -30 + 40 * u(rng));
  host::ExactSum one, mine;
  for (double e : energy) one.add(e);
  for (std::size_t k = energy.size(); k-- > 0;)
    if (k % std::size_t(comm.size()) == std::size_t(comm.rank())) mine.add(energy[k]);
  EXPECT_EQ(comm.sum(mine).value(), one.value());
}

TEST(MpiReductions, EveryRankAgreesOnTheLoadsUnitsOfAllTheParticles) {
  // Three materials (the third a wall's), particles of the first two with radii up to 3 mm, a
  // body of the third whose farthest vertex is 0.2 m from its centre. Rank r holds the particles
  // k with k % size == r: only rank 0 has the largest one (k = 0), only rank 39 % size the one of
  // material 1 (k = 39).
  const mpi::Comm comm;
  std::vector<ContactParams> table(9);
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      ContactParams& p = table[std::size_t(3 * a + c)];
      p.k_n = 1e4 * (1 + a + c);
      p.friction = 0.5;
    }
  host::EngineSettings settings;
  host::MeshSet meshes;
  meshes.bodies.resize(1);
  meshes.bodies[0].material = 2;
  meshes.bodies[0].vertex_count = 2;
  meshes.ref_vertices = {Vec3{0.2, 0, 0}, Vec3{0, 0.1, 0}};
  std::vector<std::int32_t> material;
  std::vector<real> radius;
  for (int k = 0; k < 40; ++k) {
    material.push_back(k == 39 ? 1 : 0);
    radius.push_back(k == 0 ? real(0.003) : real(0.001));
  }
  host::LoadSizing all;
  all.start(settings, 3, material, radius);
  all.set_bodies(meshes);
  std::vector<std::int32_t> my_material;
  std::vector<real> my_radius;
  for (std::size_t k = 0; k < material.size(); ++k)
    if (int(k) % comm.size() == comm.rank()) {
      my_material.push_back(material[k]);
      my_radius.push_back(radius[k]);
    }
  host::LoadSizing mine;
  mine.start(settings, 3, my_material, my_radius);
  mine.set_bodies(meshes);
  const LoadQuantum want = all.quantum(table, 3), got = comm.agree(mine).quantum(table, 3);
  EXPECT_EQ(got.force_scale, want.force_scale);
  EXPECT_EQ(got.torque_scale, want.torque_scale);
  EXPECT_EQ(got.body_force_scale, want.body_force_scale);
  EXPECT_EQ(got.body_torque_scale, want.body_torque_scale);
  if (comm.size() > 1 && comm.rank() == 1) {
    // alone, rank 1 would not size for the largest particle
    EXPECT_NE(mine.quantum(table, 3).force_scale, want.force_scale);
  }
}

}  // namespace
}  // namespace dem

int main(int argc, char** argv) {
  dem::mpi::Runtime runtime(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (dem::mpi::Comm().rank() != 0) {  // one report: rank 0's (a failure on any rank still fails the run)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
