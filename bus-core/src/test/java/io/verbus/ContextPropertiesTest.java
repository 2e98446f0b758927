package io.verbus;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Verbus.Context} reads its system properties the way Aeron's context does: {@code 16m}, {@code 5s}. A value it
 * cannot read stops the context, naming the property, instead of leaving the default silently in place.
 */
class ContextPropertiesTest
{
    @AfterEach
    void clear()
    {
        System.clearProperty(Verbus.Context.TERM_LENGTH_PROP_NAME);
        System.clearProperty(Verbus.Context.DRIVER_TIMEOUT_PROP_NAME);
        System.clearProperty(Verbus.Context.USE_HUGE_PAGES_PROP_NAME);
    }

    @Test
    void shouldReadSuffixedSizesAndDurations()
    {
        System.setProperty(Verbus.Context.TERM_LENGTH_PROP_NAME, "16m");
        System.setProperty(Verbus.Context.DRIVER_TIMEOUT_PROP_NAME, "3s");
        System.setProperty(Verbus.Context.USE_HUGE_PAGES_PROP_NAME, "FALSE");
        final Verbus.Context context = new Verbus.Context();
        assertEquals(16 * 1024 * 1024, context.termLength());
        assertEquals(3000, context.driverTimeoutMs());
        assertEquals(false, context.useHugePages());
    }

    @Test
    void shouldRefuseASizeItCannotRead()
    {
        System.setProperty(Verbus.Context.TERM_LENGTH_PROP_NAME, "16MiB");
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, Verbus.Context::new);
        assertTrue(ex.getMessage().contains(Verbus.Context.TERM_LENGTH_PROP_NAME + "=16MiB"), ex.getMessage());
    }

    @Test
    void shouldRefuseABooleanThatIsNeitherTrueNorFalse()
    {
        System.setProperty(Verbus.Context.USE_HUGE_PAGES_PROP_NAME, "no");
        assertThrows(IllegalArgumentException.class, Verbus.Context::new);
    }
}
