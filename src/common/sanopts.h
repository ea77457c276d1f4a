/* sanopts.h: AddressSanitizer's options for a program that runs native code
 * it does not trust under a seccomp filter and a restricted view of the
 * files (the recorder, ka-goldbox), under `make san`: a crash of that code
 * must stay a signal (the verdict or the evidence names it), and the
 * sanitizer may not ptrace (leak checking), start threads or open files
 * there. Include it in the program's main file only: it defines the hook. */
#ifndef KA_SANOPTS_H
#define KA_SANOPTS_H

#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0:"
	       "detect_leaks=0";
}
#endif

#endif
