// The expert reference, its entry point renamed so it links next to the solution.
#include "api.h"
#define vector_add vector_add_ref
#include "reference.h"
