package io.verbus.common;

import org.junit.jupiter.api.Test;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class VarHandlesTest
{
    @SuppressWarnings("unused") private long value;

    @Test
    void shouldGiveAHandleThatReadsAndWritesThePrivateField()
    {
        final VarHandle handle = VarHandles.field(MethodHandles.lookup(), "value", long.class);

        handle.setRelease(this, 42L);

        assertEquals(42L, value);
        assertEquals(42L, (long)handle.getAcquire(this));
    }

    @Test
    void shouldRejectAFieldThatDoesNotExist()
    {
        final IllegalStateException ex = assertThrows(IllegalStateException.class,
            () -> VarHandles.field(MethodHandles.lookup(), "missing", long.class));

        assertEquals(NoSuchFieldException.class, ex.getCause().getClass());
    }

    @Test
    void shouldRejectAFieldOfAnotherType()
    {
        assertThrows(IllegalStateException.class,
            () -> VarHandles.field(MethodHandles.lookup(), "value", int.class));
    }
}
