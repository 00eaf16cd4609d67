package webui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service/webui"
)

// betaNames are cluster beta's names: none may show to alpha's viewer.
var betaNames = []string{"beta", "secretqueue", "hiddennode", "classifiedjob"}

func twoClusters(t *testing.T) *fixture {
	f := newFixture(t, tokensFile, false)
	f.play(t, demoScenario, "alpha")
	f.play(t, otherScenario, "beta")
	return f
}

// TestPagesShowTheAppliedCluster: every page answers and shows what the scenario made:
// queues in their tree with their figures, the jobs, the pending job's explanation with
// its per-reason node counts, the nodes' utilization, the committed plan's binds.
func TestPagesShowTheAppliedCluster(t *testing.T) {
	f := twoClusters(t)
	f.mustGet(t, "/ui/", opsToken, "alpha", "beta", "revision", "Utilization", "running")
	f.mustGet(t, "/ui/c/alpha/", opsToken, "alpha", "Jobs by phase")
	f.mustGet(t, "/ui/c/alpha/queues", opsToken, `data-queue="root"`, `data-queue="prod"`, `class="tree d1"`, "research", "deserved")
	f.mustGet(t, "/ui/c/alpha/jobs", opsToken, "default/train", "default/big", "running", "pending")
	f.mustGet(t, "/ui/c/alpha/jobs/default/big", opsToken, `id="summary"`, "nodes", "dedicated", "big-0")
	f.mustGet(t, "/ui/c/alpha/nodes", opsToken, "n1", "n2", "n3", "zone=a", "dedicated=infer:no schedule", `class="cell`)
	f.mustGet(t, "/ui/c/alpha/nodes/n1", opsToken, "Tasks on the node", "cpu")
	body := f.mustGet(t, "/ui/c/alpha/plans", opsToken, "committed")
	var plans struct {
		Plans []struct{ ID, State, Link string }
	}
	code, js := f.get(t, "/ui/c/alpha/plans?format=json", opsToken)
	if code != http.StatusOK || json.Unmarshal([]byte(js), &plans) != nil || len(plans.Plans) == 0 {
		t.Fatalf("plans as JSON: %d %s\n%s", code, js, body)
	}
	// The JSON keys are lowerCamelCase, as protobuf's JSON mapping writes the API's.
	for _, key := range []string{`"plans":[`, `"id":"`, `"baseRevision":`, `"next":`} {
		if !strings.Contains(js, key) {
			t.Errorf("plans as JSON lack %s:\n%s", key, js)
		}
	}
	f.mustGet(t, plans.Plans[0].Link, opsToken, "bind", "default/train-0", "default/train-1", "applied")
	f.mustGet(t, "/ui/c/alpha/config", opsToken, "actions", "proportion")
}

// TestJobExplanationAsJSON: the job page's data names the reasons why big waits, with how
// many nodes each.
func TestJobExplanationAsJSON(t *testing.T) {
	f := twoClusters(t)
	code, body := f.get(t, "/ui/c/alpha/jobs/default/big?format=json", alphaToken)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	var job struct {
		Phase       string
		Explanation struct {
			Explained  bool
			Summary    string
			NodesTotal int32
			Reasons    []struct {
				Reason string
				Nodes  int32
			}
		}
		Tasks []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(body), &job); err != nil {
		t.Fatal(err)
	}
	ex := job.Explanation
	if !ex.Explained || ex.Summary == "" || ex.NodesTotal != 3 || len(ex.Reasons) == 0 {
		t.Fatalf("explanation %+v", ex)
	}
	var sum int32
	for _, r := range ex.Reasons {
		sum += r.Nodes
	}
	if sum < 1 || sum > 3*int32(len(ex.Reasons)) {
		t.Errorf("reasons %+v", ex.Reasons)
	}
	if len(job.Tasks) != 3 || job.Tasks[0].Status != "pending" {
		t.Errorf("tasks %+v", job.Tasks)
	}
}

// TestACredentialSeesOnlyItsClusters: alpha's viewer sees alpha, never beta: not in the
// list of clusters (HTML or JSON), and not by naming it.
func TestACredentialSeesOnlyItsClusters(t *testing.T) {
	f := twoClusters(t)
	for _, path := range []string{"/ui/", "/ui/?format=json", "/ui/c/alpha/queues", "/ui/c/alpha/jobs", "/ui/c/alpha/nodes", "/ui/c/alpha/plans?format=json"} {
		body := f.mustGet(t, path, alphaToken, "alpha")
		for _, n := range betaNames {
			if strings.Contains(body, n) {
				t.Errorf("GET %s as alpha's viewer shows %q", path, n)
			}
		}
	}
	for _, path := range []string{"/ui/c/beta/", "/ui/c/beta/queues", "/ui/c/beta/jobs?format=json", "/ui/c/beta/jobs/default/classifiedjob",
		"/ui/c/beta/nodes", "/ui/c/beta/nodes/hiddennode", "/ui/c/beta/plans", "/ui/c/beta/config"} {
		code, body := f.get(t, path, alphaToken)
		if code != http.StatusForbidden {
			t.Errorf("GET %s as alpha's viewer: %d, want 403", path, code)
		}
		for _, n := range betaNames[1:] {
			if strings.Contains(body, n) && !strings.Contains(path, n) {
				t.Errorf("GET %s as alpha's viewer shows %q", path, n)
			}
		}
	}
	// The configuration is an admin's, as in the API.
	if code, _ := f.get(t, "/ui/c/alpha/config", alphaToken); code != http.StatusForbidden {
		t.Errorf("configuration as a viewer: %d, want 403", code)
	}
}

// TestCredentialsAreRequired: without a valid credential every page is refused (the login
// form, 401) and so is a guarded handler; the login form checks the token, sets a cookie
// that scripts and other sites cannot use, and the cookie then works alone.
func TestCredentialsAreRequired(t *testing.T) {
	f := twoClusters(t)
	for _, path := range []string{"/ui/", "/ui/c/alpha/jobs", "/ui/c/alpha/jobs?format=json", "/ui/c/alpha/plans", "/guarded"} {
		for _, tok := range []string{"", "wrong-token"} {
			code, body := f.get(t, path, tok)
			if code != http.StatusUnauthorized {
				t.Errorf("GET %s with %q: %d, want 401", path, tok, code)
			}
			if strings.Contains(body, "default/train") || strings.Contains(body, "inside") {
				t.Errorf("GET %s with %q shows the cluster", path, tok)
			}
		}
	}
	if code, body := f.get(t, "/guarded", alphaToken); code != http.StatusOK || body != "inside" {
		t.Errorf("guarded with a token: %d %q", code, body)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(token, origin string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, f.web.URL+"/ui/login", strings.NewReader(url.Values{"token": {token}, "next": {"/ui/c/alpha/jobs"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("wrong-token", f.web.URL); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("login with a wrong token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if resp := post(alphaToken, "https://evil.example"); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("login posted from another origin: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if resp := post(alphaToken, "", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("login posted from another site: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp := post(alphaToken, f.web.URL)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/c/alpha/jobs" {
		t.Fatalf("login: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == webui.CookieName {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Fatalf("login cookie %+v", cookie)
	}
	req, _ := http.NewRequest(http.MethodGet, f.web.URL+"/ui/c/alpha/jobs", nil)
	req.AddCookie(cookie)
	got, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got.Body.Close()
	if got.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: %d", got.StatusCode)
	}
	if csp := got.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

// TestReadOnly: the UI answers nothing but GET (and the login and logout forms).
func TestReadOnly(t *testing.T) {
	f := twoClusters(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, _ := http.NewRequest(m, f.web.URL+"/ui/c/alpha/jobs", nil)
		req.Header.Set("Authorization", "Bearer "+opsToken)
		resp, err := f.web.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
}

// TestJobsSearchFilterAndPages: the jobs table is searched, filtered and paged on the
// server, and the pages' links keep the filters.
func TestJobsSearchFilterAndPages(t *testing.T) {
	f := twoClusters(t)
	type jobs struct {
		Jobs []struct{ Name, Phase, Queue string }
		Next string
	}
	read := func(path string) jobs {
		t.Helper()
		var v jobs
		if err := json.Unmarshal([]byte(f.mustGet(t, path, opsToken)), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	names := func(v jobs) (out []string) {
		for _, j := range v.Jobs {
			out = append(out, j.Name)
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"", "big,train"}, {"q=TRA", "train"}, {"phase=inqueue", "big"}, {"queue=prod", "train"},
		{"queue=research&phase=running", ""}, {"namespace=other", ""},
	} {
		if got := strings.Join(names(read("/ui/c/alpha/jobs?format=json&"+tc.query)), ","); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
		}
	}
	if code, _ := f.get(t, "/ui/c/alpha/jobs?phase=bogus", opsToken); code != http.StatusBadRequest {
		t.Errorf("an unknown phase: %d, want 400", code)
	}
	// 120 more jobs: three pages of 50, the filter kept.
	var batch sluicev1.DeltaBatch
	for i := range 120 {
		name := fmt.Sprintf("sweep-%03d", i)
		batch.Deltas = append(batch.Deltas,
			&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: name, MinAvailable: proto.Int32(1)}}},
			&sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{Name: name + "-0", Job: name}}})
	}
	f.apply(t, "gamma", &batch)
	seen := 0
	next := "/ui/c/gamma/jobs?format=json&q=sweep"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages")
		}
		v := read(next)
		seen += len(v.Jobs)
		next = v.Next
		if next != "" {
			if !strings.Contains(next, "q=sweep") {
				t.Fatalf("next page %q lost the search", next)
			}
			next += "&format=json"
		}
	}
	if seen != 120 {
		t.Errorf("%d jobs over the pages, want 120", seen)
	}
}

// TestOpenOnlyWhenAllowed: a server without credentials serves the UI only when Open.
func TestOpenOnlyWhenAllowed(t *testing.T) {
	closed := newFixture(t, "", false)
	if code, _ := closed.get(t, "/ui/", ""); code != http.StatusForbidden {
		t.Errorf("not open: %d, want 403", code)
	}
	open := newFixture(t, "", true)
	open.play(t, demoScenario, "alpha")
	open.mustGet(t, "/ui/", "", "alpha")
	if code, body := open.get(t, "/guarded", ""); code != http.StatusOK || body != "inside" {
		t.Errorf("guarded without authentication: %d %q", code, body)
	}
}
