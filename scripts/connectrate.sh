#!/usr/bin/env bash
# Connection set-up cost, Aldeia beside the JDK: runs ConnectRate (sequential connect + 1-byte
# echo + close, two JVMs) for jdk, aldeia (no configuration: DECK auto, shared memory here) and
# aldeia over DECK tcp, each free and pinned (server on core 0, client on core 1).
#   scripts/connectrate.sh [--connections 1000] [--warmup 3000] [--only jdk,aldeia-sci,aldeia-tcp] [--placement free,pinned]
# Needs a build (mvn -B -q install -DskipTests) and samples/target/classpath.txt (./aldeia builds it).
# Aldeia's own modules come from this checkout's target/classes, not from ~/.m2, which another
# checkout's `mvn install` may have replaced meanwhile.
# PROFILE_SERVER / PROFILE_CLIENT: extra JVM options of that side (e.g. -agentpath:...libasyncProfiler.so=...).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLASSPATH="$ROOT/samples/target/classes"
IFS=: read -r -a jars <"$ROOT/samples/target/classpath.txt" || true  # no newline at its end
for jar in "${jars[@]}"; do
    case "$jar" in
        */org/aldeia/aldeia-native/*) CLASSPATH+=":$ROOT/native-c/target/classes" ;;
        */org/aldeia/aldeia-*) module="${jar#*/org/aldeia/}"; CLASSPATH+=":$ROOT/${module%%/*}/target/classes" ;;
        *) CLASSPATH+=":$jar" ;;
    esac
done
connections=1000 warmup=3000 only="jdk,aldeia-sci,aldeia-tcp" placements="free,pinned"
while (($#)); do
    case "$1" in
        --connections) connections="$2"; shift 2 ;;
        --warmup) warmup="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --placement) placements="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/connectrate.XXXXXX")"
trap 'rm -rf "$work"' EXIT
printf 'deck_transport = tcp\n' >"$work/tcp.conf"

# One row: $1 = row name, $2 = placement.
row() {
    local name="$1" placement="$2" impl=aldeia options=() server_cpu=() client_cpu=()
    case "$name" in
        jdk) impl=jdk ;;
        aldeia-sci) ;;
        aldeia-tcp) options=("-Daldeia.configuration=$work/tcp.conf") ;;
        *) echo "unknown row $name" >&2; exit 2 ;;
    esac
    if [[ "$placement" == pinned ]]; then
        server_cpu=(taskset -c 0)
        client_cpu=(taskset -c 1)
    fi
    # shellcheck disable=SC2086 # PROFILE_* are lists of JVM options
    ${server_cpu[@]+"${server_cpu[@]}"} java ${options[@]+"${options[@]}"} ${PROFILE_SERVER:-} -cp "$CLASSPATH" \
        org.aldeia.samples.ConnectRate server --port 0 --impl "$impl" >"$work/server.out" 2>"$work/server.err" &
    local server=$! port=""
    for _ in $(seq 400); do # the server says which free port it took
        port="$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$work/server.out" 2>/dev/null)"
        [[ -n "$port" ]] || ! kill -0 "$server" 2>/dev/null && break
        sleep 0.05
    done
    if [[ -z "$port" ]]; then
        echo "the $name server did not start listening:" >&2
        cat "$work/server.err" >&2
        kill "$server" 2>/dev/null || true
        return 1
    fi
    # shellcheck disable=SC2086
    local line
    line="$(${client_cpu[@]+"${client_cpu[@]}"} java ${options[@]+"${options[@]}"} ${PROFILE_CLIENT:-} -cp "$CLASSPATH" \
        org.aldeia.samples.ConnectRate client --port "$port" --impl "$impl" \
        --connections "$connections" --warmup "$warmup" 2>"$work/client.err")" \
        || { cat "$work/client.err" >&2; kill "$server" 2>/dev/null; wait "$server" || true; return 1; }
    wait "$server" || { cat "$work/server.err" >&2; return 1; }
    printf '%-11s %-7s %s\n' "$name" "$placement" "${line#ConnectRate }"
}

IFS=, read -r -a rows <<<"$only"
IFS=, read -r -a where <<<"$placements"
for placement in "${where[@]}"; do
    for name in "${rows[@]}"; do
        row "$name" "$placement"
    done
done
