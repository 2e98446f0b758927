package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code nic.eee.<netdev>}: Energy-Efficient Ethernet lets the PHY doze between packets and costs microseconds to
 * wake. It is not in sysfs: the line runs {@code ethtool --show-eee} (an unprivileged read) when ethtool exists on a
 * live host, and otherwise says plainly that it could not verify.
 */
public final class EeeCheck implements HostCheck
{
    static final String PREFIX = "nic.eee.";

    /** Drivers of virtual NICs: no PHY, so no EEE. */
    static final Set<String> VIRTUAL_DRIVERS =
        Set.of("virtio_net", "vmxnet3", "hv_netvsc", "xen-netfront", "veth", "tun", "ena", "gve");

    public List<CheckResult> check(final CheckContext context)
    {
        final List<String> netdevs = context.rdma().isEmpty() ?
            RdmaPortCheck.physicalNetdevs(context.fs()) : context.rdma().netdevs();
        if (netdevs.isEmpty())
        {
            return List.of(CheckResult.absent(PREFIX + "nic", "no physical network interface in /sys/class/net",
                CheckResult.NO_FIX));
        }

        final List<CheckResult> results = new ArrayList<>();
        for (final String netdev : netdevs)
        {
            results.add(netdev(context, netdev));
        }
        return results;
    }

    private static CheckResult netdev(final CheckContext context, final String netdev)
    {
        final String item = PREFIX + netdev;
        final Optional<String> driver = driverOf(context.fs(), netdev);
        if (driver.isPresent() && VIRTUAL_DRIVERS.contains(driver.get()))
        {
            return CheckResult.absent(item, netdev + " is a virtual NIC (" + driver.get() + "): no PHY, no EEE",
                CheckResult.NO_FIX);
        }
        if (isIpoib(context, netdev))
        {
            return CheckResult.absent(item, netdev + " is IPoIB: EEE is an Ethernet feature", CheckResult.NO_FIX);
        }
        final String setCommand = "ethtool --set-eee " + netdev + " eee off";
        final Optional<String> output = context.tools().run(List.of("ethtool", "--show-eee", netdev));
        if (output.isEmpty())
        {
            return CheckResult.manual(Status.WARN, item,
                "not verified: EEE is not in sysfs and 'ethtool --show-eee " + netdev + "' could not run here",
                "read: ethtool --show-eee " + netdev + "; if enabled: " + setCommand);
        }

        final String text = output.get().toLowerCase();
        if (text.contains("not supported"))
        {
            return CheckResult.ok(item, netdev + " does not support EEE (ethtool)");
        }
        if (text.contains("eee status: enabled"))
        {
            return CheckResult.runnable(Status.WARN, item,
                "EEE enabled on " + netdev + " (ethtool): the PHY sleeps between packets and wakes slowly",
                List.of(setCommand));
        }
        if (text.contains("eee status: disabled"))
        {
            return CheckResult.ok(item, "EEE disabled on " + netdev + " (ethtool)");
        }
        return CheckResult.manual(Status.WARN, item, "ethtool --show-eee " + netdev + " printed no EEE status",
            "read: ethtool --show-eee " + netdev + "; if enabled: " + setCommand);
    }

    private static boolean isIpoib(final CheckContext context, final String netdev)
    {
        // ARPHRD_INFINIBAND
        return "32".equals(context.fs().read("/sys/class/net/" + netdev + "/type").orElse(""));
    }

    static Optional<String> driverOf(final HostFs fs, final String netdev)
    {
        return fs.linkTargetName("/sys/class/net/" + netdev + "/device/driver");
    }
}
