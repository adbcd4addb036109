# Shared by cli_test.sh and bench_test.sh (sourced): run hympi under MPI and
# check its exit code and output. The caller sets hympi, mpiexec, preflags
# (array) and may set CHECK_TIMEOUT (seconds, default 60); it reads passed,
# failed, rc and out.
passed=0
failed=0

run() {  # run NP ARGS... -> sets rc, out (stdout+stderr)
  local np=$1
  shift
  out=$(timeout "${CHECK_TIMEOUT:-60}" "$mpiexec" -n "$np" "${preflags[@]}" "$hympi" "$@" 2>&1)
  rc=$?
}

fail() {
  failed=$((failed + 1))
  printf 'FAIL %s\n' "$*"
}

check() {  # check NAME EXPECTED_RC NEEDLE NP ARGS...
  local name=$1 want=$2 needle=$3 np=$4
  shift 4
  run "$np" "$@"
  local why=""
  [ "$rc" = 124 ] && why="hung (killed after ${CHECK_TIMEOUT:-60} s)"
  [ -z "$why" ] && [ "$rc" != "$want" ] && why="exit code $rc, expected $want"
  [ -z "$why" ] && ! grep -qF -- "$needle" <<< "$out" && why="output lacks '$needle'"
  if [ -z "$why" ] && [ "$want" = 2 ]; then
    # One message, from rank 0 only.
    local n
    n=$(grep -c "hympi: error" <<< "$out")
    [ "$n" != 1 ] && why="$n error messages, expected 1 (rank 0 only)"
  fi
  if [ -z "$why" ]; then
    passed=$((passed + 1))
  else
    fail "$name: $why"
    printf '  command: hympi %s\n  output: %s\n' "$*" "$(head -c 800 <<< "$out")"
  fi
}
