/* tests/fuzz/fuzz-spec: being written */
