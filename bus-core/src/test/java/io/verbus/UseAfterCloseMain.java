package io.verbus;

import io.aeron.logbuffer.BufferClaim;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.nio.file.Path;

/**
 * Child JVM for {@link UseAfterCloseTest}: uses everything it obtained from a Verbus after closing it and prints
 * one line per step. Before the fix a step ended the JVM with SIGSEGV, so the output stops at that step.
 */
public final class UseAfterCloseMain
{
    private UseAfterCloseMain()
    {
    }

    public static void main(final String[] args)
    {
        final Verbus verbus = Verbus.launch(TestSupport.context(Path.of(args[0])));
        final Subscription subscription = verbus.addSubscription("ipc", 3);
        final Publication publication = verbus.addPublication("ipc", 3);
        TestSupport.await("connected", publication::isConnected);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
        TestSupport.await("offer", () -> publication.offer(buffer, 0, 64) > 0);
        TestSupport.await("poll", () -> 1 == subscription.poll((b, o, l, h) -> {}, 1));
        final Image image = subscription.images().get(0);
        final CountersReader counters = verbus.countersReader();
        final BufferClaim claim = new BufferClaim();
        if (publication.tryClaim(100, claim) < 0)
        {
            throw new IllegalStateException("claim failed");
        }

        // A claim held past its publication's close and linger, while Verbus runs on: its log is retired then.
        final Subscription retiredSubscription = verbus.addSubscription("ipc", 4);
        final Publication retired = verbus.addExclusivePublication("ipc", 4);
        TestSupport.await("retired connected", retired::isConnected);
        final BufferClaim retiredClaim = new BufferClaim();
        TestSupport.await("retired claim", () -> retired.tryClaim(100, retiredClaim) > 0);
        retired.close();
        retiredSubscription.close();
        sleepMs(1_000); // five times the test context's linger
        step("claim after its publication's linger", () ->
        {
            retiredClaim.buffer().putLong(retiredClaim.offset(), 42);
            retiredClaim.commit();
            return "written and committed";
        });

        verbus.close();

        step("claim", () ->
        {
            claim.buffer().putLong(claim.offset(), 42);
            claim.commit();
            return "written and committed";
        });
        step("stale countersReader", () -> "value " + counters.getCounterValue(0));
        step("countersReader()", () -> String.valueOf(verbus.countersReader()));
        step("image.position()", () -> String.valueOf(image.position()));
        step("image.poll", () -> String.valueOf(image.poll((b, o, l, h) -> {}, 10)));
        step("subscription.poll", () -> String.valueOf(subscription.poll((b, o, l, h) -> {}, 10)));
        step("publication.offer", () -> String.valueOf(publication.offer(buffer, 0, 64)));
        step("publication.tryClaim", () -> String.valueOf(publication.tryClaim(10, new BufferClaim())));
        step("publication.position", () -> String.valueOf(publication.position()));
        step("publication.positionLimit", () -> String.valueOf(publication.positionLimit()));
        step("subscription.isClosed", () -> String.valueOf(subscription.isClosed()));
        step("verbus.invoke", () -> String.valueOf(verbus.invoke()));
        System.out.println("DONE");
    }

    private static void sleepMs(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private static void step(final String name, final java.util.concurrent.Callable<String> action)
    {
        String outcome;
        try
        {
            outcome = action.call();
        }
        catch (final Exception ex)
        {
            outcome = ex.getClass().getSimpleName();
        }
        System.out.println("STEP " + name + ": " + outcome);
        System.out.flush();
    }
}
