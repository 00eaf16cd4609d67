package durability

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// smallDisk mounts a tmpfs of the given size on a new directory inside a private mount
// namespace, held by a helper process for the test's lifetime (so that sluiced can be
// restarted on it). It returns the mount point and the command prefix that runs a program in
// that namespace. It skips the test where mount namespaces or tmpfs are not allowed.
func smallDisk(t *testing.T, size string) (string, []string) {
	t.Helper()
	mnt := t.TempDir()
	helper := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		fmt.Sprintf("mount -t tmpfs -o size=%s tmpfs %s && echo mounted && exec sleep 3600", size, mnt))
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Skipf("no unshare here: %v", err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "mounted" {
		t.Skipf("cannot mount a tmpfs in a private mount namespace here (%v %q): storage fault tests need it", err, line)
	}
	return mnt, []string{"nsenter", "-t", strconv.Itoa(helper.Process.Pid), "-m", "--"}
}

// inNS runs a command in the namespace and returns its combined output.
func inNS(t *testing.T, ns []string, args ...string) (string, error) {
	t.Helper()
	argv := append(append([]string{}, ns...), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}

// faultBatch is batch i: a marker node and a job with 100 tasks whose labels take room.
func faultBatch(i int) []*sluicev1.Delta {
	jn := fmt.Sprintf("b%04d", i)
	out := []*sluicev1.Delta{node(fmt.Sprintf("m%04d", i)), job(jn)}
	pad := strings.Repeat("x", 400)
	for k := range 100 {
		d := task(fmt.Sprintf("%s-%03d", jn, k), jn, sluicev1.TaskStatus_TASK_STATUS_PENDING)
		d.GetUpsertTask().Labels = map[string]string{"pad": pad}
		out = append(out, d)
	}
	return out
}

// TestStorageFaults runs sluiced with its data directory on a 24 MiB tmpfs. When the disk
// fills up, writes fail with UNAVAILABLE naming the data directory and "no space left on
// device", reads go on, and nothing of a failed batch is applied; once space is freed,
// writes succeed again without a restart; after kill -9 and a restart, every acknowledged
// batch is there and no failed one. On a read-only remount of the directory sluiced refuses
// to start, saying why; back read-write, it starts with the state intact.
func TestStorageFaults(t *testing.T) {
	need(t)
	mnt, ns := smallDisk(t, "24m")
	dataDir := mnt + "/data"
	p := newProc(t, "sluiced", "--data-dir", dataDir)
	p.wrap = ns
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready", p.ready)
	c := dial(t, p.grpc)
	ctx := context.Background()

	acked := map[int]bool{}
	failed := map[int]bool{}
	i := 0
	for ; i < 5; i++ {
		if _, err := c.Apply(ctx, "f", false, faultBatch(i)...); err != nil {
			t.Fatalf("batch %d before the disk filled up: %v", i, err)
		}
		acked[i] = true
	}
	if out, err := inNS(t, ns, "sh", "-c", "dd if=/dev/zero of="+mnt+"/filler bs=64k 2>&1; df -k "+mnt); !strings.Contains(out, "No space left") {
		t.Fatalf("filling the disk: %v\n%s", err, out)
	}
	var firstErr error
	for n := 0; n < 200 && firstErr == nil; n, i = n+1, i+1 {
		_, err := c.Apply(ctx, "f", false, faultBatch(i)...)
		if err == nil {
			acked[i] = true // bolt reused free pages
			continue
		}
		failed[i] = true
		firstErr = err
	}
	if firstErr == nil {
		t.Fatal("200 batches went through on a full disk")
	}
	msg := status.Convert(firstErr).Message()
	if status.Code(firstErr) != codes.Unavailable || !strings.Contains(msg, "data directory "+dataDir+" cannot be written") ||
		!strings.Contains(msg, "no space left on device") {
		t.Fatalf("write on a full disk = %v; want UNAVAILABLE naming the data directory and the cause", firstErr)
	}
	report(t, "full disk: %d batches acknowledged, then %s: %s", len(acked), status.Code(firstErr), msg)
	// More writes fail too, clearly, while reads go on.
	_, err := c.Apply(ctx, "f", false, faultBatch(i)...)
	failed[i] = true
	i++
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "no space left on device") {
		t.Fatalf("second write on a full disk = %v", err)
	}
	report(t, "full disk, next write: %s", status.Convert(err).Message())
	checkFaultState(t, c, acked, failed)

	// Free the space: writes succeed again, without a restart.
	if out, err := inNS(t, ns, "rm", mnt+"/filler"); err != nil {
		t.Fatalf("freeing space: %v %s", err, out)
	}
	healed := waitFor(t, 30*time.Second, "a write after space was freed", func() bool {
		_, err := c.Apply(ctx, "f", false, faultBatch(i)...)
		if err == nil {
			acked[i] = true
		} else {
			failed[i] = true
		}
		i++
		return err == nil
	})
	report(t, "writes succeed again %s after space was freed", healed.Round(time.Millisecond))

	// kill -9 and restart: every acknowledged batch, and nothing of a failed one.
	p.kill9()
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready after a restart", p.ready)
	checkFaultState(t, c, acked, failed)

	// A read-only data directory: sluiced refuses to start and says why.
	if err := p.stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	if out, err := inNS(t, ns, "mount", "-o", "remount,ro", mnt); err != nil {
		t.Fatalf("remounting read-only: %v %s", err, out)
	}
	p.start()
	if err := p.waitExit(20 * time.Second); err == nil || !strings.Contains(p.logText(), "read-only file system") {
		t.Fatalf("sluiced on a read-only data directory: exit %v; log:\n%s", err, p.logText())
	}
	line := ""
	for _, l := range strings.Split(p.logText(), "\n") {
		if strings.Contains(l, "read-only file system") {
			line = l
		}
	}
	report(t, "read-only data directory at start: exits with %s", line)
	if out, err := inNS(t, ns, "mount", "-o", "remount,rw", mnt); err != nil {
		t.Fatalf("remounting read-write: %v %s", err, out)
	}
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready on the directory read-write again", p.ready)
	checkFaultState(t, c, acked, failed)
}

// checkFaultState checks that every acknowledged batch is there whole and that no failed one
// is there at all.
func checkFaultState(t *testing.T, c *sluice.Client, acked, failed map[int]bool) {
	t.Helper()
	// A member that cannot write steps down and has no leader: only stale reads are answered.
	nodes, tasks, jobs, err := listAllRead(context.Background(), c, "f",
		&sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE})
	if err != nil {
		t.Fatalf("listing: %v", err)
	}
	count := func(i int) int {
		jn := fmt.Sprintf("b%04d", i)
		n := 0
		if nodes[fmt.Sprintf("m%04d", i)] {
			n++
		}
		if jobs[jn] {
			n++
		}
		for k := range 100 {
			if tasks[fmt.Sprintf("%s-%03d", jn, k)] != nil {
				n++
			}
		}
		return n
	}
	for i := range acked {
		if n := count(i); n != 102 {
			t.Fatalf("acknowledged batch %d: %d of its 102 objects are there", i, n)
		}
	}
	for i := range failed {
		if n := count(i); n != 0 {
			t.Fatalf("failed batch %d: %d of its objects are there", i, n)
		}
	}
}
