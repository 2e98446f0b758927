package io.verbus.fabric.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The exported libibverbs functions (setup and teardown paths), bound once per JVM through
 * {@code java.lang.foreign}. The three hot-path verbs are static inline in the headers and have no symbol:
 * see {@link IbvOps}.
 * <p>
 * Functions that report failure through {@code errno} (NULL returns) capture it with
 * {@link Linker.Option#captureCallState}; the others return the errno value themselves, as in verbs.
 */
final class LibIbverbs
{
    /** The soname rdma-core installs; the unversioned .so only comes with the -dev package. */
    static final String DEFAULT_LIBRARY = "libibverbs.so.1";
    static final String INSTALL_HINT =
        "install rdma-core's user space: apt-get install libibverbs1 ibverbs-providers (Debian/Ubuntu), " +
        "dnf install libibverbs (Fedora/RHEL)";
    static final int ENOSYS = 38;
    static final int EAGAIN = 11;

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    final String libraryName;

    final MethodHandle getDeviceList;      // struct ibv_device **(int *num_devices), errno
    final MethodHandle freeDeviceList;     // void (struct ibv_device **)
    final MethodHandle getDeviceName;      // const char *(struct ibv_device *)
    final MethodHandle openDevice;         // struct ibv_context *(struct ibv_device *), errno
    final MethodHandle closeDevice;        // int (struct ibv_context *)
    final MethodHandle queryDevice;        // int (struct ibv_context *, struct ibv_device_attr *)
    final MethodHandle queryPort;          // int (struct ibv_context *, uint8_t, struct ibv_port_attr *)
    final MethodHandle queryGidEx;         // int (ctx, uint32_t port, uint32_t index, struct ibv_gid_entry *,
                                           //      uint32_t flags, size_t)
    final MethodHandle allocPd;            // struct ibv_pd *(ctx), errno
    final MethodHandle deallocPd;          // int (struct ibv_pd *)
    final MethodHandle regMr;              // struct ibv_mr *(pd, void *, size_t, int access), errno
    final MethodHandle deregMr;            // int (struct ibv_mr *)
    final MethodHandle createCq;           // struct ibv_cq *(ctx, int cqe, void *cq_context, channel *, int vector),
                                           //      errno
    final MethodHandle destroyCq;          // int (struct ibv_cq *)
    final MethodHandle createQp;           // struct ibv_qp *(pd, struct ibv_qp_init_attr *), errno
    final MethodHandle destroyQp;          // int (struct ibv_qp *)
    final MethodHandle modifyQp;           // int (qp, struct ibv_qp_attr *, int mask)
    final MethodHandle queryQp;            // int (qp, struct ibv_qp_attr *, int mask, struct ibv_qp_init_attr *)
    final MethodHandle queryQpDataInOrder; // int (qp, enum ibv_wr_opcode, uint32_t caps)
    final MethodHandle getAsyncEvent;      // int (ctx, struct ibv_async_event *), errno
    final MethodHandle ackAsyncEvent;      // void (struct ibv_async_event *)
    final MethodHandle wcStatusStr;        // const char *(enum ibv_wc_status)
    final MethodHandle eventTypeStr;       // const char *(enum ibv_event_type)
    final MethodHandle fcntl;              // libc int fcntl(int, int, ...)
    final MethodHandle poll;               // libc int poll(struct pollfd *, nfds_t, int timeout_ms), errno
    final MethodHandle createCompChannel;  // struct ibv_comp_channel *(ctx), errno
    final MethodHandle destroyCompChannel; // int (struct ibv_comp_channel *)
    final MethodHandle getCqEvent;         // int (channel, struct ibv_cq **cq, void **cq_context), errno
    final MethodHandle ackCqEvents;        // void (struct ibv_cq *, unsigned int nevents)
    final MethodHandle createSrq;          // struct ibv_srq *(pd, struct ibv_srq_init_attr *), errno
    final MethodHandle destroySrq;         // int (struct ibv_srq *)

    private LibIbverbs(final String libraryName, final SymbolLookup lookup)
    {
        this.libraryName = libraryName;
        final Linker linker = Linker.nativeLinker();
        final Linker.Option errno = Linker.Option.captureCallState("errno");
        getDeviceList = bind(linker, lookup, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
        freeDeviceList = bind(linker, lookup, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
        getDeviceName = bind(linker, lookup, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
        openDevice = bind(linker, lookup, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
        closeDevice = bind(linker, lookup, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        queryDevice = bind(linker, lookup, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        // The header's ibv_query_port is a macro over this exported compat entry, which fills the classic struct.
        queryPort = bind(
            linker, lookup, "ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
        queryGidEx = bind(linker, lookup, "_ibv_query_gid_ex",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
        allocPd = bind(linker, lookup, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
        deallocPd = bind(linker, lookup, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // Also a header macro (it picks ibv_reg_mr_iova2 for optional access flags); the export takes plain flags.
        regMr = bind(linker, lookup, "ibv_reg_mr",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), errno);
        deregMr = bind(linker, lookup, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createCq = bind(linker, lookup, "ibv_create_cq",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), errno);
        destroyCq = bind(linker, lookup, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createQp = bind(linker, lookup, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), errno);
        destroyQp = bind(linker, lookup, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        modifyQp = bind(linker, lookup, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        queryQp = bind(linker, lookup, "ibv_query_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
        queryQpDataInOrder = bind(linker, lookup, "ibv_query_qp_data_in_order",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        getAsyncEvent = bind(linker, lookup, "ibv_get_async_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
        ackAsyncEvent = bind(linker, lookup, "ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS));
        wcStatusStr = bind(linker, lookup, "ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        eventTypeStr = bind(linker, lookup, "ibv_event_type_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        fcntl = bind(linker, linker.defaultLookup(), "fcntl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
        poll = bind(linker, linker.defaultLookup(), "poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), errno);
        createCompChannel = bind(linker, lookup, "ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS),
            errno);
        destroyCompChannel = bind(linker, lookup, "ibv_destroy_comp_channel", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        getCqEvent = bind(linker, lookup, "ibv_get_cq_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), errno);
        ackCqEvents = bind(linker, lookup, "ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        createSrq = bind(linker, lookup, "ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), errno);
        destroySrq = bind(linker, lookup, "ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    /**
     * Load the library and bind every function.
     *
     * @param libraryName soname or path, normally {@link #DEFAULT_LIBRARY}.
     * @return the binding.
     * @throws VerbsUnavailableException naming the library, the fix and the soft providers.
     */
    static LibIbverbs load(final String libraryName)
    {
        final SymbolLookup lookup;
        try
        {
            lookup = SymbolLookup.libraryLookup(libraryName, Arena.global());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new VerbsUnavailableException("cannot load " + libraryName + " (" + ex.getMessage() + "): " +
                INSTALL_HINT + "; " + VerbsUnavailableException.SOFT_PROVIDERS_HINT, ex);
        }
        try
        {
            return new LibIbverbs(libraryName, lookup);
        }
        catch (final IllegalStateException ex)
        {
            throw new VerbsUnavailableException(libraryName + " lacks a verb this binding needs (" + ex.getMessage() +
                "): rdma-core 28 or newer is required; " + VerbsUnavailableException.SOFT_PROVIDERS_HINT, ex);
        }
    }

    private static MethodHandle bind(
        final Linker linker,
        final SymbolLookup lookup,
        final String name,
        final FunctionDescriptor descriptor,
        final Linker.Option... options)
    {
        final Optional<MemorySegment> symbol = lookup.find(name);
        if (symbol.isEmpty())
        {
            throw new IllegalStateException("symbol " + name + " not found");
        }
        return linker.downcallHandle(symbol.get(), descriptor, options);
    }

    /**
     * @param arena where the capture buffer lives.
     * @return a buffer to pass as the first argument of the errno-capturing handles.
     */
    static MemorySegment newErrnoCapture(final Arena arena)
    {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /**
     * @param capture a buffer from {@link #newErrnoCapture}, after a call.
     * @return the errno the call left.
     */
    static int errno(final MemorySegment capture)
    {
        return (int)ERRNO.get(capture, 0L);
    }

    /**
     * @param errno an errno value.
     * @return e.g. "ENOSYS (38)" for the common ones, else "errno 42".
     */
    static String describeErrno(final int errno)
    {
        final String name = switch (errno)
        {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case 16 -> "EBUSY";
            case 19 -> "ENODEV";
            case 22 -> "EINVAL";
            case 38 -> "ENOSYS";
            case 95 -> "EOPNOTSUPP";
            case 110 -> "ETIMEDOUT";
            default -> null;
        };
        return null == name ? "errno " + errno : name + " (" + errno + ")";
    }

    /**
     * @param status an {@code ibv_wc_status}.
     * @return libibverbs' own description of it.
     */
    String wcStatusString(final int status)
    {
        return cString(invokeAddress(wcStatusStr, status));
    }

    /**
     * @param eventType an {@code ibv_event_type}.
     * @return libibverbs' own description of it.
     */
    String eventTypeString(final int eventType)
    {
        return cString(invokeAddress(eventTypeStr, eventType));
    }

    private static MemorySegment invokeAddress(final MethodHandle handle, final int argument)
    {
        try
        {
            return (MemorySegment)handle.invokeExact(argument);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    static String cString(final MemorySegment pointer)
    {
        if (MemorySegment.NULL.equals(pointer))
        {
            return "";
        }
        return pointer.reinterpret(4096).getString(0);
    }
}
