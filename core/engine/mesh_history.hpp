// Which old mesh slot's history a new mesh contact of a particle takes, for spheres and polyhedra
// alike (core/engine/phases.hpp, core/engine/polyhedron_phases.hpp).
#pragma once
#include "core/contact/contact_law.hpp"
#include "core/dhm/h2_filter.hpp"

namespace dem {

// The same entity (same(o): old slot o is the new contact's element and feature), else the unused
// old contact on the same body whose normal is closest (within 10 degrees). The second rule carries
// the tangential spring across element transitions (santasusana2016 Sect. 7.2), so sliding over
// internal edges of a plane gives the same result however finely the plane is meshed. The slot
// taken is marked used; no match: a zero history.
template <class SameEntity>
DEM_HD inline ContactHistory carried_mesh_history(int n_old, bool* old_used, const EntityContact* old_entity,
                                                  const Vec3* old_normal, const ContactHistory* old_history,
                                                  const index_t* elem_body, index_t body, Vec3 normal,
                                                  const SameEntity& same) {
  int match = -1;
  real best = real(0.984807753);  // cos(10 degrees)
  for (int o = 0; o < n_old; ++o) {
    if (old_used[o]) continue;
    if (same(o)) {
      match = o;
      break;
    }
    const real d = dot(old_normal[o], normal);
    if (elem_body[old_entity[o].element] == body && d > best) {
      best = d;
      match = o;
    }
  }
  if (match < 0) return ContactHistory{{0, 0, 0}, {0, 0, 0}};
  old_used[match] = true;
  return old_history[match];
}

}  // namespace dem
