package report_test

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/sim/report"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/internal/browsertest"
)

// input simulates a small generated trace with two configurations.
func input(t *testing.T) *report.Input {
	t.Helper()
	var buf bytes.Buffer
	if err := sim.GenerateSWF(&buf, sim.GenerateSpec{Seed: 5, Jobs: 120, Nodes: 8, CoresPerNode: 16, Queues: 3, Load: 0.9}); err != nil {
		t.Fatal(err)
	}
	tr, err := sim.ReadSWF("gen.swf", &buf, sim.SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := sim.SWFNodes(tr.Header, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cl []state.Change
	for _, n := range nodes {
		cl = append(cl, state.Change{Node: n})
	}
	for _, q := range sim.TraceQueues(tr) {
		cl = append(cl, state.Change{Queue: q})
	}
	spread, err := conf.Parse([]byte("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n"))
	if err != nil {
		t.Fatal(err)
	}
	in := &report.Input{Doc: &sim.Document{Trace: sim.TraceInfo{File: "gen.swf", Format: "swf", Jobs: len(tr.Jobs)},
		Cluster: sim.Cluster{Nodes: len(nodes), Capacity: map[string]float64{"cpu": 128}}}}
	for _, c := range []sim.Config{{Name: "binpack", Scheduler: conf.Default()}, {Name: "spread <&>", Scheduler: spread}} {
		r, err := sim.Run(context.Background(), cl, tr, c, sim.Options{Registry: builtin.Registry(), ReleaseDelay: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		in.Results = append(in.Results, r)
		in.Doc.Configs = append(in.Doc.Configs, sim.Summarize(r))
	}
	in.Doc.Cluster.Queues = in.Results[0].Queues
	in.Interval = sim.AutoInterval(in.Results)
	return in
}

func render(t *testing.T, in *report.Input) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReportIsSelfContainedAndDeterministic(t *testing.T) {
	in := input(t)
	page := render(t, in)
	if !bytes.Equal(page, render(t, in)) {
		t.Fatal("the same results rendered two different reports")
	}
	text := string(page)
	for _, bad := range []string{"<script", "<link", "src=", "url(", "@import", "https://"} {
		if strings.Contains(text, bad) {
			t.Errorf("the report refers to something outside it (%q)", bad)
		}
	}
	if strings.Count(text, "http://") != strings.Count(text, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("the report holds an http:// address besides the SVG namespace")
	}
	if !strings.Contains(text, "spread &lt;&amp;&gt;") || strings.Contains(text, "spread <&>") {
		t.Error("a configuration's name is not escaped")
	}
	plots := report.Plots(in)
	for _, p := range plots {
		if !strings.Contains(text, `id="`+p.ID+`"`) {
			t.Errorf("plot %s is not in the page", p.ID)
		}
	}
	// Utilization (cpu), one queue plot per configuration, the wait CDF, waits by size.
	if len(plots) != 1+len(in.Results)+2 {
		t.Errorf("%d plots", len(plots))
	}
}

// browser finds Chromium (browsertest.Path: make test requires it).
func browser(t *testing.T) string { return browsertest.Path(t) }

func chromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + t.TempDir()}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return out
}

// measureScript reports each plot's rendered size and how many lines and bars it drew.
const measureScript = `<script>
const rows = [];
for (const svg of document.querySelectorAll('svg.plot')) {
  const r = svg.getBoundingClientRect();
  rows.push(svg.id + ' ' + Math.round(r.width) + ' ' + Math.round(r.height) + ' ' +
    svg.querySelectorAll('polyline.series, rect.bar').length);
}
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = rows.join('\n');
document.body.appendChild(pre);
</script>`

var measuredRE = regexp.MustCompile(`(?s)<pre id="measured">(.*?)</pre>`)

// TestReportRendersInChromium opens the report in headless Chromium: every plot must render
// with a non-zero size and draw its series, and a screenshot is saved in the test's
// temporary directory.
func TestReportRendersInChromium(t *testing.T) {
	bin := browser(t)
	in := input(t)
	page := render(t, in)
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(reportPath, page, 0o644); err != nil {
		t.Fatal(err)
	}
	// A copy with a measuring script: the report itself has none.
	measure := bytes.Replace(page, []byte("</body>"), []byte(measureScript+"</body>"), 1)
	measurePath := filepath.Join(dir, "measure.html")
	if err := os.WriteFile(measurePath, measure, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := chromium(t, bin, "--virtual-time-budget=2000", "--dump-dom", "file://"+measurePath)
	m := measuredRE.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("no measurements in the DOM Chromium rendered:\n%.2000s", dom)
	}
	got := map[string][3]int{}
	for _, line := range strings.Split(strings.TrimSpace(html.UnescapeString(string(m[1]))), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("measurement %q", line)
		}
		var v [3]int
		for i := range v {
			v[i], _ = strconv.Atoi(f[i+1])
		}
		got[f[0]] = v
	}
	for _, p := range report.Plots(in) {
		v, ok := got[p.ID]
		switch {
		case !ok:
			t.Errorf("plot %s did not render", p.ID)
		case v[0] <= 0 || v[1] <= 0:
			t.Errorf("plot %s rendered %dx%d", p.ID, v[0], v[1])
		case v[2] == 0:
			t.Errorf("plot %s drew no line or bar", p.ID)
		}
	}
	shot := filepath.Join(dir, "report.png")
	chromium(t, bin, "--window-size=1000,2400", "--screenshot="+shot, "file://"+reportPath)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if len(png) < 10000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot of %d bytes is not a picture of the report", len(png))
	}
	t.Logf("%d plots rendered; screenshot %s (%d bytes)", len(got), shot, len(png))
}
