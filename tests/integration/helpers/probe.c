/* tests/integration/helpers/probe: being written */
