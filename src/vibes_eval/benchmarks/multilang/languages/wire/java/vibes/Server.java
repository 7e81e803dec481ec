package vibes;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.List;

/**
 * The candidate's side of the wire: reads calls, decodes the arguments by the entry
 * point's declared parameter types, runs it (on one instance of its class, as a test
 * that makes one and calls it) and answers {@code ret} with the result encoded by the
 * declared return type, or {@code raise} with what it threw. Nothing here is trusted:
 * it runs with the sample's code, and only the test program decides.
 */
public final class Server {
    private Server() {}

    public static void serve(Class<?> cls, String name, Class<?>... params) throws IOException {
        OutputStream out = new FileOutputStream(FileDescriptor.out);
        Frames.Lines in = new Frames.Lines(new FileInputStream(FileDescriptor.in));
        System.setOut(System.err); // the sample's prints must not mix with the frames
        Method m = null;
        String missing = null;
        try {
            m = cls.getDeclaredMethod(name, params);
            m.setAccessible(true);
        } catch (NoSuchMethodException | RuntimeException e) {
            missing = "the entry point " + name + " is not defined as declared: " + e;
        }
        Object self = null;
        while (true) {
            Frames.Frame f;
            try {
                f = in.next();
            } catch (Json.Bad e) {
                return;
            }
            if (f == null) {
                return;
            }
            if (!f.kind.equals("call")) {
                continue;
            }
            StringBuilder body = new StringBuilder();
            String kind = "ret";
            try {
                if (missing != null) {
                    throw new Json.Bad(missing);
                }
                if (self == null && !Modifier.isStatic(m.getModifiers())) {
                    var ctor = cls.getDeclaredConstructor();
                    ctor.setAccessible(true);
                    self = ctor.newInstance();
                }
                Object result = m.invoke(self, arguments(m, f.body));
                Codec.encode(m.getGenericReturnType(), result, body);
            } catch (InvocationTargetException e) {
                kind = "raise";
                body.setLength(0);
                Json.quote(String.valueOf(e.getCause()), body);
            } catch (Throwable e) {
                kind = "raise";
                body.setLength(0);
                Json.quote(String.valueOf(e), body);
            }
            Frames.send(out, kind, body);
        }
    }

    private static Object[] arguments(Method m, String json) throws Json.Bad {
        Object v = Json.parse(json);
        Type[] types = m.getGenericParameterTypes();
        if (!(v instanceof List) || ((List<?>) v).size() != types.length) {
            throw new Json.Bad("a call with the wrong number of arguments");
        }
        Object[] args = new Object[types.length];
        for (int k = 0; k < types.length; k++) {
            args[k] = Codec.decode(types[k], ((List<?>) v).get(k));
        }
        return args;
    }
}
