package io.verbus.fabric.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * One TCP connection of the software NIC with growable direct read and write buffers. Owned by the NIC thread.
 */
final class TcpConnection
{
    private static final int INITIAL_BUFFER_BYTES = 256 * 1024;

    final SocketChannel channel;
    final boolean dialed;
    TcpQueuePair queuePair;
    boolean connected;
    boolean helloDone;
    /** Dialed connections: the responder answered the hello; requests may flow. */
    boolean helloAcknowledged;
    long openedNs;
    long holdSinceNs = Long.MIN_VALUE;
    long lastRnrNakNs = Long.MIN_VALUE;
    private ByteBuffer readBuffer = allocate(INITIAL_BUFFER_BYTES);
    private MemorySegment readSegment = wholeOf(readBuffer);
    private ByteBuffer writeBuffer = allocate(INITIAL_BUFFER_BYTES);
    private MemorySegment writeSegment = wholeOf(writeBuffer);
    private boolean closed;
    private boolean draining;
    private long drainDeadlineNs;

    TcpConnection(final SocketChannel channel, final boolean dialed, final long nowNs)
    {
        this.channel = channel;
        this.dialed = dialed;
        this.openedNs = nowNs;
    }

    /**
     * A segment over the whole buffer: {@link MemorySegment#ofBuffer} covers only position..limit.
     */
    private static MemorySegment wholeOf(final ByteBuffer buffer)
    {
        return MemorySegment.ofBuffer(buffer.duplicate().clear());
    }

    private static ByteBuffer allocate(final int bytes)
    {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @return bytes read, -1 at end of stream.
     */
    int read() throws IOException
    {
        if (!readBuffer.hasRemaining())
        {
            return 0;
        }
        return channel.read(readBuffer);
    }

    /**
     * @return the read buffer in read mode (call {@link #doneReading()} after).
     */
    ByteBuffer startReading()
    {
        readBuffer.flip();
        return readBuffer;
    }

    MemorySegment readSegment()
    {
        return readSegment;
    }

    void doneReading()
    {
        readBuffer.compact();
    }

    /**
     * Make sure a frame of {@code frameLength} fits the read buffer; call in read mode.
     */
    void ensureReadCapacity(final int frameLength)
    {
        if (frameLength > readBuffer.capacity())
        {
            final ByteBuffer bigger = allocate(Integer.highestOneBit(frameLength - 1) << 1);
            readSegment = wholeOf(bigger);
            bigger.put(readBuffer);
            bigger.flip();
            readBuffer = bigger;
        }
    }

    /**
     * Reserve room for a frame at the write position.
     *
     * @return the offset of the frame in {@link #writeSegment()}, or -1 if it does not fit now.
     */
    int reserve(final int frameLength) throws IOException
    {
        if (writeBuffer.remaining() < frameLength)
        {
            flush();
            if (writeBuffer.remaining() < frameLength)
            {
                if (writeBuffer.position() > 0)
                {
                    return -1;
                }
                writeBuffer = allocate(Integer.highestOneBit(frameLength - 1) << 1);
                writeSegment = wholeOf(writeBuffer);
            }
        }
        final int offset = writeBuffer.position();
        writeBuffer.position(offset + frameLength);
        return offset;
    }

    /**
     * @return true if {@link #reserve(int)} of that many bytes will succeed now (flushing to make room).
     */
    boolean canReserve(final int frameLength) throws IOException
    {
        if (writeBuffer.remaining() >= frameLength)
        {
            return true;
        }
        flush();
        return writeBuffer.remaining() >= frameLength || writeBuffer.position() == 0;
    }

    ByteBuffer writeBuffer()
    {
        return writeBuffer;
    }

    MemorySegment writeSegment()
    {
        return writeSegment;
    }

    boolean hasPendingWrites()
    {
        return writeBuffer.position() > 0;
    }

    void flush() throws IOException
    {
        if (writeBuffer.position() == 0)
        {
            return;
        }
        writeBuffer.flip();
        try
        {
            channel.write(writeBuffer);
        }
        finally
        {
            writeBuffer.compact();
        }
    }

    /**
     * Send what is pending (a final NAK), then half-close: the peer reads every response before the end of
     * the stream. Closing outright with unread input would send a reset that can destroy those responses.
     */
    void closeGracefully(final long nowNs)
    {
        if (closed || draining)
        {
            return;
        }
        draining = true;
        drainDeadlineNs = nowNs + java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
        try
        {
            flush();
            channel.shutdownOutput();
        }
        catch (final IOException ex)
        {
            close();
        }
    }

    /**
     * While draining, read and discard until the peer closes or the drain deadline passes.
     */
    void drain(final long nowNs)
    {
        try
        {
            readBuffer.clear();
            if (channel.read(readBuffer) < 0 || nowNs > drainDeadlineNs)
            {
                close();
            }
            readBuffer.clear();
        }
        catch (final IOException ex)
        {
            close();
        }
    }

    boolean isDraining()
    {
        return draining;
    }

    boolean isClosed()
    {
        return closed;
    }

    void close()
    {
        if (!closed)
        {
            closed = true;
            try
            {
                channel.close();
            }
            catch (final IOException ignore)
            {
                // closing anyway
            }
        }
    }
}
