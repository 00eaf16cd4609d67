package slurm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/clients/adapters/slurm"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testnet"
)

// TestSlurmE2E drives a real Slurm cluster (scripts/slurm/setup.sh: three slurmd on
// 127.0.0.1, sn1 and sn2 with two GPUs each) through the adapter and a real sluiced:
// gang jobs start where Sluice binds them, a high-priority job preempts a running one per
// Sluice's plan, and the adapter comes through restarts of sluiced and of slurmctld.
//
// It runs only with SLURM_E2E=1 (make test-slurm, which runs scripts/slurm/e2e.sh).
func TestSlurmE2E(t *testing.T) {
	if os.Getenv("SLURM_E2E") != "1" {
		t.Skip("set SLURM_E2E=1 to run against a real Slurm (make test-slurm)")
	}
	dir := os.Getenv("SLURM_E2E_DIR")
	if dir == "" || os.Getenv("SLURM_CONF") == "" {
		t.Fatal("SLURM_E2E_DIR and SLURM_CONF must name a cluster started by scripts/slurm/setup.sh")
	}
	root := moduleRoot(t)
	start := time.Now()
	step := func(format string, args ...any) {
		t.Logf("[%5.1fs] %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	// sluiced, as a process of its own so that it can be restarted on the same port.
	bin := filepath.Join(t.TempDir(), "sluiced")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sluiced")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build sluiced: %v\n%s", err, out)
	}
	addrs := testnet.FreeAddrs(t, 2)
	grpcAddr, adminAddr := addrs[0], addrs[1]
	srv := startSluiced(t, bin, grpcAddr, adminAddr, filepath.Join(dir, "log", "sluiced.log"))
	step("sluiced up on %s", grpcAddr)

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const cluster = "slurm-e2e"
	state := sluicev1.NewClusterStateServiceClient(conn)

	conf, err := os.ReadFile("examples/scheduler-conf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "log", "adapter.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	rec := &recorder{}
	sl := slurm.NewGRPCSluice(conn, cluster)
	defer sl.Close()
	a, err := slurm.New(slurm.Config{
		Period:          500 * time.Millisecond,
		MaxBackoff:      2 * time.Second,
		CycleTimeout:    30 * time.Second,
		SchedulerConfig: string(conf),
		Logger:          slog.New(slog.NewTextHandler(io.MultiWriter(logFile, testWriter{t}), nil)),
		OnCycle:         rec.add,
	}, slurm.ExecRunner{Timeout: 20 * time.Second}, sl)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	adapterDone := make(chan struct{})
	go func() {
		defer close(adapterDone)
		_ = a.Run(ctx)
	}()
	defer func() {
		cancel()
		<-adapterDone
	}()

	// 1. Gang jobs, submitted held: Sluice places them, Slurm runs them there.
	jobA := sbatch(t, dir, "-H", "-N2", "-c4", "--mem=1000", "--gres=gpu:1", "-J", "gangA")
	runA := waitJob(t, jobA, 60*time.Second, isRunning)
	step("job %d (gang of 2, one GPU a node) runs on %v", jobA, runA.nodes)
	jobB := sbatch(t, dir, "-H", "-N1", "-c4", "--mem=1000", "--nice=50", "-J", "lowB")
	runB := waitJob(t, jobB, 60*time.Second, isRunning)
	step("job %d (nice 50) runs on %v", jobB, runB.nodes)

	if !slices.Equal(runA.nodes, []string{"sn1", "sn2"}) {
		t.Errorf("gang A runs on %v; only sn1 and sn2 have GPUs", runA.nodes)
	}
	if !slices.Equal(runB.nodes, []string{"sn3"}) {
		t.Errorf("B runs on %v; sn3 is the only node left", runB.nodes)
	}
	for _, j := range []*observed{runA, runB} {
		if got := rec.startNodes(j.id); !slices.Equal(got, j.nodes) {
			t.Errorf("job %d: Sluice bound it to %v, Slurm runs it on %v", j.id, got, j.nodes)
		}
		if got := sluiceNodes(t, state, cluster, j.id); !slices.Equal(got, j.nodes) {
			t.Errorf("job %d: Sluice has its tasks on %v, Slurm runs it on %v", j.id, got, j.nodes)
		}
	}

	// 2. A higher-priority job that needs a GPU node: Sluice evicts gang A (priority 0 <
	// 100; B on sn3 has no GPU), the adapter requeues A held, and C starts where Sluice
	// put it.
	jobC := sbatch(t, dir, "-H", "-N1", "-c4", "--mem=1000", "--gres=gpu:1", "--nice=-100", "-J", "urgentC")
	runC := waitJob(t, jobC, 90*time.Second, isRunning)
	step("job %d (nice -100) runs on %v", jobC, runC.nodes)
	ev := rec.evictions(jobA)
	if len(ev) == 0 {
		t.Fatalf("job %d was never evicted; adapter log in %s", jobA, logFile.Name())
	}
	if ev[0].Kind != slurm.ActionRequeue || ev[0].Err != nil || !slices.Contains(ev[0].ForTasks, "slurm/"+slurm.TaskName(jobC, 0)) {
		t.Errorf("eviction of A: %+v", ev[0])
	}
	if got := rec.startNodes(jobC); !slices.Equal(got, runC.nodes) {
		t.Errorf("C: Sluice bound it to %v, Slurm runs it on %v", got, runC.nodes)
	}
	if !slices.Contains(runA.nodes, runC.nodes[0]) {
		t.Errorf("C runs on %v, not on a node A gave up (%v)", runC.nodes, runA.nodes)
	}
	a2 := waitJob(t, jobA, 30*time.Second, func(o *observed) bool { return o.state == slurm.StatePending && o.held })
	if a2.restarts < 1 {
		t.Errorf("A is pending but was not requeued: %+v", a2)
	}
	step("job %d requeued held (restarts %d); evicted by plan for %v", jobA, a2.restarts, ev[0].ForTasks)
	if b := waitJob(t, jobB, time.Second, isRunning); !slices.Equal(b.nodes, runB.nodes) {
		t.Errorf("B moved: %v", b.nodes)
	}

	// 3. sluiced restarts without state: the adapter resends the whole cluster and its
	// configuration, and scheduling goes on (A comes back once C is gone).
	mark := rec.len()
	srv.stop(t)
	step("sluiced stopped")
	time.Sleep(time.Second)
	srv = startSluiced(t, bin, grpcAddr, adminAddr, filepath.Join(dir, "log", "sluiced.log"))
	step("sluiced restarted")
	waitFor(t, 30*time.Second, "a full resync after the restart", func() bool { return rec.resyncedSince(mark) })
	if !rec.failedSince(mark) {
		t.Error("no cycle failed while sluiced was down")
	}
	tasks := sluiceTasks(t, state, cluster)
	if task := tasks[slurm.TaskName(jobC, 0)]; task.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_RUNNING || task.GetNode() != runC.nodes[0] {
		t.Errorf("after the resync C's task is %v", task)
	}
	if task := tasks[slurm.TaskName(jobA, 0)]; task.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_PENDING {
		t.Errorf("after the resync A's task is %v", task)
	}
	cfg, err := sluicev1.NewSchedulerServiceClient(conn).GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: cluster})
	if err != nil || !strings.Contains(cfg.GetConfig(), "preempt") {
		t.Errorf("scheduler configuration after the restart: %v %q", err, cfg.GetConfig())
	}
	step("resynced: %d tasks in the restarted sluiced", len(tasks))
	scancel(t, jobC)
	runA2 := waitJob(t, jobA, 60*time.Second, isRunning)
	step("C cancelled; job %d runs again on %v", jobA, runA2.nodes)
	if got := rec.startNodes(jobA); !slices.Equal(got, runA2.nodes) {
		t.Errorf("A restarted on %v, Sluice bound it to %v", runA2.nodes, got)
	}

	// 4. slurmctld goes away: cycles fail and change nothing in Sluice; once it is back,
	// the next job is placed as usual.
	setupSh := func(cmd string) {
		t.Helper()
		out, err := exec.Command("bash", filepath.Join(root, "scripts/slurm/setup.sh"), cmd, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("setup.sh %s: %v\n%s", cmd, err, out)
		}
	}
	before := len(sluiceTasks(t, state, cluster))
	setupSh("stop-ctld")
	mark = rec.len()
	step("slurmctld stopped")
	waitFor(t, 60*time.Second, "a failed cycle while slurmctld is down", func() bool { return rec.failedSince(mark) })
	step("a cycle failed: %v", rec.firstErrorSince(mark))
	if n := len(sluiceTasks(t, state, cluster)); n != before {
		t.Errorf("Sluice went from %d to %d tasks while slurmctld was down", before, n)
	}
	setupSh("start-ctld")
	mark = rec.len()
	step("slurmctld started again")
	waitFor(t, 60*time.Second, "a successful cycle after slurmctld came back", func() bool { return rec.succeededSince(mark) })
	scancel(t, jobB)
	jobD := sbatch(t, dir, "-H", "-N1", "-c2", "--mem=500", "-J", "afterRestart")
	runD := waitJob(t, jobD, 60*time.Second, isRunning)
	step("job %d runs on %v", jobD, runD.nodes)
	if !slices.Equal(runD.nodes, []string{"sn3"}) || !slices.Equal(rec.startNodes(jobD), runD.nodes) {
		t.Errorf("D runs on %v, Sluice bound it to %v; sn3 is the free node", runD.nodes, rec.startNodes(jobD))
	}
	step("done: %d cycles", rec.len())
}

// observed is a job as squeue shows it.
type observed struct {
	id       int64
	state    string
	held     bool
	nodes    []string
	restarts int64
}

func isRunning(o *observed) bool { return o.state == slurm.StateRunning && len(o.nodes) > 0 }

func squeue(t *testing.T) map[int64]*observed {
	t.Helper()
	out, err := exec.Command("squeue", "--json").Output()
	if err != nil {
		return nil // the controller may be restarting
	}
	var sq slurm.SqueueOutput
	if err := json.Unmarshal(out, &sq); err != nil {
		t.Fatalf("squeue --json: %v", err)
	}
	jobs := map[int64]*observed{}
	for i := range sq.Jobs {
		j := &sq.Jobs[i]
		nodes, _ := slurm.ExpandHostlist(j.Nodes)
		jobs[j.ID()] = &observed{id: j.ID(), state: j.State(), held: j.Held(), nodes: nodes, restarts: j.RestartCnt.Val}
	}
	return jobs
}

func waitJob(t *testing.T, id int64, timeout time.Duration, ok func(*observed) bool) *observed {
	t.Helper()
	var last *observed
	deadline := time.Now().Add(timeout)
	for {
		if o := squeue(t)[id]; o != nil {
			last = o
			if ok(o) {
				return o
			}
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("squeue", "-o", "%i %j %T %r %Q %y %N").CombinedOutput()
			t.Fatalf("job %d: not there after %s; last seen %+v\n%s", id, timeout, last, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sbatch(t *testing.T, dir string, args ...string) int64 {
	t.Helper()
	args = append([]string{"--parsable", "--chdir", filepath.Join(dir, "jobs"), "-o", "/dev/null"}, args...)
	args = append(args, "--wrap", "sleep 600")
	out, err := exec.Command("sbatch", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	idStr, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	id, err := strconv.ParseInt(idStr, 10, 64)
	if err != nil {
		t.Fatalf("sbatch printed %q", out)
	}
	return id
}

func scancel(t *testing.T, id int64) {
	t.Helper()
	if out, err := exec.Command("scancel", strconv.FormatInt(id, 10)).CombinedOutput(); err != nil {
		t.Fatalf("scancel %d: %v\n%s", id, err, out)
	}
}

func sluiceTasks(t *testing.T, state sluicev1.ClusterStateServiceClient, cluster string) map[string]*sluicev1.Task {
	t.Helper()
	resp, err := state.ListTasks(context.Background(), &sluicev1.ListTasksRequest{Cluster: cluster, PageSize: 1000})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	out := map[string]*sluicev1.Task{}
	for _, task := range resp.GetTasks() {
		out[task.GetName()] = task
	}
	return out
}

// sluiceNodes returns the nodes of a Slurm job's tasks in Sluice, in task order.
func sluiceNodes(t *testing.T, state sluicev1.ClusterStateServiceClient, cluster string, id int64) []string {
	t.Helper()
	resp, err := state.ListTasks(context.Background(), &sluicev1.ListTasksRequest{Cluster: cluster, Namespace: "slurm", Job: slurm.JobName(id), PageSize: 1000})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	var nodes []string
	for i := range resp.GetTasks() {
		for _, task := range resp.GetTasks() {
			if task.GetName() == slurm.TaskName(id, i) {
				nodes = append(nodes, task.GetNode())
			}
		}
	}
	return nodes
}

// recorder keeps every cycle's report.
type recorder struct {
	mu      sync.Mutex
	reports []*slurm.CycleReport
}

func (r *recorder) add(rep *slurm.CycleReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reports)
}

func (r *recorder) since(mark int) []*slurm.CycleReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*slurm.CycleReport(nil), r.reports[min(mark, len(r.reports)):]...)
}

func (r *recorder) resyncedSince(mark int) bool {
	for _, rep := range r.since(mark) {
		if rep.Err == nil && rep.Resynced {
			return true
		}
	}
	return false
}

func (r *recorder) failedSince(mark int) bool {
	for _, rep := range r.since(mark) {
		if rep.Err != nil {
			return true
		}
	}
	return false
}

func (r *recorder) firstErrorSince(mark int) error {
	for _, rep := range r.since(mark) {
		if rep.Err != nil {
			return rep.Err
		}
	}
	return nil
}

func (r *recorder) succeededSince(mark int) bool {
	for _, rep := range r.since(mark) {
		if rep.Err == nil {
			return true
		}
	}
	return false
}

// startNodes returns the nodes of the last successful start of a Slurm job.
func (r *recorder) startNodes(id int64) []string {
	var nodes []string
	for _, rep := range r.since(0) {
		for _, a := range rep.Actions {
			if a.Kind == slurm.ActionStart && a.JobID == id && a.Err == nil {
				nodes = a.Nodes
			}
		}
	}
	return nodes
}

func (r *recorder) evictions(id int64) []slurm.Action {
	var out []slurm.Action
	for _, rep := range r.since(0) {
		for _, a := range rep.Actions {
			if a.Kind != slurm.ActionStart && a.JobID == id {
				out = append(out, a)
			}
		}
	}
	return out
}

// sluiced is a running sluiced process.
type sluiced struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startSluiced(t *testing.T, bin, grpcAddr, adminAddr, logPath string) *sluiced {
	t.Helper()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--listen", grpcAddr, "--admin-listen", adminAddr, "--log-level", "debug")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sluiced{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + adminAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("sluiced exited; log in %s", logPath)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sluiced not healthy within 20s; log in %s", logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *sluiced) stop(t *testing.T) {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
