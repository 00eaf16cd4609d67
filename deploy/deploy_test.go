package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/conf"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testnet"
	"github.com/sluice-sched/sluice/service"
)

// object is one Kubernetes manifest, decoded loosely.
type object map[string]any

func (o object) str(path ...string) string {
	s, _ := o.get(path...).(string)
	return s
}

func (o object) get(path ...string) any {
	var cur any = o
	for _, p := range path {
		m := asObject(cur)
		if m == nil {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func (o object) list(path ...string) []any {
	l, _ := o.get(path...).([]any)
	return l
}

// asObject returns v as an object: yaml.v3 decodes the maps nested in an object as
// objects, and those of a plain map[string]any as map[string]any.
func asObject(v any) object {
	switch m := v.(type) {
	case object:
		return m
	case map[string]any:
		return m
	}
	return nil
}

// loadManifests decodes every document of every YAML file in kubernetes/ but the
// kustomization, keyed by "Kind/name".
func loadManifests(t *testing.T) (map[string]object, []string) {
	t.Helper()
	return loadManifestsIn(t, "kubernetes")
}

// loadManifestsIn is loadManifests for another directory.
func loadManifestsIn(t *testing.T, dir string) (map[string]object, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	objs := map[string]object{}
	var names []string
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		names = append(names, filepath.Base(f))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for i := 0; ; i++ {
			var o object
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: document %d: %v", f, i, err)
			}
			if o == nil {
				continue
			}
			for _, field := range []string{"apiVersion", "kind"} {
				if o.str(field) == "" {
					t.Errorf("%s: document %d has no %s", f, i, field)
				}
			}
			name := o.str("metadata", "name")
			if name == "" {
				t.Errorf("%s: document %d has no metadata.name", f, i)
			}
			key := o.str("kind") + "/" + name
			if _, dup := objs[key]; dup {
				t.Errorf("%s: %s declared twice", f, key)
			}
			objs[key] = o
		}
	}
	return objs, names
}

var apiVersions = map[string]string{
	"Namespace":      "v1",
	"ServiceAccount": "v1",
	"ConfigMap":      "v1",
	"Secret":         "v1",
	"Service":        "v1",
	"Deployment":     "apps/v1",
}

func TestKubernetesManifests(t *testing.T) {
	objs, files := loadManifests(t)
	for key, o := range objs {
		want, known := apiVersions[o.str("kind")]
		if !known {
			t.Errorf("%s: unexpected kind", key)
			continue
		}
		if got := o.str("apiVersion"); got != want {
			t.Errorf("%s: apiVersion %q, want %q", key, got, want)
		}
		if o.str("kind") != "Namespace" && o.str("metadata", "namespace") != "sluice" {
			t.Errorf("%s: namespace %q, want sluice", key, o.str("metadata", "namespace"))
		}
	}

	// The kustomization lists every manifest, and names the Deployment's image.
	var kust object
	readYAML(t, "kubernetes/kustomization.yaml", &kust)
	var resources []string
	for _, r := range kust.list("resources") {
		resources = append(resources, r.(string))
	}
	sort.Strings(resources)
	sort.Strings(files)
	if !slices.Equal(resources, files) {
		t.Errorf("kustomization resources %v, want every manifest %v", resources, files)
	}

	dep := objs["Deployment/sluiced"]
	svc := objs["Service/sluiced"]
	if dep == nil || svc == nil || objs["ConfigMap/sluice-scheduler-config"] == nil || objs["Secret/sluice-tokens"] == nil {
		t.Fatalf("missing Deployment, Service, ConfigMap or Secret: have %v", keys(objs))
	}
	podLabels := asObject(dep.get("spec", "template", "metadata", "labels"))
	for k, v := range asObject(dep.get("spec", "selector", "matchLabels")) {
		if podLabels[k] != v {
			t.Errorf("Deployment selector %s=%v does not match the pod template's labels %v", k, v, podLabels)
		}
	}
	for k, v := range asObject(svc.get("spec", "selector")) {
		if podLabels[k] != v {
			t.Errorf("Service selector %s=%v does not match the pod template's labels %v", k, v, podLabels)
		}
	}
	if n, _ := dep.get("spec", "replicas").(int); n != 1 {
		t.Errorf("replicas %v: the state is in memory, run one", dep.get("spec", "replicas"))
	}

	containers := dep.list("spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%d containers, want 1", len(containers))
	}
	c := asObject(containers[0])
	if imgs := kust.list("images"); len(imgs) != 1 || asObject(imgs[0]).str("name") != c.str("image") {
		t.Errorf("container image %q is not the kustomization's image name (%v)", c.str("image"), imgs)
	}
	ports := map[string]int{}
	for _, p := range c.list("ports") {
		po := asObject(p)
		ports[po.str("name")], _ = po.get("containerPort").(int)
	}
	if ports["grpc"] != 50051 || ports["admin"] != 9090 {
		t.Errorf("container ports %v, want grpc 50051 and admin 9090", ports)
	}
	for _, p := range svc.list("spec", "ports") {
		tp := asObject(p).str("targetPort")
		if _, ok := ports[tp]; !ok {
			t.Errorf("Service targetPort %q is not a container port %v", tp, ports)
		}
	}
	for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
		if port, _ := c.get(probe, "grpc", "port").(int); port != ports["grpc"] {
			t.Errorf("%s: want a gRPC probe on port %d, got %v", probe, ports["grpc"], c.get(probe))
		}
	}
	if c.get("securityContext", "allowPrivilegeEscalation") != false || c.get("securityContext", "readOnlyRootFilesystem") != true {
		t.Errorf("container securityContext %v", c.get("securityContext"))
	}
	if dep.get("spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
		t.Error("pod does not run as non-root")
	}

	// Each file flag points into a mounted volume holding that key.
	args := map[string]string{}
	for _, a := range c.list("args") {
		k, v, _ := strings.Cut(strings.TrimPrefix(a.(string), "--"), "=")
		args[k] = v
	}
	mounts := map[string]string{}
	for _, m := range c.list("volumeMounts") {
		mo := asObject(m)
		mounts[mo.str("name")] = mo.str("mountPath")
	}
	sources := map[string]object{}
	for _, v := range dep.list("spec", "template", "spec", "volumes") {
		vo := asObject(v)
		switch {
		case vo.get("configMap") != nil:
			sources[vo.str("name")] = objs["ConfigMap/"+vo.str("configMap", "name")]
		case vo.get("secret") != nil:
			sources[vo.str("name")] = objs["Secret/"+vo.str("secret", "secretName")]
		}
	}
	for flag, dataField := range map[string]string{"config": "data", "tokens": "stringData"} {
		path := args[flag]
		found := false
		for vol, dir := range mounts {
			if filepath.Dir(path) == dir && sources[vol] != nil && sources[vol].get(dataField, filepath.Base(path)) != nil {
				found = true
			}
		}
		if !found {
			t.Errorf("--%s=%s is not a key of a mounted ConfigMap or Secret", flag, path)
		}
	}
	checkFlags(t, "deployment.yaml", c.list("args"))
}

func keys(m map[string]object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestSchedulerConfigAndTokens parses the ConfigMap's scheduler configuration and the
// Secret's tokens file as sluiced does.
func TestSchedulerConfigAndTokens(t *testing.T) {
	objs, _ := loadManifests(t)
	text := objs["ConfigMap/sluice-scheduler-config"].str("data", "scheduler.yaml")
	cfg, err := conf.Parse([]byte(text))
	if err != nil {
		t.Fatalf("ConfigMap scheduler.yaml: %v", err)
	}
	if err := builtin.Registry().Validate(cfg); err != nil {
		t.Fatalf("ConfigMap scheduler.yaml: %v", err)
	}
	tokens := objs["Secret/sluice-tokens"].str("stringData", "tokens.yaml")
	if _, err := service.ParseTokens([]byte(tokens)); err != nil {
		t.Fatalf("Secret tokens.yaml: %v", err)
	}
}

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(text, -1)
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, got FROM %v", froms)
	}
	if final := froms[len(froms)-1][1]; !strings.Contains(final, "distroless/static") {
		t.Errorf("final stage from %s, want a distroless static base", final)
	}
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/sluiced", "USER 65532"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	m := regexp.MustCompile(`(?m)^ENTRYPOINT\s+(\[.*\])`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no ENTRYPOINT in exec form")
	}
	var entry []any
	if err := json.Unmarshal([]byte(m[1]), &entry); err != nil {
		t.Fatalf("ENTRYPOINT: %v", err)
	}
	checkFlags(t, "Dockerfile", entry[1:])
}

func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile("systemd/sluiced.service")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string]string{}
	var cur string
	var cont strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cont.Len() > 0 || strings.HasSuffix(line, "\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\") + " ")
			if strings.HasSuffix(line, "\\") {
				continue
			}
			line = cont.String()
			cont.Reset()
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			cur = strings.Trim(line, "[]")
			sections[cur] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || cur == "" {
				t.Fatalf("bad line %q", line)
			}
			sections[cur][k] = strings.TrimSpace(v)
		}
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if sections[s] == nil {
			t.Errorf("no [%s] section", s)
		}
	}
	exec := strings.Fields(sections["Service"]["ExecStart"])
	if len(exec) == 0 || exec[0] != "/usr/local/bin/sluiced" {
		t.Fatalf("ExecStart %v", exec)
	}
	var args []any
	for _, a := range exec[1:] {
		if strings.HasPrefix(a, "--") {
			args = append(args, a)
		}
	}
	checkFlags(t, "sluiced.service", args)
}

func TestPrometheusConfig(t *testing.T) {
	var cfg struct {
		ScrapeConfigs []struct {
			JobName     string `yaml:"job_name"`
			MetricsPath string `yaml:"metrics_path"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "prometheus/prometheus.yml", &cfg)
	if len(cfg.ScrapeConfigs) == 0 {
		t.Fatal("no scrape_configs")
	}
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName == "" || (sc.MetricsPath != "" && sc.MetricsPath != "/metrics") {
			t.Errorf("scrape config %+v", sc)
		}
	}
}

// sluicedOnce builds sluiced once for the tests that run it.
var sluicedOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sluice-deploy-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "sluiced")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/sluice-sched/sluice/cmd/sluiced").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build sluiced: %v\n%s", err, out)
	}
	return bin, nil
})

func sluicedBinary(t *testing.T) string {
	t.Helper()
	bin, err := sluicedOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := sluicedOnce(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

var flagsOnce = sync.OnceValues(func() (map[string]bool, error) {
	bin, err := sluicedOnce()
	if err != nil {
		return nil, err
	}
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		return nil, fmt.Errorf("sluiced -h listed no flags:\n%s", out)
	}
	return flags, nil
})

// checkFlags fails when an argument names a flag sluiced does not have.
func checkFlags(t *testing.T, where string, args []any) {
	t.Helper()
	flags, err := flagsOnce()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range args {
		s, _ := a.(string)
		name, _, _ := strings.Cut(strings.TrimLeft(s, "-"), "=")
		if !strings.HasPrefix(s, "-") || !flags[name] {
			t.Errorf("%s: argument %q is not a sluiced flag", where, s)
		}
	}
}

// TestDashboardMetricsExist runs sluiced, schedules a cluster through it, and checks that
// every metric the Grafana dashboard and the Prometheus example use is on /metrics.
func TestDashboardMetricsExist(t *testing.T) {
	data, err := os.ReadFile("grafana/sluice-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	// Sluice's own metrics, and the Go runtime's and the process's that sluiced serves beside them.
	metricName := regexp.MustCompile(`\b(?:sluice|go|process)_[a-z_]+`)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range metricName.FindAllString(tg.Expr, -1) {
				used[m] = true
			}
		}
	}
	for _, v := range dash.Templating.List {
		for _, m := range metricName.FindAllString(v.Definition, -1) {
			used[m] = true
		}
	}
	for _, want := range []string{"sluice_cycle_duration_seconds_bucket", "sluice_action_duration_seconds_bucket",
		"sluice_decisions_total", "sluice_unschedulable_jobs", "sluice_queue_share",
		"sluice_cycle_admission_wait_seconds_bucket", "go_goroutines", "go_memstats_heap_inuse_bytes",
		"process_resident_memory_bytes", "sluice_build_info"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}

	bin := sluicedBinary(t)
	addrs := testnet.FreeAddrs(t, 2)
	grpcAddr, adminAddr := addrs[0], addrs[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--listen", grpcAddr, "--admin-listen", adminAddr, "--log-level", "warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sluiced logs:\n%s", logs.String())
		}
	}()
	get := func(path string) (string, error) {
		resp, err := http.Get("http://" + adminAddr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", path, resp.Status)
		}
		return string(body), err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := get("/healthz"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sluiced did not become healthy")
		}
		time.Sleep(50 * time.Millisecond)
	}

	c, err := sluice.Dial(grpcAddr, sluice.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	node := sluice.UpsertNode(&sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4", "memory": "8Gi"}})
	var deltas []*sluicev1.Delta
	deltas = append(deltas, node, sluice.UpsertJob(&sluicev1.Job{Name: "fits", MinAvailable: proto.Int32(1)}),
		sluice.UpsertJob(&sluicev1.Job{Name: "too-big", MinAvailable: proto.Int32(1)}),
		sluice.UpsertTask(&sluicev1.Task{Name: "fits-0", Job: "fits", Resources: map[string]string{"cpu": "1"}}),
		sluice.UpsertTask(&sluicev1.Task{Name: "too-big-0", Job: "too-big", Resources: map[string]string{"cpu": "64"}}))
	if _, err := c.Apply(ctx, "metrics", true, deltas...); err != nil {
		t.Fatal(err)
	}
	res, err := c.ScheduleAndCommit(ctx, "metrics")
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("schedule: %v, %v", err, res)
	}
	text, err := get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if name := metricName.FindString(line); name != "" && !strings.HasPrefix(line, "#") {
			have[name] = true
		}
	}
	var missing []string
	for m := range used {
		if !have[m] {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard uses metrics sluiced does not expose: %v", missing)
	}
	promText, err := os.ReadFile("prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metricName.FindAllString(string(promText), -1) {
		if !have[m] && !have[m+"_bucket"] && !have[m+"_total"] && !strings.HasSuffix(m, "_") {
			t.Errorf("prometheus.yml names %s, which sluiced does not expose", m)
		}
	}
}
