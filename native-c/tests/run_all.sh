#!/usr/bin/env bash
# Runs every C test binary given, each with a time limit, and prints one summary line.
# A test binary is self-contained: it forks its own DECK processes where it needs several.
set -u
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"
passed=0; failed=0; failures=""
for t in "$@"; do
  if timeout 120 "$t" >"$t.log" 2>&1; then
    passed=$((passed + 1)); echo "PASS $t"
  else
    failed=$((failed + 1)); failures="$failures $t"; echo "FAIL $t"; tail -n 40 "$t.log"
  fi
done
echo "C tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
