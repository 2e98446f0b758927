package io.verbus.gateway;

/**
 * The application protocol the strategy and the order gateway agree on at logon: the strategy sends a session Logon
 * with this version (and the SBE schema versions it was built with) on the order stream before any order; the order
 * gateway answers with its own Logon when the major versions match, or a Logout (UNSUPPORTED_VERSION) when not, and
 * rejects orders from a peer that has not logged on.
 */
public final class SessionProtocol
{
    /** Major version: a peer with another major is refused. */
    public static final int MAJOR = 1;
    /** Minor version: informational, any minor of the same major is accepted. */
    public static final int MINOR = 0;
    /** Heartbeat interval announced at logon. */
    public static final int HEARTBEAT_INTERVAL_MS = 1000;

    private SessionProtocol()
    {
    }
}
