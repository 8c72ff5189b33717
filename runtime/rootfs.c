/* runtime/rootfs: being written */
