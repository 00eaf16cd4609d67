package main

import (
	"crypto/tls"
	"log/slog"
	"net/http"

	"github.com/sluice-sched/sluice/internal/certs"
	"github.com/sluice-sched/sluice/service"
	"github.com/sluice-sched/sluice/service/webui"
)

// adminUI returns the web UI (nil with --ui=false) and the guard that puts admin handlers
// (/raft; /metrics with --metrics-auth) behind the same credentials: with --tokens or
// --client-ca a request needs a valid token (the UI's cookie or a bearer header) or client
// certificate. Without credentials the guard lets everything through, and the UI is open
// only where the profiles are: on a loopback admin address, or with --insecure.
func adminUI(o options, srv *service.Server, log *slog.Logger) (guard func(http.Handler) http.Handler, ui *webui.UI) {
	refresh := o.uiRefresh
	if refresh == 0 {
		refresh = -1 // webui: never
	}
	ui = webui.New(webui.Options{Source: srv.UIReads(), Open: o.insecure || isLoopback(o.adminListen), Refresh: refresh, Logger: log})
	if !o.ui {
		return ui.Guard, nil
	}
	return ui.Guard, ui
}

// adminTLSConfig is the admin listener's TLS: the server's certificate (reloaded with it),
// and a client certificate verified when one is sent but not required, so that /healthz and
// /readyz stay open to probes and the UI can take a bearer token instead.
func adminTLSConfig(r *certs.Reloader) *tls.Config {
	cfg := r.ServerConfig("h2", "http/1.1")
	perClient := cfg.GetConfigForClient
	relax := func(c *tls.Config) *tls.Config {
		if c.ClientAuth == tls.RequireAndVerifyClientCert {
			c.ClientAuth = tls.VerifyClientCertIfGiven
		}
		return c
	}
	relax(cfg)
	cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		c, err := perClient(hello)
		if err != nil || c == nil {
			return c, err
		}
		return relax(c), nil
	}
	return cfg
}
