// expect: forbidden
// Includes a file outside its directory.
/* a comment */ #include "../x.h"
#include "ka_kernel.h"
