package lowprio

import "golang.org/x/sys/unix"

// lower sets the calling thread's policy to SCHED_IDLE, which any unprivileged thread may do.
func lower() error {
	return unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0)
}

// idle reports whether the calling thread runs under SCHED_IDLE (for tests).
func idle() (bool, error) {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return false, err
	}
	return a.Policy == unix.SCHED_IDLE, nil
}
