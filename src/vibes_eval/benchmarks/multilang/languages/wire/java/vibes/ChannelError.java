package vibes;

/**
 * The channel to the candidate broke (EOF, a malformed or oversized frame, a value not of
 * the declared type). An Error, not an Exception: a test's {@code catch (Exception e)}
 * cannot swallow it, and once thrown the test program never reports done (Stub.finish).
 */
public final class ChannelError extends Error {
    public ChannelError(String why) {
        super(why);
    }
}
