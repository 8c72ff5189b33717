/* runtime/exec: being written */
