/* Terminals: a pty made inside the container, its master sent to whoever
 * listens on the console socket (conmon, or umwelt-run itself for run -t). */
#ifndef UMW_CONSOLE_H
#define UMW_CONSOLE_H

struct spec_process;
struct umw_error;

/* Connects to the console socket at path (AF_UNIX, SOCK_STREAM). */
int console_socket_connect(const char *path, int *out, struct umw_error **err);
/* In the container, after /dev/pts exists: opens a pty pair, sets the window
 * size from p, makes the slave the controlling terminal and stdin/out/err,
 * sends the master over sock (SCM_RIGHTS, with a one-byte payload) and closes
 * the local master. */
int console_setup_pty(int sock, const struct spec_process *p, struct umw_error **err);
int console_send_fd(int sock, int fd, struct umw_error **err);
int console_recv_fd(int sock, int *fd, struct umw_error **err);

#endif
