package io.verbus;

import org.junit.jupiter.api.Nested;

/**
 * {@link AeronApiCompatibility} on the channels bus-core serves by itself: Verbus's native {@code ipc} log and
 * {@code aeron:ipc} through the embedded Aeron driver ({@code rdma:} runs in rdma-media).
 */
class AeronApiCompatibilityTest
{
    @Nested
    class Ipc extends AeronApiCompatibility
    {
        protected String publicationChannel()
        {
            return "ipc:term-length=64k";
        }

        protected String subscriptionChannel()
        {
            return "ipc";
        }

        protected String withSessionId(final String channel, final int sessionId)
        {
            return channel + (channel.contains(":") ? "|" : ":") + "session-id=" + sessionId;
        }

        protected int activeTransportCount()
        {
            return 0;
        }

        protected boolean signalsEndOfStream()
        {
            return true;
        }
    }

    @Nested
    class AeronIpc extends AeronApiCompatibility
    {
        protected String publicationChannel()
        {
            return "aeron:ipc?term-length=64k";
        }

        protected String subscriptionChannel()
        {
            return "aeron:ipc";
        }

        protected String withSessionId(final String channel, final int sessionId)
        {
            return channel + (channel.contains("?") ? "|" : "?") + "session-id=" + sessionId;
        }

        protected int activeTransportCount()
        {
            return 0;
        }

        protected boolean signalsEndOfStream()
        {
            return true;
        }
    }
}
