package durability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testnet"
	"github.com/sluice-sched/sluice/internal/testpki"
)

// startTLSCluster starts n members forming one raft cluster over mutual TLS: member i
// presents certs[i] and trusts caFile.
func startTLSCluster(t *testing.T, caFile string, certs []testpki.Pair) []*proc {
	t.Helper()
	n := len(certs)
	addrs := testnet.FreeAddrs(t, 3*n)
	raftAddrs := addrs[:n]
	members := make([]*proc, n)
	var peers []string
	for i := range members {
		members[i] = newProcAt(t, fmt.Sprintf("n%d", i+1), addrs[n+2*i], addrs[n+2*i+1])
		peers = append(peers, fmt.Sprintf("%s=%s@%s", members[i].name, raftAddrs[i], members[i].grpc))
	}
	for i, m := range members {
		m.args = append(m.args, "--data-dir", t.TempDir(), "--node-id", m.name, "--raft-listen", raftAddrs[i],
			"--raft-peers", strings.Join(peers, ","), "--bootstrap",
			"--raft-tls-cert", certs[i].CertFile, "--raft-tls-key", certs[i].KeyFile, "--raft-tls-ca", caFile)
		m.start()
	}
	return members
}

// TestRaftOverMutualTLS: three sluiced whose members talk mutual TLS, one presenting a
// certificate of another CA. The two trusted members elect a leader and replicate; the third
// is refused by both (its raft log never gets an entry past the bootstrap), and the refusal
// is in the logs. Given a certificate of the members' CA and restarted, it catches up.
func TestRaftOverMutualTLS(t *testing.T) {
	need(t)
	ca, intruders := testpki.NewCA(t, "members"), testpki.NewCA(t, "intruders")
	certs := []testpki.Pair{ca.Peer(t, "n1"), ca.Peer(t, "n2"), intruders.Peer(t, "n3")}
	members := startTLSCluster(t, ca.CertFile, certs)
	waitFor(t, 30*time.Second, "a leader among the trusted members", func() bool {
		return leaderOf(members[:2], nil) != nil
	})
	leader := leaderOf(members[:2], nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := dial(t, leader.grpc)
	for i := range 10 {
		if _, err := c.Apply(ctx, "tls", false, node(fmt.Sprintf("n%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	follower := members[0]
	if follower == leader {
		follower = members[1]
	}
	lst, _ := leader.raft()
	waitFor(t, 10*time.Second, "the trusted follower to apply the writes", func() bool {
		st, err := follower.raft()
		return err == nil && st.AppliedIndex >= lst.LastIndex
	})
	time.Sleep(2 * time.Second)
	intruder := members[2]
	st, err := intruder.raft()
	if err != nil {
		t.Fatal(err)
	}
	if st.LastIndex > 1 || st.Ready || st.State == "Leader" {
		t.Fatalf("the untrusted member got into the cluster: %+v", st)
	}
	refusals := 0
	for _, m := range members {
		text := m.logText()
		if strings.Contains(text, "certificate signed by unknown authority") || strings.Contains(text, "bad certificate") ||
			strings.Contains(text, "unknown certificate authority") {
			refusals++
		}
	}
	if refusals == 0 {
		t.Fatal("no member logged the refused handshakes")
	}
	// With a certificate of the members' CA, it joins and catches up.
	intruder.kill9()
	fixed := ca.Peer(t, "n3")
	for i, a := range intruder.args {
		if a == "--raft-tls-cert" {
			intruder.args[i+1], intruder.args[i+3] = fixed.CertFile, fixed.KeyFile
		}
	}
	intruder.start()
	waitFor(t, 20*time.Second, "the re-certified member catching up", func() bool {
		st, err := intruder.raft()
		return err == nil && st.State == "Follower" && st.AppliedIndex >= lst.LastIndex
	})
	report(t, "3 members over mutual TLS: an untrusted member was refused (log index %d) and caught up once re-certified", st.LastIndex)
}

// TestAbuseLeavesNoTrace repeats issue 19's adversarial run against a real sluiced: thousands
// of reads and dry runs on clusters that do not exist (each NOT_FOUND; /metrics and memory
// stay flat), a flood of wrong tokens (refused past the rate limit, with few log lines), and
// a read-only token's dry-run watch with takeover, which cannot end the writer's watch.
func TestAbuseLeavesNoTrace(t *testing.T) {
	need(t)
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	// Four read-only tokens, one per worker: the calls on unknown clusters stay within each
	// identity's burst, so that each is answered (rather than rate-limited).
	text := "- {name: rm, token: rm-token, clusters: [alpha]}\n"
	for w := range 4 {
		text += fmt.Sprintf("- {name: ro%d, token: ro-token-%d, clusters: ['*'], read_only: true}\n", w, w)
	}
	if err := os.WriteFile(tokens, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// Go's own collector (no heap floor): with the default 2 GiB floor garbage stays resident
	// until the heap reaches it, and the RSS check below would measure the floor, not what the
	// calls leave behind.
	p := newProc(t, "abuse", "--tokens", tokens, "--rate-limit", "1000", "--rate-burst", "2000", "--log-level", "info",
		"--gc-min-heap", "none")
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready", p.ready)
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cs, sc := sluicev1.NewClusterStateServiceClient(conn), sluicev1.NewSchedulerServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rm := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer rm-token")
	readOnly := func(w int) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", fmt.Sprintf("Bearer ro-token-%d", w))
	}
	ro := readOnly(0)
	if _, err := cs.ApplyDeltas(rm, &sluicev1.ApplyDeltasRequest{Cluster: "alpha", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		node("n1"), job("j"), task("t-0", "j", sluicev1.TaskStatus_TASK_STATUS_PENDING)}}}); err != nil {
		t.Fatal(err)
	}
	metricsSize := func() int {
		resp, err := http.Get("http://" + p.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return len(b)
	}
	// Warm up (the first calls make the RPC metrics' series), then measure.
	for i := range 20 {
		_, _ = cs.ListNodes(ro, &sluicev1.ListNodesRequest{Cluster: fmt.Sprintf("warm-%d", i)})
		_, _ = sc.Schedule(ro, &sluicev1.ScheduleRequest{Cluster: fmt.Sprintf("warm-%d", i), Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	}
	m0, rss0 := metricsSize(), p.rssKiB()
	const ghosts = 3000
	var wg sync.WaitGroup
	var mu sync.Mutex
	wrong := 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rw := readOnly(w)
			for i := w; i < ghosts; i += 4 {
				name := fmt.Sprintf("ghost-%d", i)
				_, err1 := cs.ListNodes(rw, &sluicev1.ListNodesRequest{Cluster: name})
				_, err2 := sc.Schedule(rw, &sluicev1.ScheduleRequest{Cluster: name, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
				for _, err := range []error{err1, err2} {
					if status.Code(err) != codes.NotFound {
						mu.Lock()
						wrong++
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if wrong > 0 {
		t.Fatalf("%d calls on unknown clusters were not NOT_FOUND", wrong)
	}
	m1, rss1 := metricsSize(), p.rssKiB()
	if m1 > m0+2048 {
		t.Fatalf("/metrics grew from %d to %d bytes after %d calls on unknown clusters", m0, m1, 2*ghosts)
	}
	if rss1-rss0 > 32*1024 {
		t.Fatalf("RSS grew by %d KiB after %d calls on unknown clusters", rss1-rss0, 2*ghosts)
	}

	// Wrong tokens: one address, as fast as it can.
	linesBefore := strings.Count(p.logText(), "\n")
	counts := map[codes.Code]int{}
	start := time.Now()
	for i := range 10000 {
		bad := metadata.AppendToOutgoingContext(ctx, "authorization", fmt.Sprintf("Bearer guess-%d", i))
		_, err := cs.ListNodes(bad, &sluicev1.ListNodesRequest{Cluster: "alpha"})
		counts[status.Code(err)]++
	}
	el := time.Since(start)
	if counts[codes.OK] != 0 || counts[codes.Unauthenticated] > 2000+int(1000*el.Seconds())+10 {
		t.Fatalf("10000 wrong tokens in %v: %v; want at most the burst plus the rate UNAUTHENTICATED", el, counts)
	}
	time.Sleep(200 * time.Millisecond)
	lines := strings.Count(p.logText(), "\n") - linesBefore
	if lines > 20+int(10*el.Seconds())+10 {
		t.Fatalf("10000 wrong tokens in %v wrote %d log lines", el, lines)
	}

	// Oversized and invisible values are refused before they reach the store or a log line.
	big := &sluicev1.Node{Name: "n2", Allocatable: map[string]string{"cpu": "1"}, Labels: map[string]string{"big": strings.Repeat("x", 15_900_000)}}
	_, err = cs.ApplyDeltas(rm, &sluicev1.ApplyDeltasRequest{Cluster: "alpha", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: big}}}}}, grpc.MaxCallSendMsgSize(32<<20))
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a 15.9 MB label value: %v", err)
	}
	_, err = cs.ApplyDeltas(rm, &sluicev1.ApplyDeltasRequest{Cluster: "alpha", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		node("evil\u202egnp.exe")}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a name with a bidi override: %v", err)
	}
	for _, line := range strings.Split(p.logText(), "\n") {
		if len(line) > 16<<10 {
			t.Fatalf("a log line of %d bytes", len(line))
		}
	}

	// A read-only takeover cannot end the writer's watch.
	ww, err := sc.WatchPlans(rm, &sluicev1.WatchPlansRequest{Cluster: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := ww.Recv()
	if err != nil {
		t.Fatal(err)
	}
	rw, err := sc.WatchPlans(ro, &sluicev1.WatchPlansRequest{Cluster: "alpha", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, Takeover: true})
	if err == nil {
		_, err = rw.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a read-only takeover: %v", err)
	}
	if _, err := sc.CommitPlan(rm, &sluicev1.CommitPlanRequest{Cluster: "alpha", PlanId: first.GetPlan().GetId()}); err != nil {
		t.Fatalf("the writer's commit after the read-only takeover: %v", err)
	}
	report(t, "%d calls on unknown clusters: /metrics %d -> %d bytes, RSS %d -> %d KiB; 10000 wrong tokens in %v: %v, %d log lines",
		2*ghosts, m0, m1, rss0, rss1, el.Round(time.Millisecond), counts, lines)
}
