/* runtime/namespaces: being written */
