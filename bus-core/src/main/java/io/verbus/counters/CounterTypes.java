package io.verbus.counters;

/**
 * Type ids of the counters Verbus allocates in its counters file. bus-core uses 1..99; each media gets its own
 * range so that {@code ./verbus stat} can tell them apart.
 */
public final class CounterTypes
{
    /** A driver-wide counter such as the error count. */
    public static final int SYSTEM_COUNTER_TYPE_ID = 1;

    /** A publication's position: the tail of its log. */
    public static final int PUBLISHER_POSITION_TYPE_ID = 2;

    /** A publication's limit: how far it may write before it is back pressured. */
    public static final int PUBLISHER_LIMIT_TYPE_ID = 3;

    /** An image's subscriber position: how far one subscription has consumed one publisher's stream. */
    public static final int SUBSCRIBER_POSITION_TYPE_ID = 4;

    /** Times a publication's offer or claim returned BACK_PRESSURED. */
    public static final int BACK_PRESSURE_EVENTS_TYPE_ID = 5;

    /** Errors seen by the driver and its media. */
    public static final int ERRORS_TYPE_ID = 6;

    /** Holes in publication logs (claims never committed) that the conductor padded after the unblock timeout. */
    public static final int UNBLOCKED_PUBLICATIONS_TYPE_ID = 7;

    /** First type id of the range reserved for the rdma media (media-rdma allocates within it). */
    public static final int MEDIA_RDMA_TYPE_ID_BASE = 100;

    /** First type id of the range reserved for other media found through the SPI. */
    public static final int MEDIA_OTHER_TYPE_ID_BASE = 200;

    /** First type id of the range reserved for the archive module (recorder, replay, late join): 300..399. */
    public static final int ARCHIVE_TYPE_ID_BASE = 300;

    private CounterTypes()
    {
    }

    /** @return a short name for a type id, as printed by {@code ./verbus stat}. */
    public static String typeName(final int typeId)
    {
        return switch (typeId)
        {
            case SYSTEM_COUNTER_TYPE_ID -> "system";
            case PUBLISHER_POSITION_TYPE_ID -> "pub-pos";
            case PUBLISHER_LIMIT_TYPE_ID -> "pub-lmt";
            case SUBSCRIBER_POSITION_TYPE_ID -> "sub-pos";
            case BACK_PRESSURE_EVENTS_TYPE_ID -> "back-pressure";
            case ERRORS_TYPE_ID -> "errors";
            case UNBLOCKED_PUBLICATIONS_TYPE_ID -> "unblocked";
            default -> typeId >= ARCHIVE_TYPE_ID_BASE && typeId < ARCHIVE_TYPE_ID_BASE + 100 ? "archive" :
                typeId >= MEDIA_OTHER_TYPE_ID_BASE ? "media" :
                typeId >= MEDIA_RDMA_TYPE_ID_BASE ? "rdma" : "type-" + typeId;
        };
    }
}
