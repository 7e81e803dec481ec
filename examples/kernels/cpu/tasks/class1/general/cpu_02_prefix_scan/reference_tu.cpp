// The expert reference, its entry point renamed so it links next to the solution.
#include "api.h"
#define inclusive_scan inclusive_scan_ref
#include "reference.h"
