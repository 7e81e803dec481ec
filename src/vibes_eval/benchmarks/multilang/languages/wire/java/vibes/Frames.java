package vibes;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Lines on the channel: a frame is one line led by the marker "\u0002V ", then its kind
 * ({@code call}, {@code ret}, {@code raise}), a space and a JSON value. Other lines are
 * stray output and are skipped unread; a line over {@link #MAX_LINE} bytes or that is not
 * UTF-8 breaks the channel.
 */
public final class Frames {
    public static final int MAX_LINE = 64 << 20;
    private static final byte[] MARK = {2, 'V', ' '};

    private Frames() {}

    /** A frame read: its kind and its JSON text. */
    public static final class Frame {
        public final String kind;
        public final String body;

        Frame(String kind, String body) {
            this.kind = kind;
            this.body = body;
        }
    }

    /** Reads lines from a stream in blocks (a 64 MiB line in well under a second). */
    public static final class Lines {
        private final InputStream in;
        private final byte[] buf = new byte[1 << 16];
        private int pos;
        private int lim;

        public Lines(InputStream in) {
            this.in = in;
        }

        /** The next frame; null at the end of the input. */
        public Frame next() throws IOException, Json.Bad {
            while (true) {
                byte[] line = line();
                if (line == null) {
                    return null;
                }
                if (line.length < MARK.length || line[0] != MARK[0] || line[1] != MARK[1]
                        || line[2] != MARK[2]) {
                    continue; // stray output
                }
                String text = utf8(line);
                int space = text.indexOf(' ', MARK.length);
                if (space < 0) {
                    throw new Json.Bad("a frame without a value");
                }
                return new Frame(text.substring(MARK.length, space), text.substring(space + 1));
            }
        }

        /** One line without its newline; null at the end of the input (a last line
         *  without one is dropped). */
        private byte[] line() throws IOException, Json.Bad {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            while (true) {
                if (pos == lim) {
                    int n = in.read(buf);
                    if (n <= 0) {
                        return null;
                    }
                    pos = 0;
                    lim = n;
                }
                int nl = pos;
                while (nl < lim && buf[nl] != '\n') {
                    nl++;
                }
                if (out.size() + (nl - pos) > MAX_LINE) {
                    throw new Json.Bad("a line over " + MAX_LINE + " bytes");
                }
                out.write(buf, pos, nl - pos);
                pos = nl < lim ? nl + 1 : lim;
                if (nl < lim) {
                    return out.toByteArray();
                }
            }
        }
    }

    private static String utf8(byte[] line) throws Json.Bad {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(line))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new Json.Bad("a frame that is not UTF-8");
        }
    }

    /** Write one frame (its body JSON, ASCII only) and flush it. */
    public static void send(OutputStream out, String kind, CharSequence body) throws IOException {
        StringBuilder s = new StringBuilder(body.length() + 16);
        s.append("\u0002V ").append(kind).append(' ').append(body).append('\n');
        out.write(s.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
