#!/usr/bin/env bash
# examples/dirichlet.c (non-zero Dirichlet values in the halo beyond the
# physical faces, hympi_domain_boundaries) against its serial reference
# (dirichlet_reference.c): the fingerprint of every point to the last bit,
# the checksum to 1e-12 relative, at 1-3 ranks, depth 1 (hympi_sweep) and 4
# (hympi_sweep_block: 9 steps, blocks of 4, 4, 1), several boundary values,
# forced and chosen process grids, periodic x, schemes without and with
# overlap. Then the two rules of docs/user-kernels.md ("Boundary values"),
# shown by breaking them: boundary values only over the rank's own box
# (--fill face) are enough at depth 1 but not in a temporal block across
# ranks; boundary values in one array of the pair only (--fill first) are
# wrong from the second step. Then bad input exits 2 with one line.
#   usage: dirichlet_test.sh APP REFERENCE MPIEXEC "PREFLAGS"
set -uo pipefail
app=$1 ref=$2 mpiexec=$3
IFS=';' read -r -a preflags <<< "${4:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
grid=24x20x18

# solve NP THREADS ARGS...: the example's output in $tmp/out (0: it ran).
solve() {
  local np=$1 nt=$2; shift 2
  OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$app" --grid "$grid" \
      --threads "$nt" "$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
}

# reference STEPS PERIODIC BOUNDARY: the serial result in $tmp/ref.
reference() { "$ref" ${grid//x/ } "$@" > "$tmp/ref"; }

# same: 0 when the fingerprints are equal and the checksums agree to 1e-12.
same() {
  python3 - "$tmp/out" "$tmp/ref" <<'PY'
import sys
def read(path):
    words = open(path).read().split()
    return float(words[2]), float(words[4]), words[6]
(s, l, f), (rs, rl, rf) = read(sys.argv[1]), read(sys.argv[2])
close = all(abs(x - y) <= 1e-12 * max(abs(x), abs(y), 1e-300) for x, y in ((s, rs), (l, rl)))
sys.exit(0 if close and f == rf else 1)
PY
}

# agree LABEL STEPS PERIODIC BOUNDARY NP THREADS ARGS...: the reference's result.
agree() {
  local label=$1 steps=$2 periodic=$3 boundary=$4 np=$5 nt=$6; shift 6
  local extra=()
  [ "$periodic" != - ] && extra=(--periodic "$periodic")
  reference "$steps" "$periodic" "$boundary"
  if ! solve "$np" "$nt" --steps "$steps" --boundary "$boundary" "${extra[@]}" "$@"; then
    failed=$((failed + 1)); echo "FAIL: $label exited non-zero"; cat "$tmp/err"; return
  fi
  if same; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: $label: not the reference's result"; cat "$tmp/out" "$tmp/ref"; fi
}

# differs LABEL STEPS BOUNDARY NP ARGS...: runs, and is not the reference's result.
differs() {
  local label=$1 steps=$2 boundary=$3 np=$4; shift 4
  reference "$steps" - "$boundary"
  if solve "$np" 1 --steps "$steps" --boundary "$boundary" "$@" && grep -q ^fingerprint "$tmp/out" && ! same
  then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: $label: expected a result other than the reference's"; cat "$tmp/out" "$tmp/err"; fi
}

hot=0,0,0,0,1,0 mixed=0.5,0,-0.25,0,1,0.125
for depth in 1 4; do
  agree "np=1 depth $depth hot -k" 9 - $hot 1 1 --halo-depth $depth
  agree "np=2 depth $depth 2x1x1 mixed" 9 - $mixed 2 1 --halo-depth $depth --proc-grid 2x1x1
  agree "np=2 depth $depth 1x2x1 mixed funneled" 9 - $mixed 2 2 --halo-depth $depth --proc-grid 1x2x1 --scheme funneled
  agree "np=3 depth $depth chosen grid mixed" 9 - $mixed 3 1 --halo-depth $depth
  agree "np=3 depth $depth 3x1x1 periodic x hot -k" 9 x $hot 3 1 --halo-depth $depth --proc-grid 3x1x1
  agree "np=3 depth $depth 1x1x3 mixed multiple-own" 9 - $mixed 3 3 --halo-depth $depth --proc-grid 1x1x3 --scheme multiple-own
done
agree "np=2 depth 4 2x1x1 mixed shared-window" 9 - $mixed 2 2 --halo-depth 4 --proc-grid 2x1x1 --scheme shared-window

# The rules, broken on purpose.
agree "--fill face at depth 1: the face's points are all a sweep reads" 9 - $hot 2 1 --proc-grid 2x1x1 --fill face
differs "--fill face at depth 4 across ranks" 9 $hot 2 --proc-grid 2x1x1 --fill face --halo-depth 4
agree "--fill face at depth 4 on one rank (no neighbour to recompute)" 9 - $hot 1 1 --fill face --halo-depth 4
differs "--fill first (one array of the pair)" 9 $hot 1 --fill first
differs "--fill first in a temporal block" 9 $hot 1 --fill first --halo-depth 4

bad() {  # bad LABEL EXPECTED_TEXT ARGS...
  local label=$1 expect=$2; shift 2
  OMP_NUM_THREADS=1 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" "$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(grep -c -- "$expect" "$tmp/err")" -eq 1 ] && ! grep -q "MPI_ABORT" "$tmp/err"; then
    passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL: $label (exit $rc)"; cat "$tmp/err"; fi
}
bad "a process grid of 3 ranks at 2" "\`proc_grid\` 3x1x1 has 3 processes, but there are 2 ranks" --proc-grid 3x1x1
bad "a bad fill" "bad value for --fill (slab, face or first): all" --fill all
bad "five boundary values" "bad value for --boundary" --boundary 1,2,3,4,5
bad "a bad periodic axis" "bad value for --periodic" --periodic w

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
