/* tests/unit/test-mount-opts: being written */
