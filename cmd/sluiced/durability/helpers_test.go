package durability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testnet"
)

var (
	mode       = os.Getenv("SLUICE_DURABILITY")
	sluicedBin string
)

func TestMain(m *testing.M) {
	if mode != "" {
		dir, err := os.MkdirTemp("", "sluiced-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sluicedBin = filepath.Join(dir, "sluiced")
		out, err := exec.Command("go", "build", "-o", sluicedBin, "github.com/sluice-sched/sluice/cmd/sluiced").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building sluiced: %v\n%s", err, out)
			os.Exit(1)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// need skips the test unless SLUICE_DURABILITY is set.
func need(t *testing.T) {
	t.Helper()
	if mode == "" {
		t.Skip("set SLUICE_DURABILITY=short or full to run (make durability-short, make test-durability)")
	}
}

// full reports whether the long versions run.
func full() bool { return mode == "full" }

// report logs a measurement and appends it to $SLUICE_DURABILITY_REPORT.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf("%s: %s", t.Name(), fmt.Sprintf(format, args...))
	t.Log(line)
	if p := os.Getenv("SLUICE_DURABILITY_REPORT"); p != "" {
		if f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

// proc is one sluiced process.
type proc struct {
	t           *testing.T
	name        string
	grpc, admin string
	args        []string
	// wrap runs sluiced through another command (nsenter), when set.
	wrap    []string
	logPath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// newProc describes a sluiced listening on fresh loopback ports, with these extra flags.
func newProc(t *testing.T, name string, extra ...string) *proc {
	t.Helper()
	addrs := testnet.FreeAddrs(t, 2)
	return newProcAt(t, name, addrs[0], addrs[1], extra...)
}

// newProcAt describes a sluiced listening on these gRPC and admin addresses, with these
// extra flags. Tests that start several processes take all their addresses from one
// testnet.FreeAddrs call, so that no two are the same.
func newProcAt(t *testing.T, name, grpc, admin string, extra ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, grpc: grpc, admin: admin, logPath: filepath.Join(t.TempDir(), name+".log")}
	p.args = append([]string{"--listen", p.grpc, "--admin-listen", p.admin, "--log-level", "warn", "--rate-limit", "0"}, extra...)
	t.Cleanup(func() {
		p.kill9()
		if t.Failed() {
			p.dumpLog(40)
		}
	})
	return p
}

// start starts the process (again).
func (p *proc) start() {
	p.t.Helper()
	argv := append(append([]string{}, p.wrap...), sluicedBin)
	argv = append(argv, p.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	f, err := os.OpenFile(p.logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("starting %s: %v", p.name, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(exited)
	}()
}

// kill9 kills the process with SIGKILL and waits for it.
func (p *proc) kill9() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop sends SIGTERM and waits for the exit.
func (p *proc) stop() error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		p.kill9()
		return fmt.Errorf("%s did not stop within 30s", p.name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// waitExit waits for the process to exit by itself and returns its error.
func (p *proc) waitExit(d time.Duration) error {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	select {
	case <-exited:
	case <-time.After(d):
		return fmt.Errorf("%s still running after %s", p.name, d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return fmt.Errorf("%s exited 0", p.name)
	}
	return p.err
}

func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// pid returns the sluiced pid (the wrapper's child when wrapped: nsenter execs, so the same).
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// rssKiB returns the process's resident set size.
func (p *proc) rssKiB() int64 { return p.memKiB("VmRSS") }

// memKiB returns a size from /proc/PID/status: VmRSS, RssAnon (the heap and stacks), RssFile
// (mapped files: the bolt log is one), in KiB.
func (p *proc) memKiB(field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	return -1
}

func (p *proc) dumpLog(lines int) {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return
	}
	all := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	p.t.Logf("last lines of %s's log:\n%s", p.name, strings.Join(all, "\n"))
}

func (p *proc) logText() string {
	data, _ := os.ReadFile(p.logPath)
	return string(data)
}

// raftStatus is what /raft answers.
type raftStatus struct {
	NodeID        string `json:"node_id"`
	State         string `json:"state"`
	Ready         bool   `json:"ready"`
	LeaderID      string `json:"leader_id"`
	Term          uint64 `json:"term"`
	FirstIndex    uint64 `json:"first_index"`
	LastIndex     uint64 `json:"last_index"`
	SnapshotIndex uint64 `json:"snapshot_index"`
	CommitIndex   uint64 `json:"commit_index"`
	AppliedIndex  uint64 `json:"applied_index"`
	StorageError  string `json:"storage_error"`
}

var httpc = &http.Client{Timeout: 2 * time.Second}

func (p *proc) raft() (raftStatus, error) {
	var st raftStatus
	resp, err := httpc.Get("http://" + p.admin + "/raft")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// ready reports whether /readyz answers 200.
func (p *proc) ready() bool {
	resp, err := httpc.Get("http://" + p.admin + "/readyz")
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// leads reports whether the process is a leader that caught up.
func (p *proc) leads() bool {
	st, err := p.raft()
	return err == nil && st.State == "Leader" && st.Ready
}

// waitFor polls cond every 10ms until it holds or d passes, and returns how long it took.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func dial(t *testing.T, addr string, opts ...sluice.Option) *sluice.Client {
	t.Helper()
	c, err := sluice.Dial(addr, append([]sluice.Option{sluice.WithInsecure()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func node(name string) *sluicev1.Delta {
	return sluice.UpsertNode(&sluicev1.Node{Name: name, Allocatable: map[string]string{"cpu": "64", "memory": "256Gi", "pods": "500"}})
}

func job(name string) *sluicev1.Delta {
	one := int32(1)
	return sluice.UpsertJob(&sluicev1.Job{Name: name, Queue: "default", MinAvailable: &one})
}

func task(name, jobName string, status sluicev1.TaskStatus) *sluicev1.Delta {
	return sluice.UpsertTask(&sluicev1.Task{Name: name, Job: jobName, Status: status,
		Resources: map[string]string{"cpu": "100m", "memory": "64Mi"}})
}

// listAll lists every node, task and job of a cluster (waiting up to 30s for the server).
func listAll(ctx context.Context, c *sluice.Client, cluster string) (nodes map[string]bool, tasks map[string]*sluicev1.Task, jobs map[string]bool, err error) {
	return listAllRead(ctx, c, cluster, nil)
}

// listAllRead is listAll with read options.
func listAllRead(ctx context.Context, c *sluice.Client, cluster string, ro *sluicev1.ReadOptions) (nodes map[string]bool, tasks map[string]*sluicev1.Task, jobs map[string]bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wait := grpc.WaitForReady(true)
	nodes, tasks, jobs = map[string]bool{}, map[string]*sluicev1.Task{}, map[string]bool{}
	tok := ""
	for {
		r, err := c.State.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: cluster, PageSize: 1000, PageToken: tok, Read: ro}, wait)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, n := range r.GetNodes() {
			nodes[n.GetName()] = true
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for {
		r, err := c.State.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: cluster, PageSize: 1000, PageToken: tok, Read: ro}, wait)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, tk := range r.GetTasks() {
			tasks[tk.GetName()] = tk
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for {
		r, err := c.State.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: cluster, PageSize: 1000, PageToken: tok, Read: ro}, wait)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, j := range r.GetJobs() {
			jobs[j.GetName()] = true
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	return nodes, tasks, jobs, nil
}

// latencies collects durations and reports percentiles.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return "no samples"
	}
	s := append([]time.Duration(nil), l.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(float64(len(s))*p))] }
	return fmt.Sprintf("n=%d p50=%s p90=%s p99=%s max=%s", len(s),
		q(0.50).Round(time.Microsecond), q(0.90).Round(time.Microsecond), q(0.99).Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
}

// faultFlag makes members serve /debug/partition (startCluster(t, n, faultFlag)).
const faultFlag = "--unsafe-fault-injection"

// partition cuts p's raft traffic to and from the named members (POST /debug/partition), or
// heals it with none (DELETE).
func (p *proc) partition(peers ...string) error {
	method := http.MethodDelete
	var body io.Reader
	if len(peers) > 0 {
		b, _ := json.Marshal(map[string][]string{"peers": peers})
		method, body = http.MethodPost, bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+p.admin+"/debug/partition", body)
	if err != nil {
		return err
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s /debug/partition: %s: %s", p.name, method, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// isolate cuts victim off from every other member, on both sides (each member refuses the
// other's raft connections anyway; cutting both sides is what a real partition does).
func isolate(members []*proc, victim *proc) error {
	var others []string
	for _, m := range members {
		if m != victim {
			others = append(others, m.name)
			if err := m.partition(victim.name); err != nil {
				return err
			}
		}
	}
	return victim.partition(others...)
}

// heal undoes every partition.
func heal(members []*proc) error {
	for _, m := range members {
		if err := m.partition(); err != nil {
			return err
		}
	}
	return nil
}

// reasonOf returns the ErrorInfo reason of a gRPC error ("" if none).
func reasonOf(err error) string {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}
