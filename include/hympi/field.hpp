// A 3-D field of doubles on the local box with a halo of width 1.
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
  explicit Field(std::array<int, 3> n);

  const std::array<int, 3>& size() const { return n_; }
  // Strides of j and k in the array (i is contiguous).
  std::ptrdiff_t stride_j() const { return sj_; }
  std::ptrdiff_t stride_k() const { return sk_; }
  // Index of local interior point (i, j, k); -1 and n[d] address the halo.
  std::ptrdiff_t index(int i, int j, int k) const {
    return (i + 1) + sj_ * (j + 1) + sk_ * (k + 1);
  }
  double& at(int i, int j, int k) { return data_[index(i, j, k)]; }
  double at(int i, int j, int k) const { return data_[index(i, j, k)]; }
  double* data() { return data_.get(); }
  const double* data() const { return data_.get(); }
  Box interior() const { return Box{{0, 0, 0}, n_}; }

 private:
  std::array<int, 3> n_{0, 0, 0};
  std::ptrdiff_t sj_ = 0, sk_ = 0;
  std::unique_ptr<double[]> data_;  // not value-initialised: see the constructor
};

}  // namespace hympi
