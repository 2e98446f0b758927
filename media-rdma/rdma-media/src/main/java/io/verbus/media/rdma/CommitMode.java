package io.verbus.media.rdma;

import io.verbus.fabric.DeviceAttributes;
import io.verbus.fabric.FabricContext;

import java.util.Locale;

/**
 * How a publisher tells a subscriber that the data below a position has landed (the channel key {@code commit}).
 * <ul>
 * <li>{@link #COUNTER}: the data WRITEs are followed by a plain WRITE of the position block, which the image polls.
 * Lowest latency; correct where the device places one QP's WRITEs in order.</li>
 * <li>{@link #IMM}: the chain's last data WRITE goes as an RDMA_WRITE_WITH_IMM whose 32-bit immediate names the
 * position; the image publishes a position only from that WRITE's receive completion, which the responder produces
 * after that WRITE and every earlier WRITE of the QP are placed. Correct whatever the placement order across WRITEs,
 * and one WR per chain (the position block is then only the heartbeat).</li>
 * <li>{@link #AUTO}: {@link #IMM} where the device does not promise ordering across WRITEs, else {@link #COUNTER}
 * ({@link #resolve}).</li>
 * </ul>
 * On the wire (CHALLENGE, CONNECT) a mode is its {@link #code()}; a CHALLENGE also says what an {@code auto}
 * publisher's own device asks for ({@link #AUTO_PREFERS_IMM_FLAG}).
 */
public enum CommitMode
{
    COUNTER(0),
    IMM(1),
    AUTO(2);

    /**
     * System property: comma-separated device names (or name prefixes) that place WRITEs out of order, such as
     * adaptive-routing fabrics; {@code auto} chooses {@link #IMM} on them.
     */
    static final String UNORDERED_DEVICES_PROP_NAME = "verbus.rdma.unordered.devices";
    /** CHALLENGE commit word: set when the publisher is {@code auto} and its own device asks for {@link #IMM}. */
    static final int AUTO_PREFERS_IMM_FLAG = 0x100;

    private final int code;

    CommitMode(final int code)
    {
        this.code = code;
    }

    int code()
    {
        return code;
    }

    String keyValue()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param code a wire code.
     * @return its mode, or null when the code names none.
     */
    static CommitMode fromCode(final int code)
    {
        for (final CommitMode mode : values())
        {
            if (mode.code == code)
            {
                return mode;
            }
        }
        return null;
    }

    /** A resolved mode ({@link #COUNTER} or {@link #IMM}) and why it was chosen, for the log. */
    record Choice(CommitMode mode, String reason)
    {
    }

    /**
     * What {@code auto} chooses on a device: {@link #IMM} where nothing promises one QP's WRITEs land in order.
     * <ul>
     * <li>rxe (Soft-RoCE): {@code ibv_query_qp_data_in_order()} returns 0 and the driver promises no order;</li>
     * <li>a device named in {@link #UNORDERED_DEVICES_PROP_NAME} (adaptive routing, relaxed ordering);</li>
     * <li>a soft provider with the test-only cross-WRITE placement fault on.</li>
     * </ul>
     * Everything else (ConnectX on InfiniBand or RoCE without relaxed ordering; the shm and tcp providers, which
     * apply one QP's WRITEs in posting order) gets {@link #COUNTER}.
     *
     * @param device  the device's attributes.
     * @param context the fabric configuration the device was opened with (its fault injection), or null.
     * @return the choice and why.
     */
    static Choice auto(final DeviceAttributes device, final FabricContext context)
    {
        final String name = device.name();
        final String provider = device.provider();
        if ("verbs".equals(provider) && name.startsWith("rxe"))
        {
            return new Choice(IMM, "device " + name + " is Soft-RoCE (rxe), which promises no placement order " +
                "across WRITEs (ibv_query_qp_data_in_order() = 0)");
        }
        final String unordered = System.getProperty(UNORDERED_DEVICES_PROP_NAME, "");
        for (final String entry : unordered.split(","))
        {
            final String prefix = entry.trim();
            if (!prefix.isEmpty() && name.startsWith(prefix))
            {
                return new Choice(IMM, "device " + name + " is listed in -D" + UNORDERED_DEVICES_PROP_NAME + "=" +
                    unordered + " as placing WRITEs out of order");
            }
        }
        if (!"verbs".equals(provider) && null != context && context.faultInjection().crossWriteFraction() > 0)
        {
            return new Choice(IMM, "provider " + provider + " has the cross-WRITE placement fault injected");
        }
        return new Choice(COUNTER, "device " + name + " on provider " + provider + " places one QP's WRITEs in order");
    }

    /**
     * The publisher's mode as configured, resolved on its own device when {@code auto}.
     *
     * @param configured the channel's {@code commit}.
     * @param device     the publisher's device.
     * @param context    its fabric configuration.
     * @return the choice.
     */
    static Choice publisherChoice(final CommitMode configured, final DeviceAttributes device,
        final FabricContext context)
    {
        return AUTO == configured ? auto(device, context) :
            new Choice(configured, "commit=" + configured.keyValue() + " on the channel");
    }

    /**
     * The CHALLENGE's commit word: the publisher's configured mode, plus {@link #AUTO_PREFERS_IMM_FLAG} when it is
     * {@code auto} and its device asks for {@link #IMM}.
     */
    static int challengeWord(final CommitMode configured, final Choice publisherChoice)
    {
        return configured.code | (AUTO == configured && IMM == publisherChoice.mode() ? AUTO_PREFERS_IMM_FLAG : 0);
    }

    /**
     * The subscriber's side of the agreement, from the publisher's CHALLENGE word: an explicit mode on either side
     * wins over {@code auto}; two explicit modes must be equal; two {@code auto}s take {@link #IMM} if either device
     * asks for it.
     *
     * @param configured    this subscription's {@code commit}.
     * @param challengeWord the publisher's word (validated: a known mode, the flag only with auto).
     * @param localAuto     what {@code auto} chooses on this subscriber's device.
     * @return the agreed mode and why.
     * @throws IllegalStateException with the mismatch explained, when both sides insist on different modes.
     */
    static Choice agree(final CommitMode configured, final int challengeWord, final Choice localAuto)
    {
        final CommitMode publisher = fromCode(challengeWord & 0xFF);
        final boolean publisherPrefersImm = 0 != (challengeWord & AUTO_PREFERS_IMM_FLAG);
        if (AUTO != configured && AUTO != publisher && configured != publisher)
        {
            throw new IllegalStateException("the publisher commits with commit=" + publisher.keyValue() +
                " but this subscription requires commit=" + configured.keyValue() +
                ": both ends must use the same commit mode (or one of them commit=auto)");
        }
        if (AUTO != configured)
        {
            return new Choice(configured, "commit=" + configured.keyValue() + " on the subscription");
        }
        if (AUTO != publisher)
        {
            return new Choice(publisher, "the publisher requires commit=" + publisher.keyValue());
        }
        if (publisherPrefersImm)
        {
            return new Choice(IMM, "commit=auto on both ends and the publisher's device asks for imm");
        }
        return localAuto;
    }
}
