// Byte buffers for what crosses ranks: plain values and vectors of trivially copyable types
// appended in order and read back in the same order (every rank of a run is the same build, so
// the layouts agree; the checkpoint reader is what checks layouts across builds).
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace dem::mpi {

class Packer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* b = reinterpret_cast<const char*>(&v);
    bytes_.insert(bytes_.end(), b, b + sizeof(T));
  }
  template <class T, class A>
  void put_vector(const std::vector<T, A>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(static_cast<std::uint64_t>(v.size()));
    const char* b = reinterpret_cast<const char*>(v.data());
    bytes_.insert(bytes_.end(), b, b + v.size() * sizeof(T));
  }
  // v[at[0]], v[at[1]], ...: a column of the elements at the given indices, no count.
  template <class T, class A, class I>
  void put_gathered(const std::vector<T, A>& v, const std::vector<I>& at) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t old = bytes_.size();
    bytes_.resize(old + at.size() * sizeof(T));
    char* out = bytes_.data() + old;
    for (const I i : at) {
      std::memcpy(out, &v[static_cast<std::size_t>(i)], sizeof(T));
      out += sizeof(T);
    }
  }
  // n elements from p, no count.
  template <class T>
  void put_range(const T* p, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* b = reinterpret_cast<const char*>(p);
    bytes_.insert(bytes_.end(), b, b + n * sizeof(T));
  }
  void reserve(std::size_t n) { bytes_.reserve(n); }
  void put_string(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
};

class Unpacker {
 public:
  Unpacker(const char* data, std::size_t size) : at_(data), end_(data + size) {}
  explicit Unpacker(const std::vector<char>& b) : Unpacker(b.data(), b.size()) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    take(&v, sizeof(T));
    return v;
  }
  template <class T, class A>
  void get_vector(std::vector<T, A>& v) {
    const std::uint64_t n = get<std::uint64_t>();
    v.resize(n);
    take(v.data(), n * sizeof(T));
  }
  template <class T, class A>
  void append_vector(std::vector<T, A>& v) {  // a put_vector's elements appended to v
    const std::uint64_t n = get<std::uint64_t>();
    const std::size_t old = v.size();
    v.resize(old + n);
    take(v.data() + old, n * sizeof(T));
  }
  template <class T, class A>
  void append(std::vector<T, A>& v, std::size_t n) {  // n elements (a put_gathered's or put_range's) appended to v
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t old = v.size();
    v.resize(old + n);
    take(v.data() + old, n * sizeof(T));
  }
  std::string get_string() {
    std::string s(get<std::uint64_t>(), '\0');
    take(s.data(), s.size());
    return s;
  }
  bool done() const { return at_ == end_; }

 private:
  void take(void* out, std::size_t n) {
    if (static_cast<std::size_t>(end_ - at_) < n) throw std::runtime_error("MPI message shorter than its contents");
    if (n) std::memcpy(out, at_, n);
    at_ += n;
  }
  const char* at_;
  const char* end_;
};

}  // namespace dem::mpi
