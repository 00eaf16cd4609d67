// Package deploy holds what it takes to run sluiced: a Dockerfile, Kubernetes manifests
// (kubernetes/), a systemd unit (systemd/), a Prometheus scrape configuration
// (prometheus/) and a Grafana dashboard (grafana/). It has no code; its tests check the
// files: manifests parse and fit together, every flag they pass is one of sluiced's, the
// scheduler configuration and tokens parse as sluiced parses them, and every metric the
// dashboard queries is on a running sluiced's /metrics.
package deploy
