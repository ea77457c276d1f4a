/* softmax: OpenCL only (test fixture) */
