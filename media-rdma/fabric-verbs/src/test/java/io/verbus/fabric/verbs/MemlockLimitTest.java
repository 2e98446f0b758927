package io.verbus.fabric.verbs;

import io.verbus.fabric.FabricException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemlockLimitTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;

    @Test
    void shouldRefuseARegistrationBeyondTheLimitNamingTheSizeNeededAndTheFix()
    {
        final FabricException error = assertThrows(FabricException.class,
            () -> MemlockLimit.check(8 * MIB, false, 6 * MIB, 4 * MIB));

        final String message = error.getMessage();
        assertTrue(message.contains("cannot register " + 4 * MIB + " bytes"), message);
        assertTrue(message.contains("at least " + 10 * MIB + " bytes"), message);
        assertTrue(message.contains("ulimit -l unlimited") && message.contains("LimitMEMLOCK=infinity"), message);
    }

    @Test
    void shouldCountWholePagesAgainstTheLimit()
    {
        assertThrows(FabricException.class, () -> MemlockLimit.check(64 * KIB, false, 60 * KIB + 1, 1));
        assertDoesNotThrow(() -> MemlockLimit.check(64 * KIB, false, 60 * KIB, 4 * KIB));
    }

    @Test
    void shouldAllowAnySizeWithAnUnlimitedLimitOrCapIpcLock()
    {
        assertDoesNotThrow(() -> MemlockLimit.check(MemlockLimit.RLIM_INFINITY, false, 0, 1L << 40));
        assertDoesNotThrow(() -> MemlockLimit.check(64 * KIB, true, 0, 1L << 40));
    }

    @Test
    void shouldReadThisProcesssLimitAndPinnedBytes()
    {
        final long limit = MemlockLimit.currentLimitBytes();
        assertTrue(limit == MemlockLimit.RLIM_INFINITY || limit >= 0, "limit " + limit);
        assertTrue(MemlockLimit.pinnedBytes() >= 0);
        if (limit != MemlockLimit.RLIM_INFINITY && !MemlockLimit.hasIpcLockCapability())
        {
            assertThrows(FabricException.class, () -> MemlockLimit.checkCanPin(limit + 4096));
        }
        else
        {
            assertDoesNotThrow(() -> MemlockLimit.checkCanPin(1L << 40));
        }
    }
}
