/* src/umwelt-run: being written */
