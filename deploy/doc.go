// Package deploy holds what it takes to run sluiced: a Dockerfile, Kubernetes manifests for
// one in-memory sluiced (kubernetes/) and for a durable, replicated three-member cluster
// (kubernetes-ha/), a systemd unit (systemd/: durable, TLS), a script that makes a TLS
// example's certificates (tls/), a Prometheus scrape configuration (prometheus/) and a
// Grafana dashboard (grafana/). It has no code; its tests check the files: manifests parse,
// render (kubectl kustomize, when installed) and fit together, every flag they pass is one
// of sluiced's, the scheduler configuration and tokens parse as sluiced parses them, three
// sluiced started with the StatefulSet's flags elect a leader and name it to writers, the
// systemd unit's own command line serves TLS and keeps its state across a restart, and every
// metric the dashboard queries is on a running sluiced's /metrics.
package deploy
