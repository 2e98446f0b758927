package io.verbus.common;

import org.agrona.SystemUtil;

import java.util.concurrent.TimeUnit;

/**
 * Typed reads of {@code verbus.*} system properties that fail loudly on a value they cannot read.
 * <p>
 * Why: the JDK's {@code Integer.getInteger} and {@code Long.getLong} return the default for a value they cannot
 * parse, so {@code -Dverbus.term.length=16m} ran with 1 MiB terms and said nothing. Sizes take Aeron's k/m/g
 * suffixes and durations Aeron's ns/us/ms/s suffixes (both through Agrona's {@link SystemUtil}), so a flag copied from
 * an Aeron deployment means the same here; anything else stops the context that reads it, naming the property.
 * An absent or blank property gives the default.
 */
public final class SystemProperties
{
    private SystemProperties()
    {
    }

    /**
     * @param name         of the property.
     * @param defaultValue when the property is absent or blank.
     * @return the size in bytes: plain bytes or a k/m/g suffix ({@code 16m}).
     * @throws IllegalArgumentException naming the property when the value is not a size or exceeds an int.
     */
    public static int sizeAsInt(final String name, final int defaultValue)
    {
        final long size = sizeAsLong(name, defaultValue);
        if (size > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException(name + "=" + System.getProperty(name) + " is over " +
                Integer.MAX_VALUE + " bytes");
        }
        return (int)size;
    }

    /**
     * @param name         of the property.
     * @param defaultValue when the property is absent or blank.
     * @return the size in bytes: plain bytes or a k/m/g suffix ({@code 16m}).
     * @throws IllegalArgumentException naming the property when the value is not a size.
     */
    public static long sizeAsLong(final String name, final long defaultValue)
    {
        final String value = value(name);
        if (null == value)
        {
            return defaultValue;
        }
        try
        {
            final long size = SystemUtil.parseSize(name, value);
            if (size < 0)
            {
                throw new NumberFormatException("negative");
            }
            return size;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(name + "=" + value +
                " is not a size: give bytes, or a k, m or g suffix such as 16m", ex);
        }
    }

    /**
     * @param name           of the property, whose plain numbers are nanoseconds.
     * @param defaultValueNs when the property is absent or blank.
     * @return the duration in nanoseconds: plain nanoseconds or an ns/us/ms/s suffix ({@code 5s}).
     * @throws IllegalArgumentException naming the property when the value is not a duration.
     */
    public static long durationNs(final String name, final long defaultValueNs)
    {
        final String value = value(name);
        return null == value ? defaultValueNs : parseDurationNs(name, value);
    }

    /**
     * For the properties whose name ends in {@code .ms}: a plain number stays milliseconds, a suffixed one is read as
     * any duration.
     *
     * @param name           of the property, whose plain numbers are milliseconds.
     * @param defaultValueMs when the property is absent or blank.
     * @return the duration in milliseconds.
     * @throws IllegalArgumentException naming the property when the value is not a duration.
     */
    public static long durationMs(final String name, final long defaultValueMs)
    {
        final String value = value(name);
        if (null == value)
        {
            return defaultValueMs;
        }
        if (Character.isDigit(value.charAt(value.length() - 1)))
        {
            return parseLong(name, value, "a number of milliseconds, or a duration such as 10s");
        }
        return TimeUnit.NANOSECONDS.toMillis(parseDurationNs(name, value));
    }

    /**
     * @param name         of the property.
     * @param defaultValue when the property is absent or blank.
     * @return the integer.
     * @throws IllegalArgumentException naming the property when the value is not an integer.
     */
    public static int intValue(final String name, final int defaultValue)
    {
        final String value = value(name);
        if (null == value)
        {
            return defaultValue;
        }
        final long number = parseLong(name, value, "an integer");
        if (number != (int)number)
        {
            throw new IllegalArgumentException(name + "=" + value + " is not an int");
        }
        return (int)number;
    }

    /**
     * @param name         of the property.
     * @param defaultValue when the property is absent or blank.
     * @return {@code true} or {@code false}, in any case.
     * @throws IllegalArgumentException naming the property for any other value: {@code Boolean.parseBoolean}
     *                                  reads {@code yes} or {@code 1} as false.
     */
    public static boolean booleanValue(final String name, final boolean defaultValue)
    {
        final String value = value(name);
        if (null == value)
        {
            return defaultValue;
        }
        if ("true".equalsIgnoreCase(value))
        {
            return true;
        }
        if ("false".equalsIgnoreCase(value))
        {
            return false;
        }
        throw new IllegalArgumentException(name + "=" + value + " is neither true nor false");
    }

    private static String value(final String name)
    {
        final String value = System.getProperty(name);
        return null == value || value.isBlank() ? null : value.trim();
    }

    private static long parseDurationNs(final String name, final String value)
    {
        try
        {
            final long durationNs = SystemUtil.parseDuration(name, value);
            if (durationNs < 0)
            {
                throw new NumberFormatException("negative");
            }
            return durationNs;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(name + "=" + value +
                " is not a duration: give a number with an ns, us, ms or s suffix such as 5s", ex);
        }
    }

    private static long parseLong(final String name, final String value, final String expected)
    {
        try
        {
            return Long.parseLong(value);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(name + "=" + value + " is not " + expected, ex);
        }
    }
}
