package io.verbus.fabric;

/**
 * How a port reaches its peers.
 */
public enum LinkLayer
{
    /** InfiniBand: LID-routed, lossless, lowest latency. */
    INFINIBAND,
    /** Ethernet: RoCE v2 for verbs devices (GID-addressed), plain TCP/IP for the tcp provider. */
    ETHERNET,
    /** Memory shared between processes of one host (the shm provider). */
    SHARED_MEMORY
}
