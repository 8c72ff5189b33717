/* tests/unit/test-signals: being written */
