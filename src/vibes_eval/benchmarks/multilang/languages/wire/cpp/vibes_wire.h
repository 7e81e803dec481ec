// The C++ side of the trusted-test split's wire (docs/integrity.md, "The wire").
//
// Both programs include this header first (it is in their precompiled header, so its
// templates are parsed before any prompt or completion: a sample's macros cannot reach
// them). The test program's stub calls `vibes::call<F>(args...)`, F the entry point's
// declared function type; the candidate's server `main` is `vibes::serve<F>(&entry)`.
// Values are JSON decoded by the receiver's declared type: no per-task code.
//
// Only headers the programs already get (the common precompiled ones) are included, so
// no sample sees a name it would not see otherwise; std::optional, std::any, boost::any
// and std::list are recognised by their members, never named.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace vibes {

constexpr std::size_t MAX_FRAME = std::size_t(64) << 20;  // bytes of one frame, at most

// -- the channel (vibes_wire_io.cpp: no POSIX header enters the programs' own units) -----

void open_channel();  // stdin and stdout carry frames only from here on
bool read_frame(std::string &frame);  // the next frame's text after its marker; false: EOF
bool write_frame(const std::string &frame);  // false: the other side is gone
void say(const std::string &line);  // "vibes: <line>" on stderr
[[noreturn]] void fatal(const std::string &why);  // the test side gives up: says why, exit 3

// A frame that is not what the receiver's declared type allows.
struct Malformed : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// What the candidate raised, raised again in the test.
struct Raised : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// -- JSON text -----------------------------------------------------------------------------

inline void put_string(std::string &out, const char *s, std::size_t n) {
    // bytes, not code points: what is not printable ASCII travels as \u00XX
    static const char hex[] = "0123456789abcdef";
    out += '"';
    for (std::size_t i = 0; i < n; ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    out += '"';
}

struct Reader {
    const char *p;
    const char *end;

    void ws() {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) ++p;
    }
    bool at(char c) {
        ws();
        return p < end && *p == c;
    }
    void expect(char c) {
        if (!at(c)) throw Malformed(std::string("expected '") + c + "'");
        ++p;
    }
    bool take(char c) {
        if (!at(c)) return false;
        ++p;
        return true;
    }
    bool word(const char *w) {
        ws();
        std::size_t n = std::strlen(w);
        if (std::size_t(end - p) < n || std::memcmp(p, w, n) != 0) return false;
        p += n;
        return true;
    }
    void done() {
        ws();
        if (p != end) throw Malformed("trailing bytes after the value");
    }
    std::string number() {  // the text of a JSON number, unconverted
        ws();
        const char *start = p;
        while (p < end && p - start < 64 && std::strchr("-+.0123456789eE", *p) != nullptr) ++p;
        if (p == start || (p < end && std::strchr("-+.0123456789eE", *p) != nullptr))
            throw Malformed("expected a number");
        return std::string(start, p);
    }
    std::string string() {
        expect('"');
        std::string out;
        while (true) {
            if (p >= end) throw Malformed("unterminated string");
            unsigned char c = static_cast<unsigned char>(*p++);
            if (c == '"') return out;
            if (c < 0x20) throw Malformed("a control byte in a string");
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (p >= end) throw Malformed("unterminated string");
            char e = *p++;
            switch (e) {
                case '"': case '\\': case '/': out += e; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': out += static_cast<char>(byte_escape()); break;
                default: throw Malformed("a bad escape in a string");
            }
        }
    }
    unsigned byte_escape() {  // \u00XX only: strings are bytes
        if (end - p < 4) throw Malformed("a short \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            char h = *p++;
            int d = (h >= '0' && h <= '9') ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0) throw Malformed("a bad \\u escape");
            v = v * 16 + unsigned(d);
        }
        if (v > 0xff) throw Malformed("a \\u escape beyond a byte");
        return v;
    }
};

// -- codecs: one per declared type; a type without one does not compile -------------------

template <class T, class = void>
struct Codec;

template <class T>
void put(std::string &out, const T &v) {
    Codec<T>::put(out, v);
}
template <class T>
T get(Reader &r) {
    return Codec<T>::get(r);
}

template <>
struct Codec<bool> {
    static void put(std::string &out, bool v) { out += v ? "true" : "false"; }
    static bool get(Reader &r) {
        if (r.word("true")) return true;
        if (r.word("false")) return false;
        throw Malformed("expected a bool");
    }
};

template <class T>
struct Codec<T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
    static void put(std::string &out, T v) {
        if (std::is_signed<T>::value) {
            out += std::to_string(static_cast<long long>(v));
        } else {
            out += std::to_string(static_cast<unsigned long long>(v));
        }
    }
    static T get(Reader &r) {
        std::string t = r.number();
        bool neg = t[0] == '-';
        std::size_t i = neg ? 1 : 0;
        if (i == t.size() || t.size() - i > 20) throw Malformed("expected an integer");
        unsigned long long mag = 0;
        for (; i < t.size(); ++i) {
            if (t[i] < '0' || t[i] > '9') throw Malformed("expected an integer");
            unsigned d = unsigned(t[i] - '0');
            if (mag > (std::numeric_limits<unsigned long long>::max() - d) / 10)
                throw Malformed("an integer out of range");
            mag = mag * 10 + d;
        }
        using L = std::numeric_limits<T>;
        if (neg) {
            unsigned long long lim = std::is_signed<T>::value
                ? static_cast<unsigned long long>(-(static_cast<long long>(L::min()) + 1)) + 1
                : 0;
            if (mag > lim) throw Malformed("an integer out of range");
            return mag == 0 ? T(0) : static_cast<T>(-static_cast<long long>(mag - 1) - 1);
        }
        if (mag > static_cast<unsigned long long>(L::max())) throw Malformed("an integer out of range");
        return static_cast<T>(mag);
    }
};

template <class T>
struct Codec<T, std::enable_if_t<std::is_floating_point<T>::value>> {
    static void put(std::string &out, T v) {
        if (std::isnan(v)) {
            out += "\"NaN\"";
        } else if (std::isinf(v)) {
            out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        } else {
            char buf[64];  // enough digits that the receiver gets the very same value
            std::snprintf(buf, sizeof buf, "%.*Lg", std::numeric_limits<T>::max_digits10,
                          static_cast<long double>(v));
            out += buf;
        }
    }
    static T get(Reader &r) {
        if (r.at('"')) {
            std::string s = r.string();
            // NaN is refused: a test's `abs(got - want) > tol` never rejects it, so it would
            // pass any tolerance check (red team; docs/integrity.md)
            if (s == "NaN") throw Malformed("NaN is not an answer a tolerance check can judge");
            if (s == "Infinity") return std::numeric_limits<T>::infinity();
            if (s == "-Infinity") return -std::numeric_limits<T>::infinity();
            throw Malformed("expected a number");
        }
        std::string t = r.number();
        char *stop = nullptr;
        T v = convert(t.c_str(), &stop);
        if (stop != t.c_str() + t.size()) throw Malformed("expected a number");
        return v;
    }
    static T convert(const char *s, char **stop) {
        if (std::is_same<T, float>::value) return static_cast<T>(std::strtof(s, stop));
        if (std::is_same<T, double>::value) return static_cast<T>(std::strtod(s, stop));
        return static_cast<T>(std::strtold(s, stop));
    }
};

template <>
struct Codec<std::string> {
    static void put(std::string &out, const std::string &v) { put_string(out, v.data(), v.size()); }
    static std::string get(Reader &r) { return r.string(); }
};

// C strings only travel inside dynamic values (MultiPL-E puts "abc" in a std::any).
template <>
struct Codec<const char *> {
    static void put(std::string &out, const char *v) {
        if (v == nullptr) throw Malformed("a null C string");
        put_string(out, v, std::strlen(v));
    }
    static const char *get(Reader &r) {
        // kept for the process's life, as a literal would be
        return (new std::string(r.string()))->c_str();
    }
};

// -- containers, recognised by their members ------------------------------------------------

template <class...>
using void_t = void;

template <class T, class = void>
struct is_map : std::false_type {};
template <class T>
struct is_map<T, void_t<typename T::key_type, typename T::mapped_type>> : std::true_type {};

template <class T, class = void>
struct is_set : std::false_type {};
template <class T>
struct is_set<T, void_t<typename T::key_type, decltype(std::declval<T &>().insert(
                                                   std::declval<typename T::key_type>()))>>
    : std::integral_constant<bool, !is_map<T>::value> {};

template <class T, class = void>
struct is_sequence : std::false_type {};  // vector, list, deque
template <class T>
struct is_sequence<T, void_t<typename T::value_type, typename T::allocator_type,
                             decltype(std::declval<T &>().push_back(
                                 std::declval<typename T::value_type>()))>>
    : std::integral_constant<bool, !std::is_same<T, std::string>::value> {};

template <class T, class = void>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<T, void_t<typename T::value_type, decltype(std::declval<T &>().has_value()),
                             decltype(std::declval<T &>().reset()), decltype(*std::declval<T &>())>>
    : std::true_type {};

template <class T, class = void>
struct is_any : std::false_type {};  // std::any, boost::any
template <class T>
struct is_any<T, std::enable_if_t<std::is_same<decltype(std::declval<const T &>().type()),
                                               const std::type_info &>::value>> : std::true_type {};

template <class C>
void put_items(std::string &out, const C &items) {
    out += '[';
    bool first = true;
    for (const auto &x : items) {
        if (!first) out += ',';
        first = false;
        put<typename C::value_type>(out, x);
    }
    out += ']';
}

template <class T>
struct Codec<T, std::enable_if_t<is_sequence<T>::value>> {
    static void put(std::string &out, const T &v) { put_items(out, v); }
    static T get(Reader &r) {
        T out;
        r.expect('[');
        if (r.take(']')) return out;
        do out.push_back(vibes::get<typename T::value_type>(r));
        while (r.take(','));
        r.expect(']');
        return out;
    }
};

template <class T>
struct Codec<T, std::enable_if_t<is_set<T>::value>> {
    static void put(std::string &out, const T &v) { put_items(out, v); }
    static T get(Reader &r) {
        T out;
        r.expect('[');
        if (r.take(']')) return out;
        do out.insert(vibes::get<typename T::key_type>(r));
        while (r.take(','));
        r.expect(']');
        return out;
    }
};

// maps: [[key, value], ...] (keys of any type)
template <class T>
struct Codec<T, std::enable_if_t<is_map<T>::value>> {
    using K = typename T::key_type;
    using V = typename T::mapped_type;
    static void put(std::string &out, const T &v) {
        out += '[';
        bool first = true;
        for (const auto &kv : v) {
            if (!first) out += ',';
            first = false;
            out += '[';
            vibes::put<K>(out, kv.first);
            out += ',';
            vibes::put<V>(out, kv.second);
            out += ']';
        }
        out += ']';
    }
    static T get(Reader &r) {
        T out;
        r.expect('[');
        if (r.take(']')) return out;
        do {
            r.expect('[');
            K k = vibes::get<K>(r);
            r.expect(',');
            V v = vibes::get<V>(r);
            r.expect(']');
            out.emplace(std::move(k), std::move(v));
        } while (r.take(','));
        r.expect(']');
        return out;
    }
};

template <class A, class B>
struct Codec<std::pair<A, B>> {
    static void put(std::string &out, const std::pair<A, B> &v) {
        out += '[';
        vibes::put<A>(out, v.first);
        out += ',';
        vibes::put<B>(out, v.second);
        out += ']';
    }
    static std::pair<A, B> get(Reader &r) {
        r.expect('[');
        A a = vibes::get<A>(r);
        r.expect(',');
        B b = vibes::get<B>(r);
        r.expect(']');
        return std::pair<A, B>(std::move(a), std::move(b));
    }
};

template <class... T>
struct Codec<std::tuple<T...>> {
    static void put(std::string &out, const std::tuple<T...> &v) {
        out += '[';
        put_each(out, v, std::index_sequence_for<T...>());
        out += ']';
    }
    template <std::size_t... I>
    static void put_each(std::string &out, const std::tuple<T...> &v, std::index_sequence<I...>) {
        ((out += (I ? "," : ""), vibes::put<T>(out, std::get<I>(v))), ...);
    }
    static std::tuple<T...> get(Reader &r) {
        r.expect('[');
        std::tuple<T...> out = get_each(r, std::index_sequence_for<T...>());
        r.expect(']');
        return out;
    }
    template <std::size_t... I>
    static std::tuple<T...> get_each(Reader &r, std::index_sequence<I...>) {
        // braced: its elements are read in order
        return std::tuple<T...>{item<I, T>(r)...};
    }
    template <std::size_t I, class U>
    static U item(Reader &r) {
        if (I > 0) r.expect(',');
        return vibes::get<U>(r);
    }
};

template <class T>
struct Codec<T, std::enable_if_t<is_optional<T>::value && !is_any<T>::value>> {
    using V = typename T::value_type;
    static void put(std::string &out, const T &v) {
        if (v.has_value()) {
            vibes::put<V>(out, *v);
        } else {
            out += "null";
        }
    }
    static T get(Reader &r) {
        if (r.word("null")) return T();
        return T(vibes::get<V>(r));
    }
};

// -- dynamic values (std::any, boost::any): {"$t": "<type>", "v": <value>} ------------------

template <class T>
struct Named;
#define VIBES_NAMED(N, ...)                              \
    template <>                                          \
    struct Named<__VA_ARGS__> {                          \
        static constexpr const char *name = N;           \
    };
VIBES_NAMED("bool", bool)
VIBES_NAMED("char", char)
VIBES_NAMED("schar", signed char)
VIBES_NAMED("uchar", unsigned char)
VIBES_NAMED("short", short)
VIBES_NAMED("ushort", unsigned short)
VIBES_NAMED("int", int)
VIBES_NAMED("uint", unsigned)
VIBES_NAMED("long", long)
VIBES_NAMED("ulong", unsigned long)
VIBES_NAMED("llong", long long)
VIBES_NAMED("ullong", unsigned long long)
VIBES_NAMED("float", float)
VIBES_NAMED("double", double)
VIBES_NAMED("ldouble", long double)
VIBES_NAMED("string", std::string)
VIBES_NAMED("cstr", const char *)
VIBES_NAMED("vector<int>", std::vector<int>)
VIBES_NAMED("vector<long>", std::vector<long>)
VIBES_NAMED("vector<llong>", std::vector<long long>)
VIBES_NAMED("vector<float>", std::vector<float>)
VIBES_NAMED("vector<double>", std::vector<double>)
VIBES_NAMED("vector<string>", std::vector<std::string>)
VIBES_NAMED("map<int,int>", std::map<int, int>)
VIBES_NAMED("map<long,long>", std::map<long, long>)
VIBES_NAMED("map<string,int>", std::map<std::string, int>)
VIBES_NAMED("map<string,long>", std::map<std::string, long>)
#undef VIBES_NAMED

using Dynamic = std::tuple<bool, char, signed char, unsigned char, short, unsigned short, int,
                           unsigned, long, unsigned long, long long, unsigned long long, float,
                           double, long double, std::string, const char *, std::vector<int>,
                           std::vector<long>, std::vector<long long>, std::vector<float>,
                           std::vector<double>, std::vector<std::string>, std::map<int, int>,
                           std::map<long, long>, std::map<std::string, int>,
                           std::map<std::string, long>>;

// Makes `any_cast<T>(&a)` a template-id here, so that it finds std::any_cast or
// boost::any_cast by argument-dependent lookup without naming either.
struct adl_tag {};
template <class T>
void any_cast(adl_tag);

template <class A>
auto is_empty(const A &a, int) -> decltype(a.empty()) {
    return a.empty();
}
template <class A>
bool is_empty(const A &a, long) {
    return !a.has_value();
}

template <class A, class T>
bool put_as(std::string &out, const A &a) {
    if (a.type() != typeid(T)) return false;
    out += "{\"$t\":\"";
    out += Named<T>::name;
    out += "\",\"v\":";
    vibes::put<T>(out, *any_cast<T>(&a));
    out += '}';
    return true;
}

template <class A, class T>
bool get_as(Reader &r, const std::string &tag, A &out) {
    if (tag != Named<T>::name) return false;
    out = A(vibes::get<T>(r));
    return true;
}

template <class A, class... T>
void put_dynamic(std::string &out, const A &a, std::tuple<T...> *) {
    if (is_empty(a, 0)) {
        out += "{\"$t\":\"none\"}";
        return;
    }
    if (!(put_as<A, T>(out, a) || ...))
        throw Malformed(std::string("a dynamic value of a type the wire cannot carry: ") +
                        a.type().name());
}

template <class A, class... T>
A get_dynamic(Reader &r, std::tuple<T...> *) {
    r.expect('{');
    if (r.string() != "$t") throw Malformed("expected a tagged value");
    r.expect(':');
    std::string tag = r.string();
    A out;
    if (tag != "none") {
        r.expect(',');
        if (r.string() != "v") throw Malformed("expected a tagged value");
        r.expect(':');
        if (!(get_as<A, T>(r, tag, out) || ...)) throw Malformed("an unknown type tag");
    }
    r.expect('}');
    return out;
}

template <class T>
struct Codec<T, std::enable_if_t<is_any<T>::value>> {
    static void put(std::string &out, const T &v) {
        put_dynamic(out, v, static_cast<Dynamic *>(nullptr));
    }
    static T get(Reader &r) { return get_dynamic<T>(r, static_cast<Dynamic *>(nullptr)); }
};

// -- the two ends ------------------------------------------------------------------------------

template <class F>
struct Entry;
template <class R, class... P>
struct Entry<R(P...)> {
    using result = R;
    using args = std::tuple<std::decay_t<P>...>;
};

template <class R>
R decode_result(const std::string &json) {
    Reader r{json.data(), json.data() + json.size()};
    R out = vibes::get<R>(r);
    r.done();
    return out;
}

template <>
inline void decode_result<void>(const std::string &json) {
    Reader r{json.data(), json.data() + json.size()};
    if (!r.word("null")) throw Malformed("expected null");
    r.done();
}

std::string printable(const std::string &text);  // for a message: no control bytes, short

template <class... P, class... A>
void encode_args(std::string &out, std::tuple<P...> *, const A &...a) {
    static_assert(sizeof...(P) == sizeof...(A), "one argument per parameter");
    std::size_t n = 0;
    ((out += (n++ ? "," : ""), vibes::put<P>(out, a)), ...);
}

inline std::string raised_text(const std::string &json) {
    Reader r{json.data(), json.data() + json.size()};
    std::string what = r.string();
    r.done();
    return printable(what);
}

// The test side: the stub's body. Sends the arguments as the declared parameter types and
// returns the answer decoded as the declared result type. Whatever the channel brings
// that is not such an answer ends the test program (exit 3, never 0, and nothing a test's
// `catch` could swallow); the candidate's `raise` is raised here as `Raised`.
template <class F, class... A>
typename Entry<F>::result call(const A &...a) {
    using R = typename Entry<F>::result;
    std::string frame = "call [";
    try {
        encode_args(frame, static_cast<typename Entry<F>::args *>(nullptr), a...);
    } catch (const std::exception &e) {
        fatal(std::string("the test's arguments cannot be sent: ") + e.what());
    }
    frame += ']';
    // A candidate that already ended may still have answered: read what it wrote either
    // way, so that the verdict does not depend on which of the two came first.
    write_frame(frame);
    std::string answer, what;
    try {
        if (!read_frame(answer)) fatal("the candidate ended without answering (its output closed)");
        if (answer.compare(0, 4, "ret ") == 0) return decode_result<R>(answer.substr(4));
        if (answer.compare(0, 6, "raise ") != 0) throw Malformed("not an answer");
        what = raised_text(answer.substr(6));
    } catch (const std::exception &e) {
        fatal(std::string("the candidate's answer is malformed: ") + e.what());
    } catch (...) {
        fatal("the candidate's answer is malformed");
    }
    throw Raised(what);
}

inline std::string raise_frame(const char *what) {
    std::string text = what != nullptr ? what : "";
    if (text.size() > 4096) text.resize(4096);
    std::string out = "raise ";
    put_string(out, text.data(), text.size());
    return out;
}

template <class F>
std::string answer_call(F *entry, const std::string &frame) {
    using Args = typename Entry<F>::args;
    using R = typename Entry<F>::result;
    std::string out;
    try {
        if (frame.compare(0, 5, "call ") != 0) throw Malformed("not a call");
        Reader r{frame.data() + 5, frame.data() + frame.size()};
        Args args = vibes::get<Args>(r);
        r.done();
        if constexpr (std::is_void<R>::value) {
            std::apply(entry, std::move(args));
            out = "ret null";
        } else {
            R result = std::apply(entry, std::move(args));
            out = "ret ";
            vibes::put<R>(out, result);
        }
    } catch (const std::exception &e) {
        return raise_frame(e.what());
    } catch (...) {
        return raise_frame("an exception that is not a std::exception");
    }
    return out;
}

// The candidate side: the server's `main`. Answers calls until its input ends.
template <class F>
int serve(F *entry) {
    open_channel();
    std::string frame;
    while (read_frame(frame)) {
        if (!write_frame(answer_call<F>(entry, frame))) break;
    }
    return 0;
}

}  // namespace vibes
