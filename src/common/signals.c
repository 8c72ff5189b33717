/* src/common/signals: being written */
