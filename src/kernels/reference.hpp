// The frozen serial references of the built-in kernels (reference.cpp), each
// reached through its kernel's registry entry (Kernel::reference).
#pragma once

#include "hympi/kernels.hpp"

namespace hympi {

ReferenceResult reference_jacobi(const ReferenceProblem& p);
ReferenceResult reference_rbgs(const ReferenceProblem& p);
ReferenceResult reference_spmv(const ReferenceProblem& p);
ReferenceResult reference_cg(const ReferenceProblem& p);

}  // namespace hympi
