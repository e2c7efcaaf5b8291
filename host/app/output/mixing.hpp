// The mixing and segregation indices of the particles' tags (scene key mixing:; docs/output.md
// "mixing.csv" gives each definition), finished from what an engine gathers of its state where the
// particles live (host/sim/mixing_contents.hpp: summed in the order of (sample, particle id), so
// that every engine and any particle order give the same bits).
#pragma once
#include <cstdint>
#include <vector>

#include "host/sim/engine_types.hpp"
#include "host/sim/mixing_contents.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

// One tag's indices over the sample cells.
struct TagMixing {
  std::int32_t tag = 0;
  double fraction = 0;              // p: its share (by count or mass) of the particles in the cells used
  std::uint64_t cells = 0;          // samples used: cells of at least min_particles, or whole samples of sample_particles
  std::uint64_t particles = 0;      // particles in them
  double variance = 0;              // S^2: the cells' concentrations' variance about p, weighted by their content
  double variance_segregated = 0;   // S_0^2 = p (1 - p): fully segregated
  double variance_random = 0;       // S_R^2: its expectation when the tags are shuffled at random
  double lacey = 0;                 // (S_0^2 - S^2) / (S_0^2 - S_R^2): 0 segregated, 1 random (NaN: undefined)
  double rsd = 0;                   // S / p, the relative standard deviation
};

struct MixingIndices {
  std::vector<TagMixing> tags;      // every tag present, increasing
  std::uint64_t contacts = 0;       // particle-particle contacts
  std::uint64_t unlike_contacts = 0;  // those between particles of different tags
  // (unlike / contacts) over its expectation when the tags are shuffled at random,
  // 1 - sum_k N_k (N_k - 1) / (N (N - 1)): 0 segregated (no unlike contact), 1 random. NaN without
  // contacts or with one tag.
  double contact_index = 0;
};

// The sampling a scene's mixing: asks for (Simulation::mixing_contents).
MixingSampling mixing_sampling(const MixingSpec& spec);

// The indices from a state's contents (Simulation::mixing_contents), samples of fewer than
// spec.min_particles left out.
MixingIndices mixing_indices(const MixingContents& contents, const MixingSpec& spec);

// The indices of a state (p, contacts): the touching pairs (Simulation::export_pairs).
MixingIndices mixing_indices(const ParticleArrays& p, const ContactState& contacts, const MixingSpec& spec);

}  // namespace dem::host
