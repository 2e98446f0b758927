package io.verbus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Aeron's {@code session-id} key on {@code ipc}: a publication takes the session id it names (unique per stream), and
 * a subscription naming one sees only that publication's image.
 */
class SessionSpecificChannelTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldGiveAPublicationTheSessionIdItNamesAndRefuseADuplicate()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Publication publication = verbus.addPublication("ipc:session-id=777", 31);
            assertEquals(777, publication.sessionId());
            final IllegalArgumentException duplicate = assertThrows(IllegalArgumentException.class,
                () -> verbus.addExclusivePublication("ipc:session-id=777", 31));
            assertTrue(duplicate.getMessage().contains("session-id=777"), duplicate.getMessage());
            assertEquals(777, verbus.addPublication("ipc:session-id=777", 32).sessionId(), "other streams are free");

            publication.close();
            assertEquals(777, verbus.addExclusivePublication("ipc:session-id=777", 31).sessionId(),
                "a closed publication's session id is free again");

            final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> verbus.addSubscription("ipc:session-id=seven", 31));
            assertTrue(bad.getMessage().contains("session-id=seven"), bad.getMessage());
        }
    }

    @Test
    void shouldDeliverOnlyTheNamedSessionToASessionSpecificSubscription()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription early = verbus.addSubscription("ipc:session-id=2002", 33);
            final Publication first = verbus.addPublication("ipc:session-id=2001", 33);
            final Publication second = verbus.addPublication("ipc:session-id=2002", 33);
            final Subscription late = verbus.addSubscription("ipc:session-id=2002", 33);
            final Subscription all = verbus.addSubscription("ipc", 33);

            for (final Subscription subscription : List.of(early, late))
            {
                assertEquals(1, subscription.imageCount());
                assertEquals(2002, subscription.imageAtIndex(0).sessionId());
            }
            assertEquals(2, all.imageCount());

            final UnsafeBuffer message = new UnsafeBuffer(new byte[4]);
            message.putInt(0, 1);
            TestSupport.await("first offered", () -> first.offer(message) > 0);
            message.putInt(0, 2);
            TestSupport.await("second offered", () -> second.offer(message) > 0);

            final List<Integer> received = new ArrayList<>();
            TestSupport.await("all received", () -> received.size() == 2,
                () -> all.poll((buffer, offset, length, header) -> received.add(buffer.getInt(offset)), 10));
            final List<Integer> sessionOnly = new ArrayList<>();
            TestSupport.await("session received", () -> sessionOnly.size() == 1,
                () -> late.poll((buffer, offset, length, header) -> sessionOnly.add(header.sessionId()), 10));
            TestSupport.sleep(50);
            late.poll((buffer, offset, length, header) -> sessionOnly.add(header.sessionId()), 10);
            assertEquals(List.of(2002), sessionOnly);
        }
    }
}
