/* runtime/hooks: being written */
