package sluice_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// TestRoundTrip streams a node and a gang job of two tasks, schedules, commits, and
// reads the outcome back, against a real server.
func TestRoundTrip(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	ctx := context.Background()
	rev, err := c.Apply(ctx, "rt", true, node("n1", "8"), job("j", 2), task("j-0", "j"), task("j-1", "j"))
	if err != nil || rev == 0 {
		t.Fatalf("Apply: revision %d, %v", rev, err)
	}
	res, err := c.ScheduleAndCommit(ctx, "rt")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := binds(res.Applied), []string{"default/j-0@n1", "default/j-1@n1"}; !slices.Equal(got, want) {
		t.Fatalf("applied binds %v, want %v", got, want)
	}
	if res.Revision <= rev || len(res.Rejected) != 0 {
		t.Fatalf("commit: revision %d (applied at %d), rejected %v", res.Revision, rev, res.Rejected)
	}
	ex, err := c.Explain(ctx, "rt", "", "j")
	if err != nil {
		t.Fatal(err)
	}
	if ex.GetPlanId() != res.Plan.GetId() || ex.GetOutcome().GetReady() != 2 || sluice.FullName(ex.GetOutcome().GetJob()) != "default/j" {
		t.Fatalf("explain: plan %q (want %q), ready %d, job %v", ex.GetPlanId(), res.Plan.GetId(), ex.GetOutcome().GetReady(), ex.GetOutcome().GetJob())
	}
	// Nothing is left to do: the next plan is empty, discarded, and applies nothing.
	res, err = c.ScheduleAndCommit(ctx, "rt")
	if err != nil || len(res.Applied) != 0 {
		t.Fatalf("second cycle: %v, applied %v", err, res.Applied)
	}
}

// tokenServer is a SchedulerService that answers ExplainJob with the bearer token
// it received, behind an interceptor that wants the token "s3cret".
type tokenServer struct {
	sluicev1.UnimplementedSchedulerServiceServer
}

func (tokenServer) ExplainJob(ctx context.Context, req *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error) {
	return &sluicev1.ExplainJobResponse{Outcome: &sluicev1.JobOutcome{Job: &sluicev1.JobRef{Namespace: req.GetNamespace(), Name: req.GetName()}}}, nil
}

func checkToken(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer s3cret" {
		return nil, status.Errorf(codes.Unauthenticated, "bad authorization %q", got)
	}
	return h(ctx, req)
}

func serveFake(t *testing.T, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(append(opts, grpc.UnaryInterceptor(checkToken))...)
	sluicev1.RegisterSchedulerServiceServer(gs, tokenServer{})
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sluice test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func explain(c *sluice.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Explain(ctx, "c", "", "j")
	return err
}

// TestTLSAndBearerToken connects over TLS with a token, without one, and with the
// wrong roots.
func TestTLSAndBearerToken(t *testing.T) {
	certFile, keyFile := selfSigned(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveFake(t, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	cfg, err := sluice.TLSConfigFromFiles(certFile, "", "")
	if err != nil {
		t.Fatal(err)
	}

	good, err := sluice.Dial(addr, sluice.WithTLSConfig(cfg), sluice.WithBearerToken("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if err := explain(good); err != nil {
		t.Fatalf("TLS with the token: %v", err)
	}

	wrong, _ := sluice.Dial(addr, sluice.WithTLSConfig(cfg), sluice.WithBearerToken("guess"))
	defer wrong.Close()
	if err := explain(wrong); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("TLS with a wrong token: %v, want UNAUTHENTICATED", err)
	}

	// The system's roots do not know the self-signed certificate.
	untrusted, _ := sluice.Dial(addr, sluice.WithBearerToken("s3cret"))
	defer untrusted.Close()
	if err := explain(untrusted); status.Code(err) != codes.Unavailable {
		t.Fatalf("TLS with the system's roots: %v, want UNAVAILABLE", err)
	}
}

// TestPlaintextBearerToken sends a token without TLS only when asked for plaintext.
func TestPlaintextBearerToken(t *testing.T) {
	addr := serveFake(t)
	c, err := sluice.Dial(addr, sluice.WithInsecure(), sluice.WithBearerToken("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := explain(c); err != nil {
		t.Fatalf("plaintext with the token: %v", err)
	}
	if _, err := sluice.Dial(addr, sluice.WithInsecure(), sluice.WithTLSConfig(&tls.Config{})); err == nil {
		t.Fatal("Dial accepted both WithInsecure and WithTLSConfig")
	}
}

func TestTLSConfigFromFilesErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := sluice.TLSConfigFromFiles(filepath.Join(dir, "missing.pem"), "", ""); err == nil {
		t.Error("missing CA file accepted")
	}
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not pem"), 0o600)
	if _, err := sluice.TLSConfigFromFiles(bad, "", ""); err == nil {
		t.Error("CA file without a certificate accepted")
	}
	if _, err := sluice.TLSConfigFromFiles("", bad, ""); err == nil {
		t.Error("certificate without key accepted")
	}
}

func TestBackoff(t *testing.T) {
	b := sluice.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: -1}
	for i, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		if got := b.Delay(i); got != want*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", i, got, want*time.Millisecond)
		}
	}
	j := sluice.Backoff{Initial: time.Second, Jitter: 0.5}
	for range 100 {
		if d := j.Delay(0); d < 500*time.Millisecond || d > 1500*time.Millisecond {
			t.Fatalf("jittered delay %v outside [0.5s, 1.5s]", d)
		}
	}
}

// TestClustersAndConfig lists, reads and deletes clusters and updates a configuration
// conditionally, against a real server.
func TestClustersAndConfig(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	ctx := context.Background()
	for _, name := range []string{"b", "a"} {
		if _, err := c.Apply(ctx, name, true, node("n1", "8"), job("j", 1), task("j-0", "j")); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.Clusters(ctx)
	if err != nil || len(list) != 2 || list[0].GetName() != "a" || list[1].GetName() != "b" {
		t.Fatalf("Clusters: %v, %v", list, err)
	}
	a, err := c.Cluster(ctx, "a")
	if err != nil || a.GetObjects().GetTasks() != 1 || a.GetRevision() != 1 || a.GetHasConfig() {
		t.Fatalf("Cluster: %v, %v", a, err)
	}
	text, etag, err := c.Config(ctx, "a")
	if err != nil || etag != a.GetConfigEtag() {
		t.Fatalf("Config: etag %q (cluster says %q), %v", etag, a.GetConfigEtag(), err)
	}
	next, err := c.SetConfig(ctx, "a", text, etag)
	if err != nil || next == etag {
		t.Fatalf("SetConfig: %q, %v", next, err)
	}
	if _, err := c.SetConfig(ctx, "a", text, etag); status.Code(err) != codes.Aborted {
		t.Fatalf("SetConfig with a stale etag: %v, want ABORTED", err)
	}
	deleted, err := c.DeleteCluster(ctx, "a")
	if err != nil || deleted.GetName() != "a" || !deleted.GetHasConfig() {
		t.Fatalf("DeleteCluster: %v, %v", deleted, err)
	}
	if _, err := c.Cluster(ctx, "a"); status.Code(err) != codes.NotFound {
		t.Fatalf("Cluster after the delete: %v, want NOT_FOUND", err)
	}
}
