#!/usr/bin/env bash
# Two emulated hosts on this machine, for tests (org.aldeia.microvapi.hosts.TwoHosts) and for
# people (./aldeia hosts). Needs root, iproute2 and util-linux (nsenter, unshare, mount, flock).
#
#   twohosts.sh check                    exit 0 if hosts can be made here, else 1 and the reason
#   twohosts.sh up [--owner PID]         makes a run; prints its id. With --owner, the run is
#                                        stale once that process has gone (the next `up` or
#                                        `clean` removes it); without, it stays until `down`
#   twohosts.sh exec ID A|B [--] CMD...  runs CMD in host A or B (exec: CMD keeps this pid)
#   twohosts.sh link ID down|up          cuts the link between the hosts, or restores it
#   twohosts.sh down ID                  kills every process in the hosts, removes everything
#   twohosts.sh list                     one line per run: id, owner, hosts
#   twohosts.sh clean                    removes the runs whose owner has gone
#
# A run ID is two network namespaces, aldeia-ID-a and aldeia-ID-b, joined by a veth pair (ahIDa in
# A with 198.18.0.1/24, ahIDb in B with 198.18.0.2/24; RFC 2544's benchmarking block, so never a
# real address), each with its loopback up. Each host also has a mount namespace of its own,
# kept in STATE/ID/a.mnt and b.mnt, in which
#   - /dev/shm is a fresh tmpfs: shared segments of one host are invisible to the other and to
#     this machine, as on real hosts;
#   - /proc/sys/kernel/random/boot_id shows a boot id of its own (a bind mount of STATE/ID/a.boot_id).
#     Both hosts run on one kernel, so without it they would report the same boot id, which is
#     how DECK's auto transport recognises a peer on its own host: it would then try the peer's
#     shared memory, fail to map it (other /dev/shm) and fall back to tcp calling the peer "same
#     host". Two real hosts have two boot ids; so does each emulated one, and auto says
#     "tcp (another host)" for the same reason as between real hosts;
#   - /sys is the network namespace's own sysfs, as under `ip netns exec`.
# Every process a test or a person starts in a host is in both namespaces, so `down` finds them
# all with `ip netns pids`.
set -euo pipefail

STATE="${ALDEIA_HOSTS_STATE:-/run/aldeia-hosts}"
ADDRESS_A=198.18.0.1
ADDRESS_B=198.18.0.2
PREFIX=24

die() {
    echo "twohosts: $*" >&2
    exit 1
}

netns() { echo "aldeia-$1-$2"; }      # run id, host letter (a|b)
veth() { echo "ah$1$2"; }              # 11 characters: interface names have at most 15

host_letter() {
    case "$1" in
        A | a) echo a ;;
        B | b) echo b ;;
        *) die "host must be A or B, not '$1'" ;;
    esac
}

valid_id() {
    [[ "$1" =~ ^[0-9a-f]{8}$ ]] || die "'$1' is not a run id (8 hex digits; \`twohosts.sh list\` shows the runs)"
}

# Why hosts cannot be made here, or nothing.
why_not() {
    if ((EUID != 0)); then
        echo "not root (uid $EUID): emulated hosts need network and mount namespaces, which only root can make"
        return
    fi
    local tool
    for tool in ip nsenter unshare mount umount flock; do
        command -v "$tool" >/dev/null 2>&1 || { echo "'$tool' is not on the PATH (iproute2, util-linux)"; return; }
    done
    # Inside an emulated host (its boot id is a bind mount) new hosts' namespaces would be
    # bound in that host's mount namespace alone: not supported.
    if grep -q ' /proc/sys/kernel/random/boot_id ' /proc/self/mountinfo; then
        echo "this shell runs inside an emulated host; make hosts from the machine itself"
        return
    fi
    ip netns list >/dev/null 2>&1 || { echo "'ip netns' does not work here: $(ip netns list 2>&1 | head -1)"; return; }
    # Root in a container without CAP_SYS_ADMIN / CAP_NET_ADMIN cannot make namespaces either.
    unshare --net --mount true 2>/dev/null || echo "cannot create network and mount namespaces here (unshare --net --mount failed: no CAP_SYS_ADMIN?)"
}

# "pid starttime" of a live process: the start time tells a reused pid from the owner.
process_identity() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    local fields
    read -r -a fields <<<"${stat##*) }"   # after the command name, which may hold spaces
    echo "$1 ${fields[19]}"
}

# True when a run's owner has gone (runs without an owner are never stale).
stale() {
    local owner
    owner="$(cat "$STATE/$1/owner" 2>/dev/null)" || return 0   # half made or half removed
    [[ "$owner" != kept ]] || return 1
    [[ "$(process_identity "${owner%% *}" 2>/dev/null)" != "$owner" ]]
}

# The state directory must be a mount point with private propagation: the namespaces are kept
# alive by bind mounts of their /proc/PID/ns files there, which unshare refuses on a shared
# mount (systemd makes / shared). ip netns does the same for /run/netns.
prepare_state() {
    mkdir -p "$STATE"
    chmod 0700 "$STATE"
    mountpoint -q "$STATE" || mount --bind "$STATE" "$STATE"
    mount --make-private "$STATE"
}

# Everything of run ID that exists, removed; safe on a half-made or already removed run.
remove_run() {
    local id="$1" h ns pids
    for h in a b; do
        ns="$(netns "$id" "$h")"
        [[ -e "/run/netns/$ns" ]] || continue
        # Ask first, then insist: a JVM's shutdown hook removes its DECK segments.
        pids="$(ip netns pids "$ns" 2>/dev/null || true)"
        [[ -z "$pids" ]] || kill -TERM $pids 2>/dev/null || true
    done
    for h in a b; do
        ns="$(netns "$id" "$h")"
        [[ -e "/run/netns/$ns" ]] || continue
        local tries=50
        while pids="$(ip netns pids "$ns" 2>/dev/null)" && [[ -n "$pids" ]] && ((tries-- > 0)); do
            sleep 0.1
        done
        [[ -z "$pids" ]] || { kill -KILL $pids 2>/dev/null || true; sleep 0.1; }
    done
    for h in a b; do
        # The mount namespace (and with it /dev/shm's tmpfs and the boot id mount) ends with its
        # last reference: this bind mount, once its processes are gone.
        if mountpoint -q "$STATE/$id/$h.mnt" 2>/dev/null; then
            umount "$STATE/$id/$h.mnt" || umount -l "$STATE/$id/$h.mnt"
        fi
        # Deleting a namespace deletes the veth end in it, and so the pair.
        ns="$(netns "$id" "$h")"
        [[ ! -e "/run/netns/$ns" ]] || ip netns delete "$ns"
    done
    rm -rf "${STATE:?}/$id"
}

# Stale runs, and namespaces of ours whose run directory is gone (a run removed by hand or a
# reboot's fresh /run cannot leave them, but an interrupted `remove_run` can).
clean_stale() {
    local dir id ns
    for dir in "$STATE"/*/; do
        [[ -d "$dir" ]] || continue
        id="$(basename "$dir")"
        if stale "$id"; then
            echo "twohosts: removing run $id, whose owner has gone" >&2
            remove_run "$id"
        fi
    done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
        if [[ "$ns" =~ ^aldeia-([0-9a-f]{8})-[ab]$ && ! -d "$STATE/${BASH_REMATCH[1]}" ]]; then
            echo "twohosts: removing namespace $ns of a run that no longer exists" >&2
            ip netns delete "$ns" || true
        fi
    done
}

# Runs the rest under an exclusive lock: runs made and removed at once by parallel tests must
# not see each other half made.
locked() {
    mkdir -p "$STATE"
    exec 9>"$STATE.lock"
    flock 9
    "$@"
}

make_host() {
    local id="$1" h="$2" dir="$STATE/$1"
    local ns
    ns="$(netns "$id" "$h")"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    cat /proc/sys/kernel/random/uuid >"$dir/$h.boot_id"
    touch "$dir/$h.mnt"
    # unshare binds the new mount namespace to $h.mnt in this (the machine's) mount namespace,
    # so it outlives the shell that prepares it. Not `ip netns exec`: its own mount namespace
    # would hold that bind mount and take it along when it ends.
    nsenter --net="/run/netns/$ns" unshare --mount="$dir/$h.mnt" --propagation private sh -euc '
        mount -t tmpfs -o mode=1777 "shm-$1" /dev/shm
        mount --bind "$2" /proc/sys/kernel/random/boot_id
        umount -l /sys
        mount -t sysfs "sysfs-$1" /sys
    ' sh "$ns" "$dir/$h.boot_id"
}

up() {
    local owner=kept
    if (($# >= 2)) && [[ "$1" == --owner ]]; then
        owner="$(process_identity "$2")" || die "--owner $2: no such process"
        shift 2
    fi
    (($# == 0)) || die "up takes only --owner PID"
    local reason
    reason="$(why_not)"
    [[ -z "$reason" ]] || die "$reason"
    prepare_state
    clean_stale
    local id
    while :; do
        id="$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
        mkdir "$STATE/$id" 2>/dev/null && break
    done
    echo "$owner" >"$STATE/$id/owner"
    # A failure half way (set -e ends the script) leaves nothing behind.
    trap 'remove_run "$id"' EXIT
    make_host "$id" a
    make_host "$id" b
    local na nb
    na="$(netns "$id" a)"
    nb="$(netns "$id" b)"
    # Made inside the namespaces: the pair never appears in this machine's namespace.
    ip link add "$(veth "$id" a)" netns "$na" type veth peer name "$(veth "$id" b)" netns "$nb"
    ip -n "$na" addr add "$ADDRESS_A/$PREFIX" dev "$(veth "$id" a)"
    ip -n "$nb" addr add "$ADDRESS_B/$PREFIX" dev "$(veth "$id" b)"
    link "$id" up
    trap - EXIT
    echo "$id"
}

existing() {
    valid_id "$1"
    [[ -f "$STATE/$1/owner" ]] || die "there is no run $1 (\`twohosts.sh list\` shows the runs)"
}

exec_in() {
    local id="$1" h
    existing "$id"
    h="$(host_letter "$2")"
    shift 2
    [[ "${1:-}" != -- ]] || shift
    (($#)) || die "exec needs a command"
    # No fork (nsenter execs unless it enters a pid namespace): the caller's process is the
    # command's, so killing it kills the command. The working directory stays the caller's.
    exec nsenter --net="/run/netns/$(netns "$id" "$h")" --mount="$STATE/$id/$h.mnt" --wd="$PWD" -- "$@"
}

link() {
    local id="$1" state="${2:-}" h
    existing "$id"
    [[ "$state" == up || "$state" == down ]] || die "link takes down or up, not '$state'"
    # Both ends, so that each host sees its own interface go down, as when a cable is pulled.
    for h in a b; do
        ip -n "$(netns "$id" "$h")" link set "$(veth "$id" "$h")" "$state"
    done
    if [[ "$state" == up ]]; then
        # A veth pair carries traffic once both ends report the carrier: wait for it, so that
        # the first packet after `link up` is not lost.
        local tries=100
        until ip -n "$(netns "$id" a)" -o link show "$(veth "$id" a)" | grep -q 'state UP' \
            && ip -n "$(netns "$id" b)" -o link show "$(veth "$id" b)" | grep -q 'state UP'; do
            ((tries-- > 0)) || die "the link of run $id did not come up within 5 s"
            sleep 0.05
        done
    fi
}

down() {
    existing "$1"
    remove_run "$1"
}

list() {
    local dir id
    for dir in "$STATE"/*/; do
        [[ -f "$dir/owner" ]] || continue
        id="$(basename "$dir")"
        printf '%s owner=%s A=%s(%s) B=%s(%s)\n' "$id" "$(tr ' ' ':' <"$dir/owner")" \
            "$ADDRESS_A" "$(netns "$id" a)" "$ADDRESS_B" "$(netns "$id" b)"
    done
}

command="${1:-}"
shift || true
case "$command" in
    check)
        reason="$(why_not)"
        [[ -z "$reason" ]] || { echo "$reason"; exit 1; }
        ;;
    up) locked up "$@" ;;
    down) (($# == 1)) || die "usage: twohosts.sh down ID"; locked down "$1" ;;
    exec) (($# >= 2)) || die "usage: twohosts.sh exec ID A|B [--] CMD..."; exec_in "$@" ;;
    link) (($# == 2)) || die "usage: twohosts.sh link ID down|up"; link "$@" ;;
    list) if [[ -d "$STATE" ]]; then list; fi ;;
    clean) if [[ -d "$STATE" ]]; then locked clean_stale; fi ;;
    *) sed -n '2,13s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
