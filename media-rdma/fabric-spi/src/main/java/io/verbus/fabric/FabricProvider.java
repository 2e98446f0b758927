package io.verbus.fabric;

/**
 * A fabric implementation, found by {@link java.util.ServiceLoader} through
 * {@code META-INF/services/io.verbus.fabric.FabricProvider}.
 */
public interface FabricProvider
{
    /**
     * @return the name channels and {@link Fabrics#open(String)} use: {@code verbs}, {@code shm}, {@code tcp}.
     */
    String name();

    /**
     * @return rank for {@code auto}: the available provider with the highest value wins; negative never.
     */
    int autoPreference();

    /**
     * @param context configuration.
     * @return null if the provider can open a fabric here, else why not (e.g. "no RDMA device").
     */
    String unavailableReason(FabricContext context);

    /**
     * @param context configuration.
     * @return an opened fabric.
     * @throws FabricException if it cannot be opened, naming why.
     */
    Fabric open(FabricContext context);
}
