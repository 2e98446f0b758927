package io.verbus.bench;

import java.time.Instant;
import java.util.List;

/**
 * Everything one run produced: when and where it ran, how, and one result per contender, part and size.
 *
 * @param startedAt       when the run began.
 * @param machine         the machine, with the load average at the start.
 * @param loadAverageAtEnd the load average when the run ended, to show how busy the machine was.
 * @param quick           whether {@code --quick} was given.
 * @param pinning         how threads were pinned, in words.
 * @param plan            how long each size was warmed up and measured, in words.
 * @param results         in the order they ran.
 */
public record BenchReport(
    Instant startedAt,
    MachineInfo machine,
    String loadAverageAtEnd,
    boolean quick,
    String pinning,
    String plan,
    List<BenchResult> results)
{
    public BenchReport
    {
        results = List.copyOf(results);
    }
}
