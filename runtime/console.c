/* runtime/console: being written */
