package io.verbus.common;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A process-wide count of something scarce that may only grow up to a budget (quarantined mappings, spinning NIC
 * threads): taking one is a compare-and-set loop that gives up, rather than overshoots, at the budget.
 */
public final class AtomicBudget
{
    private AtomicBudget()
    {
    }

    /**
     * @param used   how many are taken.
     * @param budget how many may be.
     * @return true when one more was taken; false when {@code used} had reached {@code budget}.
     */
    public static boolean tryTake(final AtomicInteger used, final int budget)
    {
        int taken;
        do
        {
            taken = used.get();
            if (taken >= budget)
            {
                return false;
            }
        }
        while (!used.compareAndSet(taken, taken + 1));
        return true;
    }
}
