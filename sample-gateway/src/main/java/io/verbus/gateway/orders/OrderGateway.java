package io.verbus.gateway.orders;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.gateway.PartCounters;
import io.verbus.gateway.SessionProtocol;
import io.verbus.sbe.MessageBounds;
import io.verbus.sbe.orderentry.CancelOrderDecoder;
import io.verbus.sbe.orderentry.ExecType;
import io.verbus.sbe.orderentry.ExecutionReportEncoder;
import io.verbus.sbe.orderentry.MessageHeaderDecoder;
import io.verbus.sbe.orderentry.MessageHeaderEncoder;
import io.verbus.sbe.orderentry.NewOrderDecoder;
import io.verbus.sbe.orderentry.OrderRejectEncoder;
import io.verbus.sbe.orderentry.RejectReason;
import io.verbus.sbe.orderentry.ReplaceOrderDecoder;
import io.verbus.sbe.orderentry.Side;
import io.verbus.sbe.session.LogonDecoder;
import io.verbus.sbe.session.LogonEncoder;
import io.verbus.sbe.session.LogoutEncoder;
import io.verbus.sbe.session.LogoutReason;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The order gateway: answers every request exactly once. A new order passes risk checks (known instrument, quantity
 * within limits, positive price, position limit per instrument) and is then filled in full or acknowledged as resting,
 * by a seeded fill model; a failed check is answered with a REJECTED execution report. A cancel or replace of a resting
 * order is answered with CANCELED or REPLACED; of an unknown order with an {@link OrderRejectEncoder OrderReject}.
 * A malformed request (failing bounds checks) is answered with an OrderReject when its clOrdId can be read safely.
 * <p>
 * Orders are accepted only from a peer that has logged on with the session Logon of the same protocol major version
 * (answered with a Logon; another major gets a Logout, UNSUPPORTED_VERSION); before that they are rejected
 * NOT_LOGGED_ON.
 * <p>
 * Exactly once: requests are polled with a controlled handler, and the gateway's state (positions, resting orders,
 * ids) changes only after the answer was accepted by the publication; when the answer is refused (back pressure) the
 * handler aborts and the same request is offered again on the next duty cycle.
 */
public final class OrderGateway implements Agent
{
    /** Index of requests answered, in {@link #counters()}. */
    public static final int ANSWERED = 0;
    /** Index of fills. */
    public static final int FILLS = 1;
    /** Index of acks. */
    public static final int ACKS = 2;
    /** Index of REJECTED execution reports and OrderRejects. */
    public static final int REJECTS = 3;
    /** Index of cancels and replaces that found their order. */
    public static final int CANCELS_REPLACES = 4;
    /** Index of answers refused by the connected publication (back pressure, admin action) and retried. */
    public static final int BACK_PRESSURE = 5;
    /** Index of malformed requests. */
    public static final int MALFORMED = 6;
    /** Index of logons accepted. */
    public static final int LOGONS = 7;
    /** Index of logons refused (unsupported protocol version). */
    public static final int LOGONS_REFUSED = 8;
    /** Index of answers refused while the strategy's subscription was not connected, and retried. */
    public static final int NOT_CONNECTED = 9;

    /** Most resting orders the gateway keeps; beyond it new orders are rejected as a risk limit. */
    public static final int MAX_RESTING_ORDERS = 1 << 16;

    private static final int FRAGMENT_LIMIT = 64;
    private static final long NOT_RESTING = Long.MIN_VALUE;
    /** Reject texts encoded once: {@code text(String)} would allocate the UTF-8 bytes on every reject. */
    private static final byte[] UNKNOWN_ORDER_TEXT =
        "no resting order with that origClOrdId".getBytes(StandardCharsets.UTF_8);
    private static final byte[] MALFORMED_TEXT = "request failed bounds checks".getBytes(StandardCharsets.UTF_8);

    private final Subscription requests;
    private final ExclusivePublication answers;
    private final NanoClock clock;
    private final int instruments;
    private final long maxOrderQty;
    private final long positionLimit;
    private final int fillPercent;
    private final SplittableRandom fillModel;
    private final long[] positions;
    /** clOrdId of a resting order -> its signed quantity (positive buy, negative sell) and instrument, packed. */
    private final Long2LongHashMap restingOrders = new Long2LongHashMap(2 * MAX_RESTING_ORDERS, 0.65f, NOT_RESTING);

    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final NewOrderDecoder newOrderDecoder = new NewOrderDecoder();
    private final CancelOrderDecoder cancelDecoder = new CancelOrderDecoder();
    private final ReplaceOrderDecoder replaceDecoder = new ReplaceOrderDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ExecutionReportEncoder reportEncoder = new ExecutionReportEncoder();
    private final OrderRejectEncoder rejectEncoder = new OrderRejectEncoder();
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(512));
    private final ControlledFragmentHandler requestHandler = this::onRequest;
    private final PartCounters counters = new PartCounters(
        "answered", "fills", "acks", "rejects", "cancels-replaces", "back-pressure", "malformed", "logons",
        "logons-refused", "not-connected");
    private final long[] counts = new long[10];
    private final io.verbus.sbe.session.MessageHeaderEncoder sessionHeaderEncoder =
        new io.verbus.sbe.session.MessageHeaderEncoder();
    private final LogonDecoder logonDecoder = new LogonDecoder();
    private final LogonEncoder logonEncoder = new LogonEncoder();
    private final LogoutEncoder logoutEncoder = new LogoutEncoder();
    private boolean loggedOn;

    private long nextOrderId = 1;
    private long nextExecId = 1;

    /**
     * @param requests      subscription to the strategy's orders.
     * @param answers       publication of execution reports and rejects.
     * @param clock         for transact times.
     * @param instruments   ids 0 to instruments - 1 are known.
     * @param maxOrderQty   largest quantity accepted.
     * @param positionLimit largest absolute position per instrument.
     * @param fillPercent   share of accepted orders filled at once, 0 to 100; the rest rest.
     * @param seed          of the fill model.
     */
    public OrderGateway(
        final Subscription requests,
        final ExclusivePublication answers,
        final NanoClock clock,
        final int instruments,
        final long maxOrderQty,
        final long positionLimit,
        final int fillPercent,
        final long seed)
    {
        this.requests = requests;
        this.answers = answers;
        this.clock = clock;
        this.instruments = instruments;
        this.maxOrderQty = maxOrderQty;
        this.positionLimit = positionLimit;
        this.fillPercent = fillPercent;
        this.fillModel = new SplittableRandom(seed);
        this.positions = new long[instruments];
    }

    @Override
    public String roleName()
    {
        return "order-gateway";
    }

    @Override
    public int doWork()
    {
        int work = answers.flush();
        work += requests.controlledPoll(requestHandler, FRAGMENT_LIMIT);
        for (int i = 0; i < counts.length; i++)
        {
            counters.publish(i, counts[i]);
        }
        return work;
    }

    private ControlledFragmentHandler.Action onRequest(
        final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final int checked = MessageBounds.check(buffer, offset, length);
        if (checked < 0)
        {
            return onMalformed(buffer, offset, length);
        }
        headerDecoder.wrap(buffer, offset);
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        if (headerDecoder.schemaId() == LogonDecoder.SCHEMA_ID &&
            headerDecoder.templateId() == LogonDecoder.TEMPLATE_ID)
        {
            return onLogon(logonDecoder.wrap(buffer, body, headerDecoder.blockLength(), headerDecoder.version()));
        }
        if (headerDecoder.schemaId() != NewOrderDecoder.SCHEMA_ID)
        {
            return onMalformed(buffer, offset, length);
        }
        return switch (headerDecoder.templateId())
        {
            case NewOrderDecoder.TEMPLATE_ID ->
                onNewOrder(newOrderDecoder.wrap(buffer, body, headerDecoder.blockLength(), headerDecoder.version()));
            case CancelOrderDecoder.TEMPLATE_ID ->
                onCancel(cancelDecoder.wrap(buffer, body, headerDecoder.blockLength(), headerDecoder.version()));
            case ReplaceOrderDecoder.TEMPLATE_ID ->
                onReplace(replaceDecoder.wrap(buffer, body, headerDecoder.blockLength(), headerDecoder.version()));
            default -> onMalformed(buffer, offset, length);
        };
    }

    private ControlledFragmentHandler.Action onLogon(final LogonDecoder logon)
    {
        final boolean supported = logon.protocolVersion().major() == SessionProtocol.MAJOR;
        final int length;
        if (supported)
        {
            logonEncoder.wrapAndApplyHeader(sendBuffer, 0, sessionHeaderEncoder)
                .sendingTimeNanos(clock.nanoTime())
                .heartbeatIntervalMs(SessionProtocol.HEARTBEAT_INTERVAL_MS)
                .senderCompId("ORDER-GATEWAY")
                .marketDataSchemaVersion(logon.marketDataSchemaVersion())
                .orderEntrySchemaVersion(NewOrderDecoder.SCHEMA_VERSION)
                .protocolVersion().major(SessionProtocol.MAJOR).minor(SessionProtocol.MINOR);
            length = io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + logonEncoder.encodedLength();
        }
        else
        {
            logoutEncoder.wrapAndApplyHeader(sendBuffer, 0, sessionHeaderEncoder)
                .sendingTimeNanos(clock.nanoTime())
                .reason(LogoutReason.UNSUPPORTED_VERSION);
            length = io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + logoutEncoder.encodedLength();
        }
        final long result = answers.offer(sendBuffer, 0, length);
        if (result <= 0)
        {
            countRefused(result);
            return ControlledFragmentHandler.Action.ABORT;
        }
        loggedOn = supported;
        counts[supported ? LOGONS : LOGONS_REFUSED]++;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onNewOrder(final NewOrderDecoder order)
    {
        final int id = order.instrumentId();
        final long qty = order.quantity();
        final long price = order.price().mantissa();
        final Side side = order.side();
        final long signedQty = side == Side.BUY ? qty : -qty;

        RejectReason reason = RejectReason.NONE;
        if (!loggedOn)
        {
            reason = RejectReason.NOT_LOGGED_ON;
        }
        else if (id < 0 || id >= instruments)
        {
            reason = RejectReason.UNKNOWN_INSTRUMENT;
        }
        else if (qty <= 0 || qty > maxOrderQty)
        {
            reason = RejectReason.INVALID_QUANTITY;
        }
        else if (price <= 0 || (side != Side.BUY && side != Side.SELL))
        {
            reason = RejectReason.INVALID_PRICE;
        }
        else if (Math.abs(positions[id] + signedQty) > positionLimit || restingOrders.size() >= MAX_RESTING_ORDERS)
        {
            reason = RejectReason.RISK_LIMIT;
        }

        final boolean fill = reason == RejectReason.NONE && fillModel.nextInt(100) < fillPercent;
        final ExecType execType = reason != RejectReason.NONE ? ExecType.REJECTED : fill ? ExecType.FILL : ExecType.NEW;
        final long orderId = reason == RejectReason.NONE ? nextOrderId : 0;
        encodeReport(orderId, order.clOrdId(), side, id, execType, reason, fill ? price : 0, fill ? qty : 0,
            execType == ExecType.NEW ? qty : 0, fill ? qty : 0, order.tickTimeNanos());
        if (!offerAnswer(MessageHeaderEncoder.ENCODED_LENGTH + reportEncoder.encodedLength()))
        {
            return ControlledFragmentHandler.Action.ABORT;
        }

        if (reason == RejectReason.NONE)
        {
            nextOrderId++;
        }
        switch (execType)
        {
            case FILL ->
            {
                positions[id] += signedQty;
                counts[FILLS]++;
            }
            case NEW ->
            {
                restingOrders.put(order.clOrdId(), pack(id, signedQty));
                counts[ACKS]++;
            }
            default -> counts[REJECTS]++;
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onCancel(final CancelOrderDecoder cancel)
    {
        final long resting = restingOrders.get(cancel.origClOrdId());
        if (resting == NOT_RESTING)
        {
            return rejectUnknownOrder(cancel.clOrdId(), cancel.instrumentId(), CancelOrderDecoder.TEMPLATE_ID);
        }
        encodeReport(0, cancel.clOrdId(), cancel.side(), cancel.instrumentId(), ExecType.CANCELED, RejectReason.NONE,
            0, 0, 0, 0, 0);
        if (!offerAnswer(MessageHeaderEncoder.ENCODED_LENGTH + reportEncoder.encodedLength()))
        {
            return ControlledFragmentHandler.Action.ABORT;
        }
        restingOrders.remove(cancel.origClOrdId());
        counts[CANCELS_REPLACES]++;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onReplace(final ReplaceOrderDecoder replace)
    {
        final long resting = restingOrders.get(replace.origClOrdId());
        if (resting == NOT_RESTING)
        {
            return rejectUnknownOrder(replace.clOrdId(), replace.instrumentId(), ReplaceOrderDecoder.TEMPLATE_ID);
        }
        final long qty = replace.quantity();
        if (qty <= 0 || qty > maxOrderQty || replace.price().mantissa() <= 0)
        {
            encodeReport(0, replace.clOrdId(), replace.side(), replace.instrumentId(), ExecType.REJECTED,
                qty <= 0 || qty > maxOrderQty ? RejectReason.INVALID_QUANTITY : RejectReason.INVALID_PRICE,
                0, 0, 0, 0, replace.tickTimeNanos());
            if (!offerAnswer(MessageHeaderEncoder.ENCODED_LENGTH + reportEncoder.encodedLength()))
            {
                return ControlledFragmentHandler.Action.ABORT;
            }
            counts[REJECTS]++;
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        encodeReport(0, replace.clOrdId(), replace.side(), replace.instrumentId(), ExecType.REPLACED,
            RejectReason.NONE, 0, 0, qty, 0, replace.tickTimeNanos());
        if (!offerAnswer(MessageHeaderEncoder.ENCODED_LENGTH + reportEncoder.encodedLength()))
        {
            return ControlledFragmentHandler.Action.ABORT;
        }
        restingOrders.remove(replace.origClOrdId());
        restingOrders.put(replace.clOrdId(),
            pack(replace.instrumentId(), replace.side() == Side.BUY ? qty : -qty));
        counts[CANCELS_REPLACES]++;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action rejectUnknownOrder(
        final long clOrdId, final int instrumentId, final int templateId)
    {
        rejectEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .clOrdId(clOrdId)
            .tickTimeNanos(0)
            .instrumentId(instrumentId)
            .rejectReason(RejectReason.UNKNOWN_ORDER)
            .refTemplateId(templateId)
            .putText(UNKNOWN_ORDER_TEXT, 0, UNKNOWN_ORDER_TEXT.length);
        if (!offerAnswer(MessageHeaderEncoder.ENCODED_LENGTH + rejectEncoder.encodedLength()))
        {
            return ControlledFragmentHandler.Action.ABORT;
        }
        counts[REJECTS]++;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onMalformed(final DirectBuffer buffer, final int offset, final int length)
    {
        // Every order-entry request starts its block with clOrdId: answer it when those 8 bytes arrived.
        final int clOrdIdOffset = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        final long clOrdId = length >= MessageHeaderDecoder.ENCODED_LENGTH + Long.BYTES ?
            buffer.getLong(clOrdIdOffset, java.nio.ByteOrder.LITTLE_ENDIAN) : 0;
        final int templateId = length >= MessageHeaderDecoder.ENCODED_LENGTH ?
            buffer.getShort(offset + 2, java.nio.ByteOrder.LITTLE_ENDIAN) & 0xFFFF : 0;
        rejectEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .clOrdId(clOrdId)
            .tickTimeNanos(0)
            .instrumentId(-1)
            .rejectReason(RejectReason.MALFORMED)
            .refTemplateId(templateId)
            .putText(MALFORMED_TEXT, 0, MALFORMED_TEXT.length);
        if (!offerAnswer(MessageHeaderEncoder.ENCODED_LENGTH + rejectEncoder.encodedLength()))
        {
            return ControlledFragmentHandler.Action.ABORT;
        }
        counts[MALFORMED]++;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private void encodeReport(
        final long orderId,
        final long clOrdId,
        final Side side,
        final int instrumentId,
        final ExecType execType,
        final RejectReason reason,
        final long lastPx,
        final long lastQty,
        final long leavesQty,
        final long cumQty,
        final long tickTimeNanos)
    {
        reportEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .orderId(orderId)
            .clOrdId(clOrdId)
            .execId(nextExecId)
            .lastQty(lastQty)
            .leavesQty(leavesQty)
            .cumQty(cumQty)
            .tickTimeNanos(tickTimeNanos)
            .transactTimeNanos(clock.nanoTime())
            .instrumentId(instrumentId)
            .execType(execType)
            .side(side == Side.NULL_VAL ? Side.BUY : side)
            .rejectReason(reason)
            .lastPx().mantissa(lastPx);
    }

    private boolean offerAnswer(final int length)
    {
        final long result = answers.offer(sendBuffer, 0, length);
        if (result > 0)
        {
            nextExecId++;
            counts[ANSWERED]++;
            return true;
        }
        countRefused(result);
        return false;
    }

    private void countRefused(final long result)
    {
        counts[Publication.NOT_CONNECTED == result ? NOT_CONNECTED : BACK_PRESSURE]++;
    }

    private static long pack(final int instrumentId, final long signedQty)
    {
        return ((long)instrumentId << 32) | (signedQty & 0xFFFF_FFFFL);
    }

    /** @return true once a peer logged on. */
    public boolean isLoggedOn()
    {
        return counters.get(LOGONS) > 0;
    }

    /** @return the gateway's counts (index constants above). */
    public PartCounters counters()
    {
        return counters;
    }

    /**
     * @param instrumentId of an instrument.
     * @return the gateway's position in it (read only once the gateway's thread has stopped).
     */
    public long position(final int instrumentId)
    {
        return positions[instrumentId];
    }

    /** @return resting orders now (read only once the gateway's thread has stopped). */
    public int restingOrders()
    {
        return restingOrders.size();
    }
}
