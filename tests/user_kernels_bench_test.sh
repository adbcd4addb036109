#!/usr/bin/env bash
# bench/user_kernels.sh on a tiny grid, one round, 2 ranks: it runs,
# prints a row per example with positive rates and the
# depth-1 and depth-4 checksums equal; an example whose blocked run prints
# another checksum (a wrapper that changes one digit) makes it exit 1 and
# say which (at 1 rank); bad input exits 2 with one line.
#   usage: user_kernels_bench_test.sh SCRIPT BINDIR MPIEXEC
set -u
script=$1 bin=$2 mpiexec=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
small=(--grid 16 --steps 8 --depth 4 --rounds 1 --mpiexec "$mpiexec")

RANKS=2 timeout 120 bash "$script" "${small[@]}" --bin "$bin" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then
  fail "the bench exited $rc"
  cat "$tmp/out" "$tmp/err"
elif python3 - "$tmp/out" <<'PY'; then pass; else fail "its table"; cat "$tmp/out"; fi
import sys
rows = {}
for line in open(sys.argv[1]):
    words = line.split()
    if words and words[0].isdigit():
        rows[(int(words[0]), words[1])] = words
assert set(rows) == {(r, a) for r in (2,) for a in ("heat_c", "heat_f", "user_kernel")}, rows
for (ranks, app), w in rows.items():
    assert float(w[2]) > 0, w                  # depth-1 MLUP/s, median
    if app == "user_kernel":
        assert w[4] == "-", w                  # depth 1 only
        continue
    assert float(w[4]) > 0 and float(w[6]) > 0, w  # depth-4 MLUP/s, ratio
    # One round: the ratio is the two rates' (printed rounded to whole MLUP/s).
    one, blocked, ratio = float(w[2]), float(w[4]), float(w[6])
    assert abs(ratio - blocked / one) <= ratio * (0.5 / one + 0.5 / blocked) + 0.006, w
    assert " ".join(w[8:]) == "equal to the last digit", w
PY

# A heat_c whose blocked runs print a checksum one digit off.
fake=$tmp/bin
mkdir -p "$fake"
ln -s "$bin/heat_f" "$fake/heat_f"
ln -s "$bin/user_kernel" "$fake/user_kernel"
cat > "$fake/heat_c" <<EOF
#!/usr/bin/env bash
case " \$* " in
  *" --halo-depth "*) "$bin/heat_c" "\$@" | sed 's/^checksum sum -\{0,1\}[0-9.]*[0-9]/&1/' ;;
  *) exec "$bin/heat_c" "\$@" ;;
esac
EOF
chmod +x "$fake/heat_c"
RANKS=1 timeout 120 bash "$script" "${small[@]}" --bin "$fake" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "heat_c .*DIFFER" "$tmp/out" && grep -q "different checksums: heat_c at 1 rank" "$tmp/err" &&
   grep -q "heat_f .*equal to the last digit" "$tmp/out"; then
  pass
else
  fail "a changed checksum: exit $rc"
  cat "$tmp/out" "$tmp/err"
fi

# Bad input: exit 2, one line, nothing run.
for bad in "--grid 0" "--depth 1" "--rounds x" "--steps" "--frobnicate 3"; do
  # shellcheck disable=SC2086
  timeout 30 bash "$script" $bad --bin "$bin" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "^user_kernels.sh: " "$tmp/err"; then
    pass
  else
    fail "bad input '$bad': exit $rc"
    cat "$tmp/err"
  fi
done
RANKS=1 timeout 30 bash "$script" --bin "$tmp/nowhere" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "is not built" "$tmp/err"; then pass; else fail "a missing build: exit $rc"; fi
echo "user_kernels_bench_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
