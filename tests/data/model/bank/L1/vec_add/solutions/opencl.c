/* vec_add: verified OpenCL solution (test fixture) */
static const char *ka_cl_source = "__kernel void vec_add() {}";
