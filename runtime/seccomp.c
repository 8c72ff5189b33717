/* runtime/seccomp: being written */
