#include "host/mpi/comm.hpp"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace dem::mpi {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string("MPI error in ") + what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

bool library_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

Runtime::Runtime(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("the MPI library gives no thread support (MPI_THREAD_FUNNELED): OpenMP threads inside a rank need it");
  }
}

Runtime::~Runtime() { MPI_Finalize(); }

Comm::Comm(MPI_Comm comm) : comm_(comm) {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

int Comm::node_rank() const {
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int r = 0;
  const int rc = MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  check(rc, "MPI_Comm_rank (node)");
  return r;
}

void Comm::sum(std::vector<std::int64_t>& values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM, comm_),
        "MPI_Allreduce (sum)");
}

void Comm::sum(std::vector<BodyLoadSum>& sums) const {
  std::vector<std::int64_t> none;
  sum(sums, none);
}

void Comm::sum(std::vector<BodyLoadSum>& sums, std::vector<std::int64_t>& more) const {
  static_assert(sizeof(BodyLoadSum) == 12 * sizeof(std::int64_t), "BodyLoadSum: twelve 64-bit words");
  const std::size_t n = 12 * sums.size();
  std::vector<std::int64_t> words(n + more.size());
  for (std::size_t b = 0; b < sums.size(); ++b)
    for (int c = 0; c < 3; ++c) {
      words[12 * b + 4 * c] = sums[b].f[c].hi;
      words[12 * b + 4 * c + 1] = sums[b].f[c].lo;
      words[12 * b + 4 * c + 2] = sums[b].t[c].hi;
      words[12 * b + 4 * c + 3] = sums[b].t[c].lo;
    }
  std::copy(more.begin(), more.end(), words.begin() + static_cast<std::ptrdiff_t>(n));
  sum(words);
  for (std::size_t b = 0; b < sums.size(); ++b)
    for (int c = 0; c < 3; ++c) {
      sums[b].f[c].hi = words[12 * b + 4 * c];
      sums[b].f[c].lo = words[12 * b + 4 * c + 1];
      sums[b].t[c].hi = words[12 * b + 4 * c + 2];
      sums[b].t[c].lo = words[12 * b + 4 * c + 3];
    }
  std::copy(words.begin() + static_cast<std::ptrdiff_t>(n), words.end(), more.begin());
}

host::ExactSum Comm::sum(const host::ExactSum& mine) const {
  if (!mine.finite()) throw std::invalid_argument("Comm::sum: an exact sum with an infinite or NaN term");
  const host::ExactSum::Words w = mine.words();
  std::vector<std::int64_t> digits(w.begin(), w.end());
  sum(digits);
  host::ExactSum::Words all{};
  std::copy(digits.begin(), digits.end(), all.begin());
  return host::ExactSum::from_words(all);
}

double Comm::max(double value) const {
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce (max)");
  return value;
}

void Comm::any(std::vector<std::uint8_t>& flags) const {
  check(MPI_Allreduce(MPI_IN_PLACE, flags.data(), static_cast<int>(flags.size()), MPI_UINT8_T, MPI_BOR, comm_),
        "MPI_Allreduce (or)");
}

host::LoadSizing Comm::agree(const host::LoadSizing& mine) const {
  host::LoadSizing all = mine;
  any(all.used);
  all.radius = static_cast<real>(max(static_cast<double>(mine.radius)));
  return all;
}

std::int64_t Comm::min(std::int64_t value) const {
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MIN, comm_), "MPI_Allreduce (min)");
  return value;
}

void Comm::max(std::vector<double>& values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, comm_),
        "MPI_Allreduce (max)");
}

namespace {
int checked_count(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("an MPI message of " + std::to_string(n) + " bytes: more than one message can carry");
  return static_cast<int>(n);
}
}  // namespace

void Comm::broadcast(std::vector<char>& bytes, int root) const {
  std::uint64_t n = bytes.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast (size)");
  bytes.resize(n);
  check(MPI_Bcast(bytes.data(), checked_count(n), MPI_BYTE, root, comm_), "MPI_Bcast");
}

std::vector<std::vector<char>> Comm::exchange(std::vector<std::vector<char>> out) const {
  std::vector<int> send_count(size_), recv_count(size_), send_at(size_), recv_at(size_);
  std::size_t total = 0;
  for (int r = 0; r < size_; ++r) {
    send_count[r] = r == rank_ ? 0 : checked_count(out[r].size());
    send_at[r] = checked_count(total);
    total += static_cast<std::size_t>(send_count[r]);
  }
  std::vector<char> send(total);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) std::copy(out[r].begin(), out[r].end(), send.begin() + send_at[r]);
  check(MPI_Alltoall(send_count.data(), 1, MPI_INT, recv_count.data(), 1, MPI_INT, comm_), "MPI_Alltoall");
  std::size_t in_total = 0;
  for (int r = 0; r < size_; ++r) {
    recv_at[r] = checked_count(in_total);
    in_total += static_cast<std::size_t>(recv_count[r]);
  }
  std::vector<char> recv(in_total);
  check(MPI_Alltoallv(send.data(), send_count.data(), send_at.data(), MPI_BYTE, recv.data(), recv_count.data(),
                      recv_at.data(), MPI_BYTE, comm_),
        "MPI_Alltoallv");
  std::vector<std::vector<char>> in(size_);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) in[r].assign(recv.begin() + recv_at[r], recv.begin() + recv_at[r] + recv_count[r]);
  in[rank_] = std::move(out[rank_]);
  return in;
}

void Comm::exchange_known(const std::vector<char>& send, const std::vector<int>& send_count, std::vector<char>& recv,
                          const std::vector<int>& recv_count) const {
  std::vector<int> send_at(size_), recv_at(size_);
  std::size_t out_total = 0, in_total = 0;
  for (int r = 0; r < size_; ++r) {
    send_at[r] = checked_count(out_total);
    recv_at[r] = checked_count(in_total);
    out_total += static_cast<std::size_t>(send_count[r]);
    in_total += static_cast<std::size_t>(recv_count[r]);
  }
  if (out_total != send.size()) throw std::logic_error("exchange_known: the counts do not add up to the bytes sent");
  recv.resize(in_total);
  check(MPI_Alltoallv(send.data(), send_count.data(), send_at.data(), MPI_BYTE, recv.data(), recv_count.data(),
                      recv_at.data(), MPI_BYTE, comm_),
        "MPI_Alltoallv");
}

std::vector<std::vector<char>> Comm::gather(const std::vector<char>& mine, int root) const {
  int n = checked_count(mine.size());
  std::vector<int> count(rank_ == root ? size_ : 0), at(rank_ == root ? size_ : 0);
  check(MPI_Gather(&n, 1, MPI_INT, count.data(), 1, MPI_INT, root, comm_), "MPI_Gather (sizes)");
  std::size_t total = 0;
  for (int r = 0; r < static_cast<int>(count.size()); ++r) {
    at[r] = checked_count(total);
    total += static_cast<std::size_t>(count[r]);
  }
  std::vector<char> all(total);
  check(MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), count.data(), at.data(), MPI_BYTE, root, comm_),
        "MPI_Gatherv");
  std::vector<std::vector<char>> out(count.size());
  for (std::size_t r = 0; r < count.size(); ++r) out[r].assign(all.begin() + at[r], all.begin() + at[r] + count[r]);
  return out;
}

}  // namespace dem::mpi
