package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/browsertest"
	"github.com/sluice-sched/sluice/plugins"
)

// screenshotDir is where TestWebUIInChromium saves its screenshots: $SLUICE_UI_SCREENSHOTS
// when set (the README's come from there), else the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("SLUICE_UI_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestWebUIInChromium drives headless Chromium through the web UI of a real sluiced (with
// --tokens) that holds two clusters, each applied from a scenario and scheduled, its plan
// committed: without a token the browser gets the login form and no cluster; with alpha's
// viewer token it sees alpha's queues and jobs, reads the pending job's explanation, finds
// the committed plan's binds, never sees cluster beta, and sees a new job appear without a
// reload. It saves a screenshot of each page.
func TestWebUIInChromium(t *testing.T) {
	bin := browsertest.Path(t)
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- {name: alpha-viewer, token: alpha-token, clusters: [alpha], read_only: true}\n"+
		"- {name: ops, token: ops-token, clusters: ['*'], admin: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	grpcAddr, adminAddr, exit := startedWith(t, ctx, logs, []string{"--tokens", tokens, "--ui-refresh", "300ms"},
		wiring{register: func(r *framework.Registry) { actions.Register(r); plugins.Register(r) }})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ops := metadata.AppendToOutgoingContext(tctx(t), "authorization", "Bearer ops-token")
	for cluster, file := range map[string]string{"alpha": "demo.yaml", "beta": "other.yaml"} {
		sc, err := scenario.LoadFile(filepath.Join("..", "..", "service", "webui", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if res := scenario.Run(ops, conn, sc, cluster); !res.Passed() {
			t.Fatal(res)
		}
	}
	// Without a credential the server refuses the UI (the browser gets the login form).
	if resp, err := http.Get("http://" + adminAddr + "/ui/c/alpha/jobs"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %v %v", resp.Status, err)
	}

	alloc, stopAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.WindowSize(1280, 820), chromedp.UserDataDir(t.TempDir()))...)
	defer stopAlloc()
	browser, stopBrowser := chromedp.NewContext(alloc)
	defer stopBrowser()
	bctx, stopTimeout := context.WithTimeout(browser, 30*time.Second)
	defer stopTimeout()
	dir := screenshotDir(t)
	base := "http://" + adminAddr
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v\nsluiced logs:\n%s", what, err, logs)
		}
	}
	read := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(bctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
		}
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
	}
	page := func() string { return read("the page", chromedp.OuterHTML(chromedp.CSS("html"))) }
	must := func(what, body string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in\n%.3000s", what, w, body)
			}
		}
		for _, hidden := range []string{"beta", "secretqueue", "hiddennode", "classifiedjob"} {
			if strings.Contains(body, hidden) {
				t.Errorf("%s shows cluster beta's %q", what, hidden)
			}
		}
	}

	do("refused without a token", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.ID("token")))
	html := page()
	shot("login.png")
	must("the page without a token", html, "asks for a credential")
	if strings.Contains(html, "data-cluster") {
		t.Error("the login page shows a cluster")
	}

	do("login", chromedp.SendKeys(chromedp.ID("token"), "alpha-token"), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.CSS(`section[data-cluster="alpha"]`)))
	must("clusters", page(), "alpha-viewer", "revision", "Utilization")
	shot("clusters.png")

	do("queues", chromedp.Navigate(base+"/ui/c/alpha/queues"), chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="prod"]`)))
	must("queues", page(), `data-queue="root"`, `data-queue="research"`, "deserved", "alloc")
	shot("queues.png")

	do("jobs", chromedp.Navigate(base+"/ui/c/alpha/jobs"), chromedp.WaitVisible(chromedp.CSS(`tr[data-job="default/big"]`)))
	must("jobs", page(), "default/train", "running", "inqueue")
	shot("jobs.png")

	do("the pending job", chromedp.Click(chromedp.CSS(`tr[data-job="default/big"] a`)), chromedp.WaitVisible(chromedp.ID("summary")))
	must("the job's explanation", read("explanation", chromedp.Text(chromedp.ID("explanation"))), "nodes", "dedicated")
	must("the job page", page(), "big-0", "big-2", `id="reasons"`)
	shot("job.png")

	do("plans", chromedp.Navigate(base+"/ui/c/alpha/plans"), chromedp.WaitVisible(chromedp.CSS(`tr[data-plan] a`)))
	must("plans", page(), "committed")
	do("the committed plan", chromedp.Click(chromedp.CSS(`tr[data-plan] a`)), chromedp.WaitVisible(chromedp.ID("decisions")))
	must("the plan's decisions", read("decisions", chromedp.Text(chromedp.ID("decisions"))), "bind", "default/train-0", "default/train-1", "applied")
	shot("plan.png")

	do("nodes", chromedp.Navigate(base+"/ui/c/alpha/nodes"), chromedp.WaitVisible(chromedp.CSS(`tr[data-node="n3"]`)))
	must("nodes", page(), "dedicated=infer", "zone=a")
	shot("nodes.png")

	do("another cluster", chromedp.Navigate(base+"/ui/c/beta/queues"), chromedp.WaitVisible(chromedp.ID("error")))
	if text := read("the error", chromedp.Text(chromedp.ID("error"))); !strings.Contains(text, "403") || strings.Contains(text, "secretqueue") {
		t.Errorf("cluster beta as alpha's viewer: %q", text)
	}

	// Live: a job applied while the page is open appears without a reload.
	do("jobs again", chromedp.Navigate(base+"/ui/c/alpha/jobs"), chromedp.WaitVisible(chromedp.CSS(`tr[data-job="default/big"]`)))
	if _, err := sluicev1.NewClusterStateServiceClient(conn).ApplyDeltas(ops, &sluicev1.ApplyDeltasRequest{Cluster: "alpha",
		Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
			Name: "latecomer", Queue: "prod", MinAvailable: proto.Int32(1)}}}}}}); err != nil {
		t.Fatal(err)
	}
	do("live refresh", chromedp.WaitVisible(chromedp.CSS(`tr[data-job="default/latecomer"]`)))
	if loads, err := chromedp.Run(bctx, chromedp.Evaluate[int](`performance.getEntriesByType("navigation").length`)); err != nil || loads != 1 {
		t.Errorf("%d navigations (%v): the page reloaded", loads, err)
	}
	t.Logf("screenshots in %s", dir)
	cancel()
	waitExit(t, exit, logs)
}
