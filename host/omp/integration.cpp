// Integration: each particle's force completed (mesh sum plus its pair loads' integer sum) and
// the central differences, in vector lanes of kStepLanes particles.
#include "host/omp/engine.hpp"


#include "host/omp/parallel.hpp"
#include "host/omp/simd.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

namespace {


// The integration of kStepLanes particles at once (Engine::gather_and_reduce): advance_particle, the
// function every path calls, in one vectorised loop over the lanes; a particle that turns more
// than the rotation series allow in one step (rare) is taken again on its own, with the same bits
// as any other path.
constexpr int kStepLanes = 16;  // (32 lanes measured slower on the settled bed)
struct StepLanes {
  alignas(64) real f[3][kStepLanes], t[3][kStepLanes];
  alignas(64) std::int32_t prescribed[kStepLanes];
  alignas(64) real x[3][kStepLanes], v[3][kStepLanes], w[3][kStepLanes], q[4][kStepLanes];
  alignas(64) std::int32_t done[kStepLanes];

  struct Lane {
    ParticleMotion s;
    bool done;
  };
  static Lane lane(Vec3 x, Vec3 v, Vec3 w, Quat q, Vec3 f, Vec3 t, real inv_mass, real inv_inertia, bool prescribed,
                   const PeriodicBox& periodic, Vec3 gravity, real dt) {
    ParticleMotion s{x, v, w, q};
    const bool done = advance_particle<true>(s, f, t, inv_mass, inv_inertia, prescribed, periodic, gravity, dt);
    return Lane{s, done};
  }

  // Particles i0 .. i0 + kStepLanes - 1, their forces in f and t.
  void run(const ParticleView& p, std::int64_t i0, Vec3 gravity, real dt) {
    const PeriodicBox periodic = p.periodic;
    // (component by component: a whole Vec3 copied from memory does not vectorise)
#pragma omp simd
    for (int l = 0; l < kStepLanes; ++l) {
      const std::int64_t i = i0 + l;
      const Lane r = lane(Vec3{p.x[i].x, p.x[i].y, p.x[i].z}, Vec3{p.v[i].x, p.v[i].y, p.v[i].z},
                          Vec3{p.w[i].x, p.w[i].y, p.w[i].z}, Quat{p.q[i].w, p.q[i].x, p.q[i].y, p.q[i].z},
                          Vec3{f[0][l], f[1][l], f[2][l]}, Vec3{t[0][l], t[1][l], t[2][l]}, p.inv_mass[i],
                          p.inv_inertia[i], prescribed[l] != 0, periodic, gravity, dt);
      x[0][l] = r.s.x.x, x[1][l] = r.s.x.y, x[2][l] = r.s.x.z;
      v[0][l] = r.s.v.x, v[1][l] = r.s.v.y, v[2][l] = r.s.v.z;
      w[0][l] = r.s.w.x, w[1][l] = r.s.w.y, w[2][l] = r.s.w.z;
      q[0][l] = r.s.q.w, q[1][l] = r.s.q.x, q[2][l] = r.s.q.y, q[3][l] = r.s.q.z;
      done[l] = r.done;
    }
#ifdef DEM_LANE_SHUFFLES
    static_assert(kStepLanes % 8 == 0, "the write-back interleaves 8 lanes at a time");
    int all_done = 1;
    for (int l = 0; l < kStepLanes; ++l) all_done &= done[l];
    if (all_done) {  // (the usual case)
      for (int h = 0; h < kStepLanes; h += 8) {
        interleave3(x[0] + h, x[1] + h, x[2] + h, &p.x[i0 + h].x);
        interleave3(v[0] + h, v[1] + h, v[2] + h, &p.v[i0 + h].x);
        interleave3(w[0] + h, w[1] + h, w[2] + h, &p.w[i0 + h].x);
        interleave4(q[0] + h, q[1] + h, q[2] + h, q[3] + h, &p.q[i0 + h].w);
      }
      return;
    }
#endif
    for (int l = 0; l < kStepLanes; ++l) {
      const index_t i = static_cast<index_t>(i0 + l);
      if (done[l]) {
        p.x[i] = Vec3{x[0][l], x[1][l], x[2][l]};
        p.v[i] = Vec3{v[0][l], v[1][l], v[2][l]};
        p.w[i] = Vec3{w[0][l], w[1][l], w[2][l]};
        p.q[i] = Quat{q[0][l], q[1][l], q[2][l], q[3][l]};
      } else {  // a large turn: the general step, from the state still in memory
        finish_particle(p, i, Vec3{f[0][l], f[1][l], f[2][l]}, Vec3{t[0][l], t[1][l], t[2][l]}, gravity, dt, true);
      }
    }
  }
};

}  // namespace

// Particle i's force and torque: its mesh sum plus its pair loads' integer sum, which is then set
// back to zero for the next pass.
struct LoadSums {
  const Vec3* mf;  // per block
  const Vec3* mt;
  const std::int32_t* block;
  FixedLoad* sum;
  LoadQuantum quantum;
  void operator()(std::int64_t i, Vec3& f, Vec3& t) const {
    const std::int32_t b = block[i];
    finish_load_sum(sum[i], quantum, b >= 0 ? mf[b] : Vec3{0, 0, 0}, b >= 0 ? mt[b] : Vec3{0, 0, 0}, f, t);
    sum[i] = FixedLoad{};
  }
};

void Engine::gather_and_reduce(bool and_integrate) {
  ScopedTimer timer(times_.gather);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const real dt = settings_.dt;
  const Vec3 gravity = settings_.gravity;
  const ParticleView pv = pview();
  ensure_pair_sums();
  const LoadSums sums{slots_.particle_force.data(), slots_.particle_torque.data(), slots_.block.data(), pair_sum_.data(), quantum_};
  // Particles in groups of kStepLanes: each one's forces are summed, then the group is advanced
  // in one vectorised step (the last, partial group one by one).
  const std::int64_t groups = (n + kStepLanes - 1) / kStepLanes;
  const bool polyhedra = has_polyhedra();  // (a group with a polyhedron: one particle at a time)
  // A plain OpenMP loop rather than parallel_for: GCC does not inline this body into the outlined
  // loop of the template, which measured 8-15 % slower here (the hottest per-particle pass).
#pragma omp parallel for schedule(dynamic, 64) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t g = 0; g < groups; ++g) {
    StepLanes lanes;
    const std::int64_t i0 = g * kStepLanes;
    const int count = static_cast<int>(std::min<std::int64_t>(kStepLanes, n - i0));
    bool scalar = count < kStepLanes || !and_integrate;
    if (polyhedra)
      for (int l = 0; l < count; ++l) scalar |= pv.shape[i0 + l] >= 0;
    for (int l = 0; l < count; ++l) {
      const std::int64_t i = i0 + l;
      Vec3 f, t;
      sums(i, f, t);
      // the particle's forces are complete: it is advanced in the same pass
      if (scalar) {
        finish_particle(pv, static_cast<index_t>(i), f, t, gravity, dt, and_integrate);
        continue;
      }
      pv.force[i] = f, pv.torque[i] = t;
      lanes.f[0][l] = f.x, lanes.f[1][l] = f.y, lanes.f[2][l] = f.z;
      lanes.t[0][l] = t.x, lanes.t[1][l] = t.y, lanes.t[2][l] = t.z;
      lanes.prescribed[l] = pv.prescribed[i];
    }
    if (!scalar) lanes.run(pv, i0, gravity, dt);
  }
}

}  // namespace dem::host
