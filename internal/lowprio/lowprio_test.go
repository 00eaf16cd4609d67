package lowprio

import (
	"runtime"
	"strings"
	"testing"
)

// TestRunLowersItsOwnThreadOnly: f runs on a thread at the idle class (on Linux), and the
// caller's thread, and every thread after, is as it was.
func TestRunLowersItsOwnThreadOnly(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var inside bool
	var err error
	lowered := Run(func() { inside, err = idle() })
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && (!lowered || !inside) {
		t.Fatalf("lowered %v, idle inside %v: want both on Linux", lowered, inside)
	}
	if outside, err := idle(); err != nil || outside {
		t.Fatalf("the caller's thread is idle afterwards (%v, %v)", outside, err)
	}
	// The lowered thread ended with its goroutine: later goroutines never run on it.
	for range 20 {
		done := make(chan bool)
		go func() {
			got, _ := idle()
			done <- got
		}()
		if <-done {
			t.Fatal("a later goroutine ran on an idle thread")
		}
	}
}

// TestRunRaisesPanicsInTheCaller: a panic in f reaches the caller, with f's stack.
func TestRunRaisesPanicsInTheCaller(t *testing.T) {
	defer func() {
		v := recover()
		if s, ok := v.(string); !ok || !strings.Contains(s, "boom") || !strings.Contains(s, "lowprio") {
			t.Fatalf("recovered %v", v)
		}
	}()
	Run(func() { panic("boom") })
	t.Fatal("Run returned")
}
