// The expert reference, its entry point renamed so it links next to the solution.
#include "api.h"
#define histogram histogram_ref
#include "reference.h"
