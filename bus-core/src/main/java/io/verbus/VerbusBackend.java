package io.verbus;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;

/**
 * What a {@link Verbus} delegates to: its embedded driver ({@link VerbusDriver}, {@link Verbus#launch}) or its
 * proxy to a standalone driver in another process ({@link ClientConductor}, {@link Verbus#connect}).
 */
interface VerbusBackend extends AutoCloseable
{
    Publication addPublication(String channel, int streamId, boolean exclusive);

    Subscription addSubscription(
        String channel, int streamId, AvailableImageHandler availableImageHandler,
        UnavailableImageHandler unavailableImageHandler);

    AtomicCounter addCounter(int typeId, DirectBuffer keyBuffer, int keyOffset, int keyLength, String label);

    long nextRegistrationId();

    int invoke();

    CountersReader countersReader();

    Verbus.Context context();

    boolean isClosed();

    void close();
}
