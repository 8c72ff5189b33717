/* src/verb_query: being written */
