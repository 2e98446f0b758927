package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * {@code irq.<dev>}: where the RDMA NIC's interrupts land. Verbus polls completion queues, so the NIC's interrupts
 * must stay off the isolated and pinned CPUs, and on a multi-node host on the NIC's own node.
 * IRQs come from the PCI device's {@code msi_irqs}, else from {@code /proc/interrupts} lines naming the device;
 * affinity from {@code /proc/irq/N/smp_affinity_list}.
 */
public final class IrqAffinityCheck implements HostCheck
{
    static final String PREFIX = "irq.";

    public List<CheckResult> check(final CheckContext context)
    {
        if (context.rdma().isEmpty())
        {
            return List.of(CheckResult.absent(PREFIX + "nic", "no RDMA NIC, so no NIC interrupts to place",
                CheckResult.NO_FIX));
        }
        final List<CheckResult> results = new ArrayList<>();
        for (final RdmaDevice device : context.rdma().devices())
        {
            results.add(device(context, device));
        }
        return results;
    }

    private static CheckResult device(final CheckContext context, final RdmaDevice device)
    {
        final String item = PREFIX + device.name();
        if (device.soft())
        {
            return CheckResult.absent(item,
                device.name() + " is a software device with no interrupts of its own", CheckResult.NO_FIX);
        }

        final List<Integer> irqs = irqsOf(context, device);
        if (irqs.isEmpty())
        {
            return CheckResult.manual(Status.WARN, item,
                "no interrupts found for " + device.name() + " in its msi_irqs or /proc/interrupts",
                "grep -e " + device.name() + device.pciAddress().map((pci) -> " -e " + pci).orElse("") +
                " /proc/interrupts");
        }

        final Map<Integer, CpuSet> affinity = new TreeMap<>();
        for (final int irq : irqs)
        {
            try
            {
                context.fs().read("/proc/irq/" + irq + "/smp_affinity_list")
                    .ifPresent((list) -> affinity.put(irq, CpuSet.parse(list)));
            }
            catch (final IllegalArgumentException ignore)
            {
                // an unparsable affinity is reported as unknown below
            }
        }
        if (affinity.isEmpty())
        {
            return CheckResult.manual(Status.WARN, item,
                irqs.size() + " IRQs but no readable /proc/irq/N/smp_affinity_list",
                "cat /proc/irq/" + irqs.getFirst() + "/smp_affinity_list");
        }

        final CpuSet latencyCpus = context.latencyCpus();
        final boolean multiNode = context.numaNodes().size() > 1;
        final CpuSet localCpus = multiNode ? NumaCheck.localCpus(context, device) : CpuSet.EMPTY;
        CpuSet allTargets = CpuSet.EMPTY;
        final List<Integer> misplaced = new ArrayList<>();
        for (final Map.Entry<Integer, CpuSet> entry : affinity.entrySet())
        {
            final CpuSet cpus = entry.getValue();
            allTargets = allTargets.union(cpus);
            final boolean onLatencyCpu = cpus.intersects(latencyCpus);
            final boolean offNode = !localCpus.isEmpty() && !localCpus.containsAll(cpus);
            if (onLatencyCpu || offNode)
            {
                misplaced.add(entry.getKey());
            }
        }

        final String found = affinity.size() + " IRQs on CPUs " + allTargets;
        if (misplaced.isEmpty())
        {
            return CheckResult.ok(item, found + (latencyCpus.isEmpty() ?
                "; no isolated or pinned CPUs to keep clear" : ", none on latency CPUs " + latencyCpus) +
                (localCpus.isEmpty() ? "" : ", all on the NIC's node"));
        }

        final CpuSet housekeeping = housekeepingCpus(context, localCpus, latencyCpus);
        final String why = misplaced.size() + " of " + affinity.size() + " IRQs of " + device.name() +
            " land on " + (latencyCpus.isEmpty() ? "CPUs off the NIC's node" : "latency CPUs " + latencyCpus +
            (localCpus.isEmpty() ? "" : " or off the NIC's node"));
        if (housekeeping.isEmpty())
        {
            return CheckResult.manual(Status.WARN, item, found + "; " + why,
                "leave at least one CPU " + (localCpus.isEmpty() ? "" : "of the NIC's node ") +
                "unpinned and unisolated for interrupts, then run tune apply again");
        }

        final List<String> commands = new ArrayList<>();
        if (irqbalanceRunning(context.fs()))
        {
            // irqbalance would move them back within seconds
            commands.add("systemctl stop irqbalance");
        }
        final StringBuilder irqList = new StringBuilder();
        misplaced.forEach((irq) -> irqList.append(irqList.isEmpty() ? "" : " ").append(irq));
        commands.add("for i in " + irqList + "; do echo " + housekeeping + " > /proc/irq/$i/smp_affinity_list; done");
        return CheckResult.runnable(Status.WARN, item, found + "; " + why, commands);
    }

    private static CpuSet housekeepingCpus(final CheckContext context, final CpuSet localCpus, final CpuSet latencyCpus)
    {
        final CpuSet online = context.onlineCpus();
        final CpuSet local = localCpus.isEmpty() ? online : localCpus;
        final CpuSet preferred = local.minus(latencyCpus);
        return preferred.isEmpty() ? online.minus(latencyCpus) : preferred;
    }

    static List<Integer> irqsOf(final CheckContext context, final RdmaDevice device)
    {
        final HostFs fs = context.fs();
        final List<Integer> irqs = new ArrayList<>();
        for (final String name : fs.list(RdmaInventory.CLASS_DIR + "/" + device.name() + "/device/msi_irqs"))
        {
            final int irq = RdmaInventory.parseIntOrMinusOne(name);
            if (irq >= 0)
            {
                irqs.add(irq);
            }
        }
        if (!irqs.isEmpty())
        {
            return irqs;
        }

        // Legacy or unusual drivers: match the interrupt's name to the device, its PCI address or its netdevs,
        // as a whole word: "mlx5_comp0@pci:0000:3b:00.0", "ens1f0-TxRx-3".
        final List<Pattern> names = new ArrayList<>();
        names.add(wholeName(device.name()));
        device.pciAddress().ifPresent((pci) -> names.add(wholeName(pci)));
        device.ports().forEach((port) -> port.netdev().ifPresent((netdev) -> names.add(wholeName(netdev))));
        for (final String line : fs.readLines("/proc/interrupts"))
        {
            final String trimmed = line.strip();
            final int colon = trimmed.indexOf(':');
            final int irq = colon > 0 ? RdmaInventory.parseIntOrMinusOne(trimmed.substring(0, colon)) : -1;
            if (irq >= 0)
            {
                final String description = trimmed.substring(colon + 1);
                if (names.stream().anyMatch((name) -> name.matcher(description).find()))
                {
                    irqs.add(irq);
                }
            }
        }
        return irqs;
    }

    private static Pattern wholeName(final String name)
    {
        return Pattern.compile("(^|[\\s@:])" + Pattern.quote(name) + "($|[\\s@:-])");
    }

    static boolean irqbalanceRunning(final HostFs fs)
    {
        for (final String entry : fs.list("/proc"))
        {
            if (!entry.isEmpty() && Character.isDigit(entry.charAt(0)) &&
                "irqbalance".equals(fs.read("/proc/" + entry + "/comm").orElse("")))
            {
                return true;
            }
        }
        return false;
    }
}
