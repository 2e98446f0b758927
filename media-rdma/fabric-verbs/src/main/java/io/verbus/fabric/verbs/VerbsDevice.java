package io.verbus.fabric.verbs;

import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.DeviceAttributes;
import io.verbus.fabric.DeviceMemory;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.LinkLayer;
import io.verbus.fabric.PortAttributes;
import io.verbus.fabric.PortState;
import io.verbus.fabric.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_COMM_EST;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_CQ_ERR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_PATH_MIG;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_PATH_MIG_ERR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_PORT_ACTIVE;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_PORT_ERR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_QP_ACCESS_ERR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_QP_FATAL;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_QP_LAST_WQE_REACHED;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_QP_REQ_ERR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_EVENT_SQ_DRAINED;
import static io.verbus.fabric.verbs.IbvConstants.IBV_LINK_LAYER_ETHERNET;
import static io.verbus.fabric.verbs.IbvConstants.IBV_LINK_LAYER_INFINIBAND;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPT_RC;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * One opened RDMA device ({@code struct ibv_context}): its limits, its ports (the chosen one first), the
 * hot-path function table, async events, and every object created on it, closed with it.
 */
public final class VerbsDevice implements Device
{
    private static final System.Logger LOGGER = System.getLogger(VerbsDevice.class.getName());
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 0x800;
    /** Inline sizes tried, largest first, to learn what the device grants (ibv_query_device does not say). */
    private static final int[] INLINE_PROBE_BYTES = { 1024, 512, 256, 128, 64, 32, 0 };

    final LibIbverbs lib;
    final IbvOps ops;
    final MemorySegment context;
    private final String name;
    private final DeviceAttributes attributes;
    private final int maxQpRdAtomic;
    private final int maxQpInitRdAtomic;
    private final Consumer<VerbsDevice> onClose;
    private final DeviceMemory memory = new DeviceMemory();
    private final Arena structArena = Arena.ofShared();
    private final MemorySegment asyncEvent = structArena.allocate(IbvAbi.AsyncEvent.LAYOUT);
    private final MemorySegment asyncErrno = LibIbverbs.newErrnoCapture(structArena);
    private final List<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private final List<VerbsQueuePair> queuePairs = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private VerbsDevice(
        final LibIbverbs lib,
        final String name,
        final MemorySegment context,
        final InetAddress address,
        final Consumer<VerbsDevice> onClose)
    {
        this.lib = lib;
        this.name = name;
        this.context = context;
        this.onClose = onClose;
        this.ops = new IbvOps(context);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment deviceAttr = arena.allocate(IbvAbi.DeviceAttr.LAYOUT);
            check(call(lib.queryDevice, context, deviceAttr), "ibv_query_device");
            final int portCount = Byte.toUnsignedInt(deviceAttr.get(JAVA_BYTE, IbvAbi.DeviceAttr.PHYS_PORT_CNT));
            final List<PortSelector.PortInfo> ports = queryPorts(lib, context, name, portCount, arena);
            final PortSelector.PortChoice best = PortSelector.choose(ports, address);
            if (null == best)
            {
                throw new VerbsUnavailableException(PortSelector.whyNone(ports, address) + "; " +
                    VerbsUnavailableException.SOFT_PROVIDERS_HINT);
            }
            final List<PortAttributes> portAttributes = new ArrayList<>();
            portAttributes.add(toAttributes(best.port(), best));
            for (final PortSelector.PortInfo port : ports)
            {
                if (port.portNumber() != best.port().portNumber())
                {
                    portAttributes.add(toAttributes(port, PortSelector.evaluate(port, address)));
                }
            }
            maxQpRdAtomic = deviceAttr.get(JAVA_INT, IbvAbi.DeviceAttr.MAX_QP_RD_ATOM);
            maxQpInitRdAtomic = deviceAttr.get(JAVA_INT, IbvAbi.DeviceAttr.MAX_QP_INIT_RD_ATOM);
            attributes = new DeviceAttributes(
                name,
                VerbsFabricProvider.NAME,
                deviceAttr.get(JAVA_INT, IbvAbi.DeviceAttr.MAX_QP),
                deviceAttr.get(JAVA_INT, IbvAbi.DeviceAttr.MAX_QP_WR),
                deviceAttr.get(JAVA_INT, IbvAbi.DeviceAttr.MAX_CQE),
                probeMaxInlineData(lib, context, arena),
                Integer.toUnsignedLong(ports.getFirst().maxMessageBytes()),
                deviceAttr.get(JAVA_LONG, IbvAbi.DeviceAttr.MAX_MR_SIZE),
                deviceAttr.get(JAVA_INT, IbvAbi.DeviceAttr.ATOMIC_CAP) != 0,
                portAttributes);
        }
        setNonBlocking(lib, context.get(JAVA_INT, IbvAbi.Context.ASYNC_FD));
        LOGGER.log(System.Logger.Level.DEBUG, "verbs: opened " + name + ", " + attributes.ports().getFirst() +
            ", maxInlineData " + attributes.maxInlineData());
    }

    static VerbsDevice open(
        final LibIbverbs lib, final String name, final InetAddress address, final Consumer<VerbsDevice> onClose)
    {
        final MemorySegment context;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment list = deviceList(lib, arena);
            try
            {
                context = openContext(lib, findDevice(lib, list, name), name);
            }
            finally
            {
                freeDeviceList(lib, list);
            }
        }
        try
        {
            return new VerbsDevice(lib, name, context, address, onClose);
        }
        catch (final RuntimeException ex)
        {
            call(lib.closeDevice, context);
            throw ex;
        }
    }

    @Override
    public DeviceAttributes attributes()
    {
        return attributes;
    }

    /**
     * @return the device name.
     */
    public String name()
    {
        return name;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain()
    {
        ensureOpen();
        final VerbsProtectionDomain pd = new VerbsProtectionDomain(this);
        children.add(pd);
        return pd;
    }

    @Override
    public CompletionQueue createCompletionQueue(final int depth, final CompletionChannel channel)
    {
        ensureOpen();
        if (depth < 1 || depth > attributes.maxCompletionQueueEntries())
        {
            throw new IllegalArgumentException(
                "completion queue depth must be in [1, " + attributes.maxCompletionQueueEntries() + "]: " + depth);
        }
        VerbsCompletionChannel verbsChannel = null;
        if (null != channel)
        {
            if (!(channel instanceof VerbsCompletionChannel verbs) || verbs.device() != this)
            {
                throw new IllegalArgumentException("completion channel must come from device " + name);
            }
            verbsChannel = verbs;
        }
        final VerbsCompletionQueue cq = new VerbsCompletionQueue(this, depth, verbsChannel);
        children.add(cq);
        return cq;
    }

    @Override
    public CompletionChannel createCompletionChannel()
    {
        ensureOpen();
        final VerbsCompletionChannel channel = new VerbsCompletionChannel(this);
        children.add(channel);
        return channel;
    }

    VerbsSharedReceiveQueue createSharedReceiveQueue(final VerbsProtectionDomain pd, final int depth)
    {
        ensureOpen();
        final VerbsSharedReceiveQueue srq = new VerbsSharedReceiveQueue(this, pd, depth);
        children.add(srq);
        return srq;
    }

    @Override
    public MemorySegment allocateMemory(final long length)
    {
        ensureOpen();
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be > 0: " + length);
        }
        // Zeroed and touched page by page before it is registered and pinned; a mapping of its own, so that closing
        // the device can quarantine it under a Header the application kept (DeviceMemory).
        return memory.allocateAnonymous(length);
    }

    /**
     * Read the device's pending async events without blocking (QP fatal and access errors, port up/down,
     * CQ errors), log each, and hand them to the handler. Call it from a housekeeping duty cycle.
     *
     * @param handler receives each event; may be null to only log.
     * @return events handled.
     */
    public int pollAsyncEvents(final VerbsAsyncEventHandler handler)
    {
        int events = 0;
        synchronized (asyncEvent)
        {
            while (!closed)
            {
                final int rc;
                try
                {
                    rc = (int)lib.getAsyncEvent.invokeExact(asyncErrno, context, asyncEvent);
                }
                catch (final Throwable ex)
                {
                    throw new FabricException("ibv_get_async_event failed", ex);
                }
                if (rc != 0)
                {
                    break;
                }
                events++;
                dispatch(handler);
            }
        }
        return events;
    }

    private void dispatch(final VerbsAsyncEventHandler handler)
    {
        final int type = asyncEvent.get(JAVA_INT, IbvAbi.AsyncEvent.EVENT_TYPE);
        final MemorySegment element = asyncEvent.get(ADDRESS, IbvAbi.AsyncEvent.ELEMENT);
        VerbsQueuePair qp = null;
        int portNumber = 0;
        switch (type)
        {
            case IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR, IBV_EVENT_COMM_EST,
                IBV_EVENT_SQ_DRAINED, IBV_EVENT_PATH_MIG, IBV_EVENT_PATH_MIG_ERR, IBV_EVENT_QP_LAST_WQE_REACHED ->
            {
                for (final VerbsQueuePair candidate : queuePairs)
                {
                    if (candidate.qpAddress() == element.address())
                    {
                        qp = candidate;
                    }
                }
            }
            case IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR -> portNumber = (int)element.address();
            default ->
            {
            }
        }
        final String description = lib.eventTypeString(type);
        final boolean error = type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
            type == IBV_EVENT_QP_ACCESS_ERR || type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_CQ_ERR ||
            type == IbvConstants.IBV_EVENT_DEVICE_FATAL;
        if (null != qp && error)
        {
            qp.onAsyncError(description);
        }
        LOGGER.log(error ? System.Logger.Level.WARNING : System.Logger.Level.INFO, "verbs: " + name +
            " async event " + description + (null != qp ? " on QP " + qp.qpNumber() : "") +
            (portNumber != 0 ? " on port " + portNumber : ""));
        try
        {
            if (null != handler)
            {
                handler.onAsyncEvent(type, description, qp, portNumber);
            }
        }
        finally
        {
            try
            {
                lib.ackAsyncEvent.invokeExact(asyncEvent);
            }
            catch (final Throwable ex)
            {
                throw new FabricException("ibv_ack_async_event failed", ex);
            }
        }
    }

    /**
     * @return RDMA READ / atomic depth as responder the device allows.
     */
    int maxQpRdAtomic()
    {
        return maxQpRdAtomic;
    }

    /**
     * @return RDMA READ / atomic depth as initiator the device allows.
     */
    int maxQpInitRdAtomic()
    {
        return maxQpInitRdAtomic;
    }

    void onQueuePairCreated(final VerbsQueuePair qp)
    {
        queuePairs.add(qp);
        children.add(qp);
    }

    void onClosed(final AutoCloseable child)
    {
        children.remove(child);
        if (child instanceof VerbsQueuePair qp)
        {
            queuePairs.remove(qp);
        }
    }

    void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("verbs device " + name + " is closed");
        }
    }

    @Override
    public void close()
    {
        synchronized (asyncEvent)
        {
            if (closed)
            {
                return;
            }
            closed = true;
        }
        // Children in reverse creation order: QPs before CQs and regions, regions before their PD.
        final List<AutoCloseable> reverse = new ArrayList<>(children);
        for (int i = reverse.size() - 1; i >= 0; i--)
        {
            final AutoCloseable child = reverse.get(i);
            if (child instanceof VerbsQueuePair qp)
            {
                qp.close();
            }
        }
        for (int i = reverse.size() - 1; i >= 0; i--)
        {
            final AutoCloseable child = reverse.get(i);
            try
            {
                if (!(child instanceof VerbsQueuePair))
                {
                    if (child instanceof VerbsProtectionDomain pd)
                    {
                        pd.closeWithRegions();
                    }
                    else
                    {
                        child.close();
                    }
                }
            }
            catch (final Exception ex)
            {
                LOGGER.log(System.Logger.Level.WARNING, "verbs: closing " + child + " on " + name + " failed", ex);
            }
        }
        children.clear();
        final int rc = call(lib.closeDevice, context);
        if (rc != 0)
        {
            LOGGER.log(System.Logger.Level.WARNING, "verbs: ibv_close_device(" + name + ") returned " + rc);
        }
        memory.retireAll();
        structArena.close();
        onClose.accept(this);
    }

    @Override
    public String toString()
    {
        return "VerbsDevice{" + name + '}';
    }

    // ---- setup-path helpers shared with the fabric's survey ---------------------------------------------------

    static MemorySegment deviceList(final LibIbverbs lib, final Arena arena)
    {
        final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
        final MemorySegment count = arena.allocate(JAVA_INT);
        final MemorySegment list;
        try
        {
            list = (MemorySegment)lib.getDeviceList.invokeExact(capture, count);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_get_device_list failed", ex);
        }
        if (MemorySegment.NULL.equals(list))
        {
            final int errno = LibIbverbs.errno(capture);
            throw new VerbsUnavailableException("no RDMA device: ibv_get_device_list failed with " +
                LibIbverbs.describeErrno(errno) + (errno == LibIbverbs.ENOSYS ?
                " (the kernel has no RDMA support loaded: no /sys/class/infiniband, ib_uverbs absent)" : "") +
                "; " + VerbsUnavailableException.SOFT_PROVIDERS_HINT);
        }
        final int devices = count.get(JAVA_INT, 0);
        if (devices <= 0)
        {
            freeDeviceList(lib, list);
            throw new VerbsUnavailableException("no RDMA device: libibverbs lists none (no RDMA NIC, or its " +
                "provider library is missing: apt-get install ibverbs-providers); " +
                VerbsUnavailableException.SOFT_PROVIDERS_HINT);
        }
        return list.reinterpret(ADDRESS.byteSize() * (devices + 1L));
    }

    static void freeDeviceList(final LibIbverbs lib, final MemorySegment list)
    {
        try
        {
            lib.freeDeviceList.invokeExact(list);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_free_device_list failed", ex);
        }
    }

    static String deviceName(final LibIbverbs lib, final MemorySegment device)
    {
        try
        {
            return LibIbverbs.cString((MemorySegment)lib.getDeviceName.invokeExact(device));
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_get_device_name failed", ex);
        }
    }

    private static MemorySegment findDevice(final LibIbverbs lib, final MemorySegment list, final String name)
    {
        final List<String> names = new ArrayList<>();
        for (long i = 0; i < list.byteSize() / ADDRESS.byteSize(); i++)
        {
            final MemorySegment device = list.getAtIndex(ADDRESS, i);
            if (MemorySegment.NULL.equals(device))
            {
                break;
            }
            final String deviceName = deviceName(lib, device);
            if (deviceName.equals(name))
            {
                return device;
            }
            names.add(deviceName);
        }
        throw new IllegalArgumentException("no RDMA device '" + name + "', devices: " + names);
    }

    private static MemorySegment openContext(final LibIbverbs lib, final MemorySegment device, final String name)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
            final MemorySegment context = (MemorySegment)lib.openDevice.invokeExact(capture, device);
            if (MemorySegment.NULL.equals(context))
            {
                throw new VerbsUnavailableException("ibv_open_device(" + name + ") failed with " +
                    LibIbverbs.describeErrno(LibIbverbs.errno(capture)) +
                    " (is /dev/infiniband/uverbs* accessible to this user?); " +
                    VerbsUnavailableException.SOFT_PROVIDERS_HINT);
            }
            return context.reinterpret(IbvAbi.Context.LAYOUT.byteSize());
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_open_device failed", ex);
        }
    }

    static List<PortSelector.PortInfo> surveyPorts(final LibIbverbs lib, final MemorySegment device, final String name)
    {
        final MemorySegment context = openContext(lib, device, name);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment deviceAttr = arena.allocate(IbvAbi.DeviceAttr.LAYOUT);
            check(call(lib.queryDevice, context, deviceAttr), "ibv_query_device");
            final int portCount = Byte.toUnsignedInt(deviceAttr.get(JAVA_BYTE, IbvAbi.DeviceAttr.PHYS_PORT_CNT));
            return queryPorts(lib, context, name, portCount, arena);
        }
        finally
        {
            call(lib.closeDevice, context);
        }
    }

    private static List<PortSelector.PortInfo> queryPorts(
        final LibIbverbs lib, final MemorySegment context, final String name, final int portCount, final Arena arena)
    {
        final List<PortSelector.PortInfo> ports = new ArrayList<>();
        final MemorySegment portAttr = arena.allocate(IbvAbi.PortAttr.LAYOUT);
        final MemorySegment gidEntry = arena.allocate(IbvAbi.GidEntry.LAYOUT);
        final int scanLength = VerbsConfiguration.gidScanLength();
        for (int port = 1; port <= portCount; port++)
        {
            portAttr.fill((byte)0);
            final int rc;
            try
            {
                rc = (int)lib.queryPort.invokeExact(context, (byte)port, portAttr);
            }
            catch (final Throwable ex)
            {
                throw new FabricException("ibv_query_port failed", ex);
            }
            check(rc, "ibv_query_port(" + name + ", " + port + ")");
            final int gidTableLength = portAttr.get(JAVA_INT, IbvAbi.PortAttr.GID_TBL_LEN);
            final List<PortSelector.GidInfo> gids = new ArrayList<>();
            for (int index = 0; index < Math.min(gidTableLength, scanLength); index++)
            {
                gidEntry.fill((byte)0);
                final int gidRc;
                try
                {
                    gidRc = (int)lib.queryGidEx.invokeExact(
                        context, port, index, gidEntry, 0, IbvAbi.GidEntry.LAYOUT.byteSize());
                }
                catch (final Throwable ex)
                {
                    throw new FabricException("_ibv_query_gid_ex failed", ex);
                }
                if (gidRc == 0)
                {
                    final byte[] gid = gidEntry.asSlice(IbvAbi.GidEntry.GID, 16).toArray(JAVA_BYTE);
                    gids.add(new PortSelector.GidInfo(index, gid, gidEntry.get(JAVA_INT, IbvAbi.GidEntry.GID_TYPE)));
                }
            }
            ports.add(new PortSelector.PortInfo(
                name,
                port,
                portAttr.get(JAVA_INT, IbvAbi.PortAttr.STATE),
                Byte.toUnsignedInt(portAttr.get(JAVA_BYTE, IbvAbi.PortAttr.LINK_LAYER)),
                Short.toUnsignedInt(portAttr.get(JAVA_SHORT, IbvAbi.PortAttr.LID)),
                IbvConstants.mtuBytes(portAttr.get(JAVA_INT, IbvAbi.PortAttr.ACTIVE_MTU)),
                portAttr.get(JAVA_INT, IbvAbi.PortAttr.MAX_MSG_SZ),
                gids));
        }
        return ports;
    }

    private static PortAttributes toAttributes(final PortSelector.PortInfo port, final PortSelector.PortChoice choice)
    {
        final LinkLayer linkLayer = port.linkLayer() == IBV_LINK_LAYER_INFINIBAND ? LinkLayer.INFINIBAND :
            port.linkLayer() == IBV_LINK_LAYER_ETHERNET ? LinkLayer.ETHERNET : LinkLayer.INFINIBAND;
        final PortState state;
        try
        {
            state = PortState.fromCode(port.state());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new FabricException(port.deviceName() + " port " + port.portNumber() + ": " + ex.getMessage());
        }
        return new PortAttributes(
            port.portNumber(),
            state,
            linkLayer,
            port.lid(),
            null == choice ? new byte[PortAttributes.GID_LENGTH] : choice.gid(),
            null == choice ? 0 : choice.gidIndex(),
            port.activeMtuBytes() == 0 ? 256 : port.activeMtuBytes());
    }

    /**
     * ibv_query_device does not report the inline capacity: create a throw-away RC QP asking for decreasing
     * sizes and read what the first successful one was granted.
     */
    private static int probeMaxInlineData(final LibIbverbs lib, final MemorySegment context, final Arena arena)
    {
        final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
        try
        {
            final MemorySegment pd = (MemorySegment)lib.allocPd.invokeExact(capture, context);
            if (MemorySegment.NULL.equals(pd))
            {
                throw new FabricException(
                    "ibv_alloc_pd failed with " + LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
            }
            final MemorySegment cq = (MemorySegment)lib.createCq.invokeExact(
                capture, context, 2, MemorySegment.NULL, MemorySegment.NULL, 0);
            if (MemorySegment.NULL.equals(cq))
            {
                call(lib.deallocPd, pd);
                throw new FabricException(
                    "ibv_create_cq failed with " + LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
            }
            try
            {
                final MemorySegment init = arena.allocate(IbvAbi.QpInitAttr.LAYOUT);
                for (final int inlineBytes : INLINE_PROBE_BYTES)
                {
                    init.fill((byte)0);
                    init.set(ADDRESS, IbvAbi.QpInitAttr.SEND_CQ, cq);
                    init.set(ADDRESS, IbvAbi.QpInitAttr.RECV_CQ, cq);
                    init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_SEND_WR, 1);
                    init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_RECV_WR, 1);
                    init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_SEND_SGE, 1);
                    init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_RECV_SGE, 1);
                    init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_INLINE_DATA, inlineBytes);
                    init.set(JAVA_INT, IbvAbi.QpInitAttr.QP_TYPE, IBV_QPT_RC);
                    final MemorySegment qp = (MemorySegment)lib.createQp.invokeExact(capture, pd, init);
                    if (!MemorySegment.NULL.equals(qp))
                    {
                        final int granted = init.get(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_INLINE_DATA);
                        call(lib.destroyQp, qp);
                        return Math.max(granted, inlineBytes);
                    }
                }
                return 0;
            }
            finally
            {
                call(lib.destroyCq, cq);
                call(lib.deallocPd, pd);
            }
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("probing the inline capacity failed", ex);
        }
    }

    private static void setNonBlocking(final LibIbverbs lib, final int fd)
    {
        try
        {
            final int flags = (int)lib.fcntl.invokeExact(fd, F_GETFL, 0);
            if (flags < 0 || (int)lib.fcntl.invokeExact(fd, F_SETFL, flags | O_NONBLOCK) < 0)
            {
                throw new FabricException("cannot make the async event fd " + fd + " non-blocking");
            }
        }
        catch (final FabricException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("fcntl on the async event fd failed", ex);
        }
    }

    /**
     * Call an {@code int f(void *)} or {@code int f(void *, void *)} verb.
     */
    static int call(final MethodHandle handle, final MemorySegment a)
    {
        try
        {
            return (int)handle.invokeExact(a);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("verbs call failed", ex);
        }
    }

    static int call(final MethodHandle handle, final MemorySegment a, final MemorySegment b)
    {
        try
        {
            return (int)handle.invokeExact(a, b);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("verbs call failed", ex);
        }
    }

    static void check(final int rc, final String what)
    {
        if (rc != 0)
        {
            throw new FabricException(what + " failed with " + LibIbverbs.describeErrno(Math.abs(rc)));
        }
    }
}
