// Package certs keeps a TLS certificate, its key and a pool of CA certificates read from PEM
// files, and reloads them: handshakes made after a reload use the new files, connections
// already open keep going, and files that do not load leave the previous ones in force.
package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// Files names the PEM files of a Reloader. Cert and Key are required; CA (one or more CA
// certificates) is required for mutual TLS and for ClientConfig.
type Files struct {
	Cert, Key, CA string
}

// Paths returns the files that are set.
func (f Files) Paths() []string {
	var out []string
	for _, p := range []string{f.Cert, f.Key, f.CA} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Reloader holds the current certificate and CA pool of Files. It is safe for concurrent
// use.
type Reloader struct {
	files Files
	cur   atomic.Pointer[material]
}

type material struct {
	cert *tls.Certificate
	pool *x509.CertPool
}

// Load reads the files.
func Load(f Files) (*Reloader, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("a TLS certificate and its key are both required")
	}
	r := &Reloader{files: f}
	if err := r.Reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload reads the files again. On error the previous certificate and pool stay in force.
func (r *Reloader) Reload() error {
	cert, err := tls.LoadX509KeyPair(r.files.Cert, r.files.Key)
	if err != nil {
		return fmt.Errorf("TLS certificate %s and key %s: %w", r.files.Cert, r.files.Key, err)
	}
	if cert.Leaf == nil && len(cert.Certificate) > 0 {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return fmt.Errorf("TLS certificate %s: %w", r.files.Cert, err)
		}
	}
	m := &material{cert: &cert}
	if r.files.CA != "" {
		if m.pool, err = LoadPool(r.files.CA); err != nil {
			return err
		}
	}
	r.cur.Store(m)
	return nil
}

// Files returns the files the reloader reads.
func (r *Reloader) Files() Files { return r.files }

// Leaf returns the certificate in force.
func (r *Reloader) Leaf() *x509.Certificate { return r.cur.Load().cert.Leaf }

// ServerConfig returns the TLS configuration of a server that presents the current
// certificate and, when the reloader has a CA, requires a client certificate the current CA
// pool verifies (the handshake's verified chains are those of that pool). nextProtos are the
// ALPN protocols offered ("h2" for gRPC).
func (r *Reloader) ServerConfig(nextProtos ...string) *tls.Config {
	build := func() *tls.Config {
		m := r.cur.Load()
		cfg := &tls.Config{
			Certificates: []tls.Certificate{*m.cert},
			MinVersion:   tls.VersionTLS12,
			NextProtos:   nextProtos,
		}
		if m.pool != nil {
			cfg.ClientCAs = m.pool
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
		return cfg
	}
	base := build()
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { return build(), nil }
	return base
}

// ClientConfig returns the TLS configuration of a client that presents the current
// certificate and accepts a server whose certificate the current CA pool verifies for
// serverName (a host name or an IP address, which the certificate must name).
func (r *Reloader) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: serverName,
		// The chain is verified below, against the pool in force at the handshake (a
		// tls.Config's RootCAs cannot change once the connection starts).
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return r.verify(cs.PeerCertificates, serverName, x509.ExtKeyUsageServerAuth)
		},
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return r.cur.Load().cert, nil
		},
	}
}

// verify checks a peer's chain against the current pool.
func (r *Reloader) verify(chain []*x509.Certificate, name string, usage x509.ExtKeyUsage) error {
	m := r.cur.Load()
	if m.pool == nil {
		return errors.New("no CA to verify the peer's certificate with")
	}
	if len(chain) == 0 {
		return errors.New("the peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: m.pool, Intermediates: inter, DNSName: name,
		KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

// LoadPool reads PEM CA certificates into a pool.
func LoadPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
