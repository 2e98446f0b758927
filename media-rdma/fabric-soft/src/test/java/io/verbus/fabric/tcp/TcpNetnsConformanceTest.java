package io.verbus.fabric.tcp;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.ChildProcessPeer;
import io.verbus.fabric.conformance.ConformancePeer;
import io.verbus.fabric.conformance.FabricConformanceTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The conformance suite on tcp between two network namespaces joined by a veth pair: the initiator runs
 * on a thread that entered namespace A (its device, NIC thread and sockets live there), the peer is a
 * child JVM started in namespace B with {@code ip netns exec}. Needs root; elsewhere it is skipped with
 * the reason.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class TcpNetnsConformanceTest extends FabricConformanceTest
{
    @RegisterExtension
    static final Namespaces NAMESPACES = new Namespaces();

    @Override
    protected Fabric newFabric()
    {
        return Fabrics.open("tcp", new FabricContext().tcpAddress(NAMESPACES.pair.addressA));
    }

    @Override
    protected ConformancePeer newPeer()
    {
        return new ChildProcessPeer(List.of("ip", "netns", "exec", NAMESPACES.pair.namespaceB), "tcp",
            Path.of("/tmp"), NAMESPACES.pair.addressB, TimeUnit.SECONDS.toNanos(1));
    }

    /**
     * Creates the namespaces for the class and runs every lifecycle and test method on one thread inside A.
     */
    static final class Namespaces implements BeforeAllCallback, AfterAllCallback, InvocationInterceptor
    {
        NetworkNamespacePair pair;
        private ExecutorService insideA;

        @Override
        public void beforeAll(final ExtensionContext context) throws Exception
        {
            final String reason = NetworkNamespacePair.unavailableReason();
            Assumptions.assumeTrue(null == reason, () -> "tcp netns conformance skipped: " + reason);
            pair = NetworkNamespacePair.create();
            insideA = Executors.newSingleThreadExecutor(runnable -> new Thread(runnable, "netns-" + pair.namespaceA));
            insideA.submit(() -> NetworkNamespacePair.enter(pair.namespaceA)).get(30, TimeUnit.SECONDS);
        }

        @Override
        public void afterAll(final ExtensionContext context)
        {
            if (null != insideA)
            {
                insideA.shutdownNow();
            }
            if (null != pair)
            {
                pair.close();
            }
        }

        private <T> T inside(final Invocation<T> invocation) throws Throwable
        {
            if (null == insideA)
            {
                return invocation.proceed();
            }
            final Future<T> result = insideA.submit(() ->
            {
                try
                {
                    return invocation.proceed();
                }
                catch (final Exception | Error ex)
                {
                    throw ex;
                }
                catch (final Throwable ex)
                {
                    throw new ExecutionException(ex);
                }
            });
            try
            {
                return result.get(5, TimeUnit.MINUTES);
            }
            catch (final ExecutionException ex)
            {
                throw ex.getCause();
            }
        }

        @Override
        public void interceptBeforeAllMethod(final Invocation<Void> invocation,
            final ReflectiveInvocationContext<Method> invocationContext, final ExtensionContext extensionContext)
            throws Throwable
        {
            inside(invocation);
        }

        @Override
        public void interceptBeforeEachMethod(final Invocation<Void> invocation,
            final ReflectiveInvocationContext<Method> invocationContext, final ExtensionContext extensionContext)
            throws Throwable
        {
            inside(invocation);
        }

        @Override
        public void interceptTestMethod(final Invocation<Void> invocation,
            final ReflectiveInvocationContext<Method> invocationContext, final ExtensionContext extensionContext)
            throws Throwable
        {
            inside(invocation);
        }

        @Override
        public void interceptTestTemplateMethod(final Invocation<Void> invocation,
            final ReflectiveInvocationContext<Method> invocationContext, final ExtensionContext extensionContext)
            throws Throwable
        {
            inside(invocation);
        }

        @Override
        public void interceptAfterEachMethod(final Invocation<Void> invocation,
            final ReflectiveInvocationContext<Method> invocationContext, final ExtensionContext extensionContext)
            throws Throwable
        {
            inside(invocation);
        }

        @Override
        public void interceptAfterAllMethod(final Invocation<Void> invocation,
            final ReflectiveInvocationContext<Method> invocationContext, final ExtensionContext extensionContext)
            throws Throwable
        {
            inside(invocation);
        }
    }
}
