/* runtime/cgroup: being written */
