package slurm

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeSlurm is a Runner that answers the read commands with recorded outputs and records
// every command; commands listed in fail fail.
type fakeSlurm struct {
	mu      sync.Mutex
	outputs map[string][]byte
	fail    map[string]error
	calls   []string
}

func newFakeSlurm(t *testing.T, squeue string) *fakeSlurm {
	t.Helper()
	return &fakeSlurm{
		outputs: map[string][]byte{
			"squeue --all --json":                      readFixture(t, squeue),
			"sinfo --all --json":                       readFixture(t, "sinfo.json"),
			"scontrol --all --oneliner show partition": readFixture(t, "partitions.txt"),
		},
		fail: map[string]error{},
	}
}

func (f *fakeSlurm) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	line := commandLine(filepath.Base(name), args)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, line)
	for prefix, err := range f.fail {
		if strings.HasPrefix(line, prefix) {
			return nil, &CommandError{Command: line, Err: err, Stderr: "fake failure"}
		}
	}
	if out, ok := f.outputs[line]; ok {
		return out, nil
	}
	if isRead(line) {
		return nil, errors.New("fakeSlurm: no recorded output for " + line)
	}
	return nil, nil
}

func (f *fakeSlurm) setFail(prefix string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.fail, prefix)
	} else {
		f.fail[prefix] = err
	}
}

func (f *fakeSlurm) setOutput(line string, out []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outputs[line] = out
}

// actions returns and forgets the commands that are not reads.
func (f *fakeSlurm) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if isRead(c) {
			continue
		}
		out = append(out, c)
	}
	f.calls = nil
	return out
}

func isRead(line string) bool {
	return strings.HasPrefix(line, "squeue") || strings.HasPrefix(line, "sinfo") || strings.HasPrefix(line, "scontrol --all --oneliner show")
}
