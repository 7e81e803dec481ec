// The channel of both programs: frames are lines starting with "\x02V " on the pipes
// core.pair connects (the test's stdout to the candidate's stdin and back). Compiled once,
// apart from any program, so that <unistd.h> never enters a sample's unit.
#include "vibes_wire.h"

#include <algorithm>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

namespace vibes {
namespace {

const char MARK[] = "\x02V ";
const std::size_t MARK_LEN = 3;
int wire_in = 0;
int wire_out = 1;
char buf[1 << 16];
std::size_t pos = 0, len = 0;
bool ended = false;

bool fill() {
    if (ended) return false;
    ssize_t n;
    do n = ::read(wire_in, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        ended = true;
        return false;
    }
    pos = 0;
    len = std::size_t(n);
    return true;
}

bool write_all(int fd, const char *p, std::size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= std::size_t(w);
    }
    return true;
}

}  // namespace

void open_channel() {
    // A closed pipe is an answer (the other side ended), not a signal that kills.
    ::signal(SIGPIPE, SIG_IGN);
    // Frames get stdout to themselves: whatever the program prints goes to stderr.
    wire_out = ::dup(1);
    if (wire_out < 0 || ::dup2(2, 1) < 0) fatal("cannot set up the channel");
    // And stdin: a program's own reads find nothing (the sample's, or a test's).
    wire_in = ::dup(0);
    int null = ::open("/dev/null", O_RDONLY);
    if (wire_in < 0 || null < 0 || ::dup2(null, 0) < 0) fatal("cannot set up the channel");
    ::close(null);
}

bool read_frame(std::string &frame) {
    // Lines that do not start with the marker are skipped as they come (never kept, so
    // endless stray output costs no memory); a frame longer than MAX_FRAME is refused.
    for (;;) {
        frame.clear();
        std::size_t seen = 0;  // bytes of this line so far
        bool keep = true;
        for (;;) {
            if (pos == len && !fill()) return false;  // EOF: a partial line is no frame
            const char *start = buf + pos;
            const char *nl = static_cast<const char *>(memchr(start, '\n', len - pos));
            std::size_t n = nl != nullptr ? std::size_t(nl - start) : len - pos;
            for (std::size_t i = 0; keep && i < n && seen + i < MARK_LEN; ++i)
                keep = start[i] == MARK[seen + i];
            if (keep) {
                std::size_t skip = seen < MARK_LEN ? std::min(n, MARK_LEN - seen) : 0;
                if (frame.size() + (n - skip) > MAX_FRAME) throw Malformed("a frame over 64 MiB");
                frame.append(start + skip, n - skip);
            }
            seen += n;
            pos += n + (nl != nullptr ? 1 : 0);
            if (nl != nullptr) break;
        }
        if (keep && seen >= MARK_LEN) return true;
    }
}

bool write_frame(const std::string &frame) {
    std::string line;
    line.reserve(frame.size() + 5);
    line += '\n';  // ends a line of stray output the frame would otherwise continue
    line += MARK;
    line += frame;
    line += '\n';
    return write_all(wire_out, line.data(), line.size());
}

std::string printable(const std::string &text) {
    std::string out;
    for (char c : text) {
        if (out.size() >= 300) break;
        unsigned char u = static_cast<unsigned char>(c);
        out += (u < 0x20 || u == 0x7f) ? ' ' : c;
    }
    return out;
}

void say(const std::string &line) {
    std::string text = "vibes: " + line + "\n";
    write_all(2, text.data(), text.size());
}

void fatal(const std::string &why) {
    say(why);
    ::_exit(3);
}

}  // namespace vibes
