package io.verbus.driver;

import org.agrona.concurrent.status.CountersReader;

/**
 * The messages between clients and a standalone driver, through the {@link CncFile}. Each message is a few fixed
 * fields at the offsets below followed, where it has one, by an ASCII string with an int length prefix. Commands go
 * into the many-to-one ring; every response is broadcast, and a client keeps the ones whose client id or correlation
 * id are its own.
 * <p>
 * Commands (clients to driver), all starting with {@code long clientId, long correlationId}:
 * <ul>
 *     <li>{@link #ADD_PUBLICATION}: {@code int streamId, int exclusive (0/1), string channel}</li>
 *     <li>{@link #REMOVE_PUBLICATION} and {@link #REMOVE_SUBSCRIPTION}: {@code long registrationId}</li>
 *     <li>{@link #ADD_SUBSCRIPTION}: {@code int streamId, int unused, string channel}</li>
 *     <li>{@link #CLIENT_KEEPALIVE}: {@code long pid, long pidNamespace} (the client process and the inode of its
 *     pid namespace, 0 when unknown: the driver watches a client of its own namespace exit instead of waiting for
 *     its liveness timeout)</li>
 *     <li>{@link #CLIENT_CLOSE}: nothing more</li>
 *     <li>{@link #ADD_COUNTER}: {@code int typeId, int keyLength, byte[MAX_KEY_LENGTH] key, string label}</li>
 *     <li>{@link #REMOVE_COUNTER}: {@code long registrationId}</li>
 * </ul>
 * Responses (driver to clients), all starting with {@code long correlationId} (the client id for
 * {@link #ON_CLIENT_TIMEOUT}, the subscription's correlation id for image events):
 * <ul>
 *     <li>{@link #ON_PUBLICATION_READY}: {@code long registrationId, int sessionId, int streamId, int termLength,
 *     int publisherLimitCounterId, int backPressureCounterId, int unused, long originalRegistrationId (of the
 *     publication whose log it shares), string logPath}</li>
 *     <li>{@link #ON_SUBSCRIPTION_READY}: {@code long registrationId}</li>
 *     <li>{@link #ON_ERROR}: {@code long unused, string message}</li>
 *     <li>{@link #ON_AVAILABLE_IMAGE}: {@code long imageCorrelationId, int sessionId, int streamId, int termLength,
 *     int subscriberPositionCounterId, int unused, int unused, long unused, string logPath, string sourceIdentity
 *     (of the media image a bridge log copies; empty for the driver's ipc and spy logs)}</li>
 *     <li>{@link #ON_UNAVAILABLE_IMAGE}: {@code long imageCorrelationId}</li>
 *     <li>{@link #ON_CLIENT_TIMEOUT}: nothing more</li>
 *     <li>{@link #ON_COUNTER_READY}: {@code long registrationId, int counterId}</li>
 * </ul>
 */
public final class DriverProtocol
{
    public static final int ADD_PUBLICATION = 1;
    public static final int REMOVE_PUBLICATION = 2;
    public static final int ADD_SUBSCRIPTION = 3;
    public static final int REMOVE_SUBSCRIPTION = 4;
    public static final int CLIENT_KEEPALIVE = 5;
    public static final int CLIENT_CLOSE = 6;
    public static final int ADD_COUNTER = 7;
    public static final int REMOVE_COUNTER = 8;

    public static final int ON_PUBLICATION_READY = 101;
    public static final int ON_SUBSCRIPTION_READY = 102;
    public static final int ON_ERROR = 103;
    public static final int ON_AVAILABLE_IMAGE = 104;
    public static final int ON_UNAVAILABLE_IMAGE = 105;
    public static final int ON_CLIENT_TIMEOUT = 106;
    public static final int ON_COUNTER_READY = 107;

    /** Commands: the client's id. */
    public static final int CLIENT_ID_OFFSET = 0;
    /** Commands: the command's correlation id. */
    public static final int COMMAND_CORRELATION_ID_OFFSET = 8;
    /** Add commands: the stream id. */
    public static final int STREAM_ID_OFFSET = 16;
    /** Add publication: 1 for an exclusive publication. */
    public static final int EXCLUSIVE_OFFSET = 20;
    /** Add commands: the channel string. */
    public static final int CHANNEL_OFFSET = 24;
    /** Add counter: the counter's type id. */
    public static final int COUNTER_TYPE_ID_OFFSET = 16;
    /** Add counter: how many bytes of the key field are the key. */
    public static final int COUNTER_KEY_LENGTH_OFFSET = 20;
    /** Add counter: the key, a field of {@link #MAX_COUNTER_KEY_LENGTH} bytes. */
    public static final int COUNTER_KEY_OFFSET = 24;
    /** Longest counter key: the key space of a counters file record (Agrona's {@code MAX_KEY_LENGTH}). */
    public static final int MAX_COUNTER_KEY_LENGTH = CountersReader.MAX_KEY_LENGTH;
    /** Add counter: the label string. */
    public static final int COUNTER_LABEL_OFFSET = COUNTER_KEY_OFFSET + MAX_COUNTER_KEY_LENGTH;
    /** Remove commands: the registration id. */
    public static final int REMOVE_REGISTRATION_ID_OFFSET = 16;
    /** {@link #CLIENT_KEEPALIVE}: the client's process id. */
    public static final int KEEPALIVE_PID_OFFSET = 16;
    /** {@link #CLIENT_KEEPALIVE}: the inode of the client's pid namespace ({@code /proc/self/ns/pid}), 0 if unknown. */
    public static final int KEEPALIVE_PID_NAMESPACE_OFFSET = 24;
    /** {@link #CLIENT_KEEPALIVE}: its length; an older client's 16-byte keepalive carries no pid. */
    public static final int KEEPALIVE_LENGTH = 32;

    /** Responses: the correlation id (or client id, or subscription correlation id). */
    public static final int CORRELATION_ID_OFFSET = 0;
    /** Responses: the registration id, or the image's correlation id. */
    public static final int REGISTRATION_ID_OFFSET = 8;
    public static final int SESSION_ID_OFFSET = 16;
    public static final int RESPONSE_STREAM_ID_OFFSET = 20;
    public static final int TERM_LENGTH_OFFSET = 24;
    /** Publication ready: the publisher limit; image: the subscriber position. */
    public static final int POSITION_COUNTER_ID_OFFSET = 28;
    /** Publication ready: the back-pressure events counter. */
    public static final int BACK_PRESSURE_COUNTER_ID_OFFSET = 32;
    /** Counter ready: the counter's id in the counters file. */
    public static final int COUNTER_ID_OFFSET = 16;
    /** Publication ready: the registration id of the publication whose log it shares (its own when none). */
    public static final int ORIGINAL_REGISTRATION_ID_OFFSET = 40;
    /** Responses with a log: its path. */
    public static final int LOG_PATH_OFFSET = 48;
    /** Error: the message. */
    public static final int ERROR_MESSAGE_OFFSET = 16;

    /** Longest channel or path accepted. */
    public static final int MAX_STRING_LENGTH = 4096;

    private DriverProtocol()
    {
    }
}
