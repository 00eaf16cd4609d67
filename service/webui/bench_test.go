package webui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/synth"
)

// bigCluster loads a cluster of 10,000 nodes and 100,000 tasks (12,500 gangs of 8 in 8
// queues, mixed shapes) into the fixture's store: three jobs in five run (their tasks spread
// over the nodes), the rest wait. One cycle is committed, so that the queues have their
// figures, the jobs their explanations and the plans pages a plan of many decisions.
func bigCluster(b *testing.B) (*fixture, string) {
	b.Helper()
	f := newFixture(b, "", true)
	c, err := synth.Generate(synth.Spec{Seed: 17, Nodes: 10000, Jobs: 12500, TasksPerJob: 8, Queues: 8, Shapes: synth.Mixed})
	if err != nil {
		b.Fatal(err)
	}
	running := map[string]bool{}
	for i, j := range c.Jobs {
		if i%5 < 3 {
			j.Phase, running[j.Name] = api.JobRunning, true
		}
	}
	for i, t := range c.Tasks {
		if running[t.Job] {
			t.Status, t.Node = api.Running, c.Nodes[i%len(c.Nodes)].Name
		}
	}
	if err := c.Load(f.store, "big"); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	plan, err := f.eng.Schedule(ctx, "big", engine.ScheduleRequest{Mode: engine.AutoCommit, Now: c.Now()})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("10,000 nodes, %d jobs, %d tasks loaded; one committed cycle took %v (%d binds)",
		len(c.Jobs), len(c.Tasks), time.Since(start).Round(time.Millisecond), plan.Counts.Binds)
	return f, plan.ID
}

// BenchmarkPages measures each page of the UI (rendered HTML, server side, no network) on
// a cluster of 10,000 nodes and 100,000 tasks. Every page must answer well under a second:
// BENCHMARKS.md has the figures.
func BenchmarkPages(b *testing.B) {
	f, planID := bigCluster(b)
	for _, p := range []struct{ name, path string }{
		{"clusters", "/ui/"},
		{"queues", "/ui/c/big/queues"},
		{"jobs", "/ui/c/big/jobs"},
		{"jobs-page-200", "/ui/c/big/jobs?after=default/job-09999"},
		{"jobs-phase-filter", "/ui/c/big/jobs?phase=running&queue=q003"},
		{"jobs-search-rare", "/ui/c/big/jobs?q=job-1234"},
		{"jobs-search-none", "/ui/c/big/jobs?q=no-such-job"},
		{"job", "/ui/c/big/jobs/default/job-12499"},
		{"nodes", "/ui/c/big/nodes"},
		{"nodes-last-page", "/ui/c/big/nodes?after=node-09960"},
		{"node", "/ui/c/big/nodes/node-05000"},
		{"plans", "/ui/c/big/plans"},
		{"plan", "/ui/c/big/plans/" + planID},
		{"plan-last-page", "/ui/c/big/plans/" + planID + "?page=" + planPageToken(b, f, planID)},
		{"config", "/ui/c/big/config"},
	} {
		b.Run(p.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, p.path, nil)
			for b.Loop() {
				w := httptest.NewRecorder()
				f.ui.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %.500s", p.path, w.Code, w.Body.String())
				}
			}
		})
	}
}

// planPageToken returns the token of a plan's last page of decisions.
func planPageToken(b *testing.B, f *fixture, id string) string {
	b.Helper()
	var v struct{ Next string }
	next := "/ui/c/big/plans/" + id + "?format=json"
	token := ""
	for next != "" {
		code, body := f.get(b, next, "")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil {
			b.Fatalf("%s: %d %.300s", next, code, body)
		}
		if v.Next == "" {
			break
		}
		u, err := url.Parse(v.Next)
		if err != nil {
			b.Fatal(err)
		}
		token, next = u.Query().Get("page"), v.Next+"&format=json"
	}
	return token
}
