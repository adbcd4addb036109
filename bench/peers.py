#!/usr/bin/python3
"""hympi against PETSc, side by side, in one invocation (`make bench-peers`).

For each rank count (RANKS from the environment, e.g. RANKS="1 2 4 8 16";
default "1 2"), R rounds; each round runs, in an order that rotates from round
to round, every case once as its own `mpirun` (one thread per rank, bound to
a core when the ranks fit the cores):

  stream-copy         bench/stream_copy.cpp: b[i] = a[i] on every rank at once
                      (N^3 elements in all), 16 B per element
  spmv-{sell,crs,stencil}   hympi solve --kernel spmv --format F (N^3, T iterations)
  petsc-matmult       bench/peers_petsc.py spmv: DMDA + AIJ from DMCreateMatrix,
                      T MatMults on the same operator and start vector
  cg-{sell,crs,stencil}     hympi solve --kernel cg --format F (M^3, tol)
  petsc-kspcg         bench/peers_petsc.py cg: KSPCG + PCNONE, same tol
  pipecg-{sell,crs,stencil}  hympi solve --kernel pipecg --format F (M^3, tol):
                      pipelined CG, one MPI_Iallreduce per iteration overlapped
                      with the sweep
  petsc-kspipecg      bench/peers_petsc.py pipecg: KSPPIPECG + PCNONE, same tol
  halo                hympi bench pack --faces H: the library's halo exchange
                      (ExchangePlan::begin/end, as every scheme runs it, one
                      thread) and, in the same process, the exchange a plain MPI
                      code writes (pack a face, MPI_Sendrecv, unpack; direction
                      after direction) of the same six faces

A case's time in a round is the median of its in-process repetitions (the
loop only; set-up excluded on both sides; maximum over ranks); the table gives
the median, min and max over rounds, and each ratio peer time / hympi time
(PETSc's; MPI_Sendrecv's for the halo) as the median of the rounds' own
ratios (both ran in the same round); pipecg is also compared with PETSc's
KSPCG and with hympi's own cg of the same format. Before
any time counts, every run is checked: spmv's checksum and l2 against
PETSc's (1e-10 relative: the same iterates, rounded differently), cg's and
pipecg's iteration count (+-1 against KSPCG and KSPPIPECG; pipecg's +-2
against KSPCG) and solution (checksum and l2 to 1e-6 relative), and every
final relative residual below tol; a mismatch stops the benchmark (exit 1)
without ratios.

  bench/peers.py [--spmv-grid N] [--cg-grid M] [--iters T] [--rounds R]
                 [--repeat K] [--cg-repeat K] [--tol X] [--halo-face H]
                 [--only CASES] [--json PATH]

--only runs the listed cases only (comma-separated names from the list
above, e.g. --only cg-sell,pipecg-sell,petsc-kspcg,petsc-kspipecg); a ratio
or check whose cases are not both run is left out.

Writes a JSON document (schema_version 1, kind "peers") with a `context`
block (hympi's own context from its first run, plus PETSc's version, the
launcher and binding) and one result per rank count.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("sell", "crs", "stencil")
# Issue 8's targets, as PETSc time / hympi time.
TARGETS = {"spmv-sell": 1.2, "cg-sell": 1.3, "cg-stencil": 5.0, "halo": 0.95}
CASE_NAMES = (["stream-copy", "petsc-matmult", "petsc-kspcg", "petsc-kspipecg", "halo"]
              + [f"{k}-{f}" for f in FORMATS for k in ("spmv", "cg", "pipecg")])
# The peer each hympi case is checked and timed against, by kernel.
PEERS = {"spmv": ["petsc-matmult"], "cg": ["petsc-kspcg"],
         "pipecg": ["petsc-kspipecg", "petsc-kspcg"]}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/peers.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--spmv-grid", type=int, default=256, help="N: spmv on N^3 (default 256)")
    p.add_argument("--cg-grid", type=int, default=128, help="M: cg on M^3 (default 128)")
    p.add_argument("--iters", type=int, default=10, help="spmv iterations (default 10)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--repeat", type=int, default=3, help="spmv repetitions per run (default 3)")
    p.add_argument("--cg-repeat", type=int, default=1, help="cg repetitions per run (default 1)")
    p.add_argument("--tol", type=float, default=1e-8, help="cg relative residual (default 1e-8)")
    p.add_argument("--halo-face", type=int, default=256,
                   help="H: halo exchange of H^3 points per rank, faces of H^2 (default 256)")
    p.add_argument("--only", default=None, metavar="CASES",
                   help="only these cases, comma-separated (default: all)")
    p.add_argument("--ranks", default=os.environ.get("RANKS", "1 2"),
                   help="rank counts (default $RANKS or '1 2')")
    p.add_argument("--hympi", default=str(ROOT / "build" / "bin" / "hympi"))
    p.add_argument("--stream", default=str(ROOT / "build" / "bin" / "hympi_stream_copy"))
    p.add_argument("--mpirun", default="mpirun.openmpi",
                   help="Open MPI's launcher: Debian's PETSc is built on Open MPI")
    p.add_argument("--json", default=None,
                   help="output document (default results/bench-peers-<UTC time>.json)")
    a = p.parse_args(argv)
    bad = [f"--{k.replace('_', '-')} must be >= 1" for k in
           ("spmv_grid", "cg_grid", "iters", "rounds", "repeat", "cg_repeat", "halo_face")
           if getattr(a, k) < 1]
    try:
        a.rank_list = [int(r) for r in a.ranks.replace(",", " ").split()]
    except ValueError:
        a.rank_list = []
    if not a.rank_list or min(a.rank_list) < 1:
        bad.append(f"rank counts '{a.ranks}': expected positive integers, e.g. RANKS='1 2 4'")
    if not 0 < a.tol < 1:
        bad.append("--tol must be in (0, 1)")
    a.only_cases = None
    if a.only is not None:
        a.only_cases = [c for c in a.only.replace(" ", "").split(",") if c]
        unknown = [c for c in a.only_cases if c not in CASE_NAMES]
        if unknown or not a.only_cases:
            bad.append(f"--only: unknown case(s) {', '.join(unknown) or '(none given)'} "
                       f"(valid: {', '.join(CASE_NAMES)})")
    for exe in (a.hympi, a.stream):
        if not os.access(exe, os.X_OK):
            bad.append(f"{exe} is not built (make build)")
    if bad:
        p.error("; ".join(bad))
    return a


def petsc_env() -> dict[str, str]:
    """The environment for the PETSc runs: Debian's petsc4py finds itself
    through PETSC_DIR or /usr/lib/petsc (which only petsc-dev provides)."""
    env = dict(os.environ)
    if "PETSC_DIR" not in env and not os.path.isdir("/usr/lib/petsc"):
        found = sorted(glob.glob("/usr/lib/petscdir/petsc*/*-real"))
        if found:
            env["PETSC_DIR"] = found[-1]
    return env


class Runner:
    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.env = petsc_env()
        self.env.update({"OMP_NUM_THREADS": "1", "OMP_PROC_BIND": "false",
                         "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        self.hympi_context: dict | None = None
        self.commands: dict[str, str] = {}
        info = json.loads(self.run("info", [args.hympi, "info", "--json"]))
        spmv = next(k for k in info["kernels"] if k["name"] == "spmv")
        self.spmv_bytes = {"stencil": spmv["bytes_per_point"], "crs": spmv["bytes_per_point_crs"],
                           "sell": spmv["bytes_per_point_sell"]}

    def launcher(self, ranks: int) -> list[str]:
        cmd = [self.args.mpirun, "-n", str(ranks)]
        if ranks <= (os.cpu_count() or 1):
            cmd += ["--bind-to", "core", "--map-by", "core"]
        else:
            cmd += ["--oversubscribe", "--bind-to", "none"]
        if "PETSC_DIR" in self.env:
            cmd += ["-x", "PETSC_DIR"]
        return cmd + ["-x", "OMP_NUM_THREADS"]

    def binding(self, ranks: int) -> str:
        return "core" if ranks <= (os.cpu_count() or 1) else "none (oversubscribed)"

    def run(self, name: str, cmd: list[str]) -> str:
        self.commands.setdefault(name, shlex.join(cmd))
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"peers: {name} failed (exit {p.returncode}): {shlex.join(cmd)}\n"
                     f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
        return p.stdout

    def stream(self, ranks: int) -> dict:
        a = self.args
        out = self.run("stream-copy", self.launcher(ranks) + [
            a.stream, "--elements", str(a.spmv_grid ** 3), "--repeat", "5"])
        rates = json.loads(out.strip().splitlines()[-1])["bytes_per_s"]
        return {"time_s": 16.0 * a.spmv_grid ** 3 / statistics.median(rates),
                "bytes_per_s": statistics.median(rates)}

    def hympi(self, ranks: int, kernel: str, fmt: str) -> dict:
        a = self.args
        path = self.tmp / f"{kernel}-{fmt}-{ranks}.json"
        grid = a.spmv_grid if kernel == "spmv" else a.cg_grid  # cg, pipecg
        cmd = self.launcher(ranks) + [a.hympi, "solve", "--kernel", kernel, "--grid", f"{grid}^3",
                                      "--format", fmt, "--threads", "1", "--json", str(path)]
        if kernel == "spmv":
            cmd += ["--iters", str(a.iters), "--repeat", str(a.repeat)]
        else:
            cmd += ["--tol", repr(a.tol), "--repeat", str(a.cg_repeat)]
        self.run(f"{kernel}-{fmt}", cmd)
        doc = json.loads(path.read_text())
        if self.hympi_context is None:
            self.hympi_context = doc["context"]
        r = doc["results"][0]
        # stores: how the kernel wrote its output (--stores auto: streaming
        # where the arrays cannot stay in cache; absent from older binaries).
        return {"time_s": r["time_s"]["median"], "iterations": r["iters"],
                "checksum": r["checksum"], "l2": r["l2"], "stores": r.get("stores"),
                "residual": r.get("residual")}

    def halo(self, ranks: int) -> dict:
        """The library's exchange (1 thread) and plain MPI_Sendrecv, one run."""
        a = self.args
        path = self.tmp / f"halo-{ranks}.json"
        self.run("halo", self.launcher(ranks) + [
            a.hympi, "bench", "pack", "--faces", str(a.halo_face), "--threads", "1",
            "--repeat", str(a.repeat), "--json", str(path)])
        points = {r["method"]: r for r in json.loads(path.read_text())["results"]
                  if r["kind"] == "point" and r["threads"] == 1}
        if not all(p["halos_ok"] for p in points.values()):
            sys.exit(f"peers: wrong halo values at {ranks} ranks")
        return {"time_s": points["library"]["time_s"]["median"],
                "sendrecv_s": points["sendrecv"]["time_s"]["median"],
                "datatype_s": points["datatype"]["time_s"]["median"],
                "bytes_moved": points["library"]["bytes_moved"]}

    def petsc(self, ranks: int, work: str) -> dict:
        a = self.args
        grid = a.spmv_grid if work == "spmv" else a.cg_grid
        cmd = self.launcher(ranks) + [sys.executable, str(ROOT / "bench" / "peers_petsc.py"), work,
                                      "--grid", str(grid)]
        if work == "spmv":
            cmd += ["--iters", str(a.iters), "--repeat", str(a.repeat)]
        else:
            cmd += ["--tol", repr(a.tol), "--repeat", str(a.cg_repeat)]
        out = json.loads(self.run(f"petsc-{work}", cmd).strip().splitlines()[-1])
        out["time_s"] = statistics.median(out.pop("times_s"))
        return out


def rel(a: float, b: float) -> float:
    s = max(abs(a), abs(b))
    return abs(a - b) / s if s > 0 else 0.0


def check(name: str, got: dict, ref: dict, cg: bool, iterations_apart: int = 1,
          tol_residual: float = 1.0) -> str | None:
    """Why got is not the same result as PETSc's ref, or None."""
    if cg:
        if abs(got["iterations"] - ref["iterations"]) > iterations_apart:
            return f"{name}: {got['iterations']} iterations, PETSc {ref['iterations']}"
        for who, res in ((name, got), ("PETSc", ref)):
            if res.get("residual") is not None and not res["residual"] < tol_residual:
                return f"{name}: {who}'s final relative residual {res['residual']!r} is not below {tol_residual:g}"
        tol, scale = 1e-6, abs(ref["checksum"])
    else:
        # spmv's checksum sums values of both signs to about 0: compared on
        # the scale of l2 (its size), not its own.
        tol, scale = 1e-10, ref["l2"]
    if rel(got["l2"], ref["l2"]) > tol or abs(got["checksum"] - ref["checksum"]) > tol * scale:
        return (f"{name}: checksum {got['checksum']!r} l2 {got['l2']!r}, "
                f"PETSc {ref['checksum']!r} {ref['l2']!r}")
    return None


def summarise(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def measure(runner: Runner, ranks: int) -> dict:
    a = runner.args
    cases = {"stream-copy": lambda: runner.stream(ranks),
             "petsc-matmult": lambda: runner.petsc(ranks, "spmv"),
             "petsc-kspcg": lambda: runner.petsc(ranks, "cg"),
             "petsc-kspipecg": lambda: runner.petsc(ranks, "pipecg"),
             "halo": lambda: runner.halo(ranks)}
    for f in FORMATS:
        for kernel in PEERS:
            cases[f"{kernel}-{f}"] = lambda f=f, kernel=kernel: runner.hympi(ranks, kernel, f)
    names = [n for n in CASE_NAMES if a.only_cases is None or n in a.only_cases]
    rounds: list[dict[str, dict]] = []
    for r in range(a.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        done = {}
        for name in order:
            print(f"#   ranks {ranks}, round {r + 1}/{a.rounds}: {name}", file=sys.stderr, flush=True)
            done[name] = cases[name]()
        for name, res in done.items():
            kernel = name.rsplit("-", 1)[0]
            for peer in (p for p in PEERS.get(kernel, []) if p in done):
                # pipecg against KSPCG: the same solution, within 2 iterations.
                apart = 2 if (kernel, peer) == ("pipecg", "petsc-kspcg") else 1
                why = check(name, res, done[peer], kernel != "spmv", apart, a.tol)
                if why:
                    sys.exit(f"peers: not the same result at {ranks} ranks, round {r + 1}: {why}")
        rounds.append(done)
    points = {"spmv": a.spmv_grid ** 3 * a.iters}
    out: dict = {"ranks": ranks, "binding": runner.binding(ranks), "cases": {}, "ratios": {}}
    for name in names:
        times = [rd[name]["time_s"] for rd in rounds]
        c = {"time_s": summarise(times)}
        last = rounds[-1][name]
        if name == "stream-copy":
            c["bytes_per_s"] = summarise([rd[name]["bytes_per_s"] for rd in rounds])
            c["mlups"] = c["bytes_per_s"]["median"] / 16 / 1e6  # elements copied per second
        elif name == "halo":
            c["sendrecv_s"] = summarise([rd[name]["sendrecv_s"] for rd in rounds])
            c["datatype_s"] = summarise([rd[name]["datatype_s"] for rd in rounds])
            c["face"] = a.halo_face
        elif "cg" in name:
            c["iterations"] = last["iterations"]
            c["mlups"] = a.cg_grid ** 3 * last["iterations"] / c["time_s"]["median"] / 1e6
        else:
            c["mlups"] = points["spmv"] / c["time_s"]["median"] / 1e6
        for key in ("checksum", "l2", "stores", "mat_type", "petsc_version", "petsc4py_version"):
            if key in last:
                c[key] = last[key]
        out["cases"][name] = c
    for f in FORMATS:
        # pipecg also against hympi's own cg of the same format.
        pairs = [(f"{kernel}-{f}", peer) for kernel, peers in PEERS.items() for peer in peers]
        pairs.append((f"pipecg-{f}", f"cg-{f}"))
        for name, peer in pairs:
            if name not in names or peer not in names:
                continue
            per_round = [rd[peer]["time_s"] / rd[name]["time_s"] for rd in rounds]
            out["ratios"][f"{name} vs {peer}"] = {
                **summarise(per_round), "target": TARGETS.get(name) if peer.startswith("petsc") else None,
                "met": (statistics.median(per_round) >= TARGETS[name])
                if name in TARGETS and peer.startswith("petsc") else None}
    if "halo" in names:
        per_round = [rd["halo"]["sendrecv_s"] / rd["halo"]["time_s"] for rd in rounds]
        out["ratios"]["halo vs MPI_Sendrecv"] = {
            **summarise(per_round), "target": TARGETS["halo"],
            "met": statistics.median(per_round) >= TARGETS["halo"]}
    # hympi's spmv against the copy bandwidth: MLUP/s x the bytes per point
    # the kernel declares (hympi info) / copy's bytes per second.
    out["of_copy_bandwidth"] = {}
    if "stream-copy" in names:
        copy = out["cases"]["stream-copy"]["bytes_per_s"]["median"]
        out["of_copy_bandwidth"] = {
            f"spmv-{f}": out["cases"][f"spmv-{f}"]["mlups"] * 1e6 * runner.spmv_bytes[f] / copy
            for f in FORMATS if f"spmv-{f}" in names}
    return out


def table(res: dict, args: argparse.Namespace) -> str:
    lines = [f"# ranks {res['ranks']} (binding {res['binding']}, 1 thread per rank): spmv "
             f"{args.spmv_grid}^3 x {args.iters} iterations, cg {args.cg_grid}^3 to {args.tol:g}; "
             f"{args.rounds} rounds",
             f"# {'case':<16} {'median s':>11} {'min s':>11} {'max s':>11} {'MLUP/s':>10} {'iters':>6} "
             f"{'stores':>9}"]
    for name, c in res["cases"].items():
        t = c["time_s"]
        mlups = f"{c['mlups']:10.1f}" if "mlups" in c else f"{'-':>10}"
        lines.append(f"  {name:<16} {t['median']:11.5f} {t['min']:11.5f} {t['max']:11.5f} "
                     f"{mlups} {c.get('iterations', ''):>6} {c.get('stores') or '':>9}")
        if name == "halo":
            for other in ("sendrecv", "datatype"):
                o = c[f"{other}_s"]
                lines.append(f"  {'  ' + other:<16} {o['median']:11.5f} {o['min']:11.5f} {o['max']:11.5f}")
    if res["of_copy_bandwidth"]:
        lines.append("# spmv x its declared bytes per point / copy bandwidth: " + ", ".join(
            f"{n} {v:.2f}" for n, v in res["of_copy_bandwidth"].items()))
    lines.append(f"# {'peer time / hympi time':<34} {'median':>7} {'min':>7} {'max':>7}  target")
    for name, r in res["ratios"].items():
        tgt = "" if r["target"] is None else f">= {r['target']:g} {'met' if r['met'] else 'NOT met'}"
        lines.append(f"  {name:<34} {r['median']:7.2f} {r['min']:7.2f} {r['max']:7.2f}  {tgt}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started = dt.datetime.now(dt.timezone.utc)
    path = Path(args.json or ROOT / "results" / f"bench-peers-{started.strftime('%Y%m%dT%H%M%SZ')}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="hympi-peers-") as tmp:
        runner = Runner(args, Path(tmp))
        for ranks in args.rank_list:
            res = measure(runner, ranks)
            print(table(res, args), flush=True)
            results.append(res)
    petsc = next((c for c in results[0]["cases"].values() if "petsc_version" in c), {})
    context = dict(runner.hympi_context or {})
    context.update({
        "schema_version": 1,
        "date": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "command": shlex.join([sys.argv[0], *(sys.argv[1:] if argv is None else argv)]),
        "ranks_list": args.rank_list, "threads_per_rank": 1,
        "petsc_version": petsc.get("petsc_version"), "petsc4py_version": petsc.get("petsc4py_version"),
        "python": platform.python_version(), "launcher": args.mpirun,
        "commands": runner.commands,
    })
    for key in ("ranks", "thread_affinity", "thread_cpus", "nodes"):
        context.pop(key, None)  # per run, not per document: see each result's ranks and binding
    doc = {"schema_version": 1, "kind": "peers", "context": context,
           "config": {k: getattr(args, k) for k in
                      ("spmv_grid", "cg_grid", "iters", "rounds", "repeat", "cg_repeat", "tol",
                       "halo_face", "only")},
           "results": results}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"# wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
