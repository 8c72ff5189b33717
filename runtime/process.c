/* runtime/process: being written */
