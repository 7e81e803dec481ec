package vibes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON for the wire (docs/integrity.md): text to a tree of {@link #NULL}, Boolean,
 * String, {@link Num}, List and Map, and strings back to JSON. The test side reads what a
 * hostile candidate wrote with it, so anything but well-formed JSON, nested at most
 * {@link #MAX_DEPTH} deep, is refused with {@link Bad}; nothing is evaluated.
 */
public final class Json {
    /** JSON's null: a map or list may hold it, so it is not Java's null. */
    public static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    /** Deeper than any value a HumanEval signature carries; keeps recursion far from the stack's end. */
    public static final int MAX_DEPTH = 512;

    /** A number as its JSON text: the receiver parses it as the type it expects. */
    public static final class Num {
        public final String text;

        Num(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** What does not read as the value expected: the channel is broken. */
    public static final class Bad extends Exception {
        public Bad(String why) {
            super(why);
        }
    }

    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    /** The value of the whole of {@code text}. */
    public static Object parse(String text) throws Bad {
        Json p = new Json(text);
        p.space();
        Object v = p.value(0);
        p.space();
        if (p.i != text.length()) {
            throw p.bad("text after the value");
        }
        return v;
    }

    private Bad bad(String why) {
        return new Bad(why + " at offset " + i);
    }

    private void space() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            i++;
        }
    }

    private Object value(int depth) throws Bad {
        if (depth > MAX_DEPTH) {
            throw bad("nested too deep");
        }
        if (i >= s.length()) {
            throw bad("unexpected end");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", NULL);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw bad("unexpected character");
        }
    }

    private Object word(String w, Object v) throws Bad {
        if (!s.startsWith(w, i)) {
            throw bad("unknown word");
        }
        i += w.length();
        return v;
    }

    private List<Object> array(int depth) throws Bad {
        List<Object> out = new ArrayList<>();
        i++;
        space();
        if (i < s.length() && s.charAt(i) == ']') {
            i++;
            return out;
        }
        while (true) {
            space();
            out.add(value(depth + 1));
            space();
            if (i >= s.length()) {
                throw bad("unterminated array");
            }
            char c = s.charAt(i++);
            if (c == ']') {
                return out;
            }
            if (c != ',') {
                throw bad("expected , or ]");
            }
        }
    }

    private Map<String, Object> object(int depth) throws Bad {
        Map<String, Object> out = new LinkedHashMap<>();
        i++;
        space();
        if (i < s.length() && s.charAt(i) == '}') {
            i++;
            return out;
        }
        while (true) {
            space();
            if (i >= s.length() || s.charAt(i) != '"') {
                throw bad("expected a key");
            }
            String key = string();
            space();
            if (i >= s.length() || s.charAt(i++) != ':') {
                throw bad("expected :");
            }
            space();
            if (out.put(key, value(depth + 1)) != null) {
                throw bad("duplicate key");
            }
            space();
            if (i >= s.length()) {
                throw bad("unterminated object");
            }
            char c = s.charAt(i++);
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw bad("expected , or }");
            }
        }
    }

    private Num number() throws Bad {
        int start = i;
        if (s.charAt(i) == '-') {
            i++;
        }
        if (i < s.length() && s.charAt(i) == '0') {
            i++;
        } else if (!digits()) {
            throw bad("bad number");
        }
        if (i < s.length() && s.charAt(i) == '.') {
            i++;
            if (!digits()) {
                throw bad("bad fraction");
            }
        }
        if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                i++;
            }
            if (!digits()) {
                throw bad("bad exponent");
            }
        }
        return new Num(s.substring(start, i));
    }

    private boolean digits() {
        int start = i;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
        }
        return i > start;
    }

    private String string() throws Bad {
        StringBuilder out = new StringBuilder();
        i++;
        while (true) {
            if (i >= s.length()) {
                throw bad("unterminated string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw bad("control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (i >= s.length()) {
                throw bad("unterminated escape");
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u': out.append(hex4()); break;
                default: throw bad("unknown escape");
            }
        }
    }

    private char hex4() throws Bad {
        if (i + 4 > s.length()) {
            throw bad("short \\u escape");
        }
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int d = Character.digit(s.charAt(i++), 16);
            if (d < 0) {
                throw bad("bad \\u escape");
            }
            v = v * 16 + d;
        }
        return (char) v;
    }

    /** {@code v} as a JSON string, ASCII only: every other UTF-16 unit (lone surrogates too) is escaped. */
    public static void quote(String v, StringBuilder out) {
        out.append('"');
        for (int k = 0; k < v.length(); k++) {
            char c = v.charAt(k);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f) {
                out.append(c);
            } else {
                out.append("\\u");
                for (int shift = 12; shift >= 0; shift -= 4) {
                    out.append(Character.forDigit((c >> shift) & 0xf, 16));
                }
            }
        }
        out.append('"');
    }
}
