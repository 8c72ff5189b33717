/* runtime/mounts: being written */
