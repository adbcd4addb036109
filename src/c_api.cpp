// The C API (hympi/hympi.h) over hympi::Domain: opaque handles, status
// codes and a per-thread message; no exception crosses it.
#include "hympi/hympi.h"

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "hympi/domain.hpp"
#include "hympi/error.hpp"
#include "hympi/scheme.hpp"
#include "c_api_support.hpp"

struct hympi_domain_s {
  std::unique_ptr<hympi::Domain> domain;
};

struct hympi_field_s {
  hympi::Field field;
  hympi_domain owner;  // the domain whose layout the field has
};

namespace {

thread_local std::string g_last_error;

int fail(int code, const std::string& message) {
  g_last_error = message;
  return code;
}

// MPI must be initialised and not finalised for any call that touches it.
bool mpi_usable(const char* call) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) return true;
  g_last_error = std::string(call) + ": called " +
                 (initialized ? "after MPI_Finalize" : "before MPI_Init") +
                 " (hympi needs MPI between MPI_Init_thread and MPI_Finalize)";
  return false;
}

// The library's messages name DomainConfig's members in backquotes; C and
// Fortran call `halo_depth` `depth` (hympi_domain_config).
std::string c_names(std::string message) {
  const std::string from = "`halo_depth`", to = "`depth`";
  for (std::size_t at = message.find(from); at != std::string::npos; at = message.find(from, at))
    message.replace(at, from.size(), to);
  return message;
}

// Runs body, turning every exception into its status code and message.
template <typename Body>
int guarded(const char* call, Body&& body) {
  if (!mpi_usable(call)) return HYMPI_ERR_STATE;
  try {
    body();
    g_last_error.clear();
    return HYMPI_SUCCESS;
  } catch (const hympi::UsageError& e) {
    return fail(HYMPI_ERR_USAGE, std::string(call) + ": " + c_names(e.what()));
  } catch (const hympi::KernelError& e) {
    return fail(HYMPI_ERR_KERNEL, std::string(call) + ": " + e.what());
  } catch (const hympi::OutputError& e) {
    return fail(HYMPI_ERR_OUTPUT, std::string(call) + ": " + e.what());
  } catch (const hympi::MpiError& e) {
    return fail(HYMPI_ERR_MPI, std::string(call) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return fail(HYMPI_ERR_USAGE, std::string(call) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(HYMPI_ERR_INTERNAL, std::string(call) + ": " + e.what());
  } catch (...) {
    return fail(HYMPI_ERR_INTERNAL, std::string(call) + ": unknown error");
  }
}

hympi_box to_c_box(const hympi::Box& box) {
  hympi_box b;
  for (int d = 0; d < 3; ++d) {
    b.lo[d] = box.lo[d];
    b.hi[d] = box.hi[d];
  }
  return b;
}

// A callback's non-zero return fails the box (the Domain names scheme, box,
// rank and thread and applies the on_error policy).
void check_callback(int rc) {
  if (rc != 0) throw hympi::KernelError("the box callback returned " + std::to_string(rc));
}

// The user's callback as the Domain's update.
struct CallbackSum {
  hympi_box_fn fn;
  void* user;
  double operator()(const hympi::Box& box, int thread) const {
    const hympi_box b = to_c_box(box);
    double partial = 0;
    check_callback(fn(&b, thread, user, &partial));
    return partial;
  }
};

void check_domain(hympi_domain d) {
  if (!d || !d->domain) throw hympi::UsageError("the domain handle is NULL or freed");
}

std::vector<hympi::Field*> field_list(hympi_domain d, int nfields, const hympi_field* fields) {
  if (nfields < 1 || !fields)
    throw hympi::UsageError("a sweep needs at least one field (nfields >= 1, fields not NULL)");
  std::vector<hympi::Field*> list;
  for (int i = 0; i < nfields; ++i) {
    if (!fields[i]) throw hympi::UsageError("field " + std::to_string(i) + " is NULL");
    if (fields[i]->owner != d)
      throw hympi::UsageError("field " + std::to_string(i) + " belongs to another domain");
    list.push_back(&fields[i]->field);
  }
  return list;
}

// The body of the create calls: *domain = a new domain over comm (NULL
// until it is made). Collective.
void create_domain(MPI_Comm comm, const hympi_domain_config* config, hympi::BoxIndexing indexing,
                   hympi_domain* domain) {
  if (!config || !domain) throw hympi::UsageError("config and domain must not be NULL");
  *domain = nullptr;
  hympi::DomainConfig c;
  for (int d = 0; d < 3; ++d) {
    c.grid[d] = config->grid[d];
    c.periodic[d] = config->periodic[d] != 0;
  }
  c.halo = config->halo;
  c.threads = config->threads;
  c.reserved = config->reserved;
  c.ranks_per_node = config->ranks_per_node;
  c.halo_depth = config->depth;
  // Any other value reaches validate_domain, which refuses it by name.
  c.stencil = static_cast<hympi::Stencil>(config->stencil);
  c.box_indexing = indexing;
  for (int d = 0; d < 3; ++d) c.proc_grid[d] = config->proc_grid[d];  // validate_domain checks it
  if (config->rank_order != HYMPI_RANK_ORDER_SEQUENTIAL &&
      config->rank_order != HYMPI_RANK_ORDER_ROUND_ROBIN)
    throw hympi::UsageError(
        "rank_order must be HYMPI_RANK_ORDER_SEQUENTIAL or HYMPI_RANK_ORDER_ROUND_ROBIN (got " +
        std::to_string(config->rank_order) + ")");
  c.rank_order = config->rank_order == HYMPI_RANK_ORDER_ROUND_ROBIN ? hympi::RankOrder::RoundRobin
                                                                    : hympi::RankOrder::Sequential;
  if (config->on_error != HYMPI_ON_ERROR_ABORT && config->on_error != HYMPI_ON_ERROR_RETURN)
    throw hympi::UsageError("on_error must be HYMPI_ON_ERROR_ABORT or HYMPI_ON_ERROR_RETURN");
  c.on_error = config->on_error == HYMPI_ON_ERROR_RETURN ? hympi::KernelErrorPolicy::Throw
                                                         : hympi::KernelErrorPolicy::Abort;
  if (config->scheme) {
    c.scheme = hympi::find_scheme(config->scheme);
    if (!c.scheme)
      throw hympi::UsageError(std::string("unknown scheme '") + config->scheme +
                              "' (one of: " + hympi::scheme_names() + ")");
  }
  auto handle = std::make_unique<hympi_domain_s>();
  handle->domain = std::make_unique<hympi::Domain>(comm, c);
  *domain = handle.release();
}

// hympi_sweep_block and hympi_tune_block: the C fields behind the handles,
// the callback as a PairBoxFn, and the handles swapped as the fields were.
template <class Run>
int block_call(const char* call, hympi_domain domain, hympi_field* in, hympi_field* out,
               hympi_pair_fn fn, void* user, Run run) {
  return guarded(call, [&] {
    check_domain(domain);
    if (!fn) throw hympi::UsageError("the box callback is NULL");
    if (!in || !out || !*in || !*out) throw hympi::UsageError("`in` and `out` must be fields, not NULL");
    if ((*in)->owner != domain || (*out)->owner != domain)
      throw hympi::UsageError("`in` or `out` belongs to another domain");
    hympi::Field* a = &(*in)->field;
    hympi::Field* b = &(*out)->field;
    run(a, b, [fn, user](const hympi::Field& src, hympi::Field& dst, const hympi::Box& box, int t) {
      const hympi_box cb = to_c_box(box);
      check_callback(fn(src.data(), dst.data(), &cb, t, user));
    });
    if (a != &(*in)->field) std::swap(*in, *out);  // an odd number of sweeps
  });
}

}  // namespace

extern "C" {

void hympi_domain_config_init(hympi_domain_config* c) {
  if (!c) return;
  for (int d = 0; d < 3; ++d) {
    c->grid[d] = 0;
    c->periodic[d] = 0;
  }
  c->halo = 1;
  c->scheme = nullptr;
  c->threads = 1;
  c->reserved = 0;
  c->ranks_per_node = 0;
  c->on_error = HYMPI_ON_ERROR_ABORT;
  c->depth = 1;
  for (int d = 0; d < 3; ++d) c->proc_grid[d] = 0;
  c->rank_order = HYMPI_RANK_ORDER_SEQUENTIAL;
  c->stencil = HYMPI_STENCIL_STAR;
}

const char* hympi_last_error(void) { return g_last_error.c_str(); }

const char* hympi_scheme_names(void) {
  static const std::string names = hympi::scheme_names();
  return names.c_str();
}

int hympi_domain_create(MPI_Comm comm, const hympi_domain_config* config, hympi_domain* domain) {
  return guarded("hympi_domain_create", [&] {
    create_domain(comm, config, hympi::BoxIndexing::ZeroBasedHalfOpen, domain);
  });
}

int hympi_domain_create_f(MPI_Fint comm, const hympi_domain_config* config, hympi_domain* domain) {
  if (!mpi_usable("hympi_domain_create")) return HYMPI_ERR_STATE;
  return hympi_domain_create(MPI_Comm_f2c(comm), config, domain);
}

int hympi_domain_free(hympi_domain* domain) {
  if (!domain) return fail(HYMPI_ERR_USAGE, "hympi_domain_free: NULL pointer");
  if (!*domain) return HYMPI_SUCCESS;  // freeing NULL is a no-op, as free(NULL)
  // The Domain's destructor frees its communicator, which needs MPI: after
  // MPI_Finalize the handle is dropped and its memory left (no MPI call may
  // be made then).
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    (void)(*domain)->domain.release();
    delete *domain;
    *domain = nullptr;
    return fail(HYMPI_ERR_STATE,
                "hympi_domain_free: called after MPI_Finalize (free domains before it)");
  }
  delete *domain;
  *domain = nullptr;
  return HYMPI_SUCCESS;
}

int hympi_domain_local(hympi_domain domain, int size[3], int offset[3]) {
  return guarded("hympi_domain_local", [&] {
    check_domain(domain);
    const hympi::LocalDomain& l = domain->domain->local();
    for (int d = 0; d < 3; ++d) {
      if (size) size[d] = l.size[d];
      if (offset) offset[d] = l.offset[d];
    }
  });
}

int hympi_domain_layout(hympi_domain domain, int* halo, ptrdiff_t* stride_j, ptrdiff_t* stride_k,
                        size_t* count) {
  return guarded("hympi_domain_layout", [&] {
    check_domain(domain);
    const hympi::FieldLayout l = domain->domain->layout();
    if (halo) *halo = l.halo;
    if (stride_j) *stride_j = l.stride_j;
    if (stride_k) *stride_k = l.stride_k;
    if (count) *count = l.count;
  });
}

int hympi_domain_threads(hympi_domain domain, int* threads) {
  return guarded("hympi_domain_threads", [&] {
    check_domain(domain);
    if (!threads) throw hympi::UsageError("threads must not be NULL");
    *threads = domain->domain->threads();
  });
}

int hympi_field_create(hympi_domain domain, hympi_field* field) {
  return guarded("hympi_field_create", [&] {
    check_domain(domain);
    if (!field) throw hympi::UsageError("field must not be NULL");
    *field = new hympi_field_s{domain->domain->make_field(), domain};
  });
}

int hympi_field_wrap(hympi_domain domain, double* data, hympi_field* field) {
  return guarded("hympi_field_wrap", [&] {
    check_domain(domain);
    if (!field) throw hympi::UsageError("field must not be NULL");
    *field = new hympi_field_s{domain->domain->wrap_field(data), domain};
  });
}

int hympi_field_data(hympi_field field, double** data) {
  if (!field || !data) return fail(HYMPI_ERR_USAGE, "hympi_field_data: NULL argument");
  *data = field->field.data();
  return HYMPI_SUCCESS;
}

int hympi_field_free(hympi_field* field) {
  if (!field) return fail(HYMPI_ERR_USAGE, "hympi_field_free: NULL pointer");
  delete *field;
  *field = nullptr;
  return HYMPI_SUCCESS;
}

int hympi_sweep(hympi_domain domain, int nfields, const hympi_field* fields, hympi_box_fn fn,
                void* user) {
  return guarded("hympi_sweep", [&] {
    check_domain(domain);
    if (!fn) throw hympi::UsageError("the box callback is NULL");
    const CallbackSum cb{fn, user};
    domain->domain->sweep(field_list(domain, nfields, fields),
                          [&cb](const hympi::Box& box, int t) { cb(box, t); });
  });
}

int hympi_sweep_sum(hympi_domain domain, int nfields, const hympi_field* fields, hympi_box_fn fn,
                    void* user, double* sum) {
  return guarded("hympi_sweep_sum", [&] {
    check_domain(domain);
    if (!fn || !sum) throw hympi::UsageError("the box callback and sum must not be NULL");
    *sum = domain->domain->sweep_sum(field_list(domain, nfields, fields), CallbackSum{fn, user});
  });
}

int hympi_sweep_block(hympi_domain domain, hympi_field* in, hympi_field* out, int sweeps,
                      hympi_pair_fn fn, void* user) {
  return block_call("hympi_sweep_block", domain, in, out, fn, user,
                    [&](hympi::Field*& a, hympi::Field*& b, const hympi::PairBoxFn& update) {
                      domain->domain->sweep_block(a, b, sweeps, update);
                    });
}

int hympi_tune_block(hympi_domain domain, hympi_field* in, hympi_field* out, int sweeps,
                     hympi_pair_fn fn, void* user, int* blocks) {
  return block_call("hympi_tune_block", domain, in, out, fn, user,
                    [&](hympi::Field*& a, hympi::Field*& b, const hympi::PairBoxFn& update) {
                      // Checked here too: a shape with nothing to tune runs no block,
                      // so tune_block would not reach sweep_block's check.
                      const int depth = domain->domain->config().halo_depth;
                      if (sweeps < 1 || sweeps > depth)
                        throw hympi::UsageError("tune_block: " + std::to_string(sweeps) +
                                                " sweeps, but the domain's depth allows 1 to " +
                                                std::to_string(depth));
                      const int run = domain->domain->tune_block(a, b, sweeps, update);
                      if (blocks) *blocks = run;
                    });
}

int hympi_for_each(hympi_domain domain, hympi_box_fn fn, void* user, double* sum) {
  return guarded("hympi_for_each", [&] {
    check_domain(domain);
    if (!fn) throw hympi::UsageError("the box callback is NULL");
    const double s = domain->domain->for_each_sum(CallbackSum{fn, user});
    if (sum) *sum = s;
  });
}

int hympi_start_clock(hympi_domain domain) {
  return guarded("hympi_start_clock", [&] {
    check_domain(domain);
    domain->domain->start_clock();
  });
}

int hympi_stop_clock(hympi_domain domain) {
  return guarded("hympi_stop_clock", [&] {
    check_domain(domain);
    domain->domain->stop_clock();
  });
}

int hympi_checksum(hympi_domain domain, hympi_field field, double* sum, double* l2) {
  return guarded("hympi_checksum", [&] {
    check_domain(domain);
    if (!field || field->owner != domain)
      throw hympi::UsageError("the field is NULL or belongs to another domain");
    const auto c = domain->domain->checksum(field->field);
    if (sum) *sum = c[0];
    if (l2) *l2 = c[1];
  });
}

int hympi_report_json(hympi_domain domain, const char* path, const char* name) {
  return guarded("hympi_report_json", [&] {
    check_domain(domain);
    domain->domain->write_report(path ? path : "", name ? name : "kernel");
  });
}

int hympi_report_json_fields(hympi_domain domain, const char* path, const char* name, int nfields,
                             const hympi_field* fields, const char* const* names) {
  return guarded("hympi_report_json_fields", [&] {
    check_domain(domain);
    if (nfields < 0 || nfields > 1024) throw hympi::UsageError("nfields must be in 0..1024");
    std::vector<const hympi::Field*> list;
    std::vector<std::string> named;
    if (nfields > 0) {
      for (hympi::Field* f : field_list(domain, nfields, fields)) list.push_back(f);
      for (int i = 0; names && i < nfields; ++i) {
        if (!names[i])
          throw hympi::UsageError("names[" + std::to_string(i) + "] is NULL: give one name per field");
        named.emplace_back(names[i]);
      }
    }
    domain->domain->write_report(path ? path : "", name ? name : "kernel", list, named);
  });
}

int hympi_report_build(hympi_domain domain, const char* compiler, const char* flags) {
  return guarded("hympi_report_build", [&] {
    check_domain(domain);
    domain->domain->report_build(compiler ? compiler : "", flags ? flags : "");
  });
}

int hympi_domain_boundaries(hympi_domain domain, int boundary[6]) {
  return guarded("hympi_domain_boundaries", [&] {
    check_domain(domain);
    if (!boundary) throw hympi::UsageError("boundary must not be NULL");
    const std::array<bool, 6> physical = domain->domain->physical_boundaries();
    for (int f = 0; f < 6; ++f) boundary[f] = physical[f] ? 1 : 0;
  });
}

// The Fortran module's own entries (fortran/hympi_c.f90), not part of the
// C API and not in hympi.h.

// hympi_domain_create_f for the Fortran module: boxes in the domain's
// messages in Fortran's indices, and a handle that is still live on any rank
// (handle_live != 0: creating over it would lose it) refused on every rank.
// Collective over comm.
int hympi_fortran_domain_create(MPI_Fint comm, const hympi_domain_config* config,
                                int handle_live, hympi_domain* domain);
int hympi_fortran_domain_create(MPI_Fint comm, const hympi_domain_config* config,
                                int handle_live, hympi_domain* domain) {
  return guarded("hympi_domain_create", [&] {
    const MPI_Comm c = MPI_Comm_f2c(comm);
    int live = handle_live != 0;
    HYMPI_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &live, 1, MPI_INT, MPI_MAX, c));
    if (live)
      throw hympi::UsageError("the domain handle is still live on " +
                              std::string(handle_live ? "this rank" : "another rank") +
                              " (free it with hympi_domain_free first, or pass a fresh "
                              "hympi_domain)");
    create_domain(c, config, hympi::BoxIndexing::FortranInclusive, domain);
  });
}

// The module's own usage errors: message as hympi_last_error()'s text.
int hympi_fortran_fail(int code, const char* message);
int hympi_fortran_fail(int code, const char* message) {
  return fail(code, message ? message : "");
}

// *data = field's array, when field is a live field of domain (the array
// sweeps' second field, which C does not see). call names the routine.
int hympi_fortran_field_data(const char* call, hympi_domain domain, hympi_field field,
                             double** data);
int hympi_fortran_field_data(const char* call, hympi_domain domain, hympi_field field,
                             double** data) {
  return guarded(call, [&] {
    check_domain(domain);
    if (!field || field->owner != domain)
      throw hympi::UsageError("a field handle is not live (created and not freed) or belongs to "
                              "another domain");
    *data = field->field.data();
  });
}

}  // extern "C"

// For the C API's other files (c_api_support.hpp).
namespace hympi {
namespace detail {

int c_api_guarded(const char* call, const std::function<void()>& body) { return guarded(call, body); }

Domain& c_api_domain(hympi_domain domain) {
  check_domain(domain);
  return *domain->domain;
}

Field* c_api_field(hympi_domain domain, hympi_field field) {
  return field && field->owner == domain ? &field->field : nullptr;
}

}  // namespace detail
}  // namespace hympi
