#!/usr/bin/env bash
# Runs each fuzz target (built by `make fuzz` into DIR/<target>) for SECONDS with libFuzzer over
# its work corpus DIR/work/<target>, which starts as a copy of the committed seeds
# (fuzz/corpus/<target>) and grows from run to run, plus fuzz/regressions/<target> when there.
# Every target runs even when an earlier one fails; then a failure (crash, leak, sanitizer
# report, hang past -timeout, out of memory) fails the whole run, printing the input that
# caused it, which stays in DIR/crashes/<target>/.
#
# Usage: fuzz/run_fuzz.sh SECONDS DIR TARGET...   (from native-c/, as make runs it)
set -u
seconds=$1; dir=$2; shift 2
if [ "$seconds" -le 0 ]; then   # libFuzzer's 0 would mean: for ever
  echo "fuzz: skipped (FUZZ_SECONDS=$seconds); make test replays the committed inputs"
  exit 0
fi
failed=""
summary=""
for t in "$@"; do
  work="$dir/work/$t"; crashes="$dir/crashes/$t"; log="$dir/$t.log"
  mkdir -p "$work" "$crashes"
  cp fuzz/corpus/"$t"/* "$work"/
  extra=()
  [ -d "fuzz/regressions/$t" ] && extra=("fuzz/regressions/$t")
  echo "fuzz: $t for ${seconds} s (log: $log)"
  marker="$dir/.started-$t"; touch "$marker"
  "$dir/$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$crashes/" "$work" "${extra[@]}" >"$log" 2>&1
  rc=$?
  final=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log")
  runs=$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log")
  line="$t: ${runs:-?} runs, ${rate:-?} exec/s; ${final:-no status line}"
  found=$(find "$crashes" -type f -newer "$marker" | sort)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    failed="$failed $t"
    echo "FAIL $line"
    echo "---- $log (end) ----"
    tail -n 60 "$log"
    for f in $found; do
      echo "---- input $f ($(stat -c %s "$f") bytes) ----"
      od -A x -t x1z -v "$f" | head -n 40
    done
    echo "Reproduce: $dir/$t $crashes/<file>; or under gcc: make test builds replay_$t, which takes files as arguments."
    echo "Once fixed, add the input to fuzz/regressions/$t/ so that every make test replays it."
  else
    echo "PASS $line"
  fi
  summary="$summary$line"$'\n'
done
echo "---- fuzzing summary (${seconds} s per target) ----"
printf '%s' "$summary"
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed"
  exit 1
fi
echo "fuzz: no findings"
