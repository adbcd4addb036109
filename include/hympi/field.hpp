// A 3-D field of doubles on the local box with a halo of width `halo` (1 by
// default) on every side; i fastest.
#pragma once

#include <array>
#include <cstddef>
#include <memory>

#include "hympi/box.hpp"

namespace hympi {

class Field {
 public:
  Field() = default;
  // Allocates (n[0]+2) x (n[1]+2) x (n[2]+2) values, all zero; the first touch
  // happens in a parallel loop over k planes, one block per thread (which
  // schemes compute on the pages their threads touched: see field.cpp).
  explicit Field(std::array<int, 3> n, int halo = 1);
  // A field over the caller's memory of count_for(n, halo) doubles, in the
  // same layout; not owned (the caller keeps it alive and did the first touch).
  static Field wrap(double* data, std::array<int, 3> n, int halo);
  // Doubles in a field of this size and halo, halo included.
  static std::size_t count_for(std::array<int, 3> n, int halo);

  const std::array<int, 3>& size() const { return n_; }
  int halo() const { return h_; }
  std::size_t count() const { return count_for(n_, h_); }
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
  void set_layout(std::array<int, 3> n, int halo);
  std::array<int, 3> n_{0, 0, 0};
  int h_ = 1;
  std::ptrdiff_t sj_ = 0, sk_ = 0;
  std::unique_ptr<double[]> owned_;  // not value-initialised: see the constructor
  double* data_ = nullptr;           // owned_ or the caller's memory
};

}  // namespace hympi
