package io.verbus.driver;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.Arrays;
import java.util.function.ToIntFunction;

/**
 * Runs the duty cycles of a set of media endpoints (senders or receivers), which it alone owns: other threads
 * add and remove them through its command queue, and it closes them on its own thread. Endpoints are kept in a
 * plain array replaced on change and served round-robin. An endpoint that throws is reported and stays.
 *
 * @param <T> {@link io.verbus.media.MediaSender} or {@link io.verbus.media.MediaReceiver}.
 */
public final class MediaAgent<T extends AutoCloseable> implements Agent
{
    private final String roleName;
    private final ToIntFunction<T> duty;
    private final ErrorHandler errorHandler;
    private final ManyToOneConcurrentArrayQueue<Runnable> commandQueue =
        new ManyToOneConcurrentArrayQueue<>(DriverConductor.COMMAND_QUEUE_CAPACITY);
    private Object[] endpoints = new Object[0];
    private int roundRobinIndex;

    /**
     * @param roleName     e.g. {@code "verbus-sender"}.
     * @param duty         the endpoint's doWork.
     * @param errorHandler told of exceptions from endpoints.
     */
    public MediaAgent(final String roleName, final ToIntFunction<T> duty, final ErrorHandler errorHandler)
    {
        this.roleName = roleName;
        this.duty = duty;
        this.errorHandler = errorHandler;
    }

    public String roleName()
    {
        return roleName;
    }

    @SuppressWarnings("unchecked")
    public int doWork()
    {
        int work = 0;
        Runnable command;
        while (null != (command = commandQueue.poll()))
        {
            command.run();
            work++;
        }

        final Object[] endpoints = this.endpoints;
        final int length = endpoints.length;
        if (length > 0)
        {
            int index = ++roundRobinIndex;
            if (index >= length)
            {
                index = roundRobinIndex = 0;
            }
            for (int i = 0; i < length; i++)
            {
                try
                {
                    work += duty.applyAsInt((T)endpoints[index]);
                }
                catch (final Throwable ex)
                {
                    errorHandler.onError(ex);
                }
                if (++index == length)
                {
                    index = 0;
                }
            }
        }
        return work;
    }

    public void onClose()
    {
        Runnable command;
        while (null != (command = commandQueue.poll()))
        {
            command.run();
        }
        for (final Object endpoint : endpoints)
        {
            closeQuietly(endpoint);
        }
        endpoints = new Object[0];
    }

    /**
     * Adds an endpoint on the agent's thread.
     *
     * @throws IllegalStateException when the command queue is full.
     */
    public void add(final T endpoint)
    {
        enqueue(() ->
        {
            final Object[] updated = Arrays.copyOf(endpoints, endpoints.length + 1);
            updated[endpoints.length] = endpoint;
            endpoints = updated;
        });
    }

    /**
     * Removes and closes an endpoint on the agent's thread, then runs {@code afterClose} there.
     *
     * @throws IllegalStateException when the command queue is full.
     */
    public void remove(final T endpoint, final Runnable afterClose)
    {
        enqueue(() ->
        {
            endpoints = Arrays.stream(endpoints).filter(e -> e != endpoint).toArray();
            closeQuietly(endpoint);
            afterClose.run();
        });
    }

    /** @return the number of endpoints (read on the agent thread for an exact answer). */
    public int endpointCount()
    {
        return endpoints.length;
    }

    private void enqueue(final Runnable command)
    {
        if (!commandQueue.offer(command))
        {
            throw new IllegalStateException(roleName + " command queue is full");
        }
    }

    private void closeQuietly(final Object endpoint)
    {
        try
        {
            ((AutoCloseable)endpoint).close();
        }
        catch (final Throwable ex)
        {
            errorHandler.onError(ex);
        }
    }
}
