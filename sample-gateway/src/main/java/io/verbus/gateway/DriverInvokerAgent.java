package io.verbus.gateway;

import io.verbus.Verbus;
import org.agrona.concurrent.Agent;

/**
 * Runs the embedded driver's duty cycles on the parts' own thread ({@code ThreadingMode.INVOKER}): on a host with
 * one core per process, a second spinning thread for the driver would take turns with the parts on the same core
 * and every message would wait a scheduler slice.
 */
final class DriverInvokerAgent implements Agent
{
    private final Verbus verbus;

    DriverInvokerAgent(final Verbus verbus)
    {
        this.verbus = verbus;
    }

    public int doWork()
    {
        return verbus.invoke();
    }

    public String roleName()
    {
        return "verbus-driver-invoker";
    }
}
