/* src/opts: being written */
