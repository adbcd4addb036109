// Field I/O: a distributed field (a Field of a Domain: the local box plus
// its halo, i fastest) gathered to or scattered from one rank as the whole
// global array, and written to or read from a file by every rank at once
// with MPI-IO (docs/field-io.md).
//
// The global array: NX*NY*NZ doubles, i fastest, no halo; point (i, j, k)
// of the global grid is global[i + NX * (j + NY * k)] (numpy: shape
// (NZ, NY, NX)).
//
// The file (write_field(domain, field, "u.raw", "u")):
//   u.raw       the global array as raw little-endian float64, nothing else
//               (np.fromfile("u.raw", "<f8").reshape(NZ, NY, NX))
//   u.raw.json  its description: grid, dtype, order, name, hympi version,
//               the writer's rank count and process grid
//   u.raw.xmf   an XDMF description of u.raw (ParaView and VisIt open it)
// Each is written under a temporary name beside it and renamed into place
// once complete, so no half-written file is ever left under those names.
// A file written on any number of ranks and process grid reads back on any
// other, bit for bit.
//
// Every function is collective over domain.comm() and is called by every
// rank with the same arguments (root, path, name); the halo of the field is
// neither read nor written. Errors are agreed: every rank throws the same
// exception with the same message, none hangs. Bad input (a field not of
// this domain, a missing file, a file of another grid, a bad root) is
// UsageError; a file that cannot be written is OutputError ("cannot write
// PATH: reason").
#pragma once

#include <string>

#include "hympi/domain.hpp"
#include "hympi/field.hpp"

namespace hympi {

// Version of the sidecar document (PATH.json's "hympi_field_version").
constexpr int kFieldFileVersion = 1;

// The field's own points of every rank into `global` on `root` (NX*NY*NZ
// doubles, i fastest; ignored, and may be null, on the other ranks).
void gather_field(Domain& domain, const Field& field, double* global, int root = 0);

// The inverse: `global` on `root` (NX*NY*NZ doubles; ignored elsewhere)
// into every rank's own points of `field`. The halo is left as it was.
void scatter_field(Domain& domain, const double* global, Field& field, int root = 0);

// The field as the file `path` plus its sidecar path + ".json" and XDMF
// description path + ".xmf". `name` names the field in both (1..64
// characters: letters, digits, '_', '-', '.').
void write_field(Domain& domain, const Field& field, const std::string& path,
                 const std::string& name);

// The file `path` into every rank's own points of `field`. The sidecar
// path + ".json", when present, must describe this domain's grid as
// float64 i fastest; without it, the file's size must be NX*NY*NZ*8 bytes.
void read_field(Domain& domain, Field& field, const std::string& path);

}  // namespace hympi
