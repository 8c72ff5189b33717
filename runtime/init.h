/* runtime/init: being written */
