// What the mixing indices need of a state, gathered where the particles live
// (Simulation::mixing_contents): the tags present and their counts, each sample's particles,
// weight, squared weights and weight per tag, and the particle-particle contacts, those between
// different tags among them. The application finishes the indices from these
// (host/app/output/mixing.hpp). Each sample's particles are summed in increasing id, the samples
// in the order of their keys (core/analysis/mixing_samples.hpp), so every engine and any particle
// order give the same bits.
#pragma once
#include <cstdint>
#include <vector>

#include "core/analysis/mixing_samples.hpp"
#include "host/sim/engine_types.hpp"

namespace dem::host {

// How the particles are sampled: cubic cells of cell_size from origin, or (cell_size 0) runs of
// sample_particles along a Z-order curve through the particles' bounding box; weighted by count
// or by mass.
struct MixingSampling {
  double cell_size = 0;  // m
  std::int64_t sample_particles = 0;
  double origin[3] = {0, 0, 0};  // m
  bool mass_weighted = false;
  // The per-particle form, with the curve's box lo..hi (the particles' bounds; unused with cells).
  // Throws std::invalid_argument without a cell size or a sample size.
  MixingSamples view(const double lo[3], const double hi[3]) const;
};

struct MixingContents {
  std::vector<std::int32_t> tags;       // the tags present, increasing
  std::vector<std::uint64_t> tag_count;  // particles of each
  // per sample, in key order: its particles, their weights' sum and their squares' sum, and
  // (samples x tags) each tag's weight
  std::vector<std::uint64_t> sample_n;
  std::vector<double> sample_w, sample_w2, sample_tag_w;
  std::uint64_t contacts = 0;         // particle-particle contacts
  std::uint64_t unlike_contacts = 0;  // those between particles of different tags
};

// The contents of a state: the particles p (in any order) and their touching pairs (contacts:
// Simulation::export_pairs), a pair with a polyhedron counted only while its kept plane says it
// is in contact (core pair_in_contact).
MixingContents mixing_contents(const ParticleArrays& p, const ContactState& contacts, const MixingSampling& s);

}  // namespace dem::host
