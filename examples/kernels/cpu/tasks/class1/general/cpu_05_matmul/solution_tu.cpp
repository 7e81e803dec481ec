// The solution, compiled on its own: the harness never includes it.
#include "api.h"
#include "solution.h"
