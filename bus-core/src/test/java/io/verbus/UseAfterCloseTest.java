package io.verbus;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Closed means closed: after {@code Verbus.close()} everything the application still holds either answers as
 * closed (offer/claim/position return CLOSED, polls 0), throws {@code IllegalStateException} (countersReader(),
 * Image.position()), or, for raw memory the application holds itself (a BufferClaim's buffer, a CountersReader),
 * touches quarantined memory instead of faulting. Run in a child JVM, since the failure mode is a SIGSEGV.
 */
class UseAfterCloseTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldNeverFaultAndAnswerClosedOrThrowAfterClose() throws Exception
    {
        final TestSupport.ChildResult result = TestSupport.runChild(
            TestSupport.childJava(UseAfterCloseMain.class, tempDir.toString()), 60_000);
        final String output = result.output();
        assertEquals(0, result.exitCode(), output);
        assertTrue(output.contains("STEP claim after its publication's linger: written and committed"), output);
        assertTrue(output.contains("STEP claim: written and committed"), output);
        assertTrue(output.contains("STEP stale countersReader: value 0"), output);
        assertTrue(output.contains("STEP countersReader(): IllegalStateException"), output);
        // As Aeron's Image: a closed image answers its final position from a field, never from the unmapped counter.
        assertTrue(java.util.regex.Pattern.compile("STEP image.position\\(\\): (IllegalStateException|[0-9]+)\n")
            .matcher(output).find(), output);
        assertTrue(output.contains("STEP image.poll: 0"), output);
        assertTrue(output.contains("STEP subscription.poll: 0"), output);
        assertTrue(output.contains("STEP publication.offer: " + Publication.CLOSED), output);
        assertTrue(output.contains("STEP publication.tryClaim: " + Publication.CLOSED), output);
        assertTrue(output.contains("STEP publication.position: " + Publication.CLOSED), output);
        assertTrue(output.contains("STEP publication.positionLimit: " + Publication.CLOSED), output);
        assertTrue(output.contains("STEP subscription.isClosed: true"), output);
        assertTrue(output.contains("STEP verbus.invoke: 0"), output);
        assertTrue(output.contains("DONE"), output);
    }
}
