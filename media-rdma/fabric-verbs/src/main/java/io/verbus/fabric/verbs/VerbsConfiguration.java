package io.verbus.fabric.verbs;

import io.verbus.common.SystemProperties;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Settings of the verbs provider, as system properties (the fabric context holds only what every provider
 * shares).
 */
public final class VerbsConfiguration
{
    /** libibverbs soname or path. */
    public static final String LIBRARY_PROP_NAME = "verbus.fabric.verbs.library";
    /** Default library: the soname rdma-core installs. */
    public static final String LIBRARY_DEFAULT = LibIbverbs.DEFAULT_LIBRARY;
    /** Only this device (e.g. mlx5_0, rxe0); empty for any. */
    public static final String DEVICE_PROP_NAME = "verbus.fabric.verbs.device";
    /** IP address whose RoCE v2 GID to use on Ethernet ports; empty for the first IPv4 RoCE v2 GID. */
    public static final String ADDRESS_PROP_NAME = "verbus.fabric.verbs.address";
    /** GID table entries examined per port (rxe's table has 1024 entries; the used ones come first). */
    public static final String GID_SCAN_LENGTH_PROP_NAME = "verbus.fabric.verbs.gid.scan.length";
    /** Default GID entries examined per port. */
    public static final int GID_SCAN_LENGTH_DEFAULT = 16;

    private VerbsConfiguration()
    {
    }

    static String library()
    {
        return System.getProperty(LIBRARY_PROP_NAME, LIBRARY_DEFAULT);
    }

    static String device()
    {
        return System.getProperty(DEVICE_PROP_NAME, "").trim();
    }

    /**
     * @return the configured address, or null.
     * @throws IllegalArgumentException if it does not parse.
     */
    static InetAddress address()
    {
        final String value = System.getProperty(ADDRESS_PROP_NAME, "").trim();
        if (value.isEmpty())
        {
            return null;
        }
        try
        {
            return InetAddress.getByName(value);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException(ADDRESS_PROP_NAME + " is not an IP address: " + value, ex);
        }
    }

    static int gidScanLength()
    {
        final int length = SystemProperties.intValue(GID_SCAN_LENGTH_PROP_NAME, GID_SCAN_LENGTH_DEFAULT);
        if (length < 1)
        {
            throw new IllegalArgumentException(GID_SCAN_LENGTH_PROP_NAME + " must be >= 1: " + length);
        }
        return length;
    }
}
