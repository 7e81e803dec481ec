// The test program's `main` (trusted; compiled once): runs the task's test `main`
// (renamed vibes_test_main) and prints the done marker, last on stderr, only after it
// returned 0. Nothing a sample wrote is in this process.
#include <cstdio>
#include <iostream>

#include "vibes_wire.h"

#include <unistd.h>

int vibes_test_main();

namespace {

[[noreturn]] void end(int code) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
}

}  // namespace

int main() {
    vibes::open_channel();
    int rc = 1;
    try {
        rc = vibes_test_main();
    } catch (const vibes::Raised &e) {
        vibes::say(std::string("the candidate raised: ") + e.what());
        end(1);
    } catch (const std::exception &e) {
        vibes::say("the test raised: " + vibes::printable(e.what()));
        end(1);
    } catch (...) {
        vibes::say("the test raised an exception that is not a std::exception");
        end(1);
    }
    if (rc != 0) end(rc & 0xff ? rc : 1);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    static const char done[] = "\nvibes-tests: done\n";  // base.DONE_MARKER
    if (::write(2, done, sizeof done - 1) != ssize_t(sizeof done - 1)) ::_exit(4);
    ::_exit(0);
}
