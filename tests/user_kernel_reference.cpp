// The serial reference of examples/user_kernel.cpp: the same smoother on the
// whole grid with plain loops and no hympi, printing the same lines.
//   usage: user_kernel_reference NX NY NZ STEPS PERIODIC(0|1)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
double initial_value(long long i, long long j, long long k) {
  return static_cast<double>((7 * i + 13 * j + 29 * k) % 17) / 16.0 - 0.5;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: user_kernel_reference NX NY NZ STEPS PERIODIC\n");
    return 2;
  }
  const int n[3] = {std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3])};
  const int steps = std::atoi(argv[4]);
  const bool periodic = std::atoi(argv[5]) != 0;
  const long long total = 1LL * n[0] * n[1] * n[2];
  auto id = [&](long long i, long long j, long long k) { return i + n[0] * (j + 1LL * n[1] * k); };
  std::vector<double> u(total), v(total), c(total), u2(total), v2(total);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        u[id(i, j, k)] = initial_value(i, j, k);
        v[id(i, j, k)] = initial_value(k, i, j);
        c[id(i, j, k)] = 1.0 + static_cast<double>((i + 2 * j + 3 * k) % 5) / 10.0;
      }
  // A neighbour's value: 0 beyond a Dirichlet boundary, wrapped if periodic.
  auto at = [&](const std::vector<double>& a, long long i, long long j, long long k) {
    long long p[3] = {i, j, k};
    for (int d = 0; d < 3; ++d) {
      if (p[d] >= 0 && p[d] < n[d]) continue;
      if (!periodic) return 0.0;
      p[d] = (p[d] + n[d]) % n[d];
    }
    return a[id(p[0], p[1], p[2])];
  };
  double change = 0;
  for (int s = 0; s < steps; ++s) {
    change = 0;
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) {
          const double su = at(u, i - 1, j, k) + at(u, i + 1, j, k) + at(u, i, j - 1, k) +
                            at(u, i, j + 1, k) + at(u, i, j, k - 1) + at(u, i, j, k + 1);
          const double sv = at(v, i - 1, j, k) + at(v, i + 1, j, k) + at(v, i, j - 1, k) +
                            at(v, i, j + 1, k) + at(v, i, j, k - 1) + at(v, i, j, k + 1);
          const long long p = id(i, j, k);
          const double wc = 0.1 * c[p];
          const double un = u[p] + wc * (su - 6 * u[p]) + 0.05 * (v[p] - u[p]);
          const double vn = v[p] + wc * (sv - 6 * v[p]) + 0.05 * (u[p] - v[p]);
          change += (un - u[p]) * (un - u[p]) + (vn - v[p]) * (vn - v[p]);
          u2[p] = un;
          v2[p] = vn;
        }
    u.swap(u2);
    v.swap(v2);
  }
  double us = 0, uq = 0, vs = 0, vq = 0;
  for (long long p = 0; p < total; ++p) {
    us += u[p];
    uq += u[p] * u[p];
    vs += v[p];
    vq += v[p] * v[p];
  }
  std::printf("u sum %.12e l2 %.12e\n", us, std::sqrt(uq));
  std::printf("v sum %.12e l2 %.12e\n", vs, std::sqrt(vq));
  std::printf("change %.12e\n", std::sqrt(change));
  return 0;
}
