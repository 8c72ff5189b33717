/* tests/unit/test-json: being written */
