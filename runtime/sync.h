/* runtime/sync: being written */
