#include "hympi/field.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hympi {

std::size_t Field::count_for(std::array<int, 3> n, int halo) {
  return static_cast<std::size_t>(n[0] + 2 * halo) * static_cast<std::size_t>(n[1] + 2 * halo) *
         static_cast<std::size_t>(n[2] + 2 * halo);
}

namespace {
constexpr std::uintptr_t kLineBytes = 64;
constexpr std::ptrdiff_t kLineDoubles = kLineBytes / sizeof(double);
constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{2} << 20;
constexpr std::ptrdiff_t kPageBytes = 4096;  // the span of the load-store alias check

// Distance between two page offsets, around the page.
std::ptrdiff_t page_distance(std::ptrdiff_t a, std::ptrdiff_t b) {
  const std::ptrdiff_t d = ((a - b) % kPageBytes + kPageBytes) % kPageBytes;
  return d < kPageBytes - d ? d : kPageBytes - d;
}
}  // namespace

std::size_t stagger_bytes(std::ptrdiff_t stride_j, std::ptrdiff_t stride_k, int stagger) {
  // Page offsets of the loads of one update against its store (of the same
  // point): the 7-point stencil's centre (and i +- 1), j +- 1 and k +- 1,
  // then the edges of a 27-point box.
  const std::ptrdiff_t j = 8 * stride_j, k = 8 * stride_k;
  const std::ptrdiff_t star[] = {0, j, -j, k, -k};
  const std::ptrdiff_t edges[] = {j + k, j - k, -j + k, -j - k};
  // The step first keeps the next place's stores as far as it can, up to
  // 512 B (8 lines), from the star's loads: jacobi and spmv stream from one
  // field into the next, and 256 B was as good as any wider gap on a Zen core
  // (a 128 B gap still cost a quarter). Five offsets on the page leave a gap
  // of 409 B or more, so 377 B or more on whole lines. Among such steps,
  // the widest gap from every load at 1, 2 and 3 places (fields used three
  // or four together, cg's).
  constexpr std::ptrdiff_t kEnough = 512;
  std::ptrdiff_t best_step = 0, best_near = -1, best_all = -1;
  for (std::ptrdiff_t step = static_cast<std::ptrdiff_t>(kLineBytes); step < kPageBytes;
       step += static_cast<std::ptrdiff_t>(kLineBytes)) {
    std::ptrdiff_t near = kEnough, all = kPageBytes;
    for (std::ptrdiff_t load : star) near = std::min(near, page_distance(step, load));
    for (int places = 1; places <= 3; ++places) {
      for (std::ptrdiff_t load : star) all = std::min(all, page_distance(places * step, load));
      for (std::ptrdiff_t load : edges) all = std::min(all, page_distance(places * step, load));
    }
    if (near > best_near || (near == best_near && all > best_all)) {
      best_near = near;
      best_all = all;
      best_step = step;
    }
  }
  const std::ptrdiff_t place = stagger < 0 ? 0 : stagger;
  return static_cast<std::size_t>(place * best_step % kPageBytes);
}

// Transparent huge pages in "madvise" mode (Debian's default) back only the
// ranges asked for; in "always" mode this changes nothing. A sweep over a
// field reads three k planes and writes a fourth: with 4 KiB pages it needs a
// page walk every two rows of each, and in a virtual machine every walk is
// two-dimensional (bench/README, "The streaming floor", for what it gains).
// madvise's result is ignored: the advice may be refused (THP "never").
void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const std::uintptr_t last = (begin + bytes) / kHugePageBytes * kHugePageBytes;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void Field::set_layout(std::array<int, 3> n, int halo, RowLayout rows) {
  if (halo < 1 || n[0] < 0 || n[1] < 0 || n[2] < 0)
    throw std::invalid_argument("Field: sizes must be >= 0 and the halo >= 1");
  n_ = n;
  h_ = halo;
  rows_ = rows;
  sj_ = n[0] + 2 * halo;
  if (rows == RowLayout::CacheLine) sj_ = (sj_ + kLineDoubles - 1) / kLineDoubles * kLineDoubles;
  sk_ = sj_ * (n[1] + 2 * halo);
}

Field Field::wrap(double* data, std::array<int, 3> n, int halo) {
  if (!data) throw std::invalid_argument("Field::wrap: null data");
  Field f;
  f.set_layout(n, halo, RowLayout::Packed);
  f.data_ = data;
  return f;
}

Field::Field(std::array<int, 3> n, int halo, RowLayout rows, int stagger) {
  set_layout(n, halo, rows);
  const std::ptrdiff_t planes = n[2] + 2 * halo;
  // new double[] leaves the values uninitialised, so the parallel loop below
  // is the first touch: the n2 + 2 * halo planes (halo planes included) are split
  // into contiguous blocks, one per thread of the default team (static
  // schedule), and a plane's pages land on the NUMA domain of the thread that
  // touched it. That matches, to within a plane at each block's edge, the
  // n-way split of the interior along k by the non-overlapping schemes
  // (masteronly, masteronly_threaded) and multiple_own's one slab per thread.
  // It does not match the overlapping schemes: funneled computes the interior
  // with threads 1..n-1 (an (n-1)-way split), multiple with threads m..n-1
  // ((n-m)-way), adaptive hands out tiles to whichever thread is free. There
  // a thread's interior block lies partly on pages first touched by its
  // neighbour: on one NUMA domain (or unpinned threads) this costs nothing.
  // The field knows no scheme; matching them would need the split passed in.
  // data_ starts stagger_bytes past a page boundary (new[] gives 16-byte
  // alignment, hence the two spare pages), and under CacheLine `lead`
  // doubles further, so that the point (0, j, k) at data_ + halo +
  // j' stride_j + k' stride_k (strides of whole lines) is on a line.
  const bool aligned = rows == RowLayout::CacheLine;
  const std::ptrdiff_t lead = aligned ? (kLineDoubles - halo % kLineDoubles) % kLineDoubles : 0;
  const std::ptrdiff_t spare =
      2 * kPageBytes / static_cast<std::ptrdiff_t>(sizeof(double)) + lead;
  const std::size_t allocated = static_cast<std::size_t>(sk_ * planes + spare);
  owned_.reset(new double[allocated]);
  advise_huge_pages(owned_.get(), allocated * sizeof(double));
  const auto address = reinterpret_cast<std::uintptr_t>(owned_.get());
  const std::uintptr_t page_start = (address + kPageBytes - 1) / kPageBytes * kPageBytes;
  data_ = reinterpret_cast<double*>(page_start + stagger_bytes(sj_, sk_, stagger)) + lead;
  double* d = data_;
  const std::ptrdiff_t sk = sk_;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < planes; ++k)
    for (std::ptrdiff_t x = 0; x < sk; ++x) d[k * sk + x] = 0.0;
}

}  // namespace hympi
