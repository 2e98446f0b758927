package io.verbus.media.rdma;

import java.io.IOException;
import java.net.Socket;

/**
 * A control connection from accept until its handshake is over (admitted, rejected or timed out). The endpoint
 * holds at most a bounded number of them and closes any that is still pending at its deadline, so neither many
 * connections nor slow ones (a slow-loris dribbling a byte a second) can hold the endpoint.
 */
final class PendingHandshake
{
    private final Socket socket;
    private final long acceptedNs;
    private volatile long budgetMs;
    private volatile long deadlineNs;
    private final java.util.Set<PendingHandshake> slots;
    private volatile boolean finished;
    private volatile boolean expired;
    private volatile boolean evicted;
    /** The peer proved the secret (its CONNECT checked out): never evicted to make room for a newcomer. */
    private volatile boolean authenticated;

    /**
     * @param acceptedNs System.nanoTime() at accept.
     * @param budgetMs   how long the whole handshake may take from accept, until {@link #budget(long)} changes it.
     * @param slots      the endpoint's pending handshakes: this one is added now and removes itself when finished.
     */
    PendingHandshake(
        final Socket socket, final long acceptedNs, final long budgetMs, final java.util.Set<PendingHandshake> slots)
    {
        this.socket = socket;
        this.acceptedNs = acceptedNs;
        budget(budgetMs);
        this.slots = slots;
        slots.add(this);
    }

    /**
     * Sets how long the whole handshake may take from accept. The endpoint learns which publication a connection is
     * for only from its HELLO; from then on that publication's channel timeout sets the budget, not the timeout of
     * whichever publication opened the endpoint.
     */
    void budget(final long budgetMs)
    {
        this.budgetMs = budgetMs;
        this.deadlineNs = acceptedNs + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(budgetMs);
    }

    /** @return how long the whole handshake may take from accept. */
    long budgetMs()
    {
        return budgetMs;
    }

    /** The handshake is over, one way or the other: the slot is free. Idempotent. */
    void finish()
    {
        if (!finished)
        {
            finished = true;
            slots.remove(this);
        }
    }

    /**
     * Closes the connection if its deadline passed while it was still pending; its handshake thread then fails on
     * the closed socket and reports the rejection.
     *
     * @return true when it was closed now.
     */
    boolean expireIfDue(final long nowNs)
    {
        if (finished || expired || nowNs - deadlineNs < 0)
        {
            return false;
        }
        expired = true;
        closeSocket();
        return true;
    }

    /**
     * Closes the connection now, to make room for a newer one: the endpoint is full and this is its oldest
     * handshake. Its handshake thread then fails on the closed socket and reports the rejection.
     *
     * @return true when it was closed now (it was neither finished nor closed already).
     */
    boolean evict()
    {
        if (finished || expired || evicted)
        {
            return false;
        }
        evicted = true;
        closeSocket();
        return true;
    }

    /**
     * The peer proved it holds the secret: from here on only its deadline ends it, not a newcomer. Otherwise anyone
     * who reaches the port could close an admitted subscriber's handshake (a catch-up by RDMA READ lasts seconds) by
     * opening connections that cost them nothing, one slot table's worth at a time.
     */
    void markAuthenticated()
    {
        authenticated = true;
    }

    /** @return true when a newcomer may close it to make room: live and not yet authenticated. */
    boolean isEvictable()
    {
        return isLive() && !authenticated;
    }

    /** @return true when it is still in its handshake and neither expired nor evicted. */
    boolean isLive()
    {
        return !finished && !expired && !evicted;
    }

    /** @return the deadline, which orders handshakes by age: all get the same time. */
    long deadlineNs()
    {
        return deadlineNs;
    }

    /** @return true when the endpoint closed it to make room for a newer connection. */
    boolean isEvicted()
    {
        return evicted;
    }

    private void closeSocket()
    {
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
    }

    /** @return true when the endpoint closed it at its deadline. */
    boolean isExpired()
    {
        return expired;
    }

    Socket socket()
    {
        return socket;
    }
}
