package io.verbus;

/**
 * How the embedded driver's agents (conductor, sender, receiver) are scheduled onto threads.
 */
public enum ThreadingMode
{
    /** Conductor, sender and receiver each run on their own thread with their own idle strategy. */
    DEDICATED,

    /** Conductor, sender and receiver share one thread as a composite agent. */
    SHARED,

    /**
     * No driver thread is started: the application drives every agent by calling {@link Verbus#invoke()}
     * regularly from one thread of its own (its duty cycle).
     */
    INVOKER
}
