package vibes;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.lang.reflect.Type;

/**
 * The test program's side of the wire (trusted): the entry point's stub calls
 * {@link #call} with itself and its arguments; the value that comes back is decoded by the
 * stub's own declared return type. The candidate is hostile: whatever is not a well-formed
 * answer of the declared type breaks the channel for good ({@link ChannelError}), and a
 * broken channel never reports done.
 */
public final class Stub {
    private static OutputStream out;
    private static Frames.Lines in;
    private static String broken;

    private Stub() {}

    /** Take stdin and stdout for the channel; the test's own prints go to stderr. */
    public static void init() {
        out = new FileOutputStream(FileDescriptor.out);
        in = new Frames.Lines(new FileInputStream(FileDescriptor.in));
        System.setOut(System.err);
        System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
    }

    /** Call the candidate's entry point {@code m} (the stub) with {@code args}. */
    public static synchronized Object call(Method m, Object[] args) {
        if (broken != null) {
            throw new ChannelError("the channel to the candidate is broken: " + broken);
        }
        try {
            return answer(m, args);
        } catch (CandidateRaised e) {
            throw e;
        } catch (Throwable e) { // malformed, mistyped, oversized (even out of memory), EOF
            broken = e.getClass().getSimpleName() + ": " + e.getMessage();
            throw new ChannelError("the channel to the candidate is broken: " + broken);
        }
    }

    private static Object answer(Method m, Object[] args) throws IOException, Json.Bad {
        Type[] params = m.getGenericParameterTypes();
        StringBuilder body = new StringBuilder("[");
        for (int k = 0; k < params.length; k++) {
            body.append(k == 0 ? "" : ",");
            Codec.encode(params[k], args[k], body);
        }
        Frames.send(out, "call", body.append(']'));
        Frames.Frame f = in.next();
        if (f == null) {
            throw new Json.Bad("the candidate ended without answering");
        }
        Object value = Json.parse(f.body);
        if (f.kind.equals("ret")) {
            return Codec.decode(m.getGenericReturnType(), value);
        }
        if (f.kind.equals("raise") && value instanceof String) {
            throw new CandidateRaised((String) value);
        }
        throw new Json.Bad("an answer that is neither ret nor raise");
    }

    /** After the test's main returned: the done marker, last on stderr, and exit 0; a
     *  channel that broke on the way (a test may catch anything) fails instead. */
    public static void finish(String marker) {
        PrintStream err = System.err;
        err.flush();
        if (broken != null) {
            err.println("the channel to the candidate broke: " + broken);
            err.flush();
            Runtime.getRuntime().halt(1);
        }
        err.print("\n" + marker + "\n");
        err.flush();
        Runtime.getRuntime().halt(0);
    }
}
