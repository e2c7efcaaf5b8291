// The pair pass: every candidate pair's cheap test, then the contact law in vector lanes of the
// same law (PairLanes), and each pair's loads summed in integers per particle.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <omp.h>

#include "core/geometry/sphere_sphere.hpp"
#include "host/omp/simd.hpp"
#include "host/omp/parallel.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

namespace {

// The batched pair pass (Engine::pair_forces): pairs whose cheap test passed and whose law is the
// default one (is_default_law) are collected kPairLanes at a time (PairLanes), and one loop over
// the lanes runs sphere_pair_loads, the same function every other path calls, for
// all of them at once: GCC turns that loop into vector code (AVX-512 or AVX2),
// which takes 2.7 times less time per contact than one pair at a time, with the same bits (the
// law has no branch there, and no fused multiply-add anywhere).
// (In one process on the 2-core EPYC, 64 lanes against 32: the pair phase 1.02-1.06 as fast on
// the bed, 1.03-1.04 on the mixer, 1.03 at 1.28 million beads; 128 against 64: bed 0.95-0.96,
// mixer 1.03. Earlier, before the lanes read the particles by index: 16 against 32 4 % slower.)
constexpr int kPairLanes = 64;
// The candidates' cheap tests run in blocks of kPairBlock (a bit mask of the ones to evaluate).
constexpr int kPairBlock = 32;
static_assert(kPairBlock <= 32, "the cheap tests' bit mask is 32 bits");
struct PairLanes {
  // B's position (its image nearest A), and A's and B's particles: the loop over the lanes reads
  // their other fields by index (the compiler's gathers). Copying the 21 fields into the lanes one
  // by one as each pair was added was slower: in one process on the 2-core EPYC, the pair phase
  // 1.04-1.11 times as fast by index on the bed and the mixer, 1.05 on the bed tiled to 1.28
  // million beads (bench/results/dev-2core-epyc/inprocess_ab.md).
  alignas(64) real xb[3][kPairLanes];
  // (64-bit like the reals: GCC sizes a loop's step by its narrowest type, so with 32-bit indices
  // it took 8 lanes a step on AVX2, two registers for every real, and spilled; 4 lanes a step take
  // 12 % fewer instructions a lane: in one process on the AVX2 machine the pair phase 1.02-1.05
  // times as fast on the bed, 1.07 on the mixer in its slow state, 0.99-1.02 in its fast state;
  // bench/results/dev-2core-milan/inprocess_ab.md)
  alignas(64) std::int64_t ia[kPairLanes], ib[kPairLanes];
  alignas(64) real e_star[kPairLanes], g_star[kPairLanes], zeta[kPairLanes], friction[kPairLanes],
      rolling_friction[kPairLanes];
  alignas(64) real xi[3][kPairLanes];                                        // in/out: the tangential history
  alignas(64) real f[3][kPairLanes], ta[3][kPairLanes], tb[3][kPairLanes];  // out: the loads
  alignas(64) std::int64_t touching[kPairLanes];                             // out
  alignas(64) real overlap[kPairLanes];                                      // out, m
  std::int64_t pair[kPairLanes];
  int count = 0;
  const ContactParams* uniform = nullptr;  // every lane's parameters, when all pairs share them

  // Lane `count` takes pair k of spheres i (role A, the smaller id) and j (its image xj near i),
  // with its tangential spring (the default law neither reads nor writes the rolling one).
  void add(const ContactParams& prm, std::int64_t k, index_t i, index_t j, Vec3 xj, Vec3 tangential) {
    const int l = count++;
    pair[l] = k;
    ia[l] = i, ib[l] = j;
    xb[0][l] = xj.x, xb[1][l] = xj.y, xb[2][l] = xj.z;
    if (!uniform) {  // (else run sets every lane's parameters at once)
      e_star[l] = prm.e_star, g_star[l] = prm.g_star, zeta[l] = prm.zeta, friction[l] = prm.friction;
      rolling_friction[l] = prm.rolling_friction;
    }
    xi[0][l] = tangential.x, xi[1][l] = tangential.y, xi[2][l] = tangential.z;
  }

  // All lanes at once (the unused ones repeat lane 0's inputs, and are not stored); the particles'
  // fields as they are now (the pass changes none of them).
  void run(const ParticleView& p, real dt) {
    if (uniform)
      for (int l = 0; l < kPairLanes; ++l) {
        e_star[l] = uniform->e_star, g_star[l] = uniform->g_star, zeta[l] = uniform->zeta;
        friction[l] = uniform->friction, rolling_friction[l] = uniform->rolling_friction;
      }
    for (int l = count; l < kPairLanes; ++l) copy_lane(0, l);
    // (no local of the loop body may have its address taken: OpenMP would turn it into an array
    // per lane, which does not vectorise; so the lane is a call by value)
#pragma omp simd
    for (int l = 0; l < kPairLanes; ++l) {
      const std::int64_t a = ia[l], b = ib[l];
      const SpherePairResult r = default_law_pair_loads(
          e_star[l], g_star[l], zeta[l], friction[l], rolling_friction[l], Vec3{p.x[a].x, p.x[a].y, p.x[a].z},
          Vec3{p.v[a].x, p.v[a].y, p.v[a].z}, Vec3{p.w[a].x, p.w[a].y, p.w[a].z}, p.radius[a], p.inv_mass[a],
          p.inv_inertia[a], Vec3{xb[0][l], xb[1][l], xb[2][l]}, Vec3{p.v[b].x, p.v[b].y, p.v[b].z},
          Vec3{p.w[b].x, p.w[b].y, p.w[b].z}, p.radius[b], p.inv_mass[b], p.inv_inertia[b],
          Vec3{xi[0][l], xi[1][l], xi[2][l]}, dt);
      touching[l] = r.touching;
      overlap[l] = r.overlap;
      xi[0][l] = r.history.tangential.x, xi[1][l] = r.history.tangential.y, xi[2][l] = r.history.tangential.z;
      f[0][l] = r.load.force_on_a.x, f[1][l] = r.load.force_on_a.y, f[2][l] = r.load.force_on_a.z;
      ta[0][l] = r.load.torque_on_a.x, ta[1][l] = r.load.torque_on_a.y, ta[2][l] = r.load.torque_on_a.z;
      tb[0][l] = r.load.torque_on_b.x, tb[1][l] = r.load.torque_on_b.y, tb[2][l] = r.load.torque_on_b.z;
    }
  }

  void copy_lane(int from, int to) {
    for (auto* a : {&xb, &xi})
      for (int c = 0; c < 3; ++c) (*a)[c][to] = (*a)[c][from];
    for (auto* a : {&e_star, &g_star, &zeta, &friction, &rolling_friction}) (*a)[to] = (*a)[from];
    ia[to] = ia[from], ib[to] = ib[from];
  }
};

}  // namespace

void Engine::find_uniform_material() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int32_t* m = p_.material.data();
  const std::int32_t first = n > 0 ? m[0] : kMaterialMixed;
  std::int64_t others = 0;
#pragma omp parallel for reduction(+ : others) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) others += m[i] != first;
  uniform_material_ = others == 0 ? first : kMaterialMixed;
}

void Engine::pair_forces() {
  ScopedTimer timer(times_.pair_contacts);
  const real dt = settings_.dt;
  const std::int64_t np = static_cast<std::int64_t>(pairs_.i.size());
  std::size_t touching = 0;
  const ParticleView pv = pview();
  const ContactTable tab = table();
  Vec3* spring = pairs_.history.xi.data();  // the default law's lanes touch only these
  Vec3* rolling = pairs_.history.with_roll ? pairs_.history.roll.data() : nullptr;  // (else zero for all)
  std::uint8_t* touching_flag = pairs_.touching.data();
  const std::uint8_t* swapped = pairs_.swapped.data();
  // One material among the particles (the common case): its parameters and whether its law is the
  // default one, once (the lookup and the test per pair cost 10 % of the pass on the bed).
  if (uniform_material_ == kMaterialUnknown) find_uniform_material();
  const bool one_material = uniform_material_ >= 0;
  const ContactParams& uniform = tab(one_material ? uniform_material_ : 0, one_material ? uniform_material_ : 0);
  const bool polyhedra = has_polyhedra();  // (pairs with a polyhedron: one at a time, below)
  const bool all_default = one_material && is_default_law(uniform) && !polyhedra;
  const bool periodic = pv.periodic.any();
  const bool sparse_springs = 2 * touching_pairs_ < static_cast<std::size_t>(np);  // (at the last pass)
  // The sums (zero between steps: the gather resets each one it reads)
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  ensure_pair_sums();
  FixedLoad* sum = pair_sum_.data();
  const LoadQuantum quantum = quantum_;
  // The contacts' forces for export_contact_forces, when compute_forces keeps them
  Vec3* kept_force = nullptr;
  Vec3* kept_point = nullptr;
  if (record_contacts_) {
    pair_force_.resize(static_cast<std::size_t>(np));
    kept_force = pair_force_.data();
    if (polyhedra) {
      pair_point_.resize(static_cast<std::size_t>(np));
      kept_point = pair_point_.data();
    }
  }
  if (np > 0 && stripe_row_.size() < 2) lay_out_stripes();  // (a rebuild lays them out; this is a guard)
  const int stripes = static_cast<int>(stripe_row_.size()) - 1;
  const bool par = static_cast<std::size_t>(np) > settings_.parallel_min;
  const int max_threads = par ? omp_get_max_threads() : 1;
  if (spill_.size() < static_cast<std::size_t>(max_threads)) spill_.resize(max_threads);
  for (auto& of_thread : spill_)
    if (of_thread.size() < static_cast<std::size_t>(max_threads)) of_thread.resize(max_threads);
  std::size_t spilled = 0;
  PlaneCounts planes;  // (pairs of polyhedra)
  real deepest = 0;    // the touching pairs' largest overlap fraction (pair_overlap_seen_)
#pragma omp parallel reduction(+ : touching, spilled) reduction(max : deepest) num_threads(max_threads) if (par)
  {
    PlaneCounts my_planes;
    const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
    std::vector<std::vector<Spill>>& spills = spill_[thread];
    for (auto& to_owner : spills) to_owner.clear();
    PairLanes lanes;
    if (all_default) lanes.uniform = &uniform;
    FixedLanes<kPairLanes> q;  // the lanes' loads in quanta
    // The sums the present stripe adds to directly: up to the end of the next stripe (the pairs'
    // particles are never below the stripe's first row); beyond, a spill for the owner's thread
    std::int32_t direct_end = 0;
    const auto spill = [&](index_t target) -> FixedLoad& {
      auto& list = spills[static_cast<std::int64_t>(target) * threads / n];
      list.push_back(Spill{target, FixedLoad{}});
      return list.back().load;
    };
    const auto target_sum = [&](index_t target) -> FixedLoad& {
      return target < direct_end ? sum[target] : spill(target);
    };
    const auto store = [&] {  // the lanes' results into their pairs
      lanes.run(pv, dt);
      // every lane's loads in quanta at once (side B: its own -F, rounded as the device rounds it)
      q.convert(lanes.f, lanes.ta, lanes.tb, quantum.force_scale, quantum.torque_scale);
      for (int l = 0; l < lanes.count; ++l) {
        const std::int64_t k = lanes.pair[l];
        spring[k] = Vec3{lanes.xi[0][l], lanes.xi[1][l], lanes.xi[2][l]};
        if (lanes.touching[l]) {  // (a pair whose overlap rounds to zero adds nothing, as on the device)
          q.add_side_a(target_sum(lanes.ia[l]), l);
          q.add_side_b(target_sum(lanes.ib[l]), l);
          if (kept_force != nullptr) kept_force[k] = Vec3{lanes.f[0][l], lanes.f[1][l], lanes.f[2][l]};
          deepest = std::max(deepest, lanes.overlap[l] / std::min(pv.radius[lanes.ia[l]], pv.radius[lanes.ib[l]]));
        }
        touching_flag[k] = lanes.touching[l];
        touching += lanes.touching[l];
      }
      lanes.count = 0;
    };
    // The stripes in two rounds (lay_out_stripes), the even ones and then the odd ones, each
    // stripe on one thread, taken as the threads come free (a shared machine's cores do not run
    // at one speed). Within a stripe, the candidates in blocks of kPairBlock: their cheap tests in
    // one vectorised loop, then only the pairs that overlap or did (a bit mask: no branch per
    // candidate, which mispredicted on the quarter of a bed's candidates that do not touch and
    // most of a mixer's).
    for (int round = 0; round < 2; ++round) {
#pragma omp for schedule(dynamic, 1)
      for (int half = 0; half < (stripes - round + 1) / 2; ++half) {
        const int stripe = round + 2 * half;
        direct_end = stripe + 2 < stripes ? stripe_row_[stripe + 2] : std::numeric_limits<std::int32_t>::max();
        const std::int64_t k_begin = pairs_.offsets[stripe_row_[stripe]], k_end = pairs_.offsets[stripe_row_[stripe + 1]];
        for (std::int64_t k0 = k_begin; k0 < k_end; k0 += kPairBlock) {
          const int count = static_cast<int>(std::min<std::int64_t>(kPairBlock, k_end - k0));
          // The partners of the next block: the fields the lanes read are the misses here (not their
          // ids, which the lanes do not read: prefetching those instead of the masses and inertias
          // made the mixer's pair phase 5 % slower).
          if (k0 + 2 * kPairBlock < np)
            for (int l = 0; l < kPairBlock; ++l) {
              const index_t ahead = pairs_.j[k0 + kPairBlock + l];
              __builtin_prefetch(&pv.x[ahead]);
              __builtin_prefetch(&pv.v[ahead]);
              __builtin_prefetch(&pv.w[ahead]);
              __builtin_prefetch(&pv.inv_mass[ahead]);
              __builtin_prefetch(&pv.inv_inertia[ahead]);
              __builtin_prefetch(&pv.radius[ahead]);
              // the partner's sum, which the lanes' adds read and write (48 bytes: two lines where it
              // straddles): in one process the pair phase 1.12-1.14 as fast on the bed tiled to 1.28
              // million beads, 1.18 on the mixer, 1.01-1.03 on the small bed
              __builtin_prefetch(&sum[ahead], 1);
              __builtin_prefetch(reinterpret_cast<const char*>(&sum[ahead]) + sizeof(FixedLoad) - 1, 1);
            }
          // The springs two blocks on, where few candidates touch: the lanes then read a few springs
          // per block, too sparsely for the hardware's stream prefetch (the ribbon mixer, a quarter
          // touching: its pair phase 1.05-1.11 as fast); where most do (a settled bed, three
          // quarters) the hardware fetches them in time, and the prefetches cost 2.5 %.
          if (sparse_springs && k0 + 3 * kPairBlock < np) {
            const char* h0 = reinterpret_cast<const char*>(spring + k0 + 2 * kPairBlock);
            for (int b = 0; b < int(kPairBlock * sizeof(Vec3)); b += 64) __builtin_prefetch(h0 + b, 1);
          }
          alignas(64) std::int32_t overlap[kPairBlock];
          const std::int32_t* pu = pairs_.i.data() + k0;
          const std::int32_t* pw = pairs_.j.data() + k0;
          // pair_contact's cheap test. Without periodic axes the nearest image is the difference
          // itself: the test without its selects (the same bits; the mixer +3 %). With them the same
          // loop also takes B's image nearest to A for every lane (image_near's coordinates, the same
          // bits) instead of one pair at a time as its lane is filled, where its compares were
          // branches: the settled bed +5 % (2 threads, the machine's fast state; +2.5 % on one
          // thread, no change in the slow state).
          alignas(64) real image[3][kPairBlock];
          if (!periodic) {
      #pragma omp simd
            for (int l = 0; l < count; ++l)
              overlap[l] = spheres_overlap(pv.x[pu[l]], pv.radius[pu[l]], pv.x[pw[l]], pv.radius[pw[l]]);
          } else {
            const PeriodicBox& box = pv.periodic;
            alignas(64) std::int32_t flips[kPairBlock];  // (bytes and doubles in one loop do not vectorise)
            for (int l = 0; l < count; ++l) flips[l] = swapped[k0 + l];
      #pragma omp simd
            for (int l = 0; l < count; ++l) {
              overlap[l] = pair_overlaps(pv, pu[l], pw[l]);
              const index_t a = flips[l] ? pw[l] : pu[l], b = flips[l] ? pu[l] : pw[l];  // the roles, as below
              image[0][l] = image_coord_near_diff(pv.x[a].x - pv.x[b].x, pv.x[b].x, box.length.x, box.half.x);
              image[1][l] = image_coord_near_diff(pv.x[a].y - pv.x[b].y, pv.x[b].y, box.length.y, box.half.y);
              image[2][l] = image_coord_near_diff(pv.x[a].z - pv.x[b].z, pv.x[b].z, box.length.z, box.half.z);
            }
          }
          std::uint32_t todo = 0;
          for (int l = 0; l < count; ++l) todo |= std::uint32_t((overlap[l] != 0) | (touching_flag[k0 + l] != 0)) << l;
          while (todo != 0) {
            const int l = __builtin_ctz(todo);
            todo &= todo - 1;
            const std::int64_t k = k0 + l;
            if (!overlap[l]) {  // apart now, touching before: reset (most pairs stay apart: no store)
              spring[k] = Vec3{0, 0, 0};
              if (rolling != nullptr) rolling[k] = Vec3{0, 0, 0};
              touching_flag[k] = 0;
              continue;
            }
            const index_t u = pairs_.i[k], v = pairs_.j[k];
            // roles by id (A: the smaller one), from the build, without a branch (it mispredicted)
            const index_t flip = (u ^ v) & -static_cast<index_t>(swapped[k]);
            const index_t i = u ^ flip, j = v ^ flip;
            const ContactParams& prm = one_material ? uniform : tab(pv.material[i], pv.material[j]);
            const bool with_polyhedron = polyhedra && (pv.shape[i] >= 0 || pv.shape[j] >= 0);
            if (all_default || (is_default_law(prm) && !with_polyhedron)) {
              const Vec3 xj = periodic ? Vec3{image[0][l], image[1][l], image[2][l]} : pv.x[j];
              lanes.add(prm, k, i, j, xj, spring[k]);
              if (lanes.count == kPairLanes) store();
              continue;
            }
            ContactHistory h{spring[k], rolling != nullptr ? rolling[k] : Vec3{0, 0, 0}};
            PairLoad ld;
            bool t;
            if (with_polyhedron) {
              PolyPairLoad poly;
              t = touching_pair_contact<true, true>(pv, tab, u, v, h, ld, dt, &poly);
              deepest = std::numeric_limits<real>::infinity();  // (no bound for polyhedral pairs)
              my_planes.add(poly.plane);
              if (kept_point != nullptr) kept_point[k] = poly.point;
            } else {
              t = touching_pair_contact(pv, tab, u, v, h, ld, dt);
              if (t) deepest = std::max(deepest, pair_overlap_fraction<false>(pv, i, j));
            }
            if (t) {
              add_pair_load(ld, false, quantum, target_sum(i));
              add_pair_load(ld, true, quantum, target_sum(j));
              if (kept_force != nullptr) kept_force[k] = ld.force_on_a;
            }
            spring[k] = h.tangential;
            if (rolling != nullptr) rolling[k] = h.rolling;
            touching_flag[k] = t;
            touching += t && pair_in_contact(with_polyhedron, h.rolling) ? 1 : 0;  // (a flag: while the spheres overlap)
          }
        }
        if (lanes.count > 0) store();  // (before the next stripe, which adds to other sums)
      }
    }
#pragma omp critical(dem_plane_counts)
    planes.add(my_planes);
    // Both rounds are done (the loop's barrier): each thread adds the spills to its own range of
    // particles, from every thread's lists.
    for (int from = 0; from < threads; ++from) {
      for (const Spill& sp : spill_[from][thread]) add_fixed_load(sum[sp.target], sp.load);
      spilled += spill_[from][thread].size();
    }
  }
  touching_pairs_ = touching;
  pair_overlap_seen_ = deepest;
  stats_.pair_spills += spilled;
  stats_.pair_candidates += static_cast<std::uint64_t>(np);
  stats_.add_planes(planes);
  stats_.pair_contacts += touching;
}

}  // namespace dem::host
