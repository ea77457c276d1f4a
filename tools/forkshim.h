/* forkshim.h: the protocol between a fork server (ka-forkshim.so, preloaded
 * into cicc or cudafe++) and its clients (ka-cudaphases), both trusted ka
 * code (docs/compile.md, section 7). One request per connection on the
 * server's Unix socket: a struct forkshim_req with three descriptors
 * (SCM_RIGHTS: the step's working folder, its input file, its log); the
 * server answers with one struct forkshim_rep: REFUSED (the client runs
 * the step itself), or DONE once the forked child ended. Closing the
 * connection early kills the child. */
#ifndef KA_FORKSHIM_H
#define KA_FORKSHIM_H

#include <stdint.h>

#define FORKSHIM_MAGIC 0x6b61666bu /* "kafk" */
#define FORKSHIM_VERSION 1

/* The environment of a server: the input path as the tool opens it, and the
 * name of the socket to listen on (in the tool's working folder). */
#define FORKSHIM_ENV_INPUT "KA_FORK_INPUT"
#define FORKSHIM_ENV_SOCK "KA_FORK_SOCK"

/* The early stub (docs/compile.md, section 7.5): the file, as the tool
 * names it, that a cicc writes the host code's stub into. Once the tool's
 * front end has ended (it removes its temporary ".lgenfe.bc" file) the
 * shim flushes that file and creates FILE.ready, so that the host compile
 * can start while cicc still optimises the device code. */
#define FORKSHIM_ENV_STUB "KA_FORK_STUB"
#define FORKSHIM_READY_SUFFIX ".ready"

struct forkshim_req {
	uint32_t magic, version;
	uint64_t as_cap;		     /* RLIMIT_AS of the step (soft = hard) */
	uint64_t cpu_cur, cpu_max;	     /* the client's RLIMIT_CPU */
	uint64_t fsize_cur, fsize_max;	     /* and RLIMIT_FSIZE */
	uint64_t exe_dev, exe_ino, exe_size; /* the program the step would run */
	int64_t exe_mtime_s, exe_mtime_ns;
};

enum forkshim_kind { FORKSHIM_REFUSED = 1, FORKSHIM_DONE = 2 };

/* Why a request was refused. */
enum forkshim_why {
	FORKSHIM_BAD_REQUEST = 1, /* malformed, or not three descriptors */
	FORKSHIM_OTHER_PROGRAM,	  /* the step's program is not the server's file */
	FORKSHIM_PREFIX,	  /* the input does not start with the server's prefix */
	FORKSHIM_MEMORY,	  /* the server's peak address space exceeds as_cap */
	FORKSHIM_BUSY,		  /* too many children running */
	FORKSHIM_FORK		  /* fork failed */
};

struct forkshim_rep {
	uint32_t magic;
	int32_t kind;	 /* enum forkshim_kind */
	int32_t why;	 /* REFUSED: enum forkshim_why */
	int32_t status;	 /* DONE: the child's wait status */
	uint64_t cpu_us; /* DONE: its user + system CPU time */
	uint64_t rss_kb; /* DONE: its peak resident memory */
};

#endif
