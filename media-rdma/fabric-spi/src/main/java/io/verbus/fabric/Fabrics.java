package io.verbus.fabric;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Opens a fabric by provider name: {@code shm}, {@code tcp}, {@code verbs} or {@code auto}.
 * <p>
 * {@code auto} takes the available provider with the highest {@link FabricProvider#autoPreference()}:
 * verbs when a device is present, else tcp (which reaches other hosts), never shm (same host only, so it
 * must be asked for by name).
 */
public final class Fabrics
{
    /** Name that picks the best available provider. */
    public static final String AUTO = "auto";

    private Fabrics()
    {
    }

    /**
     * @param providerName {@code shm}, {@code tcp}, {@code verbs} or {@code auto}.
     * @return the opened fabric with a default context.
     */
    public static Fabric open(final String providerName)
    {
        return open(providerName, new FabricContext());
    }

    /**
     * @param providerName {@code shm}, {@code tcp}, {@code verbs} or {@code auto}.
     * @param context      configuration.
     * @return the opened fabric.
     * @throws IllegalArgumentException if no provider has that name, listing the known names.
     * @throws FabricException if the provider is not available here, saying why.
     */
    public static Fabric open(final String providerName, final FabricContext context)
    {
        final String[] reason = new String[1];
        final FabricProvider provider = select(providerName, context, reason);
        if (null == provider)
        {
            throw new FabricException(reason[0]);
        }
        return provider.open(context);
    }

    /**
     * Whether a named provider can open here, without opening it: what a subscription checks when it is added, so
     * that a provider this host lacks fails the add (as it fails a publication's) instead of every connect later.
     *
     * @param providerName {@code shm}, {@code tcp}, {@code verbs} or {@code auto}.
     * @param context      configuration.
     * @return null when it can open, else why not (the message {@link #open} would throw).
     * @throws IllegalArgumentException if no provider has that name, listing the known names.
     */
    public static String unavailableReason(final String providerName, final FabricContext context)
    {
        final String[] reason = new String[1];
        return null == select(providerName, context, reason) ? reason[0] : null;
    }

    /** The provider {@code open} would open, or null with why not in {@code reason[0]}. */
    private static FabricProvider select(final String providerName, final FabricContext context, final String[] reason)
    {
        final List<FabricProvider> providers = providers();
        if (AUTO.equals(providerName))
        {
            final StringBuilder reasons = new StringBuilder();
            final List<FabricProvider> ranked = new ArrayList<>(providers);
            ranked.sort(Comparator.comparingInt(FabricProvider::autoPreference).reversed());
            for (final FabricProvider provider : ranked)
            {
                if (provider.autoPreference() < 0)
                {
                    continue;
                }
                final String unavailable = provider.unavailableReason(context);
                if (null == unavailable)
                {
                    return provider;
                }
                reasons.append(' ').append(provider.name()).append(": ").append(unavailable).append(';');
            }
            reason[0] = "no fabric provider available for auto:" + reasons;
            return null;
        }
        for (final FabricProvider provider : providers)
        {
            if (provider.name().equals(providerName))
            {
                final String unavailable = provider.unavailableReason(context);
                if (null != unavailable)
                {
                    reason[0] = "fabric provider " + providerName + " is not available: " + unavailable;
                    return null;
                }
                return provider;
            }
        }
        throw new IllegalArgumentException(
            "unknown fabric provider '" + providerName + "', known: " + providerNames() + " and " + AUTO);
    }

    /**
     * @return the names of every provider on the class path.
     */
    public static List<String> providerNames()
    {
        final List<String> names = new ArrayList<>();
        for (final FabricProvider provider : providers())
        {
            names.add(provider.name());
        }
        return names;
    }

    private static List<FabricProvider> providers()
    {
        final List<FabricProvider> providers = new ArrayList<>();
        ServiceLoader.load(FabricProvider.class, Fabrics.class.getClassLoader()).forEach(providers::add);
        return providers;
    }
}
