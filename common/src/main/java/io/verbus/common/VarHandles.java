package io.verbus.common;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The one way a class gets the {@link VarHandle} of one of its own fields, from a {@code static final} initialiser, so
 * that each class with ordered or opaque fields names its handles in one line per field instead of a static block.
 * A missing field is a programming error: it fails the class's initialisation.
 */
public final class VarHandles
{
    private VarHandles()
    {
    }

    /**
     * @param lookup the declaring class's own {@link MethodHandles#lookup()}: it names the class and may see its
     *               private fields.
     * @param name   the field's name.
     * @param type   the field's type.
     * @return the field's handle.
     * @throws IllegalStateException when the lookup's class declares no such field.
     */
    public static VarHandle field(final MethodHandles.Lookup lookup, final String name, final Class<?> type)
    {
        final Class<?> owner = lookup.lookupClass();
        try
        {
            return lookup.findVarHandle(owner, name, type);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new IllegalStateException("no field " + owner.getName() + "." + name + " of type " + type, ex);
        }
    }
}
