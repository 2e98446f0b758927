package io.verbus.fabric;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.*;

class FabricsTest
{
    @Test
    void shouldOpenProvidersByName()
    {
        try (Fabric tcp = Fabrics.open("tcp"))
        {
            assertEquals("tcp", tcp.providerName());
            assertEquals(java.util.List.of("tcp0"), tcp.deviceNames());
        }
        assertTrue(Fabrics.providerNames().containsAll(java.util.List.of("shm", "tcp")));
    }

    @Test
    void shouldRejectAnUnknownProviderNamingTheKnownOnes()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> Fabrics.open("ib"));
        assertTrue(ex.getMessage().contains("'ib'") && ex.getMessage().contains("tcp") &&
            ex.getMessage().contains("auto"), ex.getMessage());
    }

    @Test
    void shouldPickTcpForAutoWhenNoVerbsProviderIsAvailable()
    {
        try (Fabric fabric = Fabrics.open(Fabrics.AUTO))
        {
            assertEquals("tcp", fabric.providerName(), "shm never wins auto; verbs is absent here");
        }
    }

    @Test
    void shouldRejectAnUnknownDeviceName()
    {
        try (Fabric tcp = Fabrics.open("tcp"))
        {
            assertThrows(IllegalArgumentException.class, () -> tcp.openDevice("mlx5_0"));
        }
    }

    @Test
    void shouldRoundTripConnectionInfoAndRejectABadMtu()
    {
        final byte[] gid = new byte[16];
        gid[15] = 7;
        final QueuePairConnectionInfo info = new QueuePairConnectionInfo(0xABCDE, 0x12345, 77, gid, 4096);
        final ByteBuffer buffer = ByteBuffer.allocate(QueuePairConnectionInfo.ENCODED_LENGTH);
        info.encode(buffer);
        assertFalse(buffer.hasRemaining());
        buffer.flip();
        assertEquals(info, QueuePairConnectionInfo.decode(buffer));

        final ByteBuffer bad = ByteBuffer.allocate(QueuePairConnectionInfo.ENCODED_LENGTH);
        new QueuePairConnectionInfo(1, 1, 1, gid, 1024).encode(bad);
        bad.putInt(QueuePairConnectionInfo.ENCODED_LENGTH - 4, Integer.reverseBytes(1000)).flip();
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> QueuePairConnectionInfo.decode(bad));
        assertTrue(ex.getMessage().contains("mtu"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new QueuePairConnectionInfo(1 << 24, 0, 0, gid, 1024));
    }

    @Test
    void shouldRequireLocalWriteWithRemoteWriteAsVerbsDoes()
    {
        assertThrows(IllegalArgumentException.class, () -> AccessFlags.validate(AccessFlags.REMOTE_WRITE));
        assertThrows(IllegalArgumentException.class, () -> AccessFlags.validate(1 << 9));
        AccessFlags.validate(AccessFlags.REMOTE_READ);
        assertEquals(
            "LOCAL_WRITE|REMOTE_ATOMIC", AccessFlags.toString(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_ATOMIC));
    }

    @Test
    void shouldRejectAQueuePairConfigBeyondTheDeviceLimitsNamingTheField()
    {
        try (Fabric tcp = Fabrics.open("tcp"); Device device = tcp.openDevice())
        {
            final ProtectionDomain pd = device.allocateProtectionDomain();
            final CompletionQueue cq = device.createCompletionQueue(16);
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> pd.createQueuePair(new QueuePairConfig().completionQueue(cq).maxInlineData(1 << 20)));
            assertTrue(ex.getMessage().contains("maxInlineData"), ex.getMessage());
        }
    }
}
