package deploy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testnet"
)

// The Secret's tokens are the hashes of these (deploy/kubernetes/secret.yaml).
const rmToken = "change-me"

// statefulSet returns the HA StatefulSet, its one container and its arguments by flag.
func statefulSet(t *testing.T) (sts, container object, args map[string]string, argList []any) {
	t.Helper()
	objs, _ := loadManifestsIn(t, "kubernetes-ha")
	sts = objs["StatefulSet/sluiced"]
	if sts == nil {
		t.Fatalf("kubernetes-ha has no StatefulSet/sluiced: %v", keys(objs))
	}
	cs := sts.list("spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	container = asObject(cs[0])
	args = map[string]string{}
	for _, a := range container.list("args") {
		k, v, _ := strings.Cut(strings.TrimPrefix(a.(string), "--"), "=")
		args[k] = v
	}
	return sts, container, args, container.list("args")
}

// TestHAManifests checks that the StatefulSet, the headless Service and the members' flags
// fit together: one stable DNS name per replica in --raft-peers, each member's id and
// advertised address its own, its data directory on its own volume, TLS files from a
// mounted Secret, probes on the admin port (gRPC probes cannot speak TLS).
func TestHAManifests(t *testing.T) {
	objs, files := loadManifestsIn(t, "kubernetes-ha")
	var kust object
	readYAML(t, "kubernetes-ha/kustomization.yaml", &kust)
	var resources []string
	for _, r := range kust.list("resources") {
		if s := r.(string); !strings.HasPrefix(s, "../") {
			resources = append(resources, s)
		}
	}
	sort.Strings(resources)
	sort.Strings(files)
	if !slices.Equal(resources, files) {
		t.Errorf("kustomization resources %v, want every manifest %v", resources, files)
	}
	if !slices.Contains(kust.list("resources"), any("../kubernetes")) {
		t.Error("kubernetes-ha does not build on deploy/kubernetes")
	}

	sts, c, args, argList := statefulSet(t)
	peers := objs["Service/sluiced-peers"]
	if peers == nil {
		t.Fatal("no headless Service sluiced-peers")
	}
	if peers.str("spec", "clusterIP") != "None" || peers.get("spec", "publishNotReadyAddresses") != true {
		t.Errorf("sluiced-peers must be headless and publish members before they are ready: %v", peers.get("spec"))
	}
	if sts.str("spec", "serviceName") != "sluiced-peers" {
		t.Errorf("serviceName %q", sts.str("spec", "serviceName"))
	}
	podLabels := asObject(sts.get("spec", "template", "metadata", "labels"))
	for _, sel := range []object{asObject(sts.get("spec", "selector", "matchLabels")), asObject(peers.get("spec", "selector"))} {
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("selector %s=%v does not match the pod labels %v", k, v, podLabels)
			}
		}
	}
	replicas, _ := sts.get("spec", "replicas").(int)
	if replicas != 3 {
		t.Errorf("replicas %d, want 3", replicas)
	}
	ports := map[string]int{}
	for _, p := range c.list("ports") {
		po := asObject(p)
		ports[po.str("name")], _ = po.get("containerPort").(int)
	}
	for _, p := range peers.list("spec", "ports") {
		if tp := asObject(p).str("targetPort"); ports[tp] == 0 {
			t.Errorf("sluiced-peers targetPort %q is not a container port %v", tp, ports)
		}
	}

	// --raft-peers: sluiced-0..N-1, each at its stable name, on the container's ports.
	domain := "sluiced-peers.sluice.svc.cluster.local"
	var want []string
	for i := range replicas {
		host := fmt.Sprintf("sluiced-%d.%s", i, domain)
		want = append(want, fmt.Sprintf("sluiced-%d=%s:%d@%s:%d", i, host, ports["raft"], host, ports["grpc"]))
	}
	if got := args["raft-peers"]; got != strings.Join(want, ",") {
		t.Errorf("--raft-peers=%s\nwant        %s", got, strings.Join(want, ","))
	}
	if args["node-id"] != "$(POD_NAME)" || args["raft-advertise"] != fmt.Sprintf("$(POD_NAME).%s:%d", domain, ports["raft"]) ||
		args["raft-listen"] != fmt.Sprintf("0.0.0.0:%d", ports["raft"]) || args["listen"] != fmt.Sprintf("0.0.0.0:%d", ports["grpc"]) {
		t.Errorf("member flags: node-id %q, raft-advertise %q, raft-listen %q, listen %q",
			args["node-id"], args["raft-advertise"], args["raft-listen"], args["listen"])
	}
	var podName string
	for _, e := range c.list("env") {
		if eo := asObject(e); eo.str("name") == "POD_NAME" {
			podName = eo.str("valueFrom", "fieldRef", "fieldPath")
		}
	}
	if podName != "metadata.name" {
		t.Errorf("POD_NAME comes from %q, want metadata.name", podName)
	}
	if _, ok := args["bootstrap"]; !ok {
		t.Error("no --bootstrap: a new cluster would never form")
	}

	mounts := map[string]string{}
	for _, m := range c.list("volumeMounts") {
		mo := asObject(m)
		mounts[mo.str("name")] = mo.str("mountPath")
	}
	claims := sts.list("spec", "volumeClaimTemplates")
	if len(claims) != 1 || mounts[asObject(claims[0]).str("metadata", "name")] != args["data-dir"] {
		t.Errorf("--data-dir=%s is not the mount of the volume claim template %v", args["data-dir"], claims)
	}
	secrets := map[string]string{}
	for _, v := range sts.list("spec", "template", "spec", "volumes") {
		if vo := asObject(v); vo.get("secret") != nil {
			secrets[vo.str("name")] = vo.str("secret", "secretName")
		}
	}
	for _, f := range []string{"tls-cert", "tls-key", "tokens"} {
		dir := filepath.Dir(args[f])
		found := false
		for vol, path := range mounts {
			found = found || (path == dir && secrets[vol] != "")
		}
		if !found {
			t.Errorf("--%s=%s is not in a mounted Secret", f, args[f])
		}
	}
	for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
		if c.str(probe, "httpGet", "port") != "admin" || c.str(probe, "httpGet", "scheme") != "HTTPS" {
			t.Errorf("%s: want an HTTPS probe on the admin port (which serves TLS with --tls-cert), got %v", probe, c.get(probe))
		}
	}
	if c.str("readinessProbe", "httpGet", "path") != "/readyz" {
		t.Errorf("readiness probe %v, want /readyz", c.get("readinessProbe"))
	}
	checkFlags(t, "statefulset.yaml", argList)
}

// TestHARenders renders kubernetes-ha with kustomize (kubectl kustomize) when kubectl is
// there: the StatefulSet replaces the Deployment, and everything lands in the namespace.
func TestHARenders(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not installed: the kustomization is not rendered")
	}
	out, err := exec.Command("kubectl", "kustomize", "kubernetes-ha").Output()
	if err != nil {
		t.Fatalf("kubectl kustomize kubernetes-ha: %v", err)
	}
	var kinds []string
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("rendered document: %v\n%s", err, doc)
		}
		key := o.str("kind") + "/" + o.str("metadata", "name")
		kinds = append(kinds, key)
		if o.str("kind") != "Namespace" && o.str("metadata", "namespace") != "sluice" {
			t.Errorf("%s rendered in namespace %q", key, o.str("metadata", "namespace"))
		}
	}
	sort.Strings(kinds)
	want := []string{"ConfigMap/sluice-scheduler-config", "Namespace/sluice", "Secret/sluice-tokens", "Service/sluiced",
		"Service/sluiced-peers", "ServiceAccount/sluiced", "StatefulSet/sluiced"}
	if !slices.Equal(kinds, want) {
		t.Errorf("rendered %v\nwant     %v", kinds, want)
	}
}

// pki makes the TLS example's certificates (tls/make-certs.sh) in a temporary directory.
func pki(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("bash", "tls/make-certs.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("tls/make-certs.sh: %v\n%s", err, out)
	}
	for _, f := range []string{"ca.pem", "server.pem", "server-key.pem", "client.pem", "client-key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runningSluiced is a sluiced started by these tests.
type runningSluiced struct {
	cmd   *exec.Cmd
	admin string
	// scheme is the admin port's: https when sluiced serves TLS (--tls-cert).
	scheme   string
	logs     *bytes.Buffer
	done     chan error
	stopOnce sync.Once
}

func startSluicedArgs(t *testing.T, args []string) *runningSluiced {
	t.Helper()
	cmd := exec.Command(sluicedBinary(t), args...)
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &runningSluiced{cmd: cmd, logs: logs, done: make(chan error, 1), scheme: "http"}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--admin-listen="); ok {
			r.admin = v
		}
		if strings.HasPrefix(a, "--tls-cert=") {
			r.scheme = "https"
		}
	}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("sluiced %v:\n%s", args, logs.String())
		}
	})
	return r
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 20 s); it may be called again.
func (r *runningSluiced) stop() {
	r.stopOnce.Do(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
}

// adminClient reads the members' admin ports, HTTPS when they serve TLS. It checks raft
// state and readiness, not the certificate (the gRPC clients of these tests do).
var adminClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}}

// raftState returns the member's raft state from /raft on its admin port (HTTPS, with a
// token: with --tokens /raft needs one).
func (r *runningSluiced) raftState() string {
	req, err := http.NewRequest(http.MethodGet, r.scheme+"://"+r.admin+"/raft", nil)
	if err != nil {
		return ""
	}
	req.Header.Set("Authorization", "Bearer "+rmToken)
	resp, err := adminClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		State string `json:"state"`
		Ready bool   `json:"ready"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil || !st.Ready {
		return ""
	}
	return st.State
}

func (r *runningSluiced) ready() bool {
	resp, err := adminClient.Get(r.scheme + "://" + r.admin + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// configFiles writes the scheduler configuration and the tokens file of deploy/kubernetes
// into dir.
func configFiles(t *testing.T, dir string) (config, tokens string) {
	t.Helper()
	objs, _ := loadManifests(t)
	config, tokens = filepath.Join(dir, "scheduler.yaml"), filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(config, []byte(objs["ConfigMap/sluice-scheduler-config"].str("data", "scheduler.yaml")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte(objs["Secret/sluice-tokens"].str("stringData", "tokens.yaml")), 0o600); err != nil {
		t.Fatal(err)
	}
	return config, tokens
}

func tlsClient(t *testing.T, certs, addr string) *sluice.Client {
	t.Helper()
	cfg, err := sluice.TLSConfigFromFiles(filepath.Join(certs, "ca.pem"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sluice.Dial(addr, sluice.WithTLSConfig(cfg), sluice.WithBearerToken(rmToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestHAMembersFormACluster starts three sluiced with the StatefulSet's arguments, the pod
// names and DNS names mapped onto loopback ports, the ConfigMap, the Secret and the TLS
// example's certificates: they elect a leader, which takes writes over TLS with a token,
// and a follower names that leader's gRPC address from --raft-peers.
func TestHAMembersFormACluster(t *testing.T) {
	_, _, _, argList := statefulSet(t)
	certs := pki(t)
	config, tokens := configFiles(t, t.TempDir())
	const n = 3
	grpcAddr, raftAddr, adminAddr := make([]string, n), make([]string, n), make([]string, n)
	addrs := testnet.FreeAddrs(t, 3*n)
	for i := range n {
		grpcAddr[i], raftAddr[i], adminAddr[i] = addrs[3*i], addrs[3*i+1], addrs[3*i+2]
	}
	host := regexp.MustCompile(`sluiced-(\d)\.sluiced-peers\.sluice\.svc\.cluster\.local:(7000|50051)`)
	members := make([]*runningSluiced, n)
	for i := range n {
		var args []string
		for _, a := range argList {
			s := strings.ReplaceAll(a.(string), "$(POD_NAME)", fmt.Sprintf("sluiced-%d", i))
			s = host.ReplaceAllStringFunc(s, func(m string) string {
				sub := host.FindStringSubmatch(m)
				j := int(sub[1][0] - '0')
				if sub[2] == "7000" {
					return raftAddr[j]
				}
				return grpcAddr[j]
			})
			k, _, _ := strings.Cut(strings.TrimPrefix(s, "--"), "=")
			switch k {
			case "listen":
				s = "--listen=" + grpcAddr[i]
			case "admin-listen":
				s = "--admin-listen=" + adminAddr[i]
			case "raft-listen":
				s = "--raft-listen=" + raftAddr[i]
			case "config":
				s = "--config=" + config
			case "tokens":
				s = "--tokens=" + tokens
			case "tls-cert":
				s = "--tls-cert=" + filepath.Join(certs, "server.pem")
			case "tls-key":
				s = "--tls-key=" + filepath.Join(certs, "server-key.pem")
			case "data-dir":
				s = "--data-dir=" + t.TempDir()
			}
			args = append(args, s)
		}
		members[i] = startSluicedArgs(t, args)
	}
	leader := -1
	waitUntil(t, 30*time.Second, "leader", func() bool {
		for i, m := range members {
			if m.raftState() == "Leader" {
				leader = i
				return true
			}
		}
		return false
	})
	ctx := context.Background()
	node := sluice.UpsertNode(&sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}})
	if _, err := tlsClient(t, certs, grpcAddr[leader]).Apply(ctx, "ha", true, node); err != nil {
		t.Fatalf("write to the leader: %v", err)
	}
	// The client's own connection, not its leader-following wrapper: the follower answers.
	follower := tlsClient(t, certs, grpcAddr[(leader+1)%n]).Conn()
	_, err := sluicev1.NewClusterStateServiceClient(follower).ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "ha",
		Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{node}}})
	if got, ok := sluice.LeaderOf(err); !ok || got != grpcAddr[leader] {
		t.Errorf("a follower's answer to a write: %v; leader %q, want %q", err, got, grpcAddr[leader])
	}
}

// unit reads the systemd unit's [Service] section: its settings (repeated keys in order)
// and ExecStart's words.
func unit(t *testing.T) (map[string][]string, []string) {
	t.Helper()
	data, err := os.ReadFile("systemd/sluiced.service")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	settings := map[string][]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			settings[k] = append(settings[k], strings.TrimSpace(v))
		}
	}
	return settings, strings.Fields(settings["ExecStart"][0])
}

// TestSystemdUnitRunsDurableWithTLS starts sluiced with the unit's own ExecStart, its
// credentials (LoadCredential) and state directory (StateDirectory) mapped onto temporary
// directories as systemd would, and the TLS example's certificates: it serves TLS with the
// tokens, and keeps what it was sent across a restart. systemd-analyze verifies the unit
// when it is installed.
func TestSystemdUnitRunsDurableWithTLS(t *testing.T) {
	settings, exec0 := unit(t)
	if got := settings["StateDirectory"]; len(got) != 1 || got[0] != "sluice" {
		t.Fatalf("StateDirectory=%v, want sluice", got)
	}
	certs := pki(t)
	creds := t.TempDir()
	_, tokens := configFiles(t, creds)
	config, _ := configFiles(t, t.TempDir())
	// LoadCredential=NAME:PATH puts PATH's content at $CREDENTIALS_DIRECTORY/NAME.
	example := map[string]string{"/etc/sluice/tokens.yaml": tokens, "/etc/sluice/tls/server.pem": filepath.Join(certs, "server.pem"),
		"/etc/sluice/tls/server-key.pem": filepath.Join(certs, "server-key.pem")}
	for _, lc := range settings["LoadCredential"] {
		name, path, _ := strings.Cut(lc, ":")
		src, ok := example[path]
		if !ok {
			t.Fatalf("LoadCredential=%s: no example file for %s", lc, path)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(creds, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(t.TempDir(), "sluice")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	addrs := testnet.FreeAddrs(t, 2)
	grpcAddr, adminAddr := addrs[0], addrs[1]
	var args []string
	for _, w := range exec0[1:] {
		if w == "$SLUICED_ARGS" {
			continue
		}
		w = strings.ReplaceAll(w, "${CREDENTIALS_DIRECTORY}", creds)
		w = strings.ReplaceAll(w, "${STATE_DIRECTORY}", state)
		switch k, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "="); k {
		case "listen":
			w = "--listen=" + grpcAddr
		case "admin-listen":
			w = "--admin-listen=" + adminAddr
		case "config":
			w = "--config=" + config
		}
		if strings.Contains(w, "$") {
			t.Fatalf("ExecStart word %q names a variable systemd does not set", w)
		}
		args = append(args, w)
	}
	for _, want := range []string{"--data-dir=" + state, "--tls-cert=" + filepath.Join(creds, "tls.crt")} {
		if !slices.Contains(args, want) {
			t.Errorf("ExecStart %v lacks %s", args, want)
		}
	}
	ctx := context.Background()
	node := sluice.UpsertNode(&sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}})
	var rev uint64
	for round := range 2 {
		s := startSluicedArgs(t, args)
		waitUntil(t, 30*time.Second, "ready sluiced", s.ready)
		c := tlsClient(t, certs, grpcAddr)
		if round == 0 {
			var err error
			if rev, err = c.Apply(ctx, "unit", true, node); err != nil {
				t.Fatalf("apply over TLS with a token: %v", err)
			}
		} else {
			nodes, err := sluicev1.NewClusterStateServiceClient(c.Conn()).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "unit"})
			if err != nil || len(nodes.GetNodes()) != 1 || nodes.GetRevision() != rev {
				t.Errorf("after a restart: %v at revision %d (want n1 at %d), %v", nodes.GetNodes(), nodes.GetRevision(), rev, err)
			}
		}
		s.stop() // the logs are complete, and no longer written, once it exited
		if strings.Contains(s.logs.String(), "clear text") {
			t.Errorf("sluiced warns about clear text with the unit's flags:\n%s", s.logs)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "raft.db")); err != nil {
		t.Errorf("no raft log in the state directory: %v", err)
	}

	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze not installed: the unit is not verified")
		return
	}
	data, err := os.ReadFile("systemd/sluiced.service")
	if err != nil {
		t.Fatal(err)
	}
	u := filepath.Join(t.TempDir(), "sluiced.service")
	if err := os.WriteFile(u, bytes.ReplaceAll(data, []byte("/usr/local/bin/sluiced"), []byte(sluicedBinary(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", u).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		var ee *exec.ExitError
		if errors.As(err, &ee) || len(out) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
}
