/* The gateway's own walls (DESIGN.md, "The gateway's privilege
 * separation"): no_new_privs and a seccomp filter for each of its two
 * confined processes, installed once that process has opened everything
 * it will ever use.
 *
 * The signer (tls_signer.h) holds the umwelt CA's key and may only read and
 * write its socket (and write stderr), allocate memory, draw random numbers, read the clock
 * and exit; anything else kills it.
 *
 * The engine parses the sandbox's bytes. It may serve its sockets, make
 * INET and INET6 sockets (the upstream dials, the resolver's DNS), start
 * threads (the resolver's) and stat files (glibc's resolver checks whether
 * /etc/resolv.conf changed); opening any file by name fails with EPERM (a
 * library probing a file finds none and goes on), as does every other
 * system call not listed; execve, ptrace, mount, namespaces, bpf, module
 * loading and the like kill it.
 *
 * In a build with AddressSanitizer both also allow what LeakSanitizer does
 * at exit (a tracer thread that ptraces its siblings, reading
 * /proc/self/maps and /proc/self/task opened with exactly the flags it
 * uses): a test build's concession, absent from a release build. */
#ifndef UMW_NETNS_GATEWAY_CONFINE_H
#define UMW_NETNS_GATEWAY_CONFINE_H

struct umw_error;

/* sock: the signer's socket, the only fd it may read or write (with stderr). */
int gateway_confine_signer(int sock, struct umw_error **err);
int gateway_confine_engine(struct umw_error **err);

#endif
