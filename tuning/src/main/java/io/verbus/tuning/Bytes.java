package io.verbus.tuning;

/**
 * Byte counts for people: binary units, exact where possible.
 */
final class Bytes
{
    private static final String[] UNITS = { "B", "KiB", "MiB", "GiB", "TiB" };

    private Bytes()
    {
    }

    static String format(final long bytes)
    {
        int unit = 0;
        double value = bytes;
        while (value >= 1024 && unit < UNITS.length - 1)
        {
            value /= 1024;
            unit++;
        }
        return value == Math.rint(value) ?
            String.format("%d %s", (long)value, UNITS[unit]) : String.format("%.1f %s", value, UNITS[unit]);
    }
}
