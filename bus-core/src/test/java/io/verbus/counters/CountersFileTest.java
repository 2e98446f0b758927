package io.verbus.counters;

import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CountersFileTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldRefuseADirInUseByALiveVerbusAndDeleteTheFileOnClose()
    {
        final Verbus.Context context = TestSupport.context(tempDir);
        final Path file = Path.of(context.dir(), CountersFile.FILE_NAME);
        try (Verbus verbus = Verbus.launch(context))
        {
            assertTrue(Files.exists(file));
            assertFalse(verbus.isClosed());
            final IllegalStateException ex = assertThrows(IllegalStateException.class,
                () -> Verbus.launch(TestSupport.context(tempDir)));
            assertTrue(ex.getMessage().contains("is in use by a running Verbus (pid " +
                ProcessHandle.current().pid() + ")"), ex.getMessage());
        }
        assertFalse(Files.exists(file));
    }

    @Test
    void shouldReplaceAStaleFileLeftByADeadProcessAndReadItBackReadOnly()
    {
        final Path dir = tempDir.resolve("stale");
        try (CountersFile stale = CountersFile.create(dir, 16))
        {
            stale.countersManager().newCounter("old", CounterTypes.ERRORS_TYPE_ID).set(5);
            // Pretend the writer died: a pid that cannot be alive.
            final org.agrona.concurrent.UnsafeBuffer header =
                new org.agrona.concurrent.UnsafeBuffer(stale.valuesBuffer().addressOffset() -
                    16 * org.agrona.concurrent.status.CountersReader.METADATA_LENGTH - CountersFile.HEADER_LENGTH,
                    CountersFile.HEADER_LENGTH);
            header.putLong(CountersFile.PID_OFFSET, Long.MAX_VALUE);

            try (CountersFile reader = CountersFile.openReadOnly(dir))
            {
                assertEquals(Long.MAX_VALUE, reader.pid());
                final long[] value = {-1};
                reader.countersReader().forEach((id, type, key, label) -> value[0] =
                    reader.countersReader().getCounterValue(id));
                assertEquals(5, value[0]);
            }

            try (CountersFile fresh = CountersFile.create(dir, 16))
            {
                assertEquals(ProcessHandle.current().pid(), fresh.pid());
                final int[] count = {0};
                fresh.countersReader().forEach((id, type, key, label) -> count[0]++);
                assertEquals(0, count[0]);
            }
        }
    }
}
