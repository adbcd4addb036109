// A 3-D field of doubles on the local box with a halo of width `halo` (1 by
// default) on every side; i fastest.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "hympi/box.hpp"

namespace hympi {

// How a field's rows lie in memory. Packed: row after row, stride_j =
// n[0] + 2 halo (the layout of Domain::layout() and of wrapped memory).
// CacheLine: stride_j rounded up to whole 64-byte lines (up to 7 doubles
// more per row) and every row's first interior point on a line boundary, so
// that a stencil's centre, j +- 1 and k +- 1 loads and its store, for rows
// from i = 0 (or a multiple of 8), split no line; the i +- 1 loads still do.
// Code that indexes through index(), at(), stride_j() and stride_k() works
// on both, but one index serves only fields of the same layout: the fields
// of one update must share it (Domain's sweeps refuse a mix, by kind, so
// that every rank decides alike even where the strides happen to agree).
enum class RowLayout { Packed, CacheLine };

// Asks Linux to back the whole 2 MiB pages inside [p, p + bytes) with huge
// pages when they are first touched (call it before the first touch). Every
// Field does so for its own memory; the benchmarks' reference copies do it
// too, so that a kernel and its roofline see the same pages. Advice only:
// where the system refuses it, or off Linux, nothing changes.
void advise_huge_pages(void* p, std::size_t bytes);

// Where in a 4 KiB page the data of the field at place `stagger` start, in
// bytes (a multiple of 64), for a field of strides stride_j and stride_k (in
// doubles). A core checks each load against the stores in flight by the
// address's low 12 bits only: a sweep whose output row lies at the page
// offset of one of its input loads (the centre, j +- 1, k +- 1, and the
// diagonals of a 27-point box) waits on those stores, and on a Zen 1 core
// a streaming store holds the load until the store has left for memory
// (jacobi with streaming stores at 0.48x the rate it has without the alias;
// bench/README.md, "Streaming stores and the 4 KiB alias"). Consecutive
// places differ by a step chosen, for these strides, as far as possible
// from those offsets, also at 2 and 3 steps (fields made together are swept
// together); place 0 starts on a page.
std::size_t stagger_bytes(std::ptrdiff_t stride_j, std::ptrdiff_t stride_k, int stagger);

// An allocator that gives every allocation advise_huge_pages before the
// container's first write touches it: the stored matrices' arrays (CRS,
// SELL) live in HugePageVectors, as the fields they multiply live on huge
// pages.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = ::operator new(n * sizeof(T));
    advise_huge_pages(p, n * sizeof(T));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p); }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
  friend bool operator!=(const HugePageAllocator&, const HugePageAllocator&) { return false; }
};
template <class T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

class Field {
 public:
  Field() = default;
  // Allocates (n[0]+2) x (n[1]+2) x (n[2]+2) values (rows padded under
  // RowLayout::CacheLine), all zero; the first touch happens in a parallel
  // loop over k planes, one block per thread (which schemes compute on the
  // pages their threads touched: see field.cpp). `stagger`: the field's
  // place among the fields swept together (Domain::make_field counts them),
  // which sets where in a 4 KiB page its data start (stagger_bytes), so that
  // one field's stores do not fall on the page offsets of another's loads.
  explicit Field(std::array<int, 3> n, int halo = 1, RowLayout rows = RowLayout::Packed,
                 int stagger = 0);
  // A field over the caller's memory of count_for(n, halo) doubles, in the
  // same layout; not owned (the caller keeps it alive and did the first touch).
  static Field wrap(double* data, std::array<int, 3> n, int halo);
  // Doubles in a packed field of this size and halo, halo included.
  static std::size_t count_for(std::array<int, 3> n, int halo);

  const std::array<int, 3>& size() const { return n_; }
  int halo() const { return h_; }
  RowLayout rows() const { return rows_; }
  // Doubles from data() to the last halo point, row padding included
  // (count_for(size(), halo()) when packed).
  std::size_t count() const {
    return static_cast<std::size_t>(sk_) * static_cast<std::size_t>(n_[2] + 2 * h_);
  }
  // Strides of j and k in the array (i is contiguous).
  std::ptrdiff_t stride_j() const { return sj_; }
  std::ptrdiff_t stride_k() const { return sk_; }
  // Index of local interior point (i, j, k); -halo..-1 and n[d]..n[d]+halo-1
  // address the halo.
  std::ptrdiff_t index(int i, int j, int k) const {
    return (i + h_) + sj_ * (j + h_) + sk_ * (k + h_);
  }
  double& at(int i, int j, int k) { return data_[index(i, j, k)]; }
  double at(int i, int j, int k) const { return data_[index(i, j, k)]; }
  double* data() { return data_; }
  const double* data() const { return data_; }
  Box interior() const { return Box{{0, 0, 0}, n_}; }

 private:
  void set_layout(std::array<int, 3> n, int halo, RowLayout rows);
  std::array<int, 3> n_{0, 0, 0};
  int h_ = 1;
  RowLayout rows_ = RowLayout::Packed;
  std::ptrdiff_t sj_ = 0, sk_ = 0;
  std::unique_ptr<double[]> owned_;  // not value-initialised: see the constructor
  double* data_ = nullptr;           // owned_ or the caller's memory
};

}  // namespace hympi
