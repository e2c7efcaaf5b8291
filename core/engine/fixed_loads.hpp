// Exact sums of the pair loads: each contact's force and torque are rounded to 64-bit integers in
// units of a quantum (a power of two of newtons, of newton metres), and a particle's integers are
// summed. Integer addition is exact and associative, so the sum is the same bits in any order: any
// thread count, any particle order, any split of the pairs between threads, either engine (the
// host adds each pair's loads to both particles once; the device adds them from each side of its
// full list). A floating-point sum is exact in no order, so an engine that sums in floating point
// must fix one order per particle and keep every term until its turn (the host engine kept a slot
// per pair side for that: 96 bytes a pair written and read back every step).
//
// The quantum is the price: a load is resolved to LoadQuantum's unit, about 2^-57 of the largest
// force a contact can carry in the scene (two spheres of the largest radius overlapping by a whole
// radius, under the stiffest law among the particles' materials; quanta_for, host::LoadSizing).
// The overlap check stops a run long before that (simulation.max_overlap, 0.3 of a radius by
// default), so the sums keep a factor of 64 in hand, and a term beyond eight times it is clamped.
// The per-step effect of the unit on a particle's position, unit / m dt^2, lies far below a
// double's resolution of the position itself (bench/results/dev-2core-epyc/fixed_loads.md gives
// the numbers for the scenes we ship).
// A particle's own mesh contacts are summed in double, in its slot order (a few, whatever the
// particle order); their loads on the bodies, sums over many particles, in integers (BodyLoadSum).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstddef>

#include "core/contact/material_mixing.hpp"
#include "core/math/vec3.hpp"

namespace dem {

// Units of the integer loads (powers of two, so that scaling by them is exact): a force of f
// newtons is the integer f * force_scale rounded to the nearest, worth force_unit = 1 /
// force_scale newtons; the same for torques.
struct LoadQuantum {
  real force_scale = 1, force_unit = 1;
  real torque_scale = 1, torque_unit = 1;
  // The body loads' (BodyLoadSum): sized for a mesh contact's force and its lever about the
  // body's centre (host::LoadSizing).
  real body_force_scale = 1, body_force_unit = 1;
  real body_torque_scale = 1, body_torque_unit = 1;
};

// A particle's pair loads as integers (the sum of their quanta).
struct FixedLoad {
  std::int64_t f[3] = {0, 0, 0};
  std::int64_t t[3] = {0, 0, 0};
};

// The largest term one load may put into a sum (|x| * scale beyond it is clamped): 2^60, eight
// times the largest load's units (quanta_for), so that a sum of up to seven clamped terms does
// not wrap either.
constexpr real kFixedClamp = real(1152921504606846976.0);  // 2^60

// The bits of a double as a 64-bit integer (an optimising compiler folds the copy into a register
// move, nvcc as GCC, and GCC vectorises it).
DEM_HD inline std::uint64_t bits_of(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// x in units of 1 / scale, rounded to the nearest (ties to even: symmetric, so -x gives exactly
// the negated integer); beyond +-2^60 clamped, NaN taken as +2^60 (a load no sound state gives:
// the overlap and speed checks stop such a run). Without a branch, a library call or a conversion
// instruction, so that it vectorises on the host with AVX2 as with AVX-512. Every step is exact
// (the two products are by powers of two), so the integer is the same on either engine, and the
// same whether or not a compiler fuses a product with its sum.
DEM_HD inline std::int64_t to_fixed(real x, real scale) {
  const double s = double(x) * double(scale);  // (in double whatever real is: a float's 24 bits cannot round below)
  // clamped, NaN to +2^60 (it fails both tests); one compare of |s| and one select (three compares
  // and three selects before: 4 vector instructions fewer a value on AVX2)
  const double limit = s < 0 ? -double(kFixedClamp) : double(kFixedClamp);
  const double y = std::fabs(s) < double(kFixedClamp) ? s : limit;
  // y = h 2^31 + l: h = y 2^-31 rounded to the nearest integer by the addition of 1.5 2^52 (a sum
  // in [2^52, 2^53) holds integers only, so the addition rounds, ties to even; |h| <= 2^29); l = y -
  // h 2^31, exact (Sterbenz), |l| <= 2^30, rounded by the same addition. h 2^31 is even, so
  // h 2^31 + round(l) is y rounded to the nearest integer, ties to even. A sum in [2^52, 2^53) is
  // 1.5 2^52 plus its rounded number, and its bits those of 1.5 2^52 plus that integer (mod 2^64,
  // for either sign): the integers are read off the sums' bits. No conversion
  // instruction: x86 below AVX-512 has no vector conversion of doubles to 64-bit integers, and a
  // cast made GCC's loops over many loads scalar, with a branch per select (the host's pair pass
  // 1.45 times slower on AVX2; bench/results/dev-2core-milan).
  constexpr double kMagic = 6755399441055744.0;  // 1.5 2^52
  const double t = y * (1 / 2147483648.0) + kMagic;
  const double h = t - kMagic;
  const double u = (y - h * 2147483648.0) + kMagic;
  const std::uint64_t magic = bits_of(kMagic);
  return static_cast<std::int64_t>(((bits_of(t) - magic) << 31) + (bits_of(u) - magic));
}

// a + b, wrapping instead of overflowing (defined for any terms; the clamp keeps sound sums far
// from it).
DEM_HD inline std::int64_t fixed_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// s += t, component by component.
DEM_HD inline void add_fixed_load(FixedLoad& s, const FixedLoad& t) {
  for (int c = 0; c < 3; ++c) {
    s.f[c] = fixed_add(s.f[c], t.f[c]);
    s.t[c] = fixed_add(s.t[c], t.t[c]);
  }
}

// Adds a pair's force (side B: -F) and torque on one of its particles, in quanta.
DEM_HD inline void add_fixed_load(FixedLoad& s, Vec3 force, Vec3 torque, const LoadQuantum& q) {
  s.f[0] = fixed_add(s.f[0], to_fixed(force.x, q.force_scale));
  s.f[1] = fixed_add(s.f[1], to_fixed(force.y, q.force_scale));
  s.f[2] = fixed_add(s.f[2], to_fixed(force.z, q.force_scale));
  s.t[0] = fixed_add(s.t[0], to_fixed(torque.x, q.torque_scale));
  s.t[1] = fixed_add(s.t[1], to_fixed(torque.y, q.torque_scale));
  s.t[2] = fixed_add(s.t[2], to_fixed(torque.z, q.torque_scale));
}

// A particle's total: its mesh loads (summed in double) plus its pair loads, converted back once.
DEM_HD inline void finish_load_sum(const FixedLoad& s, const LoadQuantum& q, Vec3 mesh_force, Vec3 mesh_torque,
                                   Vec3& force, Vec3& torque) {
  force = mesh_force + Vec3{real(s.f[0]) * q.force_unit, real(s.f[1]) * q.force_unit, real(s.f[2]) * q.force_unit};
  torque = mesh_torque +
           Vec3{real(s.t[0]) * q.torque_unit, real(s.t[1]) * q.torque_unit, real(s.t[2]) * q.torque_unit};
}

// The body loads: each mesh contact's force and torque on its body rounded to 64-bit integers in
// the body units (to_fixed: at most 2^60 each), summed over every contact of the body in a wide
// integer of two 64-bit words (value = hi 2^32 + lo: each term split at bit 32, each word summed
// on its own, so that 2^31 terms fit), which is exact and so the same bits in any order: any
// thread count, particle order or engine, and over any split of the particles between processes.
struct WideSum {
  std::int64_t hi = 0, lo = 0;
};
DEM_HD inline void wide_add(WideSum& s, std::int64_t term) {
  s.hi = fixed_add(s.hi, term >> 32);  // (an arithmetic shift: the floor of term / 2^32)
  s.lo = fixed_add(s.lo, term & std::int64_t(0xffffffff));
}
DEM_HD inline WideSum wide_sum(WideSum a, const WideSum& b) {
  a.hi = fixed_add(a.hi, b.hi);
  a.lo = fixed_add(a.lo, b.lo);
  return a;
}
// The sum in units of 1 / scale: lo's carry moved into hi (lo then in [0, 2^32)), so that hi 2^32
// is exact in a double while |hi| < 2^53 (a load below 2^28 times the largest contact force) and
// the one addition rounds once.
DEM_HD inline double wide_value(WideSum s, real unit) {
  const std::int64_t carry = s.lo >> 32;
  s.hi = fixed_add(s.hi, carry);
  s.lo -= carry * (std::int64_t(1) << 32);
  return (double(s.hi) * 4294967296.0 + double(s.lo)) * double(unit);
}

struct BodyLoadSum {
  WideSum f[3], t[3];
};
// One mesh contact's force and torque (about the body's centre) on its body, in the body units.
DEM_HD inline void add_body_load(BodyLoadSum& s, Vec3 force, Vec3 torque, const LoadQuantum& q) {
  wide_add(s.f[0], to_fixed(force.x, q.body_force_scale));
  wide_add(s.f[1], to_fixed(force.y, q.body_force_scale));
  wide_add(s.f[2], to_fixed(force.z, q.body_force_scale));
  wide_add(s.t[0], to_fixed(torque.x, q.body_torque_scale));
  wide_add(s.t[1], to_fixed(torque.y, q.body_torque_scale));
  wide_add(s.t[2], to_fixed(torque.z, q.body_torque_scale));
}
struct BodyLoadSumOp {  // (a reduction's operator)
  DEM_HD BodyLoadSum operator()(BodyLoadSum a, const BodyLoadSum& b) const {
    for (int c = 0; c < 3; ++c) {
      a.f[c] = wide_sum(a.f[c], b.f[c]);
      a.t[c] = wide_sum(a.t[c], b.t[c]);
    }
    return a;
  }
};
DEM_HD inline void body_load_value(const BodyLoadSum& s, const LoadQuantum& q, Vec3& force, Vec3& torque) {
  force = Vec3{real(wide_value(s.f[0], q.body_force_unit)), real(wide_value(s.f[1], q.body_force_unit)),
               real(wide_value(s.f[2], q.body_force_unit))};
  torque = Vec3{real(wide_value(s.t[0], q.body_torque_unit)), real(wide_value(s.t[1], q.body_torque_unit)),
                real(wide_value(s.t[2], q.body_torque_unit))};
}

// The largest pair force the law of one table entry gives two spheres of radius r overlapping by r
// (Hertz: 4/3 E* sqrt(R*) d^1.5 with R* = r / 2; the linear spring k_n d; the SJKR cohesion
// k_c 2 pi R* d), with Coulomb friction and the rolling friction on top: the bound the quanta are
// sized for (host::LoadSizing takes the largest over the pairs of the particles' materials). Its
// torque bound (times r, quanta_for) then holds a polyhedral contact's r |F| <= r (1 + mu) F_n
// plus its rolling torque mu_r R* F_n <= mu_r r F_n (core/engine/polyhedron_phases.hpp).
inline real pair_force_bound(const ContactParams& p, real r) {
  const real normal = real(4) / 3 * p.e_star * std::sqrt(r / 2) * r * std::sqrt(r) + p.k_n * r +
                      p.cohesion_energy_density * real(3.14159265358979323846) * r * r;
  return normal * (1 + p.friction + p.rolling_friction);
}

// A unit for a bound: the bound is 2^56 to 2^57 units. A power of two; 1 for a bound of zero.
inline real fixed_scale_for(real bound) {
  if (!(bound > 0)) return real(1);
  int e = 0;
  std::frexp(bound, &e);  // bound < 2^e
  return std::ldexp(real(1), 57 - e);
}

// The pair quanta for a force bound and a largest radius r: the bound is 2^56 to 2^57 units, so
// that sums of up to 64 such loads fit in the 2^63 range; the torque bound (the force bound times
// r) the same. Powers of two. A bound of zero (no law gives a force) gives unit quanta. The body
// units are left at 1 (quanta_for_bodies sets them).
inline LoadQuantum quanta_for(real force_bound, real r) {
  LoadQuantum q;
  q.force_scale = fixed_scale_for(force_bound);
  q.force_unit = 1 / q.force_scale;
  q.torque_scale = fixed_scale_for(force_bound * r);
  q.torque_unit = 1 / q.torque_scale;
  return q;
}

// q with the body units for a mesh contact's force bound and the longest lever about a body's
// centre (m): each bound 2^56 to 2^57 units, as the pairs'.
inline LoadQuantum quanta_for_bodies(LoadQuantum q, real force_bound, real lever) {
  q.body_force_scale = fixed_scale_for(force_bound);
  q.body_force_unit = 1 / q.body_force_scale;
  q.body_torque_scale = fixed_scale_for(force_bound * lever);
  q.body_torque_unit = 1 / q.body_torque_scale;
  return q;
}

}  // namespace dem
