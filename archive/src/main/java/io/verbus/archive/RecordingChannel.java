package io.verbus.archive;

import io.aeron.ChannelUri;
import io.aeron.ChannelUriStringBuilder;

/**
 * The Aeron channel of a recording publication: the archive's recording channel (IPC or UDP) with the Verbus
 * stream's own log parameters, so that what the archive stores has the stream's positions. Aeron's
 * {@code ExclusivePublication.offerBlock} accepts a block only when its first frame has the publication's term offset,
 * term id, session id and stream id, so the publication must start where the stream does:
 * {@code init-term-id}, {@code term-id} and {@code term-offset} from the stream position, the stream's
 * {@code term-length} and {@code session-id}. The {@code alias} carries the Verbus channel into the catalog (Aeron's
 * URI parser stops a value at '|', so that separator is stored as ';').
 */
final class RecordingChannel
{
    static final String ALIAS_PREFIX = "verbus:";

    private RecordingChannel()
    {
    }

    /**
     * @param baseChannel    {@code aeron:ipc} or {@code aeron:udp?endpoint=...}.
     * @param verbusChannel  the recorded Verbus channel, for the catalog.
     * @param sessionId      of the stream.
     * @param initialTermId  of the stream.
     * @param termLength     of the stream.
     * @param startPosition  where the publication starts: a frame boundary of the stream.
     * @param mtuLength      of the publication.
     * @return the channel for the publication, and for the archive's start or extend request.
     */
    static String publicationChannel(
        final String baseChannel,
        final String verbusChannel,
        final int sessionId,
        final int initialTermId,
        final int termLength,
        final long startPosition,
        final int mtuLength)
    {
        return new ChannelUriStringBuilder(baseChannel)
            .initialPosition(startPosition, initialTermId, termLength)
            .termLength(termLength)
            .sessionId(sessionId)
            .mtu(mtuLength)
            .alias(aliasFor(verbusChannel))
            .build();
    }

    static String aliasFor(final String verbusChannel)
    {
        return ALIAS_PREFIX + verbusChannel.replace('|', ';');
    }

    /** @return the Verbus channel named by a recording's original channel, or null when Verbus did not make it. */
    static String verbusChannelOf(final String originalChannel)
    {
        if (null == originalChannel)
        {
            return null;
        }
        try
        {
            final String alias = ChannelUri.parse(originalChannel).get("alias");
            return null != alias && alias.startsWith(ALIAS_PREFIX) ?
                alias.substring(ALIAS_PREFIX.length()).replace(';', '|') : null;
        }
        catch (final RuntimeException ex)
        {
            return null;
        }
    }
}
