/* src/verb_exec: being written */
