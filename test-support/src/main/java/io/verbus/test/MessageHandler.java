package io.verbus.test;

import org.agrona.DirectBuffer;

/** Takes one whole message (or one fragment, where the caller does not rejoin them) as the subscriber read it. */
@FunctionalInterface
public interface MessageHandler
{
    void onMessage(DirectBuffer buffer, int offset, int length);
}
