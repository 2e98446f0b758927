package io.verbus.fabric.verbs;

import io.verbus.fabric.FabricException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * RLIMIT_MEMLOCK check before {@code ibv_reg_mr}: registered memory is pinned and the kernel charges it
 * to the process's pinned-page count, refusing registration beyond the limit unless the process has
 * CAP_IPC_LOCK. The kernel's refusal surfaces as a bare ENOMEM; checking first turns it into an error that
 * says how much is needed and how to raise the limit.
 */
public final class MemlockLimit
{
    /** {@code RLIMIT_MEMLOCK} on Linux. */
    static final int RLIMIT_MEMLOCK = 8;
    /** {@code RLIM_INFINITY}: all bits set. */
    static final long RLIM_INFINITY = -1L;
    /** Bit of CAP_IPC_LOCK in /proc/self/status CapEff. */
    static final int CAP_IPC_LOCK = 14;

    static final String FIX_HINT = "raise it: 'ulimit -l unlimited' in the launching shell, LimitMEMLOCK=infinity " +
        "in a systemd unit, '<user> - memlock unlimited' in /etc/security/limits.conf, " +
        "'--ulimit memlock=-1' for docker, or grant CAP_IPC_LOCK";

    private static final MethodHandle GETRLIMIT = Linker.nativeLinker().downcallHandle(
        Linker.nativeLinker().defaultLookup().find("getrlimit").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    private MemlockLimit()
    {
    }

    /**
     * @return the soft RLIMIT_MEMLOCK in bytes, {@link #RLIM_INFINITY} for none.
     */
    public static long currentLimitBytes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment limit = arena.allocate(JAVA_LONG, 2);
            final int rc = (int)GETRLIMIT.invokeExact(RLIMIT_MEMLOCK, limit);
            if (rc != 0)
            {
                throw new FabricException("getrlimit(RLIMIT_MEMLOCK) failed");
            }
            return limit.getAtIndex(JAVA_LONG, 0);
        }
        catch (final FabricException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("getrlimit(RLIMIT_MEMLOCK) failed", ex);
        }
    }

    /**
     * @return true if this process may pin memory beyond the limit (CAP_IPC_LOCK in its effective set).
     */
    public static boolean hasIpcLockCapability()
    {
        final String capEff = statusField("CapEff:");
        return null != capEff && (Long.parseUnsignedLong(capEff.trim(), 16) & (1L << CAP_IPC_LOCK)) != 0;
    }

    /**
     * @return bytes this process has pinned already (VmPin), 0 if the kernel does not report it.
     */
    public static long pinnedBytes()
    {
        final String vmPin = statusField("VmPin:");
        if (null == vmPin)
        {
            return 0;
        }
        return Long.parseLong(vmPin.replace("kB", "").trim()) * 1024L;
    }

    /**
     * Check that {@code requestBytes} more can be pinned by this process now.
     *
     * @param requestBytes length about to be registered.
     * @throws FabricException with the bytes needed and the fix, if the limit would refuse it.
     */
    public static void checkCanPin(final long requestBytes)
    {
        check(currentLimitBytes(), hasIpcLockCapability(), pinnedBytes(), requestBytes);
    }

    /**
     * The decision itself, separate from the system so it can be tested with any numbers.
     *
     * @param limitBytes   soft RLIMIT_MEMLOCK, {@link #RLIM_INFINITY} for none.
     * @param ipcLock      whether the process has CAP_IPC_LOCK.
     * @param pinnedBytes  already pinned.
     * @param requestBytes about to be pinned.
     * @throws FabricException if the kernel would refuse the registration.
     */
    static void check(final long limitBytes, final boolean ipcLock, final long pinnedBytes, final long requestBytes)
    {
        if (limitBytes == RLIM_INFINITY || ipcLock)
        {
            return;
        }
        final long neededBytes = pinnedBytes + pageAlign(requestBytes);
        if (neededBytes > limitBytes)
        {
            throw new FabricException("cannot register " + requestBytes + " bytes: RDMA registration pins memory " +
                "and RLIMIT_MEMLOCK (ulimit -l) is " + limitBytes + " bytes with " + pinnedBytes +
                " already pinned; it must be at least " + neededBytes + " bytes (" + (neededBytes + 1023) / 1024 +
                " KiB): " + FIX_HINT);
        }
    }

    private static long pageAlign(final long bytes)
    {
        return (bytes + 4095) & ~4095L;
    }

    private static String statusField(final String prefix)
    {
        try
        {
            final List<String> lines = Files.readAllLines(Path.of("/proc/self/status"));
            for (final String line : lines)
            {
                if (line.startsWith(prefix))
                {
                    return line.substring(prefix.length());
                }
            }
            return null;
        }
        catch (final IOException ex)
        {
            return null;
        }
    }
}
