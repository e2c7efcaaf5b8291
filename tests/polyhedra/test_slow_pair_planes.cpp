// nezami2004 §6.3 in the pair pass (core/engine/polyhedron_phases.hpp): a slow pair's plane keeps
// its features only while its kept vertices stay the closest; where another vertex lies far deeper
// the pair is searched in full.
#include <gtest/gtest.h>

#include "core/engine/polyhedron_phases.hpp"
#include "host/sim/engine_types.hpp"
#include "host/sim/polyhedron_shape.hpp"

namespace dem {
namespace {

// Two tetrahedra of scenes/polyhedra/box_30k.yaml (ids 20 and 201 at step 99,074, TOL 0.01),
// their plane carried by §6.3 across two nearly parallel edges: the normal of the edges' cross
// product had turned far while the bodies barely moved, and the depth along it over every vertex
// was 5.3 mm where the bodies overlapped by 0.037 mm; the next step stopped on the overlap check.
TEST(SlowPairPlanes, APlaneWhoseKeptVerticesNoLongerHoldIsSearchedInFull) {
  const PolyShape tetra = host::make_poly_shape(host::builtin_polyhedron("tetrahedron", {}, "t"), "tetrahedron");
  host::ParticleArrays p;
  const Quat qa{-0x1.5244250d6332bp-2, 0x1.c28662a164fa9p-6, -0x1.c49da737fe973p-1, -0x1.5183399fbee5ap-2};
  const Quat qb{0x1.4b313a77f6ba8p-2, 0x1.89b3e14241b03p-6, -0x1.c5980e278d35p-1, 0x1.538c0f971544cp-2};
  p.push_polyhedron(20, Vec3{-0x1.5a6132464d037p-5, 0x1.569c19739189ep-4, 0x1.e2ae47e4e347ep-8}, qa,
                    Vec3{-0x1.28537df6af736p-7, 0x1.7045c074cdb0dp-6, 0x1.ffdd67b9239fcp-6},
                    Vec3{0x1.93cb98926ec4p+1, -0x1.6aec7ef618845p+1, 0x1.5482b1acdbfaep+2}, 0.021111, 0, tetra, 2650, 0, false);
  p.push_polyhedron(201, Vec3{-0x1.175baf3461e78p-4, 0x1.910a87b6603ecp-4, 0x1.bb67a152feep-7}, qb,
                    Vec3{0x1.316c09667803fp-6, -0x1.e2f3f34d16236p-10, -0x1.9b88652e3e1a9p-7},
                    Vec3{-0x1.c93df347220cep-1, -0x1.60ba231ac0b92p-2, -0x1.6734d54441ef6p+0}, 0.0395891, 0, tetra, 2650, 0, false);
  p.radius[0] = 0x1.5c33e901b7b87p-6;
  p.radius[1] = 0x1.467d731ba77bep-5;
  p.pad[0] = 0x1.a8f209f600ed2p-18;
  p.pad[1] = 0x1.52e4a1dc1eb87p-13;
  ParticleView v = p.view();
  v.shapes = &tetra;
  v.plane_tolerance = 0.01;
  ContactHistory h{};
  h.tangential = Vec3{0x1.98b0ad0534cecp-19, 0x1.1d21abaf5a917p-18, -0x1.3947703432823p-18};
  h.rolling = Vec3{0x1.8c6c7ece3087bp-3, -0x1.a00f4c9626bf4p-2, -0x1.0610c05p+30};
  const KeptPlane kept = unpack_plane(h.rolling);
  ASSERT_TRUE(kept.in_contact);
  ASSERT_EQ(kept.plane.type, PlaneType::kEdgeEdge);
  ASSERT_TRUE(slow_for_plane(v, 0) && slow_for_plane(v, 1)) << "the pair is one §6.3 approximates";

  PlacedVertices A, B;
  place_particle(v, 0, p.x[0], A);
  place_particle(v, 1, p.x[1], B);
  const double penetration = -separating_axis_plane(tetra, qa, A, tetra, qb, B).gap;
  ASSERT_NEAR(penetration, 3.7e-5, 1e-6);
  // §6.3 alone: the kept vertices' gap says the overlap is small; every vertex says 5.3 mm.
  const CommonPlane carried = approximate_common_plane(tetra, qa, A, tetra, qb, B, kept.plane);
  const double carried_depth = -plane_gap(A, B, carried.n);
  EXPECT_NEAR(carried_depth, 5.265e-3, 1e-5);
  EXPECT_GT(carried.gap - plane_gap(A, B, carried.n), 10 * approximation_slack(v, 0, 1));

  ContactParams prm{};
  prm.k_n = 3.0e5;
  prm.k_t = 3.0e5;
  prm.friction = 0.5;
  const PolyPairLoad l = polyhedral_pair_loads(v, prm, 0, 1, p.x[1], h, 2.0e-5);
  EXPECT_EQ(l.plane.approximated, 0);
  EXPECT_EQ(l.plane.searched, 1);
  // The search's plane: the least penetration (the separating axes' exact minimum, 1e-9 of it).
  const KeptPlane found = unpack_plane(h.rolling);
  EXPECT_TRUE(found.in_contact);
  EXPECT_NEAR(-plane_gap(A, B, found.plane.n), penetration, 1e-9 * penetration + 1e-15);
  // The overlap check reads that plane: 0.35 % of the smaller body's volume-equivalent radius
  // (it read 50 % from the carried plane).
  EXPECT_NEAR(polyhedral_overlap_fraction(v, 0, 1, p.x[1], h.rolling), penetration / (0.5 * 0.021111), 1e-6);
  // The normal load is the spring on that depth, give or take the dashpot (no damping here) and
  // the tangential spring's share along the normal (none: its history lies in the plane).
  const double along = dot(l.force_on_a, found.plane.n);
  EXPECT_NEAR(std::abs(along), 3.0e5 * penetration, 0.05 * 3.0e5 * penetration);
}

}  // namespace
}  // namespace dem
