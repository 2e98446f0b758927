package io.verbus.tuning;

/**
 * The one way the report tells a user to change kernel boot parameters, so every such fix reads the same.
 */
final class Grub
{
    private Grub()
    {
    }

    /**
     * @param parameters e.g. {@code isolcpus=2-3}.
     * @return a command that prepends them to the kernel command line in {@code /etc/default/grub} and reboots.
     */
    static String addKernelParameters(final String parameters)
    {
        return "sed -i 's/^GRUB_CMDLINE_LINUX=\"/&" + parameters + " /' /etc/default/grub && update-grub && reboot";
    }
}
