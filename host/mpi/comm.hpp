// The processes of a run under MPI (`mpirun -np N dem ...`), and the reductions across them that
// give the single-process bits: what every rank must agree on is either an exact integer sum
// (the body loads' BodyLoadSum words, core/engine/fixed_loads.hpp; an ExactSum's digits),
// a maximum, or an OR, all independent of how the particles are split between ranks. Built with DEM_ENABLE_MPI
// where MPI is found (docs/architecture.md); the engines know nothing of it.
#pragma once
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "core/engine/fixed_loads.hpp"
#include "host/sim/exact_sum.hpp"
#include "host/sim/load_sizing.hpp"

namespace dem::mpi {

// MPI_Init_thread (MPI_THREAD_FUNNELED: OpenMP threads inside each rank, MPI from the main
// thread) for the life of the object; MPI_Finalize at its end. One per process, in main.
class Runtime {
 public:
  Runtime(int& argc, char**& argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
};

// Whether the MPI library can take device pointers (CUDA-aware): Open MPI's MPIX_Query_cuda_support
// where it was built with the extension, else false. The decomposition stages the halo data
// through the host either way (summary.json says both).
bool library_cuda_aware();

// A communicator's ranks (MPI_COMM_WORLD by default). Every call is collective: each rank of the
// communicator makes it, in the same order.
class Comm {
 public:
  explicit Comm(MPI_Comm comm = MPI_COMM_WORLD);
  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank's place among the ranks that share its node (MPI_Comm_split_type, shared memory):
  // 0 to the node's rank count less one. Collective.
  int node_rank() const;
  // The sums over the ranks, word by word (64-bit integer additions, exact and associative: the
  // same bits for any split of the terms between the ranks).
  void sum(std::vector<BodyLoadSum>& sums) const;
  void sum(std::vector<BodyLoadSum>& sums, std::vector<std::int64_t>& more) const;  // (in one reduction)
  void sum(std::vector<std::int64_t>& values) const;
  // An exact sum of doubles over the ranks (its digits added as integers); finite terms only.
  host::ExactSum sum(const host::ExactSum& mine) const;
  double max(double value) const;
  // Bitwise OR of each element.
  void any(std::vector<std::uint8_t>& flags) const;
  // The pair and body loads' units every rank must use: each rank's LoadSizing holds the materials
  // and radii of its own particles; the result holds every rank's (the materials used by any, the
  // largest radius), as one process holding all the particles would (its bodies are every rank's,
  // each rank holding every mesh).
  host::LoadSizing agree(const host::LoadSizing& mine) const;
  std::int64_t min(std::int64_t value) const;
  void max(std::vector<double>& values) const;  // element by element
  // Root's bytes to every rank (resized there).
  void broadcast(std::vector<char>& bytes, int root = 0) const;
  // out[r] to rank r; returns what each rank sent this one (in[r] from rank r). This rank's own
  // part is moved, not sent (through MPI it cost a copy into fresh memory: 7 ms for 4 MB).
  std::vector<std::vector<char>> exchange(std::vector<std::vector<char>> out) const;
  // One exchange of sizes both sides know (the ghost updates between hand-overs): send holds
  // send_count[r] bytes for each rank r in rank order, recv is filled with recv_count[r] bytes from
  // each (resized), without exchanging the counts first.
  void exchange_known(const std::vector<char>& send, const std::vector<int>& send_count, std::vector<char>& recv,
                      const std::vector<int>& recv_count) const;
  // Every rank's bytes at root (in rank order; empty elsewhere).
  std::vector<std::vector<char>> gather(const std::vector<char>& mine, int root = 0) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace dem::mpi
