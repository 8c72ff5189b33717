/* tests/unit/test-spec: being written */
