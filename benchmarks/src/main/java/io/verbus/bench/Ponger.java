package io.verbus.bench;

/**
 * The echoing end of a round trip, owned by the ponger thread.
 */
public interface Ponger
{
    /**
     * Polls once and sends back, unchanged, every message that arrived.
     *
     * @return how many messages were echoed; 0 when nothing arrived.
     */
    int echo();
}
