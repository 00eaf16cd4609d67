//go:build !linux

package lowprio

import "errors"

// lower does nothing where the operating system offers no idle class to a thread.
func lower() error { return errors.New("lowprio: no idle scheduling class on this system") }

// idle reports false (for tests).
func idle() (bool, error) { return false, nil }
