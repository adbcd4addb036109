// libhympi: hybrid MPI + OpenMP schemes for 3-D stencil and sparse kernels.
#pragma once

#include "hympi/box.hpp"
#include "hympi/decomposition.hpp"
#include "hympi/domain.hpp"
#include "hympi/error.hpp"
#include "hympi/exchange.hpp"
#include "hympi/field.hpp"
#include "hympi/field_io.hpp"
#include "hympi/kernel.hpp"
#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"
#include "hympi/solver.hpp"
#include "hympi/timing.hpp"
#include "hympi/topology.hpp"
