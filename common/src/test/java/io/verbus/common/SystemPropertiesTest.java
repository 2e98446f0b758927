package io.verbus.common;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SystemPropertiesTest
{
    private static final String NAME = "verbus.test.system.properties";

    @AfterEach
    void clear()
    {
        System.clearProperty(NAME);
    }

    @Test
    void shouldGiveTheDefaultWhenAbsentOrBlank()
    {
        assertEquals(7, SystemProperties.sizeAsInt(NAME, 7));
        System.setProperty(NAME, "  ");
        assertEquals(7, SystemProperties.sizeAsInt(NAME, 7));
        assertEquals(9L, SystemProperties.durationNs(NAME, 9L));
        assertEquals(11L, SystemProperties.durationMs(NAME, 11L));
        assertEquals(13, SystemProperties.intValue(NAME, 13));
        assertTrue(SystemProperties.booleanValue(NAME, true));
    }

    @Test
    void shouldReadSizesWithAeronsSuffixes()
    {
        System.setProperty(NAME, "16m");
        assertEquals(16 * 1024 * 1024, SystemProperties.sizeAsInt(NAME, 1));
        System.setProperty(NAME, " 64k ");
        assertEquals(64 * 1024, SystemProperties.sizeAsInt(NAME, 1));
        System.setProperty(NAME, "1g");
        assertEquals(1L << 30, SystemProperties.sizeAsLong(NAME, 1));
        System.setProperty(NAME, "4096");
        assertEquals(4096, SystemProperties.sizeAsInt(NAME, 1));
    }

    @Test
    void shouldRefuseWhatIsNotASizeNamingTheProperty()
    {
        for (final String bad : new String[]{"16mb", "sixteen", "-1", "4g"})
        {
            System.setProperty(NAME, bad);
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> SystemProperties.sizeAsInt(NAME, 1), bad);
            assertTrue(ex.getMessage().startsWith(NAME + "=" + bad), ex.getMessage());
        }
    }

    @Test
    void shouldReadPlainNanosecondsAndSuffixedDurations()
    {
        System.setProperty(NAME, "2500");
        assertEquals(2500L, SystemProperties.durationNs(NAME, 1));
        System.setProperty(NAME, "5s");
        assertEquals(TimeUnit.SECONDS.toNanos(5), SystemProperties.durationNs(NAME, 1));
        System.setProperty(NAME, "20ms");
        assertEquals(TimeUnit.MILLISECONDS.toNanos(20), SystemProperties.durationNs(NAME, 1));
        System.setProperty(NAME, "5 seconds");
        assertThrows(IllegalArgumentException.class, () -> SystemProperties.durationNs(NAME, 1));
    }

    @Test
    void shouldKeepPlainMillisecondsForMillisecondProperties()
    {
        System.setProperty(NAME, "1500");
        assertEquals(1500L, SystemProperties.durationMs(NAME, 1));
        System.setProperty(NAME, "3s");
        assertEquals(3000L, SystemProperties.durationMs(NAME, 1));
        System.setProperty(NAME, "10x");
        assertThrows(IllegalArgumentException.class, () -> SystemProperties.durationMs(NAME, 1));
    }

    @Test
    void shouldReadIntegersAndStrictBooleans()
    {
        System.setProperty(NAME, "32");
        assertEquals(32, SystemProperties.intValue(NAME, 1));
        System.setProperty(NAME, "3000000000");
        assertThrows(IllegalArgumentException.class, () -> SystemProperties.intValue(NAME, 1));
        System.setProperty(NAME, "FALSE");
        assertFalse(SystemProperties.booleanValue(NAME, true));
        System.setProperty(NAME, "yes");
        assertThrows(IllegalArgumentException.class, () -> SystemProperties.booleanValue(NAME, false));
    }
}
