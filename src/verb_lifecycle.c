/* src/verb_lifecycle: being written */
