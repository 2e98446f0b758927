package io.verbus;

import io.aeron.exceptions.DriverTimeoutException;
import io.aeron.logbuffer.BufferClaim;
import io.verbus.counters.CountersFile;
import io.verbus.driver.CncFile;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.verbus.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The standalone driver and {@link Verbus#connect} within one JVM (the cross-process cases are in
 * {@code StandaloneDriverCrossProcessTest}): two clients share the driver's log, and the client's view of the
 * driver's lifecycle.
 */
class StandaloneDriverTest
{
    @TempDir
    Path tempDir;

    private Verbus.Context clientContext()
    {
        return new Verbus.Context().dir(tempDir.resolve("verbus").toString()).driverTimeoutMs(2_000);
    }

    @Test
    void shouldExchangeIpcMessagesBetweenTwoClientsThroughTheDriversLog()
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus subscriberClient = Verbus.connect(clientContext());
            Verbus publisherClient = Verbus.connect(clientContext()))
        {
            final List<Image> available = new CopyOnWriteArrayList<>();
            final Subscription sub = subscriberClient.addSubscription("ipc", 11, available::add, (image) -> {});
            final ExclusivePublication pub = publisherClient.addExclusivePublication("ipc", 11);
            final Publication concurrent = publisherClient.addPublication("ipc", 11);
            await("two images", () -> 2 == sub.imageCount());
            await("connected", () -> pub.isConnected() && concurrent.isConnected());
            assertEquals(2, available.size());
            assertTrue(Files.exists(Path.of(driver.dir()).resolve(CncFile.FILE_NAME)));

            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
            final BufferClaim claim = new BufferClaim();
            final int messages = 20_000;
            final List<Long> received = new ArrayList<>();
            int sent = 0;
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (received.size() < 2 * messages && System.nanoTime() < deadline)
            {
                if (sent < messages)
                {
                    buffer.putLong(0, sent);
                    final long r1 = 0 == (sent & 1) ? pub.offer(buffer, 0, 8) : claimAndCommit(pub, claim, sent);
                    if (r1 > 0)
                    {
                        while (concurrent.offer(buffer, 0, 8) < 0 && System.nanoTime() < deadline)
                        {
                            sub.poll((b, o, l, h) -> received.add(b.getLong(o)), 100);
                        }
                        sent++;
                    }
                }
                sub.poll((b, o, l, h) -> received.add(b.getLong(o)), 100);
            }
            assertEquals(2 * messages, received.size());
            long sum = 0;
            for (final long value : received)
            {
                sum += value;
            }
            assertEquals(2L * messages * (messages - 1) / 2, sum);

            final CountersFile counters = CountersFile.openReadOnly(Path.of(driver.dir()));
            assertEquals(ProcessHandle.current().pid(), counters.pid());
            counters.close();
            assertEquals(2, driver.clientCount());
        }
    }

    private static long claimAndCommit(final ExclusivePublication pub, final BufferClaim claim, final long value)
    {
        final long result = pub.tryClaim(8, claim);
        if (result > 0)
        {
            claim.buffer().putLong(claim.offset(), value);
            claim.commit();
        }
        return result;
    }

    @Test
    void shouldServeAClientInInvokerModeAndFollowItsCloses()
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus other = Verbus.connect(clientContext()))
        {
            final Verbus client = Verbus.connect(clientContext().threadingMode(ThreadingMode.INVOKER));
            final Subscription sub = client.addSubscription("ipc", 3);
            final Publication pub = other.addPublication("ipc", 3);
            await("connected", () -> pub.isConnected() && 1 == sub.imageCount(), client::invoke);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
            final long[] received = new long[1];
            for (int i = 0; i < 1000; i++)
            {
                buffer.putInt(0, i);
                while (pub.offer(buffer, 0, 16) < 0)
                {
                    sub.poll((b, o, l, h) -> received[0]++, 10);
                }
            }
            await("all received", () -> 1000 == received[0], () -> sub.poll((b, o, l, h) -> received[0]++, 10));
            await("two clients", () -> 2 == driver.clientCount());

            sub.close();
            await("no subscriber", () -> !pub.isConnected());
            final Subscription again = client.addSubscription("ipc", 3);
            await("connected again", () -> pub.isConnected() && 1 == again.imageCount(), client::invoke);
            pub.close();
            await("image gone", again::hasNoImages, client::invoke);

            // The INVOKER client's Aeron client runs its conductor in invoke() too: images arrive through it.
            final Subscription aeronSub = client.addSubscription("aeron:ipc", 4);
            final Publication aeronPub = other.addPublication("aeron:ipc", 4);
            await("aeron:ipc connected", () -> aeronPub.isConnected() && 1 == aeronSub.imageCount(), client::invoke);
            final long[] aeronReceived = new long[1];
            for (int i = 0; i < 1000; i++)
            {
                buffer.putInt(0, i);
                while (aeronPub.offer(buffer, 0, 16) < 0)
                {
                    aeronSub.poll((b, o, l, h) -> aeronReceived[0]++, 10);
                }
            }
            await("all aeron:ipc received", () -> 1000 == aeronReceived[0],
                () -> aeronSub.poll((b, o, l, h) -> aeronReceived[0]++, 10));
            client.close();
            assertTrue(again.isClosed());
            assertTrue(aeronSub.isClosed());
            await("one client", () -> 1 == driver.clientCount());
        }
    }

    @Test
    void shouldSendAClientsMediaPublicationWithTheDriversSender()
    {
        // The loopback media (test SPI) connects a sender and a receiver in one JVM: the driver's sender takes the
        // frames the client writes into the driver's log, and an embedded Verbus in another dir receives them.
        try (Verbus receiver = Verbus.launch(TestSupport.context(tempDir.resolve("receiver")));
            MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus client = Verbus.connect(clientContext()))
        {
            final Subscription sub = receiver.addSubscription("loop:name=standalone", 21);
            final ExclusivePublication exclusive = client.addExclusivePublication("loop:name=standalone", 21);
            await("connected", exclusive::isConnected);
            final Publication concurrent = client.addPublication("loop:name=standalone", 21);
            await("connected", concurrent::isConnected);
            await("two images", () -> 2 == sub.imageCount());

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
            final BufferClaim claim = new BufferClaim();
            final long[] sum = new long[2];
            final int messages = 5_000;
            for (int i = 0; i < messages; i++)
            {
                buffer.putLong(0, i);
                while ((0 == (i & 1) ? exclusive.offer(buffer, 0, 64) : claimAndCommit(exclusive, claim, i)) < 0)
                {
                    sub.poll((b, o, l, h) -> sum[0] += b.getLong(o), 100);
                }
                while (concurrent.offer(buffer, 0, 64) < 0)
                {
                    sub.poll((b, o, l, h) -> sum[1] += b.getLong(o), 100);
                }
            }
            final long expected = 2L * messages * (messages - 1) / 2;
            await("all received", () -> expected == sum[0] + sum[1],
                () -> sub.poll((b, o, l, h) -> sum[0] += b.getLong(o), 100));
        }
    }

    @Test
    void shouldFreeASilentClientAndTellItThatItTimedOut()
    {
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir)
                .clientLivenessTimeoutNs(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(300)));
            Verbus live = Verbus.connect(clientContext()))
        {
            // An INVOKER client that stops calling invoke() sends no keepalive: to the driver it looks dead.
            final Verbus silent = Verbus.connect(clientContext().threadingMode(ThreadingMode.INVOKER)
                .errorHandler(errors::add));
            final Subscription silentSub = silent.addSubscription("ipc", 8);
            final Publication pub = live.addPublication("ipc", 8);
            await("connected", pub::isConnected);
            await("the silent client freed", () -> !pub.isConnected() && 1 == driver.clientCount());

            // Once it runs again it learns it was timed out, and closes.
            await("the silent client closed", silent::isClosed, silent::invoke);
            assertTrue(silentSub.isClosed());
            assertInstanceOf(DriverTimeoutException.class, errors.get(0));
            assertTrue(errors.get(0).getMessage().contains("timed this client out"), errors.get(0).getMessage());
            silent.close();

            final Subscription liveSub = live.addSubscription("ipc", 8);
            await("connected again", () -> pub.isConnected() && 1 == liveSub.imageCount());
        }
    }

    @Test
    void shouldServeClientsMediaSubscriptionsWithOneDriverSubscription()
    {
        // The loopback media hands its one connection to one receiver: both clients receive everything only if the
        // driver serves them with one media subscription, copied into a bridge log they share.
        try (Verbus remote = Verbus.launch(TestSupport.context(tempDir.resolve("remote")));
            MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus clientA = Verbus.connect(clientContext());
            Verbus clientB = Verbus.connect(clientContext()))
        {
            final Subscription subA = clientA.addSubscription("loop:name=bridge", 31);
            final Subscription subB = clientB.addSubscription("loop:name=bridge", 31);
            final ExclusivePublication pub = remote.addExclusivePublication("loop:name=bridge", 31);
            await("connected", () -> pub.isConnected() && 1 == subA.imageCount() && 1 == subB.imageCount());

            final int messages = 20_000; // 64 KiB terms: many rotations, padding, 3000-byte fragmented messages
            final long[][] next = new long[2][1];
            final String[] error = new String[1];
            final io.aeron.FragmentAssembler[] assemblers = new io.aeron.FragmentAssembler[2];
            for (int i = 0; i < 2; i++)
            {
                final long[] expected = next[i];
                assemblers[i] = new io.aeron.FragmentAssembler((b, o, l, h) ->
                {
                    final long sequence = b.getLong(o);
                    if (sequence != expected[0] || l != StandaloneDriverChild.messageLength(sequence))
                    {
                        error[0] = "sequence " + sequence + " length " + l + ", expected " + expected[0];
                    }
                    expected[0]++;
                });
            }
            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
            for (long sequence = 0; sequence < messages; sequence++)
            {
                final int length = StandaloneDriverChild.messageLength(sequence);
                StandaloneDriverChild.fill(buffer, 0, sequence, length);
                final long deadline = System.nanoTime() + 30_000_000_000L;
                while (pub.offer(buffer, 0, length) < 0)
                {
                    subA.poll(assemblers[0], 100);
                    subB.poll(assemblers[1], 100);
                    assertTrue(System.nanoTime() < deadline, "stuck at " + sequence);
                }
            }
            await("all received by both", () -> messages == next[0][0] && messages == next[1][0], () ->
            {
                subA.poll(assemblers[0], 100);
                subB.poll(assemblers[1], 100);
            });
            assertEquals(null, error[0]);

            subA.close();
            subB.close();
            final Subscription again = clientA.addSubscription("loop:name=bridge", 31);
            assertEquals(0, again.imageCount());
        }
    }

    @Test
    void shouldLeaveNoBridgedSubscriptionBehindWhenASubscribeFailsOnAFullCountersFile()
    {
        try (Verbus remote = Verbus.launch(TestSupport.context(tempDir.resolve("remote")));
            MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir).maxCounters(64));
            Verbus clientA = Verbus.connect(clientContext());
            Verbus clientB = Verbus.connect(clientContext()))
        {
            final CountersReader counters = clientA.countersReader();
            final long countersBefore = allocatedCounters(counters);
            final Subscription subA = clientA.addSubscription("loop:name=full", 33);
            final ExclusivePublication pub = remote.addExclusivePublication("loop:name=full", 33);
            await("connected", () -> pub.isConnected() && 1 == subA.imageCount());

            final List<AtomicCounter> fillers = new ArrayList<>();
            final RuntimeException full = assertThrows(RuntimeException.class, () ->
            {
                while (true)
                {
                    fillers.add(clientA.addCounter(1_001, "filler"));
                }
            });
            assertTrue(full.getMessage().contains("counters file full"), full.getMessage());
            // Joining the bridge's image needs a position counter: refused, and the refused proxy must not stay.
            final RuntimeException refused =
                assertThrows(RuntimeException.class, () -> clientB.addSubscription("loop:name=full", 33));
            assertTrue(refused.getMessage().contains("counters file full"), refused.getMessage());

            fillers.forEach(AtomicCounter::close);
            subA.close();
            // The last proxy gone, the bridge's media subscription and bridge log go too, with every counter they held
            // (an orphaned proxy kept them for as long as the driver ran).
            await("every counter of the bridge freed", () -> countersBefore == allocatedCounters(counters));
        }
    }

    private static long allocatedCounters(final CountersReader counters)
    {
        final long[] count = {0};
        counters.forEach((id, type, key, label) -> count[0]++);
        return count[0];
    }

    @Test
    void shouldServeAeronChannelsOfTwoClientsThroughTheDriversAeronDriverAndCloseEachClientsAeronClientWithIt()
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus subscriberClient = Verbus.connect(clientContext());
            io.aeron.Aeron observer = io.aeron.Aeron.connect(
                new io.aeron.Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName())))
        {
            // The Aeron driver runs from launch (the observer connected to it). It counts a client once the client has
            // added something: none yet.
            assertEquals(Path.of(driver.dir(), "aeron").toString(), driver.aeronDirectoryName());
            assertEquals(0, aeronClients(observer));
            final Subscription sub = subscriberClient.addSubscription("aeron:ipc", 12);
            final Verbus publisherClient = Verbus.connect(clientContext());
            final Publication pub = publisherClient.addPublication("aeron:ipc", 12);
            await("connected", pub::isConnected);
            assertEquals(2, aeronClients(observer), "one Aeron client per Verbus client, on the driver's Aeron driver");

            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
            final int messages = 5_000;
            final long[] next = {0};
            final String[] error = {null};
            int sent = 0;
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (next[0] < messages && null == error[0] && System.nanoTime() < deadline)
            {
                buffer.putLong(0, sent);
                if (sent < messages && pub.offer(buffer, 0, 8) > 0)
                {
                    sent++;
                }
                sub.poll((b, o, l, h) ->
                {
                    if (b.getLong(o) != next[0]++ && null == error[0])
                    {
                        error[0] = "message " + b.getLong(o) + " where " + (next[0] - 1) + " was due";
                    }
                }, 100);
            }
            assertEquals(null, error[0]);
            assertEquals(messages, next[0]);

            // The publisher's Aeron client closes with its Verbus; the other client and the Aeron driver go on.
            publisherClient.close();
            assertTrue(pub.isClosed());
            await("the publisher's Aeron client gone from the Aeron driver", () -> 1 == aeronClients(observer));
            assertEquals(Publication.CLOSED, pub.offer(buffer, 0, 8));
            await("the image gone", () -> 0 == sub.imageCount(), () -> sub.poll((b, o, l, h) -> {}, 10));
            try (Verbus again = Verbus.connect(clientContext()))
            {
                final Publication another = again.addPublication("aeron:ipc", 12);
                await("connected again", another::isConnected);
                assertFalse(sub.isClosed());
            }
            final IllegalArgumentException bad = assertThrows(
                IllegalArgumentException.class, () -> subscriberClient.addPublication("ipc:term-length=3", 1));
            assertTrue(bad.getMessage().contains("term"), bad.getMessage());
        }
    }

    /** @return how many Aeron clients with resources the observer's Aeron driver has (a heartbeat counter each). */
    private static int aeronClients(final io.aeron.Aeron observer)
    {
        final int[] count = {0};
        observer.countersReader().forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (io.aeron.AeronCounters.DRIVER_HEARTBEAT_TYPE_ID == typeId)
            {
                count[0]++;
            }
        });
        return count[0];
    }

    @Test
    void shouldAllocateAClientsCountersInTheDriversCountersFileAndFreeThemWithTheCounterOrTheClient()
    {
        try (MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus other = Verbus.connect(clientContext());
            CountersFile stat = CountersFile.openReadOnly(tempDir.resolve("verbus")))
        {
            final CountersReader statReader = stat.countersReader(); // what ./verbus stat reads
            final Verbus client = Verbus.connect(clientContext());
            final AtomicCounter orders = client.addCounter(1001, "orders sent");
            orders.set(42);
            final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
            key.putLong(0, 7L);
            final UnsafeBuffer label = new UnsafeBuffer("fills".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            final AtomicCounter fills = client.addCounter(1002, key, 0, 8, label, 0, label.capacity());
            fills.increment();
            assertFalse(orders.id() == fills.id());

            assertEquals(CountersReader.RECORD_ALLOCATED, statReader.getCounterState(orders.id()));
            assertEquals(1001, statReader.getCounterTypeId(orders.id()));
            assertEquals("orders sent", statReader.getCounterLabel(orders.id()));
            assertEquals(42, statReader.getCounterValue(orders.id()));
            assertTrue(statReader.getCounterRegistrationId(orders.id()) > 0);
            assertEquals(1002, statReader.getCounterTypeId(fills.id()));
            assertEquals("fills", statReader.getCounterLabel(fills.id()));
            assertEquals(7L, statReader.metaDataBuffer().getLong(
                CountersReader.metaDataOffset(fills.id()) + CountersReader.KEY_OFFSET));
            assertEquals(1, other.countersReader().getCounterValue(fills.id()), "another client sees it too");

            orders.close();
            assertTrue(orders.isClosed());
            await("the closed counter freed",
                () -> CountersReader.RECORD_ALLOCATED != statReader.getCounterState(orders.id()));
            assertEquals(CountersReader.RECORD_ALLOCATED, statReader.getCounterState(fills.id()));

            client.close();
            assertTrue(fills.isClosed());
            await("the closed client's counter freed",
                () -> CountersReader.RECORD_ALLOCATED != statReader.getCounterState(fills.id()));
            assertThrows(IllegalStateException.class, () -> client.addCounter(1003, "after close"));
            assertThrows(IllegalArgumentException.class, () -> other.addCounter(1004, key, 0, 113, label, 0, 5));
        }
    }

    @Test
    void shouldFreeTheCountersOfAClientTakenForDead()
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir)
                .clientLivenessTimeoutNs(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(300)));
            Verbus live = Verbus.connect(clientContext()))
        {
            final Verbus silent = Verbus.connect(clientContext().threadingMode(ThreadingMode.INVOKER)
                .errorHandler((ex) -> {}));
            final AtomicCounter counter = silent.addCounter(1001, "silent client's counter");
            final CountersReader reader = live.countersReader();
            assertEquals(CountersReader.RECORD_ALLOCATED, reader.getCounterState(counter.id()));
            await("the silent client freed", () -> 1 == driver.clientCount());
            await("its counter freed", () -> CountersReader.RECORD_ALLOCATED != reader.getCounterState(counter.id()));
            await("the silent client closed", silent::isClosed, silent::invoke);
            assertTrue(counter.isClosed());
            silent.close();
        }
    }

    @Test
    void shouldServeAClientsSpyOnAnotherClientsMediaPublicationFromTheDriversLog()
    {
        try (Verbus receiver = Verbus.launch(TestSupport.context(tempDir.resolve("receiver")));
            MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus publisher = Verbus.connect(clientContext());
            Verbus spying = Verbus.connect(clientContext()))
        {
            final Subscription sub = receiver.addSubscription("loop:name=standalone-spy", 22);
            final ExclusivePublication publication = publisher.addExclusivePublication(
                "loop:name=standalone-spy|term-length=64k", 22);
            final Subscription spy = spying.addSubscription("aeron-spy:loop:name=standalone-spy", 22);
            await("connected", publication::isConnected);
            await("the spy's image", () -> 1 == spy.imageCount());
            assertEquals("spy", spy.imageAtIndex(0).sourceIdentity()); // the driver's log file, mapped by the client

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
            final long[] next = new long[2];
            final boolean[] ordered = { true, true };
            final int messages = 2_000; // several terms: the publisher never laps the spy's process
            for (int i = 0; i < messages; i++)
            {
                buffer.putLong(0, i);
                while (publication.offer(buffer, 0, 256) < 0)
                {
                    sub.poll((b, o, l, h) -> ordered[0] &= b.getLong(o) == next[0]++, 100);
                    spy.poll((b, o, l, h) -> ordered[1] &= b.getLong(o) == next[1]++, 100);
                }
            }
            await("all received", () -> messages == next[0] && messages == next[1], () ->
            {
                sub.poll((b, o, l, h) -> ordered[0] &= b.getLong(o) == next[0]++, 100);
                spy.poll((b, o, l, h) -> ordered[1] &= b.getLong(o) == next[1]++, 100);
            });
            assertTrue(ordered[0] && ordered[1]);
        }
    }

    @Test
    void shouldFailToConnectWithoutADriver()
    {
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> Verbus.connect(clientContext()));
        assertTrue(ex.getMessage().contains("./verbus driver"), ex.getMessage());
    }

    @Test
    void shouldRefuseASecondDriverOnTheSameDir()
    {
        try (MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir)))
        {
            assertThrows(IllegalStateException.class, () -> MediaDriver.launch(TestSupport.context(tempDir)));
            assertThrows(IllegalStateException.class, () -> Verbus.launch(TestSupport.context(tempDir)));
        }
    }

    @Test
    void shouldCloseTheClientAndReportWhenTheDriverCloses()
    {
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir));
        try (Verbus client = Verbus.connect(clientContext().errorHandler(errors::add)))
        {
            final Publication pub = client.addPublication("ipc", 5);
            final Subscription sub = client.addSubscription("ipc", 5);
            await("connected", pub::isConnected);
            driver.close();
            await("client closed", client::isClosed);
            assertEquals(Publication.CLOSED, pub.offer(new UnsafeBuffer(new byte[8])));
            assertTrue(sub.isClosed());
            assertEquals(1, errors.size());
            assertInstanceOf(DriverTimeoutException.class, errors.get(0));
        }
        finally
        {
            driver.close();
        }
    }
}
