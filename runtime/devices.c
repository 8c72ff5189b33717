/* runtime/devices: being written */
