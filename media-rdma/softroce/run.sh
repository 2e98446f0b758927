#!/usr/bin/env bash
# Soft-RoCE testbed: runs the verbs fabric provider against a real RDMA device (rdma_rxe) in a qemu guest.
#
# The host kernel has no RDMA stack, so this boots Debian's stock kernel under qemu (TCG, no KVM needed),
# shares the host's root read-only into the guest, brings up one rxe device there and runs, in the guest:
#   1. perftest ib_write_lat and ib_send_lat, 64 bytes (the C reference figures, server and client processes),
#   2. ONE JVM: the fabric conformance suite against provider=verbs, plus Verbus's own 64 B WRITE+poll latency,
#   3. the rdma media across a publisher JVM and a subscriber JVM on provider=verbs (100,000 checked messages),
#   4. latency like for like, two processes each: Verbus's raw WRITE ping-pong (client and server JVMs) and the
#      rdma: bus ping-pong (bench harness, a Ping JVM and its Pong child), plus the seed comparison on verbs;
#      a side-by-side table of all of them, in half round trips, ends the output.
# Needs root (apt-get, and the guest reads the host root as root). Ends by itself: qemu runs under a hard timeout,
# and a boot that never reaches the guest script is killed and retried. Everything it writes lives in
# $VERBUS_HOME/softroce-work (git-ignored); the kernel is cached there.
#
#   media-rdma/softroce/run.sh [--timeout SECONDS]      (normally via ./verbus softroce-test)
set -euo pipefail

SOFTROCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERBUS_HOME="$(cd "$SOFTROCE_DIR/../.." && pwd)"
WORK_DIR="${VERBUS_SOFTROCE_WORK:-$VERBUS_HOME/softroce-work}"
# Hard bound on the guest: about 6 minutes on an idle 2-core host, 10-20 on one busy with other builds (a run at
# host load 20-60 needed more than 20).
QEMU_TIMEOUT_S=1800
GUEST_MEMORY=3G
GUEST_CPUS=2

die() { echo "softroce: $*" >&2; exit 2; }
log() { echo "softroce: $*" >&2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) [ $# -ge 2 ] || die "--timeout needs a value in seconds"
                   [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 60 ] || die "--timeout must be a whole number of seconds >= 60, got '$2'"
                   QEMU_TIMEOUT_S="$2"; shift 2 ;;
        -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown flag '$1' (see --help)" ;;
    esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root: it installs Debian packages and shares the host root into the guest (try: sudo ./verbus softroce-test)"
[ "$(uname -m)" = x86_64 ] || die "needs an x86_64 host (qemu-system-x86_64 with a Debian amd64 kernel)"

# --- 1. Debian packages (no recommends: qemu's would pull a desktop) -------------------------------------
PACKAGES=(qemu-system-x86 busybox-static kmod cpio iproute2 rdma-core libibverbs1 ibverbs-providers ibverbs-utils perftest)
missing=()
for package in "${PACKAGES[@]}"; do
    # "install ok installed" only, as ./verbus checks: a removed package ("rc") still answers dpkg -s.
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. The project must be built on the host (the guest only runs it) -----------------------------------
JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
[ -x "$JAVA_HOME/bin/java" ] || die "no JDK at JAVA_HOME=$JAVA_HOME (run through ./verbus softroce-test, which finds one)"
MODULE_TARGET="$VERBUS_HOME/media-rdma/softroce/target"
for needed in test-classpath.txt softroce-lib; do
    [ -e "$MODULE_TARGET/$needed" ] || die "missing $MODULE_TARGET/$needed: build first with ./verbus softroce-test (it builds) or ./mvnw -pl media-rdma/softroce -am package -DskipTests"
done

# --- 3. A Debian kernel with rdma_rxe, unpacked (cached) -------------------------------------------------
mkdir -p "$WORK_DIR"
KERNEL_PACKAGE="$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')"
if [ -z "$KERNEL_PACKAGE" ]; then
    apt-get update -qq
    KERNEL_PACKAGE="$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')"
fi
[ -n "$KERNEL_PACKAGE" ] || die "cannot resolve the Debian kernel package behind linux-image-amd64 (apt sources?)"
KERNEL_VERSION="${KERNEL_PACKAGE#linux-image-}"
KERNEL_ROOT="$WORK_DIR/kernel-$KERNEL_VERSION"
if [ ! -f "$KERNEL_ROOT/.unpacked" ]; then
    log "fetching $KERNEL_PACKAGE"
    rm -rf "$KERNEL_ROOT" && mkdir -p "$KERNEL_ROOT"
    (cd "$WORK_DIR" && rm -f linux-image-*.deb && apt-get download -qq "$KERNEL_PACKAGE")
    dpkg-deb -x "$WORK_DIR"/"$KERNEL_PACKAGE"_*.deb "$KERNEL_ROOT"
    rm -f "$WORK_DIR"/"$KERNEL_PACKAGE"_*.deb
    depmod -b "$KERNEL_ROOT" "$KERNEL_VERSION"
    touch "$KERNEL_ROOT/.unpacked"
fi
KERNEL_IMAGE="$KERNEL_ROOT/boot/vmlinuz-$KERNEL_VERSION"
KERNEL_MODULES="$KERNEL_ROOT/lib/modules/$KERNEL_VERSION"
[ -f "$KERNEL_IMAGE" ] || die "kernel image missing in $KERNEL_ROOT"
[ -n "$(find "$KERNEL_MODULES" -name 'rdma_rxe.ko*' -print -quit)" ] || die "$KERNEL_PACKAGE ships no rdma_rxe module"

# --- 4. A small busybox initramfs: 9p + overlay, then switch_root into the host's root ------------------
INITRAMFS="$WORK_DIR/initramfs-$KERNEL_VERSION.cpio.gz"
if [ ! -f "$INITRAMFS" ] || [ "$SOFTROCE_DIR/guest-init.sh" -nt "$INITRAMFS" ]; then
    log "building the initramfs"
    staging="$(mktemp -d "$WORK_DIR/initramfs.XXXXXX")"
    mkdir -p "$staging"/{bin,dev,proc,sys,modules,lower,upper,newroot}
    cp /bin/busybox "$staging/bin/busybox"
    cp "$SOFTROCE_DIR/guest-init.sh" "$staging/init"
    chmod 755 "$staging/init"
    : > "$staging/modules.order"
    # Boot-time modules in dependency order, as the kernel's own modprobe would load them.
    while read -r verb path _; do
        [ "$verb" = insmod ] || continue
        name="$(basename "$path")"
        [ -f "$staging/modules/$name" ] && continue
        cp "$path" "$staging/modules/$name"
        echo "$name" >> "$staging/modules.order"
    done < <(modprobe -d "$KERNEL_ROOT" -S "$KERNEL_VERSION" --show-depends -a virtio_pci 9pnet_virtio 9p overlay)
    (cd "$staging" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRAMFS.tmp"
    mv "$INITRAMFS.tmp" "$INITRAMFS"
    rm -rf "$staging"
fi

# --- 5. Boot the guest under TCG with a hard timeout, and again if it never comes up -----------------------
SHARED="$WORK_DIR/shared"

# tsc=reliable: under TCG the guest kernel finds its vCPUs' TSCs "unsynchronized" and falls back to the emulated
# HPET, where every clock_gettime is a system call plus emulated device reads: System.nanoTime() measured 2-7 us a
# call in the guest (the JVM reads the clock each duty cycle, perftest reads the TSC itself). qemu derives every
# vCPU's TSC from one virtual clock, so the guest may trust it, as it would a real host's invariant TSC.
#
# The boot watchdog: a guest has once (CI, 2026-12-03) printed nothing after the firmware and kept both emulated
# CPUs busy until the 1800 s timeout, so it never reached the guest script; a boot that fast takes 5-60 s locally.
# guest-run.sh writes guest.up first thing, so a boot without it after BOOT_WATCHDOG_S is killed and the guest booted
# again (at most BOOT_ATTEMPTS times, each at loglevel 4 after the first, so the kernel's errors show where a second
# one sticks). The hard timeout bounds every boot together.
BOOT_WATCHDOG_S="${VERBUS_SOFTROCE_BOOT_WATCHDOG_S:-300}"
BOOT_ATTEMPTS=3
# The host's load: the guest's figures are emulated CPU time shared with whatever else the host runs.
load_at_boot="$(cut -d' ' -f1-3 /proc/loadavg)"
started=$(date +%s)
deadline=$((started + QEMU_TIMEOUT_S))
boot=1
while :; do
    rm -rf "$SHARED" && mkdir -p "$SHARED"
    cat > "$SHARED/guest.env" <<ENV
VERBUS_HOME='$VERBUS_HOME'
JAVA_HOME='$JAVA_HOME'
KERNEL_VERSION='$KERNEL_VERSION'
KERNEL_MODULES='$KERNEL_MODULES'
ENV
    remaining_s=$((deadline - $(date +%s)))
    console_level="quiet loglevel=3"
    [ "$boot" -eq 1 ] || console_level="loglevel=4"
    log "booting $KERNEL_VERSION under qemu TCG ($GUEST_CPUS vCPUs, $GUEST_MEMORY, boot $boot of at most" \
        "$BOOT_ATTEMPTS, ${remaining_s}s left of the ${QEMU_TIMEOUT_S}s timeout)"
    boot_started=$(date +%s)
    timeout --kill-after=15 "$remaining_s" qemu-system-x86_64 \
        -accel tcg,thread=multi -cpu max -smp "$GUEST_CPUS" -m "$GUEST_MEMORY" \
        -kernel "$KERNEL_IMAGE" -initrd "$INITRAMFS" \
        -append "console=ttyS0 panic=-1 $console_level tsc=reliable clocksource=tsc verbus_guest_script=$SOFTROCE_DIR/guest-run.sh" \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$SHARED,mount_tag=shared,security_model=none,multidevs=remap" \
        -nic none -nographic -no-reboot </dev/null &
    qemu_pid=$!
    watchdog_fired=no
    while kill -0 "$qemu_pid" 2>/dev/null; do
        if [ ! -e "$SHARED/guest.up" ] && [ $(( $(date +%s) - boot_started )) -ge "$BOOT_WATCHDOG_S" ]; then
            watchdog_fired=yes
            kill "$qemu_pid" 2>/dev/null
            break
        fi
        sleep 1
    done
    qemu_rc=0
    wait "$qemu_pid" || qemu_rc=$?
    [ "$watchdog_fired" = yes ] || break
    echo
    log "boot $boot: the guest did not reach its script within ${BOOT_WATCHDOG_S}s (no guest.up): killed"
    [ "$boot" -lt "$BOOT_ATTEMPTS" ] && [ $((deadline - $(date +%s))) -ge 60 ] || break
    boot=$((boot + 1))
done
elapsed=$(( $(date +%s) - started ))

# --- 6. Results --------------------------------------------------------------------------------------------
echo
echo "==== Soft-RoCE run: rxe under qemu TCG (emulated CPU, not hardware), wall time ${elapsed}s ===="
echo "host load average (1/5/15 min): ${load_at_boot} at boot, $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) host CPUs"
echo "guest boots: $boot (watchdog ${BOOT_WATCHDOG_S}s to reach the guest script)"
[ "$watchdog_fired" = no ] || die "the guest never reached its script in $boot boot(s) of ${BOOT_WATCHDOG_S}s each"
if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
    die "qemu hit the ${QEMU_TIMEOUT_S}s timeout over $boot boot(s) (results so far in $SHARED)"
fi
[ -f "$SHARED/guest.done" ] || die "the guest did not finish (qemu exit $qemu_rc); its log is above, files in $SHARED"
[ -f "$SHARED/summary.txt" ] && cat "$SHARED/summary.txt"
guest_status="$(cat "$SHARED/guest.done")"
[ "$guest_status" = 0 ] || die "guest run failed: $guest_status (details above and in $SHARED)"
echo "softroce: PASSED in ${elapsed}s"
