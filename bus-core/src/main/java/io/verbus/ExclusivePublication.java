package io.verbus;

/**
 * A {@link Publication} with a single writer thread. Appends need no atomic read-modify-write, and a media
 * that supports it may send in the writer's own thread (direct mode) instead of handing off to a sender agent.
 * Calling its offer methods from more than one thread at a time is a programming error.
 */
public interface ExclusivePublication extends Publication
{
}
