// A probe that calls every public core/ function once per input, written once as DEM_HD code.
// cuda/core_device_check.cu runs it in a kernel, so a core header that is not device-clean breaks
// the CUDA build (CI compiles it without a GPU); on a GPU, tests/cuda compares the kernel's
// outputs with the same probe run on the host.
#pragma once
#include "core/dem_core.hpp"

namespace dem::cuda {

struct ProbeInput {
  Vec3 center;   // m, sphere centre
  real radius;   // m
  Vec3 velocity; // m/s
  Vec3 spin;     // rad/s
};

constexpr int kProbeOutputs = 32;
struct ProbeOutput {
  real value[kProbeOutputs];
};

// A regular tetrahedron's shape record, built in place (host/sim/polyhedron_shape.cpp builds them
// on the host; this one needs none of it).
DEM_HD inline PolyShape probe_tetrahedron() {
  PolyShape s{};
  const Vec3 v[4] = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
  const int face[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  const int edge[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  s.num_vertices = 4;
  s.num_edges = 6;
  s.num_faces = 4;
  for (int k = 0; k < 4; ++k) s.vertex[k] = v[k];
  for (int e = 0; e < 6; ++e) {
    s.edge[e][0] = static_cast<std::uint8_t>(edge[e][0]);
    s.edge[e][1] = static_cast<std::uint8_t>(edge[e][1]);
  }
  for (int f = 0; f < 4; ++f) {
    s.face_start[f] = static_cast<std::uint8_t>(3 * f);
    for (int k = 0; k < 3; ++k) s.face_vertex[3 * f + k] = static_cast<std::uint8_t>(face[f][k]);
    const Vec3 n = normalized(cross(v[face[f][1]] - v[face[f][0]], v[face[f][2]] - v[face[f][0]]));
    s.face_normal[f] = dot(n, v[face[f][0]]) > 0 ? n : -n;
  }
  s.face_start[4] = 12;
  int ke = 0, kf = 0;
  for (int k = 0; k < 4; ++k) {
    s.vertex_edge_start[k] = static_cast<std::uint8_t>(ke);
    for (int e = 0; e < 6; ++e)
      if (edge[e][0] == k || edge[e][1] == k) s.vertex_edge[ke++] = static_cast<std::uint8_t>(e);
    s.vertex_face_start[k] = static_cast<std::uint8_t>(kf);
    for (int f = 0; f < 4; ++f)
      if (face[f][0] == k || face[f][1] == k || face[f][2] == k) s.vertex_face[kf++] = static_cast<std::uint8_t>(f);
  }
  s.vertex_edge_start[4] = static_cast<std::uint8_t>(ke);
  s.vertex_face_start[4] = static_cast<std::uint8_t>(kf);
  s.unit_inertia = Vec3{1, 1, 1};
  s.bounding_radius = std::sqrt(real(3));
  return s;
}

DEM_HD inline void core_probe(const ProbeInput& in, ProbeOutput& out) {
  int k = 0;
  // A unit square quad and a triangle in z = 0, and a pentagon beside them.
  Polygon quad{{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, 4};
  Polygon tri{{{1, 0, 0}, {2, 0, 0}, {1, 1, 0}}, 3};
  Polygon penta{{{0, 1, 0}, {0.5, 1.3, 0.1}, {1, 1, 0}, {1.2, 1.8, 0}, {-0.2, 1.8, 0}}, 5};
  penta.v[1] = Vec3{0.5, 2.1, 0};
  out.value[k++] = fast_intersection_test(quad, in.center, in.radius) ? 1 : 0;
  const PlaneProjection pp = project_on_polygon(tri, in.center);
  out.value[k++] = pp.distance;
  out.value[k++] = project_on_edge(tri, 0, in.center).eta;
  H2Accumulator acc;
  h2_begin(acc, in.center);
  contact_type_hierarchy(acc, quad, 0, in.radius);
  contact_type_hierarchy(acc, tri, 1, in.radius);
  contact_type_hierarchy(acc, penta, 2, in.radius);
  const int n_valid = h2_finish(acc);
  out.value[k++] = n_valid;
  Vec3 force{0, 0, 0};
  const Material glass{2500, 5e7, 0.25}, wall{0, real(INFINITY), 0.3};
  const ContactParams params = mix_contact_params(glass, wall, InteractionParams{0.5, 0.6, 0.01}, RollingModel::Epsd);
  out.value[k++] = params.zeta;
  out.value[k++] = hertz_restitution(real(0.3));
  out.value[k++] = effective_youngs_modulus(glass, glass) + effective_shear_modulus(glass, glass);
  const real mass = sphere_mass(2500, in.radius);
  const BodyKinematics a{in.center, in.velocity, in.spin, 1 / in.radius, 1 / mass, 1 / sphere_inertia(mass, in.radius)};
  const BodyKinematics b{{0, 0, 0}, {0, 0, 0}, {0, 0, 1}, 0, 0, 0};
  for (int i = 0; i < n_valid && i < kMaxMeshContacts; ++i) {
    const ContactGeometry g = entity_contact_geometry(acc.c[i], in.center, in.radius, Vec3{0, 0, 1});
    ContactHistory h{{0, 0, 0}, {0, 0, 0}};
    const ContactResult r = evaluate_contact(params, g, a, b, h, real(1e-5));
    force += r.force_on_a;
    real w[kMaxPolygonVertices];
    const Polygon& p = acc.c[i].element == 0 ? quad : (acc.c[i].element == 1 ? tri : penta);
    entity_weights(p, acc.c[i], w);
    out.value[k++ % kProbeOutputs] = w[0];
  }
  out.value[k++ % kProbeOutputs] = force.x;
  out.value[k++ % kProbeOutputs] = force.z;
  // Sphere-sphere, separate laws and the rolling torque.
  const ContactGeometry ss = sphere_sphere(in.center, in.radius, Vec3{0.5, 0.5, 0.5}, real(0.3));
  out.value[k++ % kProbeOutputs] = spheres_overlap(in.center, in.radius, Vec3{0.5, 0.5, 0.5}, real(0.3)) ? 1 : 0;
  Vec3 xi{0, 0, 0}, roll{0, 0, 0}, no_turn{0, 0, 0};
  real no_lock = 0;  // (the histories of the laws that these calls do not use)
  if (ss.overlap > 0) {
    const ContactParams pp2 = mix_contact_params(glass, glass, InteractionParams{0.3, 0.9, 0.0});
    const NormalTangentialResult hm =
        normal_tangential_force(pp2, ss.normal, ss.overlap, in.velocity, 0.1, 0.01, xi, 1e-5, no_turn, no_lock);
    out.value[k++ % kProbeOutputs] = hm.normal_force;
    const Vec3 t = rolling_resistance_torque(params, ss.normal, in.spin, 0.1, hm.normal_force, 1e4, 1, roll, 1e-5);
    out.value[k++ % kProbeOutputs] = t.x;
  }
  // Partial slip (Mindlin-Deresiewicz) and the perfectly plastic normal law.
  out.value[k++ % kProbeOutputs] = mindlin_theta(real(0.3) + in.radius);
  if (ss.overlap > 0) {
    InteractionParams md{0.3, 0.9, 0.0};
    md.tangential = TangentialModel::MindlinDeresiewicz;
    Vec3 t{0, 0, 0}, turn{0, 0, 0};
    const NormalTangentialResult r = normal_tangential_force(mix_contact_params(glass, glass, md), ss.normal, ss.overlap,
                                                             in.velocity, 0.1, 0.01, t, 1e-5, turn, no_lock);
    out.value[k++ % kProbeOutputs] = r.force.x + r.force.y;
    Vec3 xi2{0, 0, 0};
    real lock = 0;
    const NormalTangentialResult q = normal_tangential_force(mix_contact_params(glass, glass, InteractionParams{0.3, 0, 0}),
                                                             ss.normal, ss.overlap, in.velocity, 0.1, 0.01, xi2, 1e-5,
                                                             no_turn, lock);
    out.value[k++ % kProbeOutputs] = q.normal_force + lock;
  }
  out.value[k++ % kProbeOutputs] = rigid_point_velocity(in.velocity, in.spin, in.center, Vec3{0, 0, 0}).y;
  // Broad-phase keys.
  const CellGrid grid{{-1, -1, -1}, real(0.25), {16, 16, 16}, 1024};
  const Int3 cc = cell_coords(in.center, grid);
  out.value[k++ % kProbeOutputs] = real(cell_key(cc, grid));
  out.value[k++ % kProbeOutputs] = real(hashed_cell_key(cc, grid.hash_size));
  out.value[k++ % kProbeOutputs] = real(key_bits(grid.hash_size));
  // Integer load sums: rounding (ties to even, both signs), clamping and NaN.
  FixedLoad sum;
  const LoadQuantum unit{1024, 1 / real(1024), 1, 1};
  add_fixed_load(sum, force * real(1e3), Vec3{real(2.5), real(-2.5), real(NAN)}, unit);
  add_fixed_load(sum, -force, Vec3{real(0.5), real(-1.5), real(1e300)}, unit);
  Vec3 total_force, total_torque;
  finish_load_sum(sum, unit, Vec3{in.radius, 0, 0}, Vec3{0, 0, 0}, total_force, total_torque);
  out.value[k++ % kProbeOutputs] = total_force.x + total_force.z;
  out.value[k++ % kProbeOutputs] = total_torque.x + total_torque.y;
  out.value[k++ % kProbeOutputs] = total_torque.z;
  // Integration.
  ParticleMotion m{in.center, in.velocity, in.spin, quat_identity()};
  central_difference_step(m, force, Vec3{0, 0, 1e-6}, 1 / mass, 1 / sphere_inertia(mass, in.radius),
                          Vec3{0, 0, -9.81}, false, real(1e-4));
  out.value[k++ % kProbeOutputs] = m.x.z;
  out.value[k++ % kProbeOutputs] = rotate(m.q, Vec3{1, 0, 0}).y;
  // A body with a full inertia tensor.
  Quat qb = quat_identity();
  Vec3 wb = in.spin;
  rigid_rotation_step(qb, wb, Vec3{0, 1e-6, 0}, Vec3{1e-9, 2e-9, 3e-9}, false, real(1e-4));
  out.value[k++ % kProbeOutputs] = qb.x + wb.y;
  // The common plane of two tetrahedra, turned by the spin, B at the centre's offset.
  const PolyShape tet = probe_tetrahedron();
  const Quat qa = quat_from_rotation_vector(in.spin * real(1e-3));
  PlacedVertices A, B, moved;
  place_vertices(tet, qa, real(1), Vec3{0, 0, 0}, A);
  place_vertices(tet, qb, real(1), in.center + Vec3{2, 0, 0}, B);
  const CommonPlane cp = fast_common_plane(tet, qa, A, tet, qb, B, in.center + Vec3{2, 0, 0}, real(1e300));
  out.value[k++ % kProbeOutputs] = cp.gap;
  out.value[k++ % kProbeOutputs] = separating_axis_plane(tet, qa, A, tet, qb, B).gap;
  out.value[k++ % kProbeOutputs] = contact_common_plane(tet, qa, A, tet, qb, B, cp, moved).n.x;
  out.value[k++ % kProbeOutputs] = approximate_common_plane(tet, qa, A, tet, qb, B, cp).gap;
  const PolyContact pc = polyhedron_contact(A, B, separating_axis_plane(tet, qa, A, tet, qb, B));
  out.value[k++ % kProbeOutputs] = pc.point.x + pc.depth;
  Vec3 poly_xi{0, 0, 0};
  out.value[k++ % kProbeOutputs] = polyhedron_contact_loads(pc, PolyContactLaw{1e5, 1, 1e5, 1, 0.5}, Vec3{0, 0, 0}, in.velocity,
                                                            in.spin, B.v[0], Vec3{0, 0, 0}, Vec3{0, 0, 0}, poly_xi, real(1e-5))
                                       .torque_on_a.y;
  const CommonPlane sp = sphere_polyhedron_plane(tet, qa, A, in.center);
  out.value[k++ % kProbeOutputs] = sphere_polyhedron_contact(sp, in.center, in.radius).point.y + sp.gap;
  // The tetrahedron against a mesh of one triangle under it.
  Polygon floor_tri{{{-3, -3, -0.5}, {3, -3, -0.5}, {0, 3, -0.5}}, 3};
  PolyShape flat;
  PlacedVertices E;
  flat_element_body(floor_tri, flat, E);
  const std::int32_t tri_ids[3] = {0, 1, 2};
  const std::int32_t* const tri_list[1] = {tri_ids};
  const int tri_size[1] = {3};
  const Vec3 tri_normal[1] = {polygon_normal(floor_tri)};
  const ElementCandidates tri_candidates{tri_list, tri_size, tri_normal, 1, floor_tri.v};
  ElementContact ec[1] = {element_contact(A, tet, Vec3{0, 0, 0}, floor_tri, E, tri_ids, 0,
                                          separating_axis_plane(tet, qa, A, flat, quat_identity(), E), tri_candidates)};
  rank_element_contacts(ec, 1, tri_candidates, real(1e-9));
  out.value[k++ % kProbeOutputs] = ec[0].weight * ec[0].contact.depth + ec[0].contact.measure;
  IterativeSchedule coarse;
  coarse.last_step = real(1e-3);
  out.value[k++ % kProbeOutputs] = iterative_common_plane(A, B, cp.n, real(1e300), coarse).gap;
  // Grid sizing.
  const GridKeys gk = size_particle_grid(Vec3{0, 0, 0}, Vec3{1, 1, 1}, PeriodicBox{}, in.radius, 1000, true);
  out.value[k++ % kProbeOutputs] = real(gk.key(cc)) + (mesh_bins_fit(Vec3{0, 0, 0}, Vec3{1, 1, 1}, in.radius, 100, 10) ? 1 : 0);
  while (k < kProbeOutputs) out.value[k++] = 0;
}

}  // namespace dem::cuda
