/* runtime/spec: being written */
