/* runtime/state: being written */
