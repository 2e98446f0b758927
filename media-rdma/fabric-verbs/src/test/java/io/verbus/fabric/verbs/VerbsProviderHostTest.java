package io.verbus.fabric.verbs;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.Fabrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verbs provider's error paths on a host without RDMA (this build machine), and its success path
 * where a device exists: which one applies is read from /sys/class/infiniband, independently of libibverbs.
 */
class VerbsProviderHostTest
{
    @AfterEach
    void restoreProperties()
    {
        System.clearProperty(VerbsConfiguration.LIBRARY_PROP_NAME);
        System.clearProperty(VerbsConfiguration.DEVICE_PROP_NAME);
    }

    @Test
    void shouldBeFoundByNameAmongTheFabricProviders()
    {
        assertTrue(Fabrics.providerNames().contains(VerbsFabricProvider.NAME), Fabrics.providerNames().toString());
    }

    @Test
    void shouldNameTheLibraryTheFixAndTheSoftProvidersWhenLibibverbsIsMissing()
    {
        System.setProperty(VerbsConfiguration.LIBRARY_PROP_NAME, "libibverbs-verbus-missing.so.1");

        final String reason = new VerbsFabricProvider().unavailableReason(new FabricContext());

        assertNotNull(reason);
        assertTrue(reason.contains("cannot load libibverbs-verbus-missing.so.1"), reason);
        assertTrue(reason.contains("apt-get install libibverbs1 ibverbs-providers"), reason);
        assertTrue(reason.contains("provider=tcp") && reason.contains("provider=shm"), reason);
        final FabricException error = assertThrows(FabricException.class, () -> Fabrics.open(VerbsFabricProvider.NAME));
        assertTrue(error.getMessage().contains("fabric provider verbs is not available"), error.getMessage());
    }

    @Test
    void shouldFailClearlyWithoutAnRdmaDeviceOrOpenOneWhereItExists() throws IOException
    {
        final String reason = new VerbsFabricProvider().unavailableReason(new FabricContext());
        if (hostHasRdmaDevice())
        {
            assertNull(reason, "this host has an RDMA device: " + reason);
            try (Fabric fabric = Fabrics.open(VerbsFabricProvider.NAME))
            {
                assertEquals(VerbsFabricProvider.NAME, fabric.providerName());
                assertTrue(!fabric.deviceNames().isEmpty());
            }
        }
        else
        {
            assertNotNull(reason);
            assertTrue(reason.startsWith("no RDMA device"), reason);
            // rdma-core reports a kernel without RDMA support as ENOSYS; an empty list says "lists none".
            assertTrue(reason.contains("ENOSYS (38)") || reason.contains("lists none"), reason);
            assertTrue(reason.contains("provider=tcp") && reason.contains("provider=auto falls back"), reason);
            final VerbsUnavailableException error = assertThrows(VerbsUnavailableException.class, VerbsFabric::open);
            assertEquals(reason, error.getMessage());
        }
    }

    @Test
    void shouldFallBackToASoftProviderForAutoWhenVerbsIsUnavailable() throws IOException
    {
        if (!hostHasRdmaDevice())
        {
            // Where verbs has no device, auto must still give a working fabric: tcp, which reaches other hosts.
            try (Fabric fabric = Fabrics.open(Fabrics.AUTO))
            {
                assertEquals("tcp", fabric.providerName());
            }
        }
        System.setProperty(VerbsConfiguration.LIBRARY_PROP_NAME, "libibverbs-verbus-missing.so.1");
        try (Fabric fabric = Fabrics.open(Fabrics.AUTO))
        {
            assertEquals("tcp", fabric.providerName());
        }
    }

    @Test
    void shouldNameTheListedDevicesWhenTheConfiguredDeviceDoesNotExist() throws IOException
    {
        System.setProperty(VerbsConfiguration.DEVICE_PROP_NAME, "mlx5_verbus_missing");

        final String reason = new VerbsFabricProvider().unavailableReason(new FabricContext());

        assertNotNull(reason);
        if (hostHasRdmaDevice())
        {
            assertTrue(reason.contains("no RDMA device named 'mlx5_verbus_missing'"), reason);
        }
        else
        {
            assertTrue(reason.startsWith("no RDMA device"), reason);
        }
    }

    static boolean hostHasRdmaDevice() throws IOException
    {
        final Path devices = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(devices))
        {
            return false;
        }
        try (Stream<Path> entries = Files.list(devices))
        {
            return entries.findAny().isPresent();
        }
    }
}
