// expect: forbidden
// Includes a file by absolute path.
#include "/etc/passwd"
#include "ka_kernel.h"
