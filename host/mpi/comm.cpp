#include "host/mpi/comm.hpp"

#include <algorithm>
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

void Comm::sum(std::vector<std::int64_t>& values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM, comm_),
        "MPI_Allreduce (sum)");
}

void Comm::sum(std::vector<BodyLoadSum>& sums) const {
  static_assert(sizeof(BodyLoadSum) == 12 * sizeof(std::int64_t), "BodyLoadSum: twelve 64-bit words");
  std::vector<std::int64_t> words(12 * sums.size());
  for (std::size_t b = 0; b < sums.size(); ++b)
    for (int c = 0; c < 3; ++c) {
      words[12 * b + 4 * c] = sums[b].f[c].hi;
      words[12 * b + 4 * c + 1] = sums[b].f[c].lo;
      words[12 * b + 4 * c + 2] = sums[b].t[c].hi;
      words[12 * b + 4 * c + 3] = sums[b].t[c].lo;
    }
  sum(words);
  for (std::size_t b = 0; b < sums.size(); ++b)
    for (int c = 0; c < 3; ++c) {
      sums[b].f[c].hi = words[12 * b + 4 * c];
      sums[b].f[c].lo = words[12 * b + 4 * c + 1];
      sums[b].t[c].hi = words[12 * b + 4 * c + 2];
      sums[b].t[c].lo = words[12 * b + 4 * c + 3];
    }
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

}  // namespace dem::mpi
