"""The PETSc side of bench/peers.py, run under mpirun (one process per rank).

The same problem as `hympi solve` (docs/reference-problem.md), set up
the way a PETSc user would: a 3-D DMDA (star stencil, width 1, one dof,
DM_BOUNDARY_NONE = homogeneous Dirichlet outside the grid), the matrix from
DMCreateMatrix (AIJ), the 7-point operator A = 6 x - S(x) inserted row by row
(no coupling across the boundary).

  spmv: x <- (A / 12) x, ITERS MatMults with x and y swapped (the matrix
        holds A / 12, so the iterates are hympi's spmv's); x starts at the
        reference initial field.
  cg:   KSPCG + PCNONE on A u = 1, u = 0 at start, unpreconditioned residual
        norm, rtol TOL, atol 0.
  pipecg: the same with KSPPIPECG (Ghysels-Vanroose pipelined CG: one
        MPI_Iallreduce per iteration, overlapped with the MatMult).

Each of REPEAT repetitions is timed between barriers (max over ranks);
assembly and one untimed warm-up (a MatMult, or KSPSetUp) are set-up. Rank 0
prints one JSON object on stdout: times, iterations, checksum and l2 of the
final vector, PETSc's version and the matrix type.

  mpirun -n R python3 bench/peers_petsc.py spmv|cg|pipecg --grid N [--iters T]
         [--repeat R] [--tol X]
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import petsc4py

petsc4py.init(sys.argv[:1])
from petsc4py import PETSc  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="peers_petsc.py")
    p.add_argument("work", choices=["spmv", "cg", "pipecg"])
    p.add_argument("--grid", type=int, required=True)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--tol", type=float, default=1e-8)
    p.add_argument("--max-iters", type=int, default=10000)
    return p.parse_args(argv)


def build(n: int, scale: float) -> tuple[PETSc.DMDA, PETSc.Mat]:
    """The DMDA and scale * A, assembled from whole rows of CSR at once."""
    da = PETSc.DMDA().create(dim=3, sizes=(n, n, n), dof=1, stencil_width=1,
                             stencil_type=PETSc.DMDA.StencilType.STAR,
                             boundary_type=(PETSc.DM.BoundaryType.NONE,) * 3)
    da.setMatType(PETSc.Mat.Type.AIJ)
    da.setUp()
    A = da.createMatrix()
    (xs, xe), (ys, ye), (zs, ze) = da.getRanges()
    (gxs, gxe), (gys, gye), (gzs, gze) = da.getGhostRanges()
    gx, gy = gxe - gxs, gye - gys
    k, j, i = np.meshgrid(np.arange(zs, ze), np.arange(ys, ye), np.arange(xs, xe), indexing="ij")
    i, j, k = i.ravel(), j.ravel(), k.ravel()
    rows = i.size
    # Entries per row in CRS order (diagonal, -i, +i, -j, +j, -k, +k),
    # the couplings that leave the grid dropped.
    cols = np.full((rows, 7), -1, dtype=np.int64)
    vals = np.zeros((rows, 7))
    local = lambda a, b, c: (a - gxs) + gx * ((b - gys) + gy * (c - gzs))  # noqa: E731
    cols[:, 0] = local(i, j, k)
    vals[:, 0] = 6.0 * scale
    for d, (di, dj, dk) in enumerate([(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0),
                                      (0, 0, -1), (0, 0, 1)], start=1):
        ni, nj, nk = i + di, j + dj, k + dk
        inside = (ni >= 0) & (ni < n) & (nj >= 0) & (nj < n) & (nk >= 0) & (nk < n)
        cols[inside, d] = local(ni[inside], nj[inside], nk[inside])
        vals[inside, d] = -1.0 * scale
    keep = cols >= 0
    lg = da.getLGMap()
    gcols = lg.apply(cols[keep].astype(PETSc.IntType)).astype(PETSc.IntType)
    indptr = np.zeros(rows + 1, dtype=PETSc.IntType)
    indptr[1:] = np.cumsum(keep.sum(axis=1))
    A.setValuesCSR(indptr, gcols, vals[keep])
    A.assemble()
    return da, A


def initial(da: PETSc.DMDA) -> PETSc.Vec:
    x = da.createGlobalVec()
    (xs, xe), (ys, ye), (zs, ze) = da.getRanges()
    k, j, i = np.meshgrid(np.arange(zs, ze), np.arange(ys, ye), np.arange(xs, xe), indexing="ij")
    x.setArray((((7 * i + 13 * j + 29 * k) % 17) / 16.0 - 0.5).ravel())
    return x


def timed(comm: PETSc.Comm, fn) -> float:
    """fn's time between barriers, the maximum over ranks (collective)."""
    comm.barrier()
    t0 = PETSc.Log.getTime()
    fn()
    t = PETSc.Log.getTime() - t0
    v = PETSc.Vec().createMPI((1, PETSc.DECIDE), comm=comm)
    v.setArray(np.array([t]))
    m = v.max()[1]
    v.destroy()
    return m


def run_spmv(args: argparse.Namespace, comm: PETSc.Comm) -> dict:
    da, A = build(args.grid, 1.0 / 12.0)
    x0 = initial(da)
    x, y = x0.duplicate(), x0.duplicate()
    A.mult(x0, y)  # warm-up
    times = []
    for _ in range(args.repeat):
        x0.copy(x)
        cur = [x, y]

        def loop() -> None:
            a, b = cur
            for _ in range(args.iters):
                A.mult(a, b)
                a, b = b, a
            cur[0] = a

        times.append(timed(comm, loop))
    res = cur[0]
    return {"times_s": times, "iterations": args.iters, "checksum": res.sum(),
            "l2": res.norm(PETSc.NormType.NORM_2), "mat_type": A.getType()}


def run_cg(args: argparse.Namespace, comm: PETSc.Comm, ksp_type: str) -> dict:
    da, A = build(args.grid, 1.0)
    b = da.createGlobalVec()
    b.set(1.0)
    u = b.duplicate()
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    ksp.setType(ksp_type)
    ksp.getPC().setType(PETSc.PC.Type.NONE)
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    ksp.setTolerances(rtol=args.tol, atol=0.0, max_it=args.max_iters)
    ksp.setInitialGuessNonzero(False)
    ksp.setUp()
    times = []
    for _ in range(args.repeat):
        u.set(0.0)
        times.append(timed(comm, lambda: ksp.solve(b, u)))
    return {"times_s": times, "iterations": ksp.getIterationNumber(),
            "converged_reason": int(ksp.getConvergedReason()),
            "residual": ksp.getResidualNorm() / b.norm(), "checksum": u.sum(),
            "l2": u.norm(PETSc.NormType.NORM_2), "mat_type": A.getType()}


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    comm = PETSc.COMM_WORLD
    if args.work == "spmv":
        out = run_spmv(args, comm)
    else:
        out = run_cg(args, comm, PETSc.KSP.Type.CG if args.work == "cg" else PETSc.KSP.Type.PIPECG)
    out["ksp_type"] = None if args.work == "spmv" else args.work
    out.update({"work": args.work, "grid": args.grid, "ranks": comm.getSize(),
                "petsc_version": ".".join(map(str, PETSc.Sys.getVersion())),
                "petsc4py_version": petsc4py.__version__})
    if comm.getRank() == 0:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
