#!/bin/busybox sh
# initramfs /init for the Soft-RoCE guest: load the 9p/virtio/overlay modules, mount the host's root
# read-only with a throw-away tmpfs overlay on top, mount the shared results folder, and switch_root into
# the host's root to run the guest script (given on the kernel command line as verbus_guest_script).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
    echo "guest-init: $*"
    poweroff -f
}

for module in $(cat /modules.order); do
    insmod "/modules/$module" || fail "insmod $module failed"
done

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose hostroot /lower || fail "cannot mount the host root over 9p"
mount -t tmpfs -o size=1g tmpfs /upper || fail "cannot mount tmpfs"
mkdir -p /upper/data /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work /newroot || fail "cannot mount the overlay root"
mkdir -p /newroot/softroce-shared
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 shared /newroot/softroce-shared || fail "cannot mount the shared folder"
[ -n "${verbus_guest_script:-}" ] || fail "no verbus_guest_script= on the kernel command line"

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/sh "$verbus_guest_script"
