package io.verbus.fabric.tcp;

import io.verbus.fabric.soft.SoftMemoryRegion;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * One TCP connection of the software NIC with growable direct read and write buffers.
 * <p>
 * Ownership moves once: the NIC thread owns a connection while it connects and until the responder's answer to its
 * hello arrives (dialed), or until the hello names its QP and the answer is written (accepted), and again once it
 * drains after its QP closed. In between it is {@link #established} and belongs to
 * its QP's engine: whichever thread holds the QP's engine lock (the poster, a CQ poller, or the NIC thread as a
 * fallback) reads, writes and parses it, and the lock's acquire/release carries its plain fields between them.
 */
final class TcpConnection
{
    static final int INITIAL_BUFFER_BYTES = 256 * 1024;
    /** A write buffer grown for large frames goes back to the streaming size after this many small ones in a row. */
    static final int SMALL_FRAMES_BEFORE_SHRINK = 1024;
    /** A write buffer grown for large frames goes back to the streaming size after this long with no large frame. */
    static final long IDLE_WRITE_BUFFER_RELEASE_NS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The buffers of an accepted connection until its hello is proven: room for the hello and its answer only.
     * Anyone who reaches the port can open connections as fast as they like, and each one's buffers are direct memory
     * that only a GC gives back: at the streaming size a flood of bare connects took the JDK's direct memory limit
     * and a full System.gc() pause every few hundred connections.
     */
    static final int HELLO_BUFFER_BYTES = 64;
    /** Regions whose ByteBuffer view a connection keeps for direct placement (the media WRITEs into one ring). */
    private static final int VIEW_CACHE_SIZE = 4;

    final SocketChannel channel;
    final boolean dialed;
    volatile TcpQueuePair queuePair;
    boolean connected;
    volatile boolean helloDone;
    /**
     * Dialed connections: the responder answered the hello (read by the NIC thread before {@link #established});
     * until then nothing but the hello is written to the socket.
     */
    boolean helloAcknowledged;
    /** Set by the NIC thread last: from here on the QP's engine owns the buffers (the NIC no longer touches them). */
    volatile boolean established;
    long openedNs;
    long holdSinceNs = Long.MIN_VALUE;
    long lastRnrNakNs = Long.MIN_VALUE;
    /** When the request at the head first found no receive (the requester's RNR budget runs from here). */
    long rnrHeldSinceNs = Long.MIN_VALUE;
    /**
     * The responder ended an RNR wait on this connection: its requester is in ERR, and the requests it had already
     * sent behind the failed one are dropped unanswered (as a NIC drops what follows a NAKed PSN).
     */
    boolean discardingRequests;
    /** When the engine last read this socket, for the application's read rate while it streams. */
    long lastReadNs;
    private ByteBuffer readBuffer;
    private MemorySegment readSegment;
    private ByteBuffer writeBuffer;
    private MemorySegment writeSegment;
    private volatile boolean closed;
    private volatile boolean draining;
    private long drainDeadlineNs;

    // Direct placement: the rest of one WRITE's payload read from the socket straight into the target region.
    private final SoftMemoryRegion[] viewRegions = new SoftMemoryRegion[VIEW_CACHE_SIZE];
    private final ByteBuffer[] views = new ByteBuffer[VIEW_CACHE_SIZE];
    private int nextView;
    private ByteBuffer directTarget;
    private SoftMemoryRegion directRegion;
    long directSequence;
    int directFlags;
    /** Bytes of an abandoned direct placement still to be read and dropped, so the next frame starts in place. */
    private long skipRemaining;
    private int smallFramesSinceLarge;
    private long largeFrameReservedNs;

    TcpConnection(final SocketChannel channel, final boolean dialed, final long nowNs)
    {
        this.channel = channel;
        this.dialed = dialed;
        this.openedNs = nowNs;
        this.lastReadNs = nowNs - java.util.concurrent.TimeUnit.SECONDS.toNanos(1); // never read yet
        // A dialed connection is this NIC's own QP's; an accepted one is anybody's until its hello proves otherwise.
        final int bufferBytes = dialed ? INITIAL_BUFFER_BYTES : HELLO_BUFFER_BYTES;
        readBuffer = allocate(bufferBytes);
        readSegment = wholeOf(readBuffer);
        writeBuffer = allocate(bufferBytes);
        writeSegment = wholeOf(writeBuffer);
    }

    /**
     * An accepted connection whose hello proved it is a connected QP's peer: give it the streaming buffers, keeping
     * what either buffer holds. Called by the NIC thread, which still owns the connection, with both buffers in
     * write mode (after {@link #doneReading()}).
     */
    void growToStreamingBuffers()
    {
        if (readBuffer.capacity() < INITIAL_BUFFER_BYTES)
        {
            readBuffer = streamingCopy(readBuffer);
            readSegment = wholeOf(readBuffer);
        }
        if (writeBuffer.capacity() < INITIAL_BUFFER_BYTES)
        {
            writeBuffer = streamingCopy(writeBuffer);
            writeSegment = wholeOf(writeBuffer);
        }
    }

    /**
     * @return a buffer of the streaming size holding what {@code inWriteMode} holds, in write mode: the hello
     * buffers grown, or a buffer grown for one large frame given back.
     */
    private static ByteBuffer streamingCopy(final ByteBuffer inWriteMode)
    {
        final ByteBuffer streaming = allocate(INITIAL_BUFFER_BYTES);
        inWriteMode.flip();
        streaming.put(inWriteMode);
        return streaming;
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
     * @return true if bytes are waiting in the read buffer (a frame held back or not complete yet).
     */
    boolean hasBufferedInput()
    {
        return readBuffer.position() > 0;
    }

    /**
     * @return the read buffer in read mode (call {@link #doneReading()} after).
     */
    ByteBuffer startReading()
    {
        readBuffer.flip();
        return readBuffer;
    }

    /** @return the read buffer's size now, for tests of its growth and return. */
    int readBufferCapacity()
    {
        return readBuffer.capacity();
    }

    MemorySegment readSegment()
    {
        return readSegment;
    }

    void doneReading()
    {
        readBuffer.compact();
        final int buffered = readBuffer.position();
        if (readBuffer.capacity() > INITIAL_BUFFER_BYTES && buffered <= INITIAL_BUFFER_BYTES &&
            (buffered < TcpWire.FRAME_LENGTH_OFFSET + Integer.BYTES ||
            readBuffer.getInt(TcpWire.FRAME_LENGTH_OFFSET) <= INITIAL_BUFFER_BYTES))
        {
            // The frame it grew for is consumed (the next, if begun, fits): give the memory back rather than keep it
            // for the connection's life (a peer's one header would otherwise pin up to 32 MiB per connection, and a
            // publisher has a connection per subscriber).
            try
            {
                readBuffer = streamingCopy(readBuffer);
                readSegment = wholeOf(readBuffer);
            }
            catch (final OutOfMemoryError ex)
            {
                // No direct memory for the smaller buffer (allocated before anything moves): keep the one it has.
            }
        }
    }

    /**
     * Make room for more of a frame of {@code frameLength} that is not all here yet; call in read mode, positioned at
     * the frame. The buffer grows with what has arrived, not to what the header announces: at most to twice its size,
     * once the frame's bytes fill half of it, and to the frame's size (in pages) at the most. Grown at once, a header
     * alone would hold a buffer of up to {@link TcpDevice#MAX_MESSAGE_LENGTH} for as long as its peer withheld the
     * payload. The buffer is given back once the frame is consumed (see {@link #doneReading()}).
     *
     * @throws IOException when the JVM has no direct memory left for it: this connection is lost, not the thread.
     */
    void ensureReadCapacity(final int frameLength) throws IOException
    {
        final int capacity = readBuffer.capacity();
        if (frameLength > capacity && readBuffer.remaining() >= capacity / 2)
        {
            final ByteBuffer bigger = allocateOrFail((int)Math.min(frameLength, 2L * capacity));
            readSegment = wholeOf(bigger);
            bigger.put(readBuffer);
            bigger.flip();
            readBuffer = bigger;
        }
    }

    private static ByteBuffer allocateOrFail(final int frameLength) throws IOException
    {
        final int pageBytes = 4096;
        try
        {
            return allocate((int)Math.min(Integer.MAX_VALUE - pageBytes, ((long)frameLength + pageBytes - 1) &
                -pageBytes));
        }
        catch (final OutOfMemoryError ex)
        {
            throw new IOException("no direct memory for a " + frameLength + "-byte frame buffer: " + ex.getMessage());
        }
    }

    /**
     * A ByteBuffer over the whole of {@code region}, for the socket to read a WRITE's payload into. Made once per
     * region and connection (a handful are kept), so steady-state placement allocates nothing.
     *
     * @return the view (position and limit are the caller's), or null if the region cannot have one (over 2 GiB).
     */
    ByteBuffer viewOf(final SoftMemoryRegion region)
    {
        for (int i = 0; i < VIEW_CACHE_SIZE; i++)
        {
            if (viewRegions[i] == region)
            {
                return views[i];
            }
        }
        final MemorySegment segment = region.segment();
        if (!segment.isNative() || segment.byteSize() > Integer.MAX_VALUE)
        {
            return null;
        }
        final ByteBuffer view;
        try
        {
            view = segment.asByteBuffer();
        }
        catch (final RuntimeException ex)
        {
            return null; // e.g. a confined segment: place through the read buffer instead
        }
        final int i = nextView;
        nextView = (i + 1) % VIEW_CACHE_SIZE;
        viewRegions[i] = region;
        views[i] = view;
        return view;
    }

    /**
     * Read the next {@code length} bytes of the stream into {@code view} at {@code offset}, over as many reads as it
     * takes ({@link #readDirect()}), before any further frame is parsed.
     */
    void startDirect(
        final SoftMemoryRegion region,
        final ByteBuffer view,
        final int offset,
        final int length,
        final long sequence,
        final int flags)
    {
        view.clear();
        view.limit(offset + length).position(offset);
        directRegion = region;
        directTarget = view;
        directSequence = sequence;
        directFlags = flags;
    }

    /**
     * @return true while a direct placement waits for bytes.
     */
    boolean isPlacingDirectly()
    {
        return null != directTarget;
    }

    /**
     * Read what has arrived of the payload being placed directly.
     *
     * @return bytes read, -1 at end of stream.
     */
    int readDirect() throws IOException
    {
        final ByteBuffer target = directTarget;
        final int read = channel.read(target);
        if (!target.hasRemaining())
        {
            directTarget = null;
            directRegion = null;
        }
        return read;
    }

    /**
     * @return true while the region being placed into is still registered (checked before each read: the
     * application may deregister it while the payload is still arriving).
     */
    boolean isDirectRegionRegistered()
    {
        return directRegion.isRegistered();
    }

    /**
     * Give up the direct placement (its region went away): the rest of the payload will be read and dropped.
     */
    void abandonDirect()
    {
        skipRemaining = directTarget.remaining();
        directTarget = null;
        directRegion = null;
    }

    /**
     * @return true while bytes of an abandoned payload remain to be dropped.
     */
    boolean isSkipping()
    {
        return skipRemaining > 0;
    }

    /**
     * Read and drop bytes of an abandoned payload.
     *
     * @return bytes read, -1 at end of stream.
     */
    int skip() throws IOException
    {
        final ByteBuffer buffer = readBuffer;
        final int limit = buffer.limit();
        final int position = buffer.position();
        buffer.limit((int)Math.min(limit, position + skipRemaining));
        try
        {
            final int read = channel.read(buffer);
            if (read > 0)
            {
                skipRemaining -= read;
            }
            return read;
        }
        finally
        {
            buffer.position(position); // dropped
            buffer.limit(limit);
        }
    }

    /**
     * Reserve room for a frame at the write position.
     *
     * @return the offset of the frame in {@link #writeSegment()}, or -1 if it does not fit now.
     */
    int reserve(final int frameLength) throws IOException
    {
        if (frameLength > INITIAL_BUFFER_BYTES)
        {
            smallFramesSinceLarge = 0;
            largeFrameReservedNs = System.nanoTime();
        }
        else if (writeBuffer.capacity() > INITIAL_BUFFER_BYTES &&
            ++smallFramesSinceLarge >= SMALL_FRAMES_BEFORE_SHRINK && 0 == writeBuffer.position())
        {
            // Grown for large frames (READ responses, large WRITEs) that stopped coming: give it back rather than keep
            // up to MAX_MESSAGE_LENGTH for the connection's life. Not sooner: a stream of large frames would then pay a
            // fresh direct buffer per frame. Nothing is pending, so no frame is reserved in the old one.
            writeBuffer = allocateOrFail(INITIAL_BUFFER_BYTES);
            writeSegment = wholeOf(writeBuffer);
            smallFramesSinceLarge = 0;
        }
        if (writeBuffer.remaining() < frameLength)
        {
            flush();
            if (writeBuffer.remaining() < frameLength)
            {
                if (writeBuffer.position() > 0)
                {
                    return -1;
                }
                writeBuffer = allocateOrFail(frameLength);
                writeSegment = wholeOf(writeBuffer);
            }
        }
        final int offset = writeBuffer.position();
        writeBuffer.position(offset + frameLength);
        return offset;
    }

    /**
     * Give back a write buffer grown for large frames once none has come for {@link #IDLE_WRITE_BUFFER_RELEASE_NS} and
     * nothing is pending: a peer that asked for one large READ and then fell silent would otherwise leave its size
     * (up to {@link TcpDevice#MAX_MESSAGE_LENGTH}) held until the connection ends, as no small frame follows to count
     * towards {@link #SMALL_FRAMES_BEFORE_SHRINK}. Called on the engine's passes; keeps the buffer when the smaller
     * one cannot be allocated.
     */
    void releaseIdleWriteBuffer(final long nowNs)
    {
        if (writeBuffer.capacity() > INITIAL_BUFFER_BYTES && 0 == writeBuffer.position() &&
            nowNs - largeFrameReservedNs >= IDLE_WRITE_BUFFER_RELEASE_NS)
        {
            try
            {
                writeBuffer = allocate(INITIAL_BUFFER_BYTES);
                writeSegment = wholeOf(writeBuffer);
                smallFramesSinceLarge = 0;
            }
            catch (final OutOfMemoryError ex)
            {
                largeFrameReservedNs = nowNs; // no direct memory now: try again after another idle period
            }
        }
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

    int pendingWriteBytes()
    {
        return writeBuffer.position();
    }

    /**
     * One non-blocking write of what is pending; what the socket does not take stays, in order, for the next.
     */
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

    /** @return the write buffer's size now, for tests of its growth and return. */
    int writeBufferCapacity()
    {
        return writeBuffer.capacity();
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
        if (!channel.isConnected())
        {
            // Still dialing (or never connected): nothing was sent, nothing is owed, and a half-close or read on it
            // throws NotYetConnectedException, which is no IOException.
            close();
            return;
        }
        drainDeadlineNs = nowNs + java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
        draining = true;
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
        catch (final IOException | java.nio.channels.NotYetConnectedException ex)
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

    /**
     * @return true if the QP's engine may use it now: established, neither draining nor closed.
     */
    boolean isUsable()
    {
        return established && !closed && !draining;
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
