/* The C API of hympi's user-kernel interface (the C++ one is
 * hympi/domain.hpp; the Fortran module `hympi` wraps this one).
 *
 * Opaque handles, status codes, no exception crosses it. Every function
 * returns HYMPI_SUCCESS or an error code; hympi_last_error() gives the
 * message of the last error on the calling thread.
 *
 * Fields are arrays of doubles over the local box plus `halo` points on every
 * side, i fastest: the point (i, j, k) of the local box (0 <= i < size[0],
 * halo points at -halo..-1 and size[d]..size[d]+halo-1) is
 *   data[(i + halo) + stride_j * (j + halo) + stride_k * (k + halo)].
 *
 * Thread rules: every hympi_* function is called by the thread that called
 * MPI_Init_thread, outside any parallel region. The box callback runs on
 * hympi's threads inside hympi's parallel regions; it must not call MPI or
 * hympi_* functions, and writes only the points of the box it is given.
 */
#ifndef HYMPI_H
#define HYMPI_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  HYMPI_SUCCESS = 0,
  HYMPI_ERR_USAGE = 1,      /* bad argument or configuration */
  HYMPI_ERR_MPI = 2,        /* an MPI call failed */
  HYMPI_ERR_KERNEL = 3,     /* the box callback returned non-zero */
  HYMPI_ERR_OUTPUT = 4,     /* a report file could not be written */
  HYMPI_ERR_STATE = 5,      /* called outside MPI init/finalize, or a freed handle */
  HYMPI_ERR_INTERNAL = 6
};

/* What a failing callback does: stop every rank (print one line, MPI_Abort
 * with code 3), or return HYMPI_ERR_KERNEL on the failing rank. */
enum { HYMPI_ON_ERROR_ABORT = 0, HYMPI_ON_ERROR_RETURN = 1 };

/* The stencil's shape (hympi_domain_config.stencil): star reads the halo
 * along the axes only (its faces); box reads every point within `halo` along
 * each axis at once (27 points at halo 1), so the exchange also brings the
 * halo's edges and corners (26 neighbours), under every scheme. */
enum { HYMPI_STENCIL_STAR = 0, HYMPI_STENCIL_BOX = 1 };

typedef struct hympi_domain_s* hympi_domain;
typedef struct hympi_field_s* hympi_field;

/* A box of local points: half-open [lo, hi) per direction (0 = i). */
typedef struct {
  int lo[3];
  int hi[3];
} hympi_box;

/* The update of one box by thread `thread`. Returns 0, or non-zero to fail
 * the sweep. `partial` (never NULL) starts at 0 for each call: add the box's
 * part of a sum to it (hympi_sweep_sum); ignore it otherwise. */
typedef int (*hympi_box_fn)(const hympi_box* box, int thread, void* user, double* partial);

typedef struct {
  int grid[3];          /* global points NX, NY, NZ */
  int periodic[3];      /* 0 or 1 per axis */
  int halo;             /* halo width >= 1 */
  const char* scheme;   /* registered scheme name; NULL: pure MPI (masteronly) */
  int threads;          /* >= 1 */
  int reserved;         /* 0: scheme default */
  int ranks_per_node;   /* 0: real nodes */
  int on_error;         /* HYMPI_ON_ERROR_ABORT (default) or _RETURN */
  int depth;            /* temporal blocking: sweeps per exchange in
                           hympi_sweep_block, 1..64 (default 1); fields then
                           carry halo * depth layers (hympi_domain_layout) */
  int proc_grid[3];     /* process grid PX, PY, PZ, product = the ranks; all 0
                           (default): chosen node-aware */
  int rank_order;       /* virtual nodes (ranks_per_node > 0): consecutive
                           ranks on a node (HYMPI_RANK_ORDER_SEQUENTIAL,
                           default) or rank r on node r % nodes (_ROUND_ROBIN) */
  int stencil;          /* HYMPI_STENCIL_STAR (default) or HYMPI_STENCIL_BOX */
} hympi_domain_config;

/* hympi_domain_config.rank_order. */
enum { HYMPI_RANK_ORDER_SEQUENTIAL = 0, HYMPI_RANK_ORDER_ROUND_ROBIN = 1 };

/* Defaults: grid 0 (must be set), not periodic, halo 1, pure MPI, 1 thread,
 * depth 1, process grid chosen, sequential rank order, star stencil. New
 * members are added at the end of the struct (depth, proc_grid, rank_order,
 * stencil were): fill it with this function, never a literal initialiser,
 * and build against the header of the library you link. */
void hympi_domain_config_init(hympi_domain_config* config);

/* Message of the last error on this thread ("" when none). */
const char* hympi_last_error(void);

/* Collective over comm. */
int hympi_domain_create(MPI_Comm comm, const hympi_domain_config* config, hympi_domain* domain);
/* The same with a Fortran communicator handle (comm%MPI_VAL of an mpi_f08
 * type(MPI_Comm), or an mpi-module integer), for C code called from Fortran.
 * The Fortran module creates its domains through its own entry, whose error
 * messages give boxes in Fortran's 1-based inclusive indices. */
int hympi_domain_create_f(MPI_Fint comm, const hympi_domain_config* config, hympi_domain* domain);
int hympi_domain_free(hympi_domain* domain); /* sets *domain to NULL */

/* This rank's box: size[3], offset[3] (global index of local point 0). */
int hympi_domain_local(hympi_domain domain, int size[3], int offset[3]);
/* Layout of every field: halo, strides of j and k, doubles per array. */
int hympi_domain_layout(hympi_domain domain, int* halo, ptrdiff_t* stride_j,
                        ptrdiff_t* stride_k, size_t* count);
int hympi_domain_threads(hympi_domain domain, int* threads);

/* A zero field allocated by hympi (first touched by its threads), or one
 * over the caller's array of `count` doubles (not owned). */
int hympi_field_create(hympi_domain domain, hympi_field* field);
int hympi_field_wrap(hympi_domain domain, double* data, hympi_field* field);
int hympi_field_data(hympi_field field, double** data);
int hympi_field_free(hympi_field* field); /* sets *field to NULL */

/* One sweep: exchange the halos of fields[0..nfields-1] (one message per
 * neighbour and direction), then call fn on boxes covering every local
 * point once. Collective. */
int hympi_sweep(hympi_domain domain, int nfields, const hympi_field* fields, hympi_box_fn fn,
                void* user);
/* The same, and *sum = the callbacks' partials summed over threads and ranks. */
int hympi_sweep_sum(hympi_domain domain, int nfields, const hympi_field* fields,
                    hympi_box_fn fn, void* user, double* sum);
/* The update of one box in a two-array sweep (hympi_sweep_block): writes
 * out's points of the box from in (both arrays of the domain's layout).
 * Returns 0, or non-zero to fail the block. */
typedef int (*hympi_pair_fn)(const double* in, double* out, const hympi_box* box, int thread,
                             void* user);
/* Temporal blocking: `sweeps` (1..config.depth) sweeps of out = F(in) with
 * one halo exchange of *in, halo * depth layers deep with edges and corners.
 * Under a scheme that overlaps, the first sweep goes through the scheme over
 * the box grown into the halo; the others run as a cache-blocked wavefront
 * over k planes, whose boxes may lie partly in the halo (a layer less per
 * sweep). fn may be a star or a box stencil (the deep halo holds edges and
 * corners) reading at most `halo` points along each axis, computing a point
 * the same way wherever it lies: the result is
 * then the one of `sweeps` plain sweeps to the last bit. The handles swap
 * after every sweep: on return *in holds the result (after a failed
 * callback the arrays' contents are undefined). Collective. */
int hympi_sweep_block(hympi_domain domain, hympi_field* in, hympi_field* out, int sweeps,
                      hympi_pair_fn fn, void* user);
/* Temporal blocking, before hympi_start_clock: runs blocks of `sweeps`
 * sweeps of fn (as hympi_sweep_block) until every rank has chosen the height
 * of its wavefront tiles for that block (the first blocks of a shape time
 * two heights), so that the timed loop runs at steady speed from its first
 * block (C++: Domain::tune_block). The choice holds for the process: a
 * later call for the same shape runs no block. Overwrites both fields
 * (halos included): initialise them after. The handles swap as in
 * hympi_sweep_block. *blocks (NULL: not wanted) = the blocks run.
 * Collective. */
int hympi_tune_block(hympi_domain domain, hympi_field* in, hympi_field* out, int sweeps,
                     hympi_pair_fn fn, void* user, int* blocks);
/* Every local point once, no exchange; *sum as above (sum may be NULL). */
int hympi_for_each(hympi_domain domain, hympi_box_fn fn, void* user, double* sum);

/* Timing of the caller's loop (collective start: barrier, then zero). */
int hympi_start_clock(hympi_domain domain);
int hympi_stop_clock(hympi_domain domain);
/* Collective: sum and l2 norm of a field's local points over all ranks. */
int hympi_checksum(hympi_domain domain, hympi_field field, double* sum, double* l2);
/* Collective: the timed loop's summary as JSON on path (rank 0 writes;
 * "-" is stdout), read by `hympi-lab study --app`. name: the kernel's name. */
int hympi_report_json(hympi_domain domain, const char* path, const char* name);
/* The same, with the checksum (sum and l2 norm over all ranks) of each of
 * fields[0..nfields-1] under its name (names[i], 1..64 printable ASCII
 * characters, unique; names NULL: "field1", "field2", ...): hympi-lab study
 * --app checks that every scheme computed the same fields. Collective. */
int hympi_report_json_fields(hympi_domain domain, const char* path, const char* name, int nfields,
                             const hympi_field* fields, const char* const* names);
/* The program's own compiler and flags, written into the domain's later
 * reports beside hympi's (hympi cannot see how the program was built).
 * HYMPI_REPORT_BUILD(domain) passes those of the file that calls it. */
int hympi_report_build(hympi_domain domain, const char* compiler, const char* flags);

/* Registered scheme names joined by ", " (static storage). */
const char* hympi_scheme_names(void);

/* Which of this rank's six faces are physical boundaries: boundary[f] = 1
 * or 0 for f = 0..5, ordered -i, +i, -j, +j, -k, +k. A face is physical
 * when it lies on the global grid's edge along a non-periodic axis (a
 * periodic axis has none). hympi never writes the halo beyond a physical
 * face: the boundary values the user puts there persist (docs/user-kernels.md,
 * "Boundary values"). Not collective. */
int hympi_domain_boundaries(hympi_domain domain, int boundary[6]);
/* ---- Field I/O (docs/field-io.md; C++: hympi/field_io.hpp) ----
 * The global array: NX*NY*NZ doubles, i fastest, no halo (point (i, j, k)
 * at global[i + NX * (j + NY * k)]). The file PATH: the global array as raw
 * little-endian float64, nothing else, with the sidecar PATH.json (grid,
 * dtype, order, name, version, the writer's ranks and process grid) and
 * PATH.xmf (XDMF: ParaView and VisIt open it); each is renamed into place
 * once complete. A file written on any number of ranks reads back bit for
 * bit on any other. Every function is collective over the domain's
 * communicator, with the same root/path/name on every rank; the halo is
 * neither read nor written. Errors are the same on every rank:
 * HYMPI_ERR_USAGE (a field of another domain, a missing file, a file of
 * another grid, a bad root or name), HYMPI_ERR_OUTPUT (a path that cannot
 * be written). */

/* The global grid NX, NY, NZ (to size a global array). Local. */
int hympi_domain_grid(hympi_domain domain, int grid[3]);
/* The field's own points of every rank into global on root (NX*NY*NZ
 * doubles; ignored, may be NULL, on the other ranks). */
int hympi_field_gather(hympi_domain domain, hympi_field field, int root, double* global);
/* global on root (ignored elsewhere) into every rank's own points of field. */
int hympi_field_scatter(hympi_domain domain, const double* global, int root, hympi_field field);
/* The field as the file path (+ path.json, path.xmf); name: 1..64 letters,
 * digits, '_', '-', '.'. */
int hympi_field_write(hympi_domain domain, hympi_field field, const char* path, const char* name);
/* The file path into field: path.json, when present, must give the
 * domain's grid; without it the file must hold NX*NY*NZ*8 bytes. */
int hympi_field_read(hympi_domain domain, hympi_field field, const char* path);

#ifdef __cplusplus
}
#endif

/* The compiler of the file that expands it, from its predefined macros
 * (define HYMPI_APP_COMPILER to override). */
#ifndef HYMPI_APP_COMPILER
#ifdef __cplusplus
#define HYMPI_APP_LANGUAGE_ " (C++)"
#else
#define HYMPI_APP_LANGUAGE_ " (C)"
#endif
#if defined(__INTEL_LLVM_COMPILER) && defined(__VERSION__)
#define HYMPI_APP_COMPILER "Intel oneAPI " __VERSION__ HYMPI_APP_LANGUAGE_
#elif defined(__clang__)
#define HYMPI_APP_COMPILER "Clang " __clang_version__ HYMPI_APP_LANGUAGE_
#elif defined(__GNUC__) && defined(__VERSION__)
#define HYMPI_APP_COMPILER "GCC " __VERSION__ HYMPI_APP_LANGUAGE_
#elif defined(__VERSION__)
#define HYMPI_APP_COMPILER __VERSION__ HYMPI_APP_LANGUAGE_
#else
#define HYMPI_APP_COMPILER "unknown" HYMPI_APP_LANGUAGE_
#endif
#endif
/* The flags the file was compiled with: no compiler exposes them as a
 * macro, so the build defines it (examples/CMakeLists.txt:
 * -DHYMPI_APP_FLAGS="-O3 -march=native"); otherwise say so, with what the
 * predefined macros do tell. */
#ifndef HYMPI_APP_FLAGS
#ifdef __OPTIMIZE__
#define HYMPI_APP_FLAGS "not given (compile with -DHYMPI_APP_FLAGS=...); optimised (__OPTIMIZE__)"
#else
#define HYMPI_APP_FLAGS "not given (compile with -DHYMPI_APP_FLAGS=...); not optimised (no __OPTIMIZE__)"
#endif
#endif
#define HYMPI_REPORT_BUILD(domain) hympi_report_build((domain), HYMPI_APP_COMPILER, HYMPI_APP_FLAGS)

#endif /* HYMPI_H */
