// Package lowprio runs work at the operating system's lowest scheduling priority, so that the
// kernel hands the CPU to any other thread of the machine the moment it wakes up.
//
// A Go program cannot give a goroutine a priority: the runtime moves goroutines between
// threads at will. Run therefore starts a goroutine, locks it to its thread, lowers that
// thread (Linux: SCHED_IDLE; elsewhere nothing) and never unlocks it: when the goroutine
// ends, the runtime ends the thread with it, so the lowered thread never runs anything else.
// (Raising a thread's priority again needs a privilege a server should not need.)
package lowprio

import (
	"fmt"
	"runtime"
)

// Run calls f on a thread of its own at the lowest priority and returns when f returns. A
// panic in f is raised again in the caller's goroutine. It returns whether the thread's
// priority could be lowered (f runs either way).
func Run(f func()) (lowered bool) {
	type result struct {
		lowered bool
		panicV  any
		stack   []byte
	}
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine.
		runtime.LockOSThread()
		r := result{lowered: lower() == nil}
		defer func() {
			if v := recover(); v != nil {
				r.panicV = v
				buf := make([]byte, 16<<10)
				r.stack = buf[:runtime.Stack(buf, false)]
			}
			done <- r
		}()
		f()
	}()
	r := <-done
	if r.panicV != nil {
		panic(fmt.Sprintf("%v\n\n(in lowprio.Run, on its own thread:)\n%s", r.panicV, r.stack))
	}
	return r.lowered
}

// Idle reports whether the calling goroutine's thread runs at the idle priority (false where
// the operating system has none). Call it from a goroutine locked to its thread, or from f in
// Run, for a meaningful answer.
func Idle() (bool, error) { return idle() }
