/* runtime/container: being written */
