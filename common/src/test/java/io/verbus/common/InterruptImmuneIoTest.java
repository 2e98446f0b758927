package io.verbus.common;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InterruptImmuneIoTest
{
    private static final int FILE_LENGTH = 4096;

    @TempDir
    Path dir;

    @AfterEach
    void clearInterrupt()
    {
        Thread.interrupted(); // JUnit runs the next test on this thread
    }

    private Path file() throws IOException
    {
        final Path file = dir.resolve("region");
        Files.write(file, new byte[FILE_LENGTH]);
        return file;
    }

    private static long sizeOf(final Path file) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            return channel.size();
        }
    }

    @Test
    void aFileChannelCallOnAnInterruptedThreadFailsWithoutIt() throws IOException
    {
        final Path file = file();
        Thread.currentThread().interrupt();
        assertThrows(ClosedByInterruptException.class, () -> sizeOf(file));
    }

    @Test
    void shouldRunTheCallOnAnInterruptedThreadAndLeaveTheInterruptSet() throws IOException
    {
        final Path file = file();
        Thread.currentThread().interrupt();

        assertEquals(FILE_LENGTH, InterruptImmuneIo.call(() -> sizeOf(file)));
        assertTrue(Thread.currentThread().isInterrupted(), "the caller's interrupt is kept");
    }

    @Test
    void shouldRunTheCallAgainWhenAnInterruptClosesItsChannel() throws IOException
    {
        final Path file = file();
        final int[] attempts = new int[1];

        final long size = InterruptImmuneIo.call(() ->
        {
            if (1 == ++attempts[0])
            {
                Thread.currentThread().interrupt(); // as if another thread interrupted this one during the call
            }
            return sizeOf(file);
        });

        assertEquals(FILE_LENGTH, size);
        assertEquals(2, attempts[0]);
        assertTrue(Thread.currentThread().isInterrupted(), "the interrupt that arrived during the call is kept");
    }

    @Test
    void shouldGiveUpOnAThreadInterruptedAtEveryAttempt() throws IOException
    {
        final Path file = file();
        final int[] attempts = new int[1];

        assertThrows(ClosedByInterruptException.class, () -> InterruptImmuneIo.call(() ->
        {
            attempts[0]++;
            Thread.currentThread().interrupt();
            return sizeOf(file);
        }));

        assertEquals(InterruptImmuneIo.MAX_ATTEMPTS, attempts[0]);
        assertTrue(Thread.currentThread().isInterrupted());
    }

    @Test
    void shouldRunACallThatCannotBeRepeatedOnceOnAnInterruptedThread() throws IOException
    {
        final Path file = file();
        Thread.currentThread().interrupt();
        assertEquals(FILE_LENGTH, InterruptImmuneIo.callOnce(() -> sizeOf(file)));
        assertTrue(Thread.currentThread().isInterrupted());

        final int[] attempts = new int[1];
        assertThrows(ClosedByInterruptException.class, () -> InterruptImmuneIo.callOnce(() ->
        {
            attempts[0]++;
            Thread.currentThread().interrupt();
            return sizeOf(file);
        }));
        assertEquals(1, attempts[0]);
        assertTrue(Thread.currentThread().isInterrupted());
    }
}
