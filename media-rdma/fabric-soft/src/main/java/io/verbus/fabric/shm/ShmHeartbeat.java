package io.verbus.fabric.shm;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The one thread of a process that refreshes the heartbeat of every open {@link ShmDevice}, at the shortest period
 * any of them asks for. Why one and not one per device: a process opens a device per rdma channel end (the demo's
 * processes had three each), and on a host whose cores are given to spinning threads every wake-up of a background
 * thread takes a core from one of them for a scheduler slice; perf sched showed the per-device threads taking
 * 0.06-1.2 ms per wake, four times a second each.
 * <p>
 * A device is beaten only while registered: {@link #unregister} returns once no beat of it is in progress and none
 * will start, so the device may unmap its control file right after. A killed device (fault injection) is skipped,
 * as a dead process would be. The thread ends when the last device leaves and starts again with the next one.
 */
final class ShmHeartbeat
{
    private static final String THREAD_NAME = "verbus-shm-heartbeat";
    private static final List<ShmDevice> DEVICES = new ArrayList<>(); // guarded by DEVICES
    private static Thread thread; // guarded by DEVICES

    private ShmHeartbeat()
    {
    }

    /**
     * Start beating a device (its first beat is immediate).
     *
     * @param device an open device.
     */
    static void register(final ShmDevice device)
    {
        final Thread beater;
        synchronized (DEVICES)
        {
            DEVICES.add(device);
            if (null == thread)
            {
                thread = Thread.ofPlatform().daemon().name(THREAD_NAME).unstarted(ShmHeartbeat::run);
                thread.start();
            }
            beater = thread;
        }
        LockSupport.unpark(beater); // a shorter period than the current one takes effect now
    }

    /**
     * Stop beating a device: on return no beat of it runs or will run.
     *
     * @param device a registered device.
     */
    static void unregister(final ShmDevice device)
    {
        synchronized (DEVICES)
        {
            DEVICES.remove(device);
        }
    }

    /** @return devices beaten right now (tests). */
    static int registeredCount()
    {
        synchronized (DEVICES)
        {
            return DEVICES.size();
        }
    }

    /**
     * One device's beat. Its files can be truncated under their mappings by another process of the same user, which
     * faults the write (InternalError): that device can no longer beat, and its peers will find it dead, but this
     * thread beats for every device in the process and must not die with it.
     */
    private static void beat(final ShmDevice device, final long nowNs)
    {
        try
        {
            device.beat(nowNs);
        }
        catch (final RuntimeException | InternalError ex)
        {
            device.onBeatFailed(ex);
        }
    }

    private static void run()
    {
        while (true)
        {
            long periodNs = Long.MAX_VALUE;
            synchronized (DEVICES)
            {
                if (DEVICES.isEmpty())
                {
                    thread = null;
                    return;
                }
                final long nowNs = System.nanoTime();
                for (int i = 0, size = DEVICES.size(); i < size; i++)
                {
                    final ShmDevice device = DEVICES.get(i);
                    beat(device, nowNs);
                    periodNs = Math.min(periodNs, device.heartbeatPeriodNs());
                }
            }
            LockSupport.parkNanos(periodNs);
        }
    }
}
