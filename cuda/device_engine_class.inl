// The device engine's class: its state on the device, the phase timer, construction and the mesh view.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

std::string describe_device();  // defined per system

// Phase times that never make the host wait for the device (defined per system). On the OpenMP
// system every algorithm has finished when it returns, so a phase's time is the wall clock around
// it. On CUDA the kernels run behind the host (par_nosync); the end of each phase used to wait for
// them (four times a step, each wait leaving the device idle while the host queued the next
// kernels). There a phase is timed by two events recorded on the stream around its kernels and
// read once they have passed: when the times are asked for (settle), or when many are pending.
class PhaseClock {
 public:
  PhaseClock();
  ~PhaseClock();
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  // A CUDA error in start or settle throws; stop runs in a timer's destructor, also while an
  // exception unwinds the phase, so it never throws: its error is kept, and the next start or
  // settle throws it (the phase's own error, if any, is the one that reaches the caller first).
  std::int64_t start();                                // a mark at a phase's start
  void stop(std::int64_t mark, double& sink) noexcept;  // sink += seconds since the mark (now, or once read)
  void settle();                                       // every pending time added to its sink

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A run ahead's gate and count of steps decided (RunAheadMirror), where the host can look without
// waiting for the device (defined per system): on CUDA in mapped host memory the steps' kernels
// write to; on the OpenMP system in host memory, written before the launch that writes it returns.
class RunAheadSignal {
 public:
  RunAheadSignal();
  ~RunAheadSignal();
  RunAheadSignal(const RunAheadSignal&) = delete;
  RunAheadSignal& operator=(const RunAheadSignal&) = delete;
  RunAheadMirror* device() const;  // where the kernels write it
  RunAheadMirror peek() const;     // as the host sees it now
  // Peeks until the gate is closed or at least `ran` steps are decided, or the device has
  // finished all it was given (then as it left it); throws the device's error, if any.
  RunAheadMirror wait_for(std::int64_t ran) const;
  void reset();  // open, none decided: only while no queued kernel writes it

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class DeviceEngine final : public host::Simulation {
 public:
  DeviceEngine(host::ParticleArrays particles, host::MeshSet meshes, std::vector<ContactParams> params,
               int num_materials, host::EngineSettings settings);

  void step() override;
  void compute_forces() override;
  double time() const override { return time_; }
  std::uint64_t step_count() const override { return steps_; }
  const host::ParticleArrays& particles() const override;
  std::size_t num_particles() const override { return n_; }
  const host::MeshSet& meshes() const override;
  const std::vector<PolyShape>& shapes() const override { return settings_.shapes; }
  const std::vector<Vec3>& body_force() const override;
  const std::vector<Vec3>& body_torque() const override;
  const host::ContactStats& stats() const override {
    fold_touching(-1);
    fold_planes();
    fold_mesh();
    return stats_;
  }
  const host::PhaseTimes& phase_times() const override {
    clock_.settle();
    return times_;
  }
  const host::EngineStatus& status() const override {
    fold_mesh();  // (a full block of mesh contacts stops the run)
    return status_;
  }
  bool check_health(const HealthLimits& limits) override;
  Advanced advance(std::uint64_t steps, const HealthLimits& limits) override;  // (cuda/run_ahead.inl)
  void export_state(host::ParticleArrays& particles, host::ContactState& contacts) const override;
  void restore_state(const host::ContactState& contacts, std::uint64_t step) override;
  void keep_contact_forces(bool on) override { keep_contacts_ = on; }
  bool export_contact_forces(host::ContactForces& out) const override;
  void set_stats(const host::ContactStats& s) override {
    fold_touching(-1);
    fold_planes();
    fold_mesh();
    stats_ = s;
  }
  void set_body_motion(std::size_t body, const MeshBodyMotion& motion) override;
  std::size_t edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more) override;
  void set_tags(const std::vector<std::int32_t>& tags) override {
    if (tags.size() != static_cast<std::size_t>(n_)) throw std::invalid_argument("set_tags: the tags are for another particle count");
    upload_into(sb_, p_.tag, 0, tags);
    host_p_fresh_ = false;
  }
  // Under MPI (Simulation's; cuda/ghosts.inl): the ghosts' ids on the device (ghost_ids_), looked
  // up by binary search where the body loads and the contact counts leave them out.
  void set_ghosts(const std::vector<std::int64_t>& ghost_ids) override;
  void set_list_agreement(ListAgreement agree) override { list_agreement_ = std::move(agree); }
  std::vector<BodyLoadSum> body_load_sums() const override;
  LoadQuantum load_quantum() const override { return quantum_; }
  std::size_t own_touching_pairs() const override;
  std::size_t own_mesh_contacts() const override;
  void set_states(const std::vector<std::int32_t>& index, const host::StepStates& states) override;
  void get_states(const std::vector<std::int32_t>& index, bool shaped, std::uint64_t version,
                  host::StepStates& out) const override;
  std::vector<std::int64_t> particle_ids() const override;
  bool farther_than(const std::vector<std::int32_t>& index, const std::vector<Vec3>& origin, const std::vector<double>& limit,
                    const PeriodicBox& period, std::uint64_t version) const override;
  real skin() const override { return skin_; }
  bool adaptive_skin() const override { return settings_.skin < 0; }
  std::size_t touching_pairs() const override {
    fold_touching(-1);
    return touching_pairs_;
  }
  std::size_t mesh_contacts() const override {
    fold_mesh();
    return mesh_contacts_;
  }
  double max_overlap() const override;
  std::string engine_name() const override { return std::string("device-") + DEM_DEVICE_SYSTEM_NAME; }
  std::string device_name() const override { return describe_device(); }
  std::vector<host::StateBuffer> state_buffers() const override;
  host::BroadPhaseReport broad_phase_report() const override { return report_; }
  std::uint64_t host_waits() const override { return waits_; }
  std::uint64_t device_launches() const override { return launches_; }
  void start_field_sums(const host::FieldSampling& sampling) override;
  void sample_fields(Vec3 gravity, real dt) override;
  host::FieldSums take_field_sums() override;
  host::MixingContents mixing_contents(const host::MixingSampling& sampling) override;  // (cuda/mixing_contents.inl)
  // (cuda/field_sums.inl)
  void cg_check_weights(std::int64_t points, const char* what);
  void cg_gather(std::int64_t points, const std::function<void(const CgEntryWeight&, const std::int32_t*)>& pass);
  void sample_contact_stress(std::int64_t m);

  // The phases (public: CUDA's extended lambdas may not live in private member functions).
  void move_meshes(double t);
  void assign_mesh_blocks(std::int64_t blocks, std::int64_t kept);  // (the particles with candidates and their used slots, counted by the caller)
  void evaluate(bool and_integrate);
  void finish_particles(bool and_integrate);  // store the summed forces; integrate with them
  void rebuild_if_needed();
  // The run ahead (cuda/run_ahead.inl): how many of the next `most` steps may be queued at once,
  // the queued steps with their one wait at the end, one step's launches, and the launches that
  // end a step (its checks, the next step's skin tests, and the decisions on the device).
  std::uint64_t run_ahead_steps(std::uint64_t most) const;
  RunAheadTally run_ahead(std::uint64_t steps, const HealthLimits& limits, bool check_first);
  void launch_quiet_step(RunAheadTally* ra, RunAheadMirror* mirror, const HealthLimits& limits, bool decide_next);
  void launch_step_end(RunAheadTally* ra, RunAheadMirror* mirror, const HealthLimits* limits, bool tally_mesh, bool planes,
                       bool decide_next);
  // The skin tests (rebuild_if_needed, or check_health ahead of the next step): what ran.
  struct SkinTests {
    bool mesh = false, touching = false, can_keep = false, mesh_check = false;
  };
  // The checks of the present state that launch_state_checks runs (cuda/state_checks.inl).
  struct StateChecks {
    const HealthLimits* health = nullptr;  // the health check, with these limits
    bool skins = false;                    // the skin tests (of the next step)
    bool kept_lists = true;                // with them, the kept lists' checks
    bool every_mesh_check = false;         // the kept mesh lists' check also where the last count past the mesh skins was 0
    const MeshView* pose = nullptr;        // the meshes that check meets (nullptr: as posed now)
    bool mesh_sums = false;                // the last mesh pass's sums (where they wait to be read)
  };
  SkinTests launch_state_checks(StepReadback* rb, const StateChecks& want);
  bool rebuild_due() const;
  bool mesh_check_wanted() const {
    return mesh_lists_.have && !d_elem_body_.empty() && settings_.skin != 0 && mesh_lists_.check_ahead;
  }
  MeshView pose_ahead();
  void write_frames(const std::vector<BodyFrame>& frames, dvec<BodyFrame>& out);
  void pose_meshes(const MeshView& v);
  void take_skin_tests(const SkinTests& run, const StepReadback& r);
  KeptPairListCheck kept_pair_list_check(const StepReadback* rb);
  void update_half_skins();
  void rebuild();
  void resort(const dvec<std::int32_t>& order);
  void agree_on_lists();
  bool mesh_lists_due();
  void update_mesh_candidates();
  bool mesh_lists_hold(std::int64_t past);
  KeptMeshListsCheck kept_mesh_lists_check(const StepReadback* rb, real travel, const MeshView* at);
  void mesh_forces();
  void pair_forces(bool and_integrate);
  // The contact passes, built with or without the parts of the law that few scenes use
  // (kAllModels, normal_tangential_force): each engine runs the lean pass unless an interaction
  // needs them. The pair pass leaves each particle's touching pairs in pairs_.touching_count.
  // kPolyhedra: the polyhedral phases compiled in (settings_.shapes not empty).
  template <bool kAllModels, bool kPolyhedra>
  void mesh_pass();
  template <bool kAllModels, bool kPolyhedra>
  void pair_pass();
  // The last pair pass's touching pairs into touching_pairs_ and the stats, once: `both_sides`,
  // their count from both sides where a reduction has it (the next step's skin tests), else -1 (a
  // reduction of its own, which waits for the device).
  void fold_touching(std::int64_t both_sides) const;
  void fold_planes() const;
  // The last pair pass's common-plane counts per particle (polyhedra), not yet in stats_.
  mutable dvec<PlaneCounts> plane_counts_;
  mutable bool planes_pending_ = false;
  // The last mesh pass's results, left on the device by mesh_forces (mesh_pending_): r, from a copy
  // of the readback record made for something else, or fold_mesh's own copy (a wait).
  void apply_mesh_readback(const StepReadback& r);
  void fold_mesh() const;
  void sum_body_loads();  // (where body_loads_.pending)
  ParticleView pview() {  // with the periodic box
    ParticleView v = p_.view(static_cast<index_t>(n_));
    v.periodic = settings_.periodic;
    v.shapes = shapes_.empty() ? nullptr : raw(shapes_);
    v.plane_tolerance = settings_.plane_tolerance;
    return v;
  }
  MeshView mesh_view();
  MeshSlotsView slot_view() {
    return MeshSlotsView{raw(slots_.count), raw(slots_.entity), raw(slots_.normal), history_view(slots_.xi, slots_.roll),
                         raw(slots_.force),  raw(slots_.torque),  raw(slots_.block)};
  }

 private:
  class Timer {  // a phase's time into sink (PhaseClock)
   public:
    Timer(PhaseClock& clock, double& sink) : clock_(clock), sink_(sink), mark_(clock.start()) {}
    ~Timer() { clock_.stop(mark_, sink_); }

   private:
    PhaseClock& clock_;
    double& sink_;
    std::int64_t mark_;
  };

  std::size_t n_ = 0;
  std::unique_ptr<TempCache> cache_ = std::make_unique<TempCache>();  // before every buffer: freed last
  Exec sb_;  // how algorithms run: serially below settings.parallel_min (OpenMP system), cache_
  mutable std::uint64_t waits_ = 0;  // the host's waits for the device (Exec::waits)
  mutable std::uint64_t launches_ = 0;  // the algorithms run on the device (Exec::launches)
  DeviceParticles p_;
  // The target of every re-sort's gathers, a few arrays at a time (32 bytes a particle, the
  // largest field): a second copy of each per-particle array would cost their whole size again. Also the
  // health check's findings, the curve's keys, a rebuild's old ids and a renewal's slot offsets:
  // field_scratch() sizes it for the largest use at once (grown in steps, it ended a quarter over).
  dvec<std::uint64_t> field_scratch_;
  static constexpr std::size_t kScratchWords = 4;  // per particle
  std::uint64_t* field_scratch() {
    ensure(sb_, field_scratch_, (n_ + 1) * kScratchWords);
    return raw(field_scratch_);
  }
  dvec<ContactParams> params_;
  std::vector<ContactParams> table_;  // the host's copy (load_sizing_)
  host::LoadSizing load_sizing_;      // what the pair loads' units are sized for
  LoadQuantum quantum_;               // the pair loads' units (core/engine/fixed_loads.hpp)
  bool all_models_ = true;  // some interaction needs the Mindlin-Deresiewicz or plastic parts
  int num_materials_;
  host::EngineSettings settings_;
  real skin_ = 0, r_max_ = 0;
  real r_min_ = std::numeric_limits<real>::infinity();  // the smallest radius (or less, after removals)
  double time_ = 0;
  std::uint64_t steps_ = 0, last_build_step_ = 0;
  bool needs_build_ = true;
  bool forces_current_ = false;  // compute_forces ran since the last step (see host::Simulation)
  // Contact forces for export_contact_forces: kept when asked (keep_contacts_) by compute_forces's
  // evaluation (record_contacts_ while it runs; contacts_kept_ until the lists change), per list
  // entry on the side of the smaller id: the force on it and, where a polyhedron takes part, the
  // contact point. Allocated only once asked.
  bool keep_contacts_ = false, record_contacts_ = false, contacts_kept_ = false;
  dvec<Vec3> kept_force_, kept_point_;
  // Particles to drop at the next rebuild (edit_particles): flagged, sorted last, then cut off.
  dvec<std::uint8_t> remove_flag_;
  std::size_t remove_pending_ = 0;

  // Meshes: host copy (names, topology; poses downloaded for output) and device buffers.
  mutable host::MeshSet meshes_;
  mutable std::uint64_t meshes_step_ = ~std::uint64_t(0);
  std::vector<MeshBodyMotion> motions_;
  real mesh_step_ = 0;  // m, mesh_step_bound: how far a mesh point moves per step
  dvec<MeshBodyMotion> d_bodies_;
  dvec<MotionKnot> d_knots_;
  dvec<Vec3> d_ref_vertices_, d_vertices_, d_ref_normals_, d_normals_;
  dvec<index_t> d_elem_offsets_, d_elem_vertices_, d_elem_body_;
  double mesh_time_ = 0;

  // The engine's state in four parts, named as the host engine's (host/omp/engine.hpp): the pair
  // list, the mesh lists, the mesh slots and the body loads.

  // Sphere-sphere candidates (pair_list.inl builds them, pair_pass.inl evaluates them): a full
  // neighbour list, CSR by particle, rows sorted by partner id (an entry holds the partner's index;
  // its id is p_.id[index]).
  struct PairList {
    bool have = false;
    std::int64_t total = 0;  // entries of the list (each pair twice)
    dvec<std::int64_t> offsets;
    dvec<std::int32_t> index;  // the partner's index
    // Each entry's history (SplitHistory): the tangential one, and the second only where a law
    // uses it (with_roll_; else empty, and zero for every entry).
    dvec<Vec3> xi, roll;
    dvec<std::uint8_t> touching;
    // A rebuild's carry: of each pair of the old list, the entry in its smaller id's row where it
    // is not blank (history_is_blank), with its partner's index before the re-sort, in rows by
    // that order (sorted by partner id, as the old rows); only these need carrying, and the old
    // list's own arrays take the new list.
    // old_offsets: the old list's rows, read while they are copied here.
    dvec<std::int64_t> old_offsets, carry_offsets;
    dvec<std::int32_t> carry_index;
    dvec<Vec3> carry_xi, carry_roll;
    dvec<std::uint8_t> carry_touching;
    dvec<std::int64_t> totals;  // the new list's and the carry's entries, brought back in one copy
    // The positions at the build, the per-particle skins (update_half_skins: reach r_i + s_i, and
    // s_i^2) and speeds; the last pair pass's touching pairs per particle.
    dvec<Vec3> x_at_build;
    dvec<real> reach, half_skin2, speed;
    dvec<std::int32_t> touching_count;
    // Per particle, its touching pairs' largest overlap fraction at the last pair pass, in scenes
    // of spheres (valid: since that pass, no re-sort, edit or restore): check_health reads a
    // particle's row only where this, with the moves since, reaches its limit.
    dvec<real> deepest;
    bool deepest_valid = false;
  };
  PairList pairs_;
  bool with_roll_ = true;
  dvec<PolyShape> shapes_;  // settings_.shapes (ParticleView::shapes)
  DeviceFieldSums fields_;  // the coarse-grained particle fields (cuda/field_sums.inl)
  SplitHistory history_view(dvec<Vec3>& xi, dvec<Vec3>& roll) { return SplitHistory{raw(xi), with_roll_ ? raw(roll) : nullptr}; }
  // The first n entries as ContactHistory records (a contact state's), and records into the arrays.
  std::vector<ContactHistory> download_histories(const dvec<Vec3>& xi, const dvec<Vec3>& roll, std::size_t n) const;
  void upload_histories(const std::vector<ContactHistory>& h, dvec<Vec3>& xi, dvec<Vec3>& roll);
  dvec<std::int32_t> order_;  // new index -> index before the last re-sort
  dvec<std::uint32_t> cell_keys_;
  // HGrid (settings_.broad_phase): the levels chosen from the radii (at construction and after
  // edits; the top level is stretched to the largest reach at each rebuild), and per particle its
  // level and home cell in the sorted order.
  bool use_hgrid_ = false;
  HGridLevels hgrid_{};
  dvec<std::uint8_t> hlevel_;
  dvec<Int3> hcell_;
  host::BroadPhaseReport report_;
  void choose_broad_phase();
  dvec<std::int32_t> cell_start_;  // the cells' first particles (and, in key order, the ends: cell_start_ + 1)
  dvec<std::int32_t> cell_end_;    // along the Hilbert curve: the cells' ends
  bool built_on_curve_ = false;    // whether the last build ordered the particles along the curve
  // The last build's grid (and HGrid levels), for list_holds' searches around a particle.
  GridKeys built_keys_{};
  HGridLevels built_levels_{};
  real built_max_reach_ = 0;
  dvec<std::int64_t> counts_;  // scratch, n + 1

  // Candidate elements per particle (mesh_lists.inl; CSR, sorted by element), the search bins
  // over the elements, and how long the lists hold.
  struct MeshLists {
    bool have = false;
    // The last renewal's bins (for mesh_lists_hold): the particles' box grown by how far around
    // it the bins hold elements, the intersection domain and the bin grid (used only with elements).
    Box held{};
    Box domain{};
    CellGrid bins{};
    bool bins_used = false;
    dvec<std::int64_t> offsets;
    dvec<std::int32_t> elements;
    dvec<Vec3> x_at_build;
    dvec<real> skin;  // m, per particle (core adaptive_mesh_skin)
    real travel = 0;  // m, bound on mesh motion since the lists were built
    std::int64_t past = -1;  // this step's count past the mesh skins, from rebuild_if_needed (-1: none)
    int broken = -1;         // with it, the kept mesh lists' check's finding (-1: not run)
    bool check_ahead = false;  // the last count was not 0: run the kept mesh lists' check with the skin tests
    bool decided = false;      // under MPI: this step's renewal agreed in rebuild_if_needed (agree_on_lists)
    bool renew = false;        // with it, whether this step renews them
    // The bins' build: each element's box, the bins it occupies (then the scan of it), the
    // entries' keys and elements, and where each bin starts.
    dvec<Vec3> elem_lo, elem_hi;
    dvec<std::int64_t> elem_entries;
    dvec<std::uint32_t> bin_keys;
    dvec<std::int32_t> bin_elems, bin_start;
  };
  MeshLists mesh_lists_;
  ListAgreement list_agreement_;  // under MPI: the ranks' agreement on the builds (empty: none)
  // The skin tests check_health ran for the state at step ahead_step_, and their copy: the next
  // rebuild_if_needed takes them, unless an edit, a restore or a motion change came first.
  bool ahead_valid_ = false;
  std::uint64_t ahead_step_ = 0;
  SkinTests ahead_run_{};
  StepReadback ahead_readback_{};
  // The meshes at the next step's time for check_health's mesh lists' check (pose_ahead), beside
  // the present pose, which the step replaces (and meshes() returns until then).
  std::vector<BodyFrame> ahead_frames_host_;
  dvec<BodyFrame> ahead_frames_;
  dvec<Vec3> ahead_vertices_, ahead_normals_;

  // Sphere-mesh contacts: per particle its block of kMaxMeshContacts slots, or -1. Only particles
  // with candidate elements have one (assign_mesh_blocks, at each renewal of the candidate lists,
  // as on the host engine): a few per cent of a large bed. A re-sort moves the counts and blocks,
  // not the slots.
  struct MeshSlots {
    dvec<std::uint8_t> count;
    dvec<std::int32_t> block;
    std::int64_t blocks = 0;
    // The particle of each block; the mesh pass runs over the blocks, and its per-particle results
    // (particle_force, particle_torque, stats) are per block. Valid from each assign_mesh_blocks
    // to the next re-sort, which always renews the candidate lists (and the blocks) before a mesh
    // pass.
    dvec<std::int32_t> block_particle;
    dvec<EntityContact> entity, spare_entity;
    dvec<Vec3> normal, spare_normal;
    dvec<Vec3> xi, roll, spare_xi, spare_roll;  // the slots' histories (SplitHistory, with_roll_)
    // (spare_*: a renewal's kept slots, packed, on their way to the new blocks)
    dvec<Vec3> force, torque;                   // loads of each slot on its body
    dvec<Vec3> particle_force, particle_torque;
    dvec<MeshStepStats> stats;
  };
  MeshSlots slots_;

  // The loads on the bodies, summed in integers (BodyLoadSum) whatever the particle order, on
  // the host once asked for.
  struct BodyLoads {
    std::vector<Vec3> force, torque;  // per body
    std::vector<BodyLoadSum> sums;    // the same as integers (body_load_sums)
    bool pending = false;  // the last pass's loads are not summed yet (sum_body_loads)
  };
  BodyLoads body_loads_;
  dvec<std::int64_t> ghost_ids_;  // under MPI: the ghosts' ids, ascending (set_ghosts)
  // Under MPI: 1 for a ghost, per particle in the order of the last rebuild (which makes it; empty
  // before): the list leaves out the pairs of two ghosts, their owners' to evaluate.
  dvec<std::uint8_t> ghost_flag_;
  dvec<std::int32_t> ghost_index_;  // set_states's indices and values, on their way in
  dvec<Vec3> ghost_x_, ghost_v_, ghost_w_;
  dvec<Quat> ghost_q_;
  dvec<real> ghost_pad_;
  // get_states' and farther_than's indices (and origins) as of their version, and the gathered states
  mutable dvec<std::int32_t> gather_index_, travel_index_;
  mutable dvec<Vec3> travel_origin_;
  mutable dvec<double> travel_limit_;
  mutable std::uint64_t gather_version_ = ~std::uint64_t(0), travel_version_ = ~std::uint64_t(0);
  mutable dvec<Vec3> gather_x_, gather_v_, gather_w_;
  mutable dvec<Quat> gather_q_;
  mutable dvec<real> gather_pad_;
  dvec<StepReadback> readback_;  // one record (StepReadback)
  // The run ahead's record and signal (cuda/run_ahead.inl), and the gate the passes read while
  // it runs (nullptr: every pass runs).
  dvec<RunAheadTally> tally_;
  RunAheadSignal signal_;
  const std::int32_t* gate_ = nullptr;
  dvec<BodyFrame> d_frames_;  // each body at mesh_time_ (body_frame, evaluated on the host: glibc's sin and cos)
  bool meshes_posed_ = false;  // d_vertices_ and d_normals_ are the reference ones moved by d_frames_

  mutable host::ParticleArrays host_p_;
  mutable std::uint64_t host_p_step_ = ~std::uint64_t(0);
  mutable bool host_p_fresh_ = false;

  mutable host::ContactStats stats_;
  host::PhaseTimes times_;
  mutable PhaseClock clock_;  // (phase_times settles its pending times)
  host::EngineStatus status_;
  // The touching pairs and the stats wait for the device only when asked for (the pair pass's
  // count is folded in by the next step's skin tests, or by fold_touching).
  mutable std::size_t touching_pairs_ = 0;
  std::size_t mesh_contacts_ = 0;
  mutable bool touch_pending_ = false;
  // The last mesh pass's sums and overflow wait on the device (apply_mesh_readback); its step and
  // time name an overflow. Its body loads are summed when asked for (sum_body_loads).
  bool mesh_pending_ = false;
  std::uint64_t mesh_pending_step_ = 0;
  double mesh_pending_time_ = 0;
};

DeviceEngine::DeviceEngine(host::ParticleArrays particles, host::MeshSet meshes, std::vector<ContactParams> params,
                           int num_materials, host::EngineSettings settings)
    : num_materials_(num_materials), settings_(settings), meshes_(std::move(meshes)) {
  n_ = particles.size();
  sb_ = Exec{static_cast<std::int64_t>(settings_.parallel_min), cache_.get(), &waits_, &launches_};
  if (n_ >= (std::size_t(1) << 31)) throw std::runtime_error("device engine: at most 2^31 - 1 particles");
  for (Vec3& x : particles.x) x = wrap_far(settings_.periodic, x);
#define DEM_UPLOAD_FIELD(T, name) upload(sb_, p_.name, particles.name);
  DEM_PARTICLE_FIELDS(DEM_UPLOAD_FIELD)
#undef DEM_UPLOAD_FIELD
  upload(sb_, params_, params);
  table_ = params;
  all_models_ = std::any_of(params.begin(), params.end(), [](const ContactParams& q) { return needs_all_models(q); });
  // (the second history vector also holds the common planes of polyhedral pairs)
  with_roll_ = !settings_.shapes.empty() ||
               std::any_of(params.begin(), params.end(), [](const ContactParams& q) { return uses_second_history(q); });
  upload(sb_, shapes_, settings_.shapes);
  for (real r : particles.radius) r_max_ = std::max(r_max_, r);
  for (real r : particles.radius) r_min_ = std::min(r_min_, r);
  load_sizing_.start(settings_, num_materials_, particles.material, particles.radius);
  load_sizing_.set_bodies(meshes_);
  quantum_ = load_sizing_.quantum(table_, num_materials_);
  skin_ = settings_.skin >= 0 ? settings_.skin : real(0.5) * r_max_;
  if (settings_.periodic.any()) host::check_periodic_box(settings_.periodic, r_max_, mesh_skin_max(skin_, settings_.skin < 0));
  choose_broad_phase();

  // Meshes: the host copy at t = 0 supplies the reference normals; the device holds the rest.
  meshes_.update(0);
  motions_ = meshes_.motions();
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
  upload(sb_, d_bodies_, motions_);
  upload(sb_, d_knots_, meshes_.knots);
  upload(sb_, d_frames_, meshes_.frames);
  upload(sb_, d_ref_vertices_, meshes_.ref_vertices);
  upload(sb_, d_vertices_, meshes_.vertices);
  upload(sb_, d_ref_normals_, meshes_.ref_normals);
  upload(sb_, d_normals_, meshes_.normals);
  // pose_ahead's buffers, here rather than at their first use (no step waits for them)
  ensure(sb_, ahead_frames_, meshes_.frames.size());
  ensure(sb_, ahead_vertices_, d_vertices_.size());
  ensure(sb_, ahead_normals_, d_normals_.size());
  upload(sb_, d_elem_offsets_, meshes_.elem_offsets);
  upload(sb_, d_elem_vertices_, meshes_.elem_vertices);
  upload(sb_, d_elem_body_, meshes_.elem_body);
  meshes_step_ = 0;

  assign(sb_, slots_.count, n_, std::uint8_t(0));
  assign(sb_, slots_.block, n_, std::int32_t(-1));  // blocks come with the first candidate lists
  resize(sb_, pairs_.touching_count, n_);
  resize(sb_, counts_, n_ + 1);
  body_loads_.force.assign(motions_.size(), Vec3{0, 0, 0});
  body_loads_.torque.assign(motions_.size(), Vec3{0, 0, 0});
}

MeshView DeviceEngine::mesh_view() {
  return MeshView{raw(d_bodies_),
                  static_cast<index_t>(d_bodies_.size()),
                  d_knots_.empty() ? nullptr : raw(d_knots_),
                  d_frames_.empty() ? nullptr : raw(d_frames_),
                  raw(d_ref_vertices_),
                  raw(d_vertices_),
                  static_cast<index_t>(d_vertices_.size()),
                  raw(d_elem_offsets_),
                  raw(d_elem_vertices_),
                  raw(d_elem_body_),
                  raw(d_ref_normals_),
                  raw(d_normals_),
                  static_cast<index_t>(d_elem_body_.size()),
                  mesh_time_};
}

}  // namespace dem::device::DEM_DEVICE_NS
