package io.verbus.soak;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What {@code ./verbus soak} found, printed as its summary; {@link #exitCode()} is 0 only when every check passed.
 */
final class SoakSummary
{
    final SoakOptions options;
    List<ProviderSoak> providers = List.of();
    String loadAtStart;
    String loadAtEnd;
    long elapsedNs;
    Path workDir;
    String setUpFailure;
    List<String> leftFiles = List.of();
    int sweptDevices;
    List<String> hsErrFiles = List.of();

    SoakSummary(final SoakOptions options)
    {
        this.options = options;
    }

    long total(final int index)
    {
        long total = 0;
        for (final ProviderSoak soak : providers)
        {
            total += soak.subscriberTotals[index];
        }
        return total;
    }

    long killCycles()
    {
        return providers.stream().mapToLong((soak) -> soak.killCycles).sum();
    }

    long fuzzed()
    {
        return providers.stream().mapToLong((soak) -> null == soak.fuzzer ? 0 : soak.fuzzer.fuzzed.get()).sum();
    }

    long fuzzFailures()
    {
        return providers.stream().mapToLong((soak) -> null == soak.fuzzer ? 0 : soak.fuzzer.failureCount()).sum();
    }

    long crashes()
    {
        long crashes = providers.stream().mapToLong((soak) -> soak.crashes.size()).sum();
        return Math.max(crashes, hsErrFiles.size());
    }

    long leakedFds()
    {
        return providers.stream().mapToLong((soak) -> soak.fdEnd < 0 ? 0 : Math.max(0, soak.fdEnd - soak.fdStart))
            .sum();
    }

    long stalls()
    {
        return providers.stream().mapToLong((soak) -> soak.stalls).sum();
    }

    /** @return every reason the soak failed; empty when it passed. */
    List<String> failures()
    {
        final List<String> failures = new ArrayList<>();
        if (null != setUpFailure)
        {
            failures.add("set-up or tear-down failed: " + setUpFailure);
        }
        addIf(failures, total(ProviderSoak.LOST), "lost messages");
        addIf(failures, total(ProviderSoak.DUPLICATED), "duplicated messages");
        addIf(failures, total(ProviderSoak.REORDERED), "reordered messages");
        addIf(failures, total(ProviderSoak.CORRUPT), "corrupt messages");
        addIf(failures, crashes(), "crashes");
        addIf(failures, leakedFds(), "leaked fds");
        addIf(failures, leftFiles.size(), "leaked files");
        addIf(failures, stalls(), "stalls");
        addIf(failures, fuzzFailures(), "fuzzing failures (accepted, unanswered or unreachable)");
        for (final ProviderSoak soak : providers)
        {
            addIf(failures, soak.rejoinFailures, soak.provider + " restarted subscribers that did not rejoin");
            addIf(failures, soak.errors(), soak.provider + " ERROR lines from the processes");
            if (null == setUpFailure && 0 == soak.published)
            {
                failures.add(soak.provider + ": no message published");
            }
        }
        return failures;
    }

    int exitCode()
    {
        return failures().isEmpty() ? 0 : 1;
    }

    private static void addIf(final List<String> failures, final long count, final String what)
    {
        if (count > 0)
        {
            failures.add(count + " " + what);
        }
    }

    static String progress(final List<ProviderSoak> soaks)
    {
        final StringBuilder text = new StringBuilder();
        for (final ProviderSoak soak : soaks)
        {
            text.append(text.isEmpty() ? "" : "; ").append(soak.provider).append(' ')
                .append(String.format(Locale.ROOT, "%,d", soak.publishedSoFar())).append(" msgs, ")
                .append(soak.killCycles).append(" kills, ")
                .append(null == soak.fuzzer ? 0 : soak.fuzzer.fuzzed.get()).append(" fuzzed");
        }
        return text.toString();
    }

    void print(final PrintStream out)
    {
        out.println();
        out.println("==== verbus soak summary ====");
        out.printf(Locale.ROOT, "duration: %d s of %d s; load average at start %s, at end %s%n",
            TimeUnit.NANOSECONDS.toSeconds(elapsedNs), TimeUnit.NANOSECONDS.toSeconds(options.durationNs),
            loadAtStart, loadAtEnd);
        out.printf(Locale.ROOT, "%-4s %15s %12s %15s %6s %10s %9s %7s %7s %7s%n", "", "messages", "MB",
            "received(all)", "lost", "duplicated", "reordered", "corrupt", "stalls", "kills");
        for (final ProviderSoak soak : providers)
        {
            out.printf(Locale.ROOT, "%-4s %,15d %,12.1f %,15d %6d %10d %9d %7d %7d %7d%n", soak.provider,
                soak.published, soak.publishedBytes / 1e6, soak.subscriberTotals[ProviderSoak.RECEIVED],
                soak.subscriberTotals[ProviderSoak.LOST], soak.subscriberTotals[ProviderSoak.DUPLICATED],
                soak.subscriberTotals[ProviderSoak.REORDERED], soak.subscriberTotals[ProviderSoak.CORRUPT],
                soak.stalls, soak.killCycles);
        }
        out.println("  (messages: published, each checked by every subscriber process; received: over all subscriber");
        out.println("   processes, killed ones up to their last report; lane rates " + rates() + ")");
        out.printf(Locale.ROOT, "subscriber kill -9/restart cycles: %d (every restarted subscriber rejoined: %s; " +
            "slowest kill -9 to exit: %d ms)%n", killCycles(),
            providers.stream().allMatch((soak) -> 0 == soak.rejoinFailures) ? "yes" : "NO",
            providers.stream().mapToLong((soak) -> soak.slowestKillMs).max().orElse(0));
        printFuzz(out);
        out.printf(Locale.ROOT, "crashes: %d (non-zero exits of processes not killed by the soak, hs_err files: %s)%n",
            crashes(), hsErrFiles);
        out.printf(Locale.ROOT, "leaked fds: %d (publisher %s)%n", leakedFds(), fds());
        out.printf(Locale.ROOT, "leaked shm regions/files: %d%s%n", leftFiles.size(),
            (leftFiles.isEmpty() ? " (fabric dir and the Verbus dirs of every process that closed)" :
            " " + leftFiles.subList(0, Math.min(20, leftFiles.size()))) + "; shm devices of killed processes removed " +
            "by the fabric's stale sweep: " + sweptDevices);
        out.printf(Locale.ROOT, "stalls (no progress for more than %d ms: the %d ms channel timeout + %d ms): %d%n",
            options.stallThresholdMs(), options.timeoutMs, SoakOptions.STALL_GRACE_MS, stalls());
        out.printf(Locale.ROOT,
            "driver/process ERROR lines: %d, images gone unavailable at long-lived subscribers: %d%n",
            providers.stream().mapToLong(ProviderSoak::errors).sum(),
            providers.stream().mapToLong(ProviderSoak::unavailableImages).sum());
        final List<String> failures = failures();
        for (final ProviderSoak soak : providers)
        {
            for (final String failure : new ArrayList<>(soak.failures))
            {
                out.println("  " + failure);
            }
            for (final String crash : new ArrayList<>(soak.crashes))
            {
                out.println("  crash: " + crash);
            }
            if (null != soak.fuzzer)
            {
                soak.fuzzer.failures().forEach((failure) -> out.println("  fuzz " + soak.provider + ": " + failure));
            }
            if (!soak.fdDiff.isEmpty())
            {
                out.println("  " + soak.provider + " publisher fds gained: " + soak.fdDiff);
            }
        }
        out.println("result: " + (failures.isEmpty() ? "PASSED" : "FAILED: " + String.join("; ", failures)));
        out.println("logs: " + (null == workDir ? "none" : workDir.resolve("logs") +
            (failures.isEmpty() && null == options.dir ? " (removed: the run passed)" : "")));
    }

    private void printFuzz(final PrintStream out)
    {
        long rejected = 0;
        long closed = 0;
        long abandoned = 0;
        long slow = 0;
        for (final ProviderSoak soak : providers)
        {
            if (null != soak.fuzzer)
            {
                rejected += soak.fuzzer.rejected.get();
                closed += soak.fuzzer.closed.get();
                abandoned += soak.fuzzer.abandoned.get();
                slow += soak.fuzzer.slow.get();
            }
        }
        double rate = 0;
        for (final ProviderSoak soak : providers)
        {
            rate += null == soak.fuzzer ? 0 : soak.fuzzer.ratePerSecond();
        }
        out.printf(Locale.ROOT, "fuzzed handshakes: %,d completed, %.0f/s (REJECT received %,d, closed without " +
            "REJECT %,d, abandoned after CHALLENGE %,d, left unfinished for the deadline %,d; failures: %d)%n",
            fuzzed(), rate, rejected, closed, abandoned, slow, fuzzFailures());
        for (final ProviderSoak soak : providers)
        {
            if (null != soak.fuzzer)
            {
                final long retries = soak.fuzzer.connectRetries.get();
                final String retried = 0 == retries ? "" : "; connects retried after a " +
                    HandshakeFuzzer.CONNECT_TIMEOUT_MS / 1000 + " s timeout: " + retries;
                out.printf(Locale.ROOT, "  %s: %.0f/s, %s%s%n", soak.provider, soak.fuzzer.ratePerSecond(),
                    soak.fuzzer.perCase(), retried);
            }
        }
    }

    private String fds()
    {
        final StringBuilder text = new StringBuilder();
        for (final ProviderSoak soak : providers)
        {
            text.append(text.isEmpty() ? "" : ", ").append(soak.provider).append(' ').append(soak.fdStart)
                .append(" -> ").append(soak.fdEnd);
        }
        return text.toString();
    }

    private String rates()
    {
        final StringBuilder text = new StringBuilder();
        for (final String provider : options.providers)
        {
            final long[] rates = options.rates(provider);
            text.append(text.isEmpty() ? "" : ", ").append(provider).append(' ');
            for (int i = 0; i < rates.length; i++)
            {
                text.append(i == 0 ? "" : "/").append(0 == rates[i] ? "max" : String.valueOf(rates[i]));
            }
        }
        return text.toString();
    }
}
