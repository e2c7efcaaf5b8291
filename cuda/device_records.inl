// The small records and functors the device engine's reductions and launches use: each exact in
// any order (integer sums, min/max), so one reduction can carry several results in one wait.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// The per-step skin tests in one reduction, so one wait for the device: how many particles have
// moved past their half skins and the largest excess over one (the check of a kept pair list
// needs both), how many are past their mesh skins (update_mesh_candidates), and the last pair
// pass's touching pairs, counted from both sides (fold_touching).
struct PastSkins {
  std::int64_t past;
  real excess;
  std::int64_t mesh_past;
  std::int64_t touching;
};
struct PastSkinsSum {
  DEM_HD PastSkins operator()(const PastSkins& a, const PastSkins& b) const {
    return PastSkins{a.past + b.past, dem_max(a.excess, b.excess), a.mesh_past + b.mesh_past, a.touching + b.touching};
  }
};

// Whether particle i may have met an element its mesh candidate list leaves out since the list
// was made (core mesh_skin_used): the per-step count, the fused skin tests and mesh_lists_hold.
struct MeshSkinUsed {
  const Vec3* x;
  const Vec3* x0;   // positions at the renewal
  const real* skin;
  PeriodicBox pb;
  real travel;
  DEM_HD bool operator()(std::int64_t i) const { return mesh_skin_used(moved2(pb, x[i], x0[i]), skin[i], travel); }
};

struct Box {
  Vec3 lo, hi;
};
struct BoxUnion {
  DEM_HD Box operator()(const Box& a, const Box& b) const {
    return Box{Vec3{dem_min(a.lo.x, b.lo.x), dem_min(a.lo.y, b.lo.y), dem_min(a.lo.z, b.lo.z)},
               Vec3{dem_max(a.hi.x, b.hi.x), dem_max(a.hi.y, b.hi.y), dem_max(a.hi.z, b.hi.z)}};
  }
};
inline Box empty_box() {
  const real inf = std::numeric_limits<real>::infinity();
  return Box{Vec3{inf, inf, inf}, Vec3{-inf, -inf, -inf}};
}
// Two results of one reduction (one wait for the device instead of two), each exact in any order.
struct BoxAndReach {  // the particles' box and their largest reach (rebuild)
  Box box;
  real reach;
};
struct BoxAndReachUnion {
  DEM_HD BoxAndReach operator()(const BoxAndReach& a, const BoxAndReach& b) const {
    return BoxAndReach{BoxUnion{}(a.box, b.box), dem_max(a.reach, b.reach)};
  }
};
struct TwoBoxes {  // the particles' box and the elements' (update_mesh_candidates)
  Box a, b;
};
// The elements in the intersection domain, their bins' bound and their bins for the first bin
// size tried (update_mesh_candidates), in one reduction.
struct DomainCounts {
  std::int64_t elements, bound, bins;
};
struct DomainCountsSum {
  DEM_HD DomainCounts operator()(const DomainCounts& p, const DomainCounts& q) const {
    return DomainCounts{p.elements + q.elements, p.bound + q.bound, p.bins + q.bins};
  }
};
// The mesh candidate lists' total, the particles that have any (their slot blocks) and those
// particles' used slots, in one.
struct ListSizes {
  std::int64_t candidates, blocks, slots;
};
struct ListSizesSum {
  DEM_HD ListSizes operator()(const ListSizes& p, const ListSizes& q) const {
    return ListSizes{p.candidates + q.candidates, p.blocks + q.blocks, p.slots + q.slots};
  }
};
struct TwoBoxesUnion {
  DEM_HD TwoBoxes operator()(const TwoBoxes& p, const TwoBoxes& q) const {
    return TwoBoxes{BoxUnion{}(p.a, q.a), BoxUnion{}(p.b, q.b)};
  }
};

// Body frames written to the device through a kernel's parameters, kFramesPerLaunch at a time: a
// copy from the host would make the host wait for all the work queued before it (Thrust
// synchronises the stream after such a copy), once a step wherever a body moves.
constexpr std::size_t kFramesPerLaunch = 16;  // 1,664 bytes of parameters (a kernel takes 4 KB)
struct WriteFrames {
  BodyFrame frame[kFramesPerLaunch];
  BodyFrame* out;
  DEM_HD void operator()(std::int64_t k) const { out[k] = frame[k]; }
};

// A re-sort's gathers, a few per-particle arrays at a time (DeviceEngine::resort): each array as
// bytes, with its column in the field scratch. With `order`, entry order[i] of each array into
// entry i of its column; without, the columns back into the arrays. Entries are copied in the
// widest words their size allows (the arrays and columns are aligned to 8 bytes; an array written
// so is read as its own type only by later launches).
constexpr int kResortColumns = 5;
struct ResortColumn {
  char* data;
  char* column;
  std::int32_t size;  // bytes an entry
};
DEM_HD inline void copy_entry(char* to, const char* from, std::int32_t size) {
  if (size % 8 == 0) {
    for (std::int32_t w = 0; w < size / 8; ++w)
      reinterpret_cast<std::uint64_t*>(to)[w] = reinterpret_cast<const std::uint64_t*>(from)[w];
  } else if (size % 4 == 0) {
    for (std::int32_t w = 0; w < size / 4; ++w)
      reinterpret_cast<std::uint32_t*>(to)[w] = reinterpret_cast<const std::uint32_t*>(from)[w];
  } else {
    for (std::int32_t b = 0; b < size; ++b) to[b] = from[b];
  }
}
struct ResortColumns {
  const std::int32_t* order;  // nullptr: the columns back
  ResortColumn c[kResortColumns];
  int count;
  DEM_HD void operator()(std::int64_t i) const {
    for (int k = 0; k < kResortColumns; ++k) {  // (a fixed count: the columns' records stay in registers)
      if (k >= count) break;
      const std::int64_t size = c[k].size;
      if (order != nullptr) copy_entry(c[k].column + i * size, c[k].data + std::int64_t(order[i]) * size, c[k].size);
      else copy_entry(c[k].data + i * size, c[k].column + i * size, c[k].size);
    }
  }
};

// Whether a run ahead's gate (RunAheadTally::open) is closed: the passes of the steps queued
// after it change nothing. nullptr: no run ahead, every pass runs.
DEM_HD inline bool gate_closed(const std::int32_t* gate) { return gate != nullptr && *gate == 0; }

constexpr std::int64_t kNoId = 0x7fffffffffffffff;  // "no particle" in id reductions (INT64_MAX)

// Per-step mesh statistics of all particles, reduced exactly: integer sums, and the overflowing
// particle with the smallest id.
struct MeshStepStats {
  std::uint64_t potential, in_contact, valid, compactions, slots;
  std::int64_t overflow_id;  // INT64_MAX: none
  std::uint32_t overflow_count;
};
struct MeshStepStatsSum {
  DEM_HD MeshStepStats operator()(const MeshStepStats& a, const MeshStepStats& b) const {
    const bool first = a.overflow_id <= b.overflow_id;
    return MeshStepStats{a.potential + b.potential, a.in_contact + b.in_contact, a.valid + b.valid,
                         a.compactions + b.compactions, a.slots + b.slots, first ? a.overflow_id : b.overflow_id,
                         first ? a.overflow_count : b.overflow_count};
  }
};

// The unhealthy particle with the smallest id (kNoId: none), reduced exactly in any order.
struct HealthFinding {
  std::int64_t id;
  std::int32_t index;
  std::int32_t problem;
};
struct FirstFinding {
  DEM_HD HealthFinding operator()(const HealthFinding& a, const HealthFinding& b) const { return a.id <= b.id ? a : b; }
};

// The fastest particle's speed squared ((m/s)^2) and the largest coordinate of a position (m).
struct SpeedAndReach {
  real speed2, reach;
};
struct SpeedAndReachMax {
  DEM_HD SpeedAndReach operator()(SpeedAndReach a, SpeedAndReach b) const {
    return SpeedAndReach{a.speed2 < b.speed2 ? b.speed2 : a.speed2, a.reach < b.reach ? b.reach : a.reach};
  }
};

// The checks of a state (launch_state_checks) in two reductions: first what the particles' states
// give (the skin tests, and the fastest speed for the health check's bound), then the findings of
// the checks that read those (the health examination and the kept lists' checks), with the last
// mesh pass's sums where they wait (its blocks' records).
struct StateTests {
  PastSkins skins;
  SpeedAndReach moving;  // the health check's, for its pairs' bound (pair_overlap_bound)
};
struct StateTestsOp {
  DEM_HD StateTests operator()(const StateTests& a, const StateTests& b) const {
    return StateTests{PastSkinsSum{}(a.skins, b.skins), SpeedAndReachMax{}(a.moving, b.moving)};
  }
};
struct StepFindings {
  HealthFinding health;  // check_health's
  MeshStepStats mesh;    // the last mesh pass's (mesh_forces, apply_mesh_readback)
  std::int32_t list_broken;  // the kept pair list's check: 1 where a particle past its skin touches one its row lacks
  std::int32_t mesh_broken;  // the kept mesh lists' check: 1 where a particle past its mesh skin meets one its list lacks
};
struct StepFindingsOp {
  DEM_HD StepFindings operator()(const StepFindings& a, const StepFindings& b) const {
    return StepFindings{FirstFinding{}(a.health, b.health), MeshStepStatsSum{}(a.mesh, b.mesh),
                        a.list_broken > b.list_broken ? a.list_broken : b.list_broken,
                        a.mesh_broken > b.mesh_broken ? a.mesh_broken : b.mesh_broken};
  }
};
// What the host reads back from the device, one record, each copy of it a wait: the skin tests
// with the kept lists' checks (rebuild_if_needed), which also bring back the last mesh pass's sums
// and its count of particles touching a mesh where they still wait (mesh_forces leaves them on the
// device: apply_mesh_readback), and check_health's finding, likewise.
struct StepReadback {
  StateTests tests;
  StepFindings found;
  PlaneCounts planes;  // a run ahead's step: its pair pass's common planes (polyhedra)
};

// A run ahead's record on the device (cuda/run_ahead.inl): whether its steps still run (`open`,
// the gate every pass of a queued step reads), why it closed, and what the host learns from the
// steps that ran once it reads the record back: the sums the plain step's copies would have
// folded step by step (touching pairs, kept lists, the mesh passes' counts) and what the last
// step left (its touching count, its count past the mesh skins, its mesh contacts, a full block's
// first particle and the step of it, the health finding).
enum RunAheadStop : std::int32_t {
  kRunAheadOpen = 0,    // every queued step ran
  kRunAheadSkins = 1,   // a step found a list that no longer holds: it did not run (a rebuild or a renewal is due)
  kRunAheadChecks = 2,  // a step ran and its health check failed, or its mesh pass filled a block
};
struct RunAheadTally {
  std::int32_t open, stop;
  std::int64_t ran;             // steps that ran
  std::int32_t folded;          // 1 once a step folded the pass before it (last_touching)
  std::int64_t last_touching;   // that pass's touching pairs, from both sides
  std::uint64_t pair_contacts;  // ContactStats's, over the folded passes
  std::uint64_t lists_kept, mesh_lists_kept;
  std::int64_t last_mesh_past;  // the last step's particles past their mesh skins
  MeshStepStats mesh;           // summed; slots: the last pass's; overflow: the first
  std::int64_t overflow_step;   // that overflow's step, counted from the run ahead's first (-1: the step before it)
  HealthFinding health;         // the last step's check
  PlaneCounts planes;           // the pair passes' common planes (polyhedra), summed
  // the skin tests of the step that closed it (kRunAheadSkins), which that step then takes
  PastSkins closing_skins;
  std::int32_t closing_list_broken, closing_mesh_broken;
};
// What the host may look at while the steps run (RunAheadSignal): the gate and the steps decided.
struct RunAheadMirror {
  std::int32_t open;
  std::int64_t ran;
};

// The coarse-grained fields' running sums on the device and a sample's working buffers
// (cuda/field_sums.inl).
struct DeviceFieldSums {
  host::FieldSampling sampling;
  bool started = false;
  dvec<CgCellSums> cells;                           // the running sums per cell
  std::map<std::int32_t, dvec<double>> tag_volume;  // per tag, its volume per cell (per_tag)
  dvec<CgStress> contact;                           // the contact stress's sums per cell (contact_stress)
  double mass = 0;                                  // kg, over the samples
  std::uint32_t samples = 0, contact_samples = 0;
  // a sample's: the counted particles in id order, their terms and tags; the points' weights;
  // the contact pieces, their points and terms; a chunk's entries
  dvec<std::int32_t> order, first, cells_of, entry_cell, entry_order, cell_start, tag_of;
  dvec<std::int64_t> ids, fail, count, offsets, piece_start, point_start, piece_of, tag_list;
  dvec<std::uint32_t> entry_at;
  dvec<double> weight, block_mass;
  dvec<CgParticleTerms> terms;
  dvec<Vec3> piece_x, piece_arm, piece_force;
  dvec<CgStress> stress_terms;
};

// An entry's weight in its cell, the host's product (w_z w_y) w_x, and its point j.
struct CgEntryWeight {
  const std::int32_t* entry_order;  // the sorted entries' places in the fill
  const std::uint32_t* at;          // per filled entry: its point in the chunk; its axes' places
  const double* weight;             // per point and axis, span weights
  std::int64_t j0;                  // the chunk's first point
  std::int32_t span;
  DEM_HD double operator()(std::int64_t e, std::int64_t& j) const {
    const std::int64_t k = entry_order[e];
    j = j0 + at[2 * k];
    const std::uint32_t abd = at[2 * k + 1];
    const std::int64_t sp = span;
    const double wzy = weight[(3 * j + 2) * sp + (abd & 63u)] * weight[(3 * j + 1) * sp + ((abd >> 6) & 63u)];
    return wzy * weight[(3 * j) * sp + ((abd >> 12) & 63u)];
  }
};



// Per-particle state on the device: one buffer per field of DEM_PARTICLE_FIELDS.
struct DeviceParticles {
#define DEM_DEVICE_FIELD(T, name) dvec<T> name;
  DEM_PARTICLE_FIELDS(DEM_DEVICE_FIELD)
#undef DEM_DEVICE_FIELD
  ParticleView view(index_t n) {
    ParticleView out;
#define DEM_DEVICE_VIEW(T, name) out.name = raw(name);
    DEM_PARTICLE_FIELDS(DEM_DEVICE_VIEW)
#undef DEM_DEVICE_VIEW
    out.n = n;
    return out;
  }
};

// Visits the partners of particle i in the 27 cells around its own, each once (hashed keys of
// distinct cells can coincide, and so can wrapped cells of a period of fewer than three cells: a
// key is visited only at its first occurrence), calling emit(j) for every j != i with
// |x_i - x_j| < reach_i + reach_j (nearest images on periodic axes).
struct CellNeighbours {
  GridKeys gk;
  const Vec3* x;
  const real* reach;
  const std::int32_t* start;  // cell ranges of the sorted particles: [start[key], end[key])
  const std::int32_t* end;
  PeriodicBox periodic;
  template <class Emit>
  DEM_HD void operator()(std::int64_t i, Emit&& emit) const {
    around(x[i], [&](std::int32_t j) {
      if (j == i) return;
      const real r = reach[i] + reach[j];
      if (norm2(nearest_image(periodic, x[i] - x[j])) < r * r) emit(j);
    });
  }
  // each(j) for every sorted particle j of the (distinct) cells within `span` (at most kMaxSpan)
  // cells of the cell of point p: the 27 around it by default
  template <int kMaxSpan = 1, class Each>
  DEM_HD void around(Vec3 p, Each&& each, int span = 1) const {
    const Int3 c = home_cell(p, gk.grid);
    std::uint32_t seen[(2 * kMaxSpan + 1) * (2 * kMaxSpan + 1) * (2 * kMaxSpan + 1)];
    int n_seen = 0;
    for (int dz = -span; dz <= span; ++dz)
      for (int dy = -span; dy <= span; ++dy)
        for (int dx = -span; dx <= span; ++dx) {
          const Int3 cc = wrap_cell(Int3{c.x + dx, c.y + dy, c.z + dz}, gk.grid);
          if (gk.bounded && (cc.x < 0 || cc.y < 0 || cc.z < 0 || cc.x >= gk.grid.dims.x || cc.y >= gk.grid.dims.y ||
                             cc.z >= gk.grid.dims.z))
            continue;
          const std::uint32_t key = gk.key(cc);
          bool dup = false;
          for (int s = 0; s < n_seen; ++s) dup = dup || seen[s] == key;
          if (dup) continue;
          seen[n_seen++] = key;
          for (std::int32_t j = start[key]; j < end[key]; ++j) each(j);
        }
  }
};

// The mesh candidates of particle i (santasusana2016 Sect. 3.1 e-f): the bins its box (radius +
// skin) overlaps inside the domain; each element once (from the first bin of the overlap of the
// two boxes); emit(e) for those the sphere grown by the skin meets (Fast Intersection Test).
struct MeshCandidateQuery {
  MeshView mv;
  Box dom;                     // the intersection domain
  CellGrid g;                  // bounded bins over it
  const std::int32_t* bstart;  // bin ranges of bel
  const std::int32_t* bel;     // elements by bin
  const Vec3* elo;             // element boxes
  const Vec3* ehi;
  const Vec3* x;
  const real* radius;
  const real* skin;            // per particle: the mesh skin
  PeriodicBox periodic;
  // Particle i and, near a periodic face, its images across it (core near_face_images): an element
  // met from several images is emitted from the first only.
  template <class Emit>
  DEM_HD void operator()(std::int64_t i, Emit&& emit) const {
    const real r = radius[i] + skin[i];
    Vec3 at[8];
    const int images = near_face_images(periodic, x[i], r, at);
    for (int k = 0; k < images; ++k)
      search(at, k, r, [&](std::int32_t e) {
        for (int m = 0; m < k; ++m)
          if (fast_intersection_test(mv.polygon(static_cast<index_t>(e)), mv.normals[e], at[m], r)) return;
        emit(e);
      });
  }
  template <class Emit>
  DEM_HD void search(const Vec3* at, int k, real r, Emit&& emit) const {
    const Vec3 c = at[k];
    Vec3 lo{c.x - r, c.y - r, c.z - r}, hi{c.x + r, c.y + r, c.z + r};
    if (lo.x > dom.hi.x || hi.x < dom.lo.x || lo.y > dom.hi.y || hi.y < dom.lo.y || lo.z > dom.hi.z || hi.z < dom.lo.z)
      return;
    lo = Vec3{dem_max(lo.x, dom.lo.x), dem_max(lo.y, dom.lo.y), dem_max(lo.z, dom.lo.z)};
    hi = Vec3{dem_min(hi.x, dom.hi.x), dem_min(hi.y, dom.hi.y), dem_min(hi.z, dom.hi.z)};
    const Int3 c0 = cell_coords(lo, g), c1 = cell_coords(hi, g);
    for (int z = c0.z; z <= c1.z; ++z)
      for (int y = c0.y; y <= c1.y; ++y)
        for (int xx = c0.x; xx <= c1.x; ++xx) {
          const std::uint32_t key = cell_key(Int3{xx, y, z}, g);
          for (std::int32_t s = bstart[key]; s < bstart[key + 1]; ++s) {
            const std::int32_t e = bel[s];
            if (!(elo[e].x <= hi.x && ehi[e].x >= lo.x && elo[e].y <= hi.y && ehi[e].y >= lo.y && elo[e].z <= hi.z &&
                  ehi[e].z >= lo.z))
              continue;
            const Vec3 first{dem_max(lo.x, elo[e].x), dem_max(lo.y, elo[e].y), dem_max(lo.z, elo[e].z)};
            const Int3 fc = cell_coords(first, g);
            if (fc.x != xx || fc.y != y || fc.z != z) continue;
            if (fast_intersection_test(mv.polygon(static_cast<index_t>(e)), mv.normals[e], c, r)) emit(e);
          }
        }
  }
};

// The kept pair list's check of particle i (DeviceEngine::kept_pair_list_check): 1 where i, past
// its half skin, touches a particle its row lacks, or its search would reach past the cells
// around it; 0 at once where it is not past its skin, or where none or too many are (the step's
// skin tests in rb->tests.skins, read on the device: a rebuild is due then anyway). The host
// engine's Engine::list_holds (host/omp/pair_list.cpp gives the reasoning): a particle p past its
// skin looks for partners touching it now without a pair among the particles the last build put
// in the cells around it: those within (r_p + E) + reach_j of it (E: the largest excess over a
// skin), which the 27 cells of size 2 max_reach hold while r_p + E < max_reach, the 125 while
// r_p + E < 3 max_reach (beyond, the list ends), or the HGrid's cells (HGridView::visit_cells).
struct KeptPairListCheck {
  const StepReadback* rb;
  std::int64_t n;
  ParticleView pv;
  const Vec3* x0;  // positions at the build
  const real* s2;  // half skins squared
  PeriodicBox pb;
  real max_reach;
  CellNeighbours cells;  // the last build's grid, over x0
  bool h_on;
  HGridView hv;  // the last build's HGrid
  const std::int64_t* off;
  const std::int32_t* nbr;
  const std::uint8_t* ghost;  // under MPI: the pairs of two ghosts are not in the list (none is missing)
  DEM_HD int operator()(std::int64_t i) const {
    const PastSkins& skins = rb->tests.skins;
    if (skins.past == 0 || !few_past_skins(skins.past, n)) return 0;
    const Vec3 xi = pv.x[i];
    if (!(moved2(pb, xi, x0[i]) > s2[i])) return 0;
    const real rho = kept_list_search_radius(pv.radius[i], skins.excess);
    int bad = 0;
    const auto check = [&](std::int64_t j) {  // touching now, and no pair in i's row
      if (j == i || bad || (ghost != nullptr && ghost[i] && ghost[j]) ||
          !pair_overlaps(pv, static_cast<index_t>(i), static_cast<index_t>(j)))
        return;
      bool listed = false;  // (rows are short: a scan of the partners' indices)
      for (std::int64_t k = off[i]; k < off[i + 1] && !listed; ++k) listed = nbr[k] == j;
      if (!listed) bad = 1;
    };
    if (h_on) {
      hv.visit_cells(xi, rho, hv.g.count - 1, [&](std::int32_t k, int level, Int3 q) {
        if (hv.el[k] == level && hv.ec[k].x == q.x && hv.ec[k].y == q.y && hv.ec[k].z == q.z) check(k);
      });
      return bad;
    }
    // cells of 2 max_reach: partners within rho + max_reach lie within `span` cells
    const real span = std::floor((rho + max_reach) / (2 * max_reach)) + 1;
    if (!(span <= 2)) return 1;  // beyond 5 x 5 x 5 cells
    cells.around<2>(xi, check, static_cast<int>(span));
    return bad;
  }
};

// The kept mesh lists' check of particle i (DeviceEngine::kept_mesh_lists_check): the host
// engine's Engine::mesh_lists_hold (host/omp/mesh_lists.cpp gives the reasoning). Where i is past
// its mesh skin (the skin grown by `travel`, the next mesh pass's), it searches the last renewal's
// bins for elements within r + travel of it (those the sphere so grown meets now) and finds each
// one it meets now in its list: 1 where one is missing, or where the search would reach beyond
// the particles' box grown by what the bins hold. With rb, 0 at once where the step's count past
// the mesh skins (rb->tests.skins.mesh_past) is 0 or too many (the lists are renewed then);
// without, the caller has checked the count.
struct KeptMeshListsCheck {
  const StepReadback* rb;
  std::int64_t n;
  MeshSkinUsed used;
  MeshView mv;  // the meshes as the next mesh pass meets them
  Box held;
  bool bins;  // whether the bins hold elements
  MeshCandidateQuery query;
  const std::int64_t* coff;
  const std::int32_t* cand;
  real travel;
  DEM_HD int operator()(std::int64_t i) const {
    if (rb != nullptr && (rb->tests.skins.mesh_past == 0 || !few_past_skins(rb->tests.skins.mesh_past, n))) return 0;
    const Vec3 c = query.x[i];
    if (!used(i)) return 0;
    const real r = query.radius[i], reach = kept_list_search_radius(r, travel);
    if (!(c.x - reach >= held.lo.x && c.y - reach >= held.lo.y && c.z - reach >= held.lo.z && c.x + reach <= held.hi.x &&
          c.y + reach <= held.hi.y && c.z + reach <= held.hi.z))
      return 1;  // beyond what the bins hold
    if (!bins) return 0;  // no element within reach of any particle's box
    int bad = 0;
    query.search(&c, 0, reach, [&](std::int32_t e) {  // (i's list is by element)
      if (!sorted_contains(cand + coff[i], cand + coff[i + 1], e) && element_meets_sphere(mv, e, c, r)) bad = 1;
    });
    return bad;
  }
};

// Both kept lists' checks of particle i in one pass (launch_state_checks): bit 0 the pair list's,
// bit 1 the mesh lists'. Nothing where a run ahead's gate is closed.
struct KeptListChecks {
  KeptPairListCheck pairs;
  KeptMeshListsCheck mesh;
  bool with_pairs, with_mesh;
  const std::int32_t* gate;
  DEM_HD std::int64_t operator()(std::int64_t i) const {
    if (gate_closed(gate)) return 0;
    std::int64_t bits = 0;
    if (with_pairs && pairs(i) != 0) bits |= 1;
    if (with_mesh && mesh(i) != 0) bits |= 2;
    return bits;
  }
};

}  // namespace dem::device::DEM_DEVICE_NS
