package certs

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/internal/testpki"
)

// handshake runs one TLS handshake between a server and a client configuration over a
// loopback connection and returns both sides' errors and the certificate the client saw.
func handshake(t *testing.T, server, client *tls.Config) (seen *tls.ConnectionState, serverErr, clientErr error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	done := make(chan error, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		sc := tls.Server(c, server)
		_ = sc.SetDeadline(time.Now().Add(5 * time.Second))
		done <- sc.Handshake()
	}()
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cc := tls.Client(c, client)
	_ = cc.SetDeadline(time.Now().Add(5 * time.Second))
	clientErr = cc.Handshake()
	if clientErr == nil {
		// TLS 1.3 clients finish before the server checked their certificate: read to see.
		_ = cc.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := cc.Read(make([]byte, 1)); err != nil && !isTimeout(err) && !errors.Is(err, io.EOF) {
			clientErr = err
		}
		st := cc.ConnectionState()
		seen = &st
	}
	return seen, <-done, clientErr
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestMutualTLSTrustsOnlyItsCA(t *testing.T) {
	ca := testpki.NewCA(t, "members")
	a, b := ca.Peer(t, "a"), ca.Peer(t, "b")
	ra, err := Load(Files{Cert: a.CertFile, Key: a.KeyFile, CA: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Load(Files{Cert: b.CertFile, Key: b.KeyFile, CA: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, cerr := handshake(t, ra.ServerConfig(), rb.ClientConfig("127.0.0.1")); serr != nil || cerr != nil {
		t.Fatalf("members of one CA: server %v, client %v", serr, cerr)
	}
	// A member whose certificate another CA signed is refused by the server...
	other := testpki.NewCA(t, "intruders")
	x := other.Peer(t, "x")
	rx, err := Load(Files{Cert: x.CertFile, Key: x.KeyFile, CA: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, _ := handshake(t, ra.ServerConfig(), rx.ClientConfig("127.0.0.1")); serr == nil {
		t.Fatal("the server accepted a client certificate of another CA")
	}
	// ... and, as a server, by the client.
	if _, _, cerr := handshake(t, rx.ServerConfig(), rb.ClientConfig("127.0.0.1")); cerr == nil {
		t.Fatal("the client accepted a server certificate of another CA")
	}
	// A certificate for other names is refused.
	if _, _, cerr := handshake(t, ra.ServerConfig(), rb.ClientConfig("10.9.8.7")); cerr == nil {
		t.Fatal("the client accepted a certificate that does not name the address it dialed")
	}
	// Without a client certificate, no handshake.
	if _, serr, _ := handshake(t, ra.ServerConfig(), &tls.Config{InsecureSkipVerify: true}); serr == nil {
		t.Fatal("the server accepted a client without a certificate")
	}
}

func TestReloadKeepsTheOldOnError(t *testing.T) {
	ca := testpki.NewCA(t, "members")
	a := ca.Peer(t, "a")
	r, err := Load(Files{Cert: a.CertFile, Key: a.KeyFile, CA: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Leaf().SerialNumber
	// Issued again under the same name: new files, same paths.
	ca.Peer(t, "a")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	second := r.Leaf().SerialNumber
	if second.Cmp(first) == 0 {
		t.Fatal("the reload did not pick up the new certificate")
	}
	b := ca.Peer(t, "b")
	rb, err := Load(Files{Cert: b.CertFile, Key: b.KeyFile, CA: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	st, _, cerr := handshake(t, r.ServerConfig(), rb.ClientConfig("127.0.0.1"))
	if cerr != nil || st.PeerCertificates[0].SerialNumber.Cmp(second) != 0 {
		t.Fatalf("a handshake after the reload: %v, serial %v, want %v", cerr, st.PeerCertificates[0].SerialNumber, second)
	}
	// A broken file keeps the certificate in force.
	if err := os.WriteFile(a.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err == nil {
		t.Fatal("a broken certificate file reloaded")
	}
	if r.Leaf().SerialNumber.Cmp(second) != 0 {
		t.Fatal("a failed reload changed the certificate")
	}
	if _, _, cerr := handshake(t, r.ServerConfig(), rb.ClientConfig("127.0.0.1")); cerr != nil {
		t.Fatalf("a handshake after a failed reload: %v", cerr)
	}
	if _, err := Load(Files{Cert: a.CertFile}); err == nil {
		t.Fatal("a certificate without its key loaded")
	}
}
