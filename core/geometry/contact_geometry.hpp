// The result of a narrow-phase test: what the contact laws need, and what the DHM hierarchy
// needs (the entity that was hit).
#pragma once
#include <cstdint>

#include "core/math/vec3.hpp"

namespace dem {

// Contact type of a sphere against an element (santasusana2016 Sect. 5.1). The numeric order is
// the Contact Type Hierarchy: a facet outranks its edges, an edge outranks its two vertices.
enum class EntityType : std::uint8_t { Facet = 0, Edge = 1, Vertex = 2 };

// Geometry of one contact between sphere A and a body B (a sphere or a mesh entity).
struct ContactGeometry {
  Vec3 normal;   // unit normal n, from B to A
  Vec3 point;    // m, contact point (on the element for mesh contacts; mid-overlap for spheres)
  real overlap;  // m, delta > 0 means touching
};

}  // namespace dem
