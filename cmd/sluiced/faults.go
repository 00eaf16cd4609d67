package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/sluice-sched/sluice/engine/durable"
)

// PartitionPath is the admin endpoint of --unsafe-fault-injection: POST {"peers": [ids]} cuts
// this member's raft traffic to and from those peers (the set replaces the previous one),
// DELETE heals, GET lists the peers cut off. The gRPC API stays reachable.
const PartitionPath = "/debug/partition"

// checkFaultInjection refuses --unsafe-fault-injection where its unauthenticated admin
// endpoint could reach a production member: it needs a replicated cluster, and without
// --insecure a loopback admin address and no credentials (--tokens, --client-ca).
func checkFaultInjection(o options) error {
	switch {
	case !o.faultInjection:
		return nil
	case o.raftListen == "":
		return errors.New("--unsafe-fault-injection needs a replicated cluster (--raft-listen)")
	case o.insecure:
		return nil
	case o.tokensPath != "" || o.clientCA != "":
		return errors.New("--unsafe-fault-injection is for tests: its admin endpoint is unauthenticated, so it is refused with --tokens or --client-ca unless --insecure")
	case !isLoopback(o.adminListen):
		return fmt.Errorf("--unsafe-fault-injection is for tests: it needs a loopback --admin-listen (not %s) unless --insecure", o.adminListen)
	}
	return nil
}

// partitionBody is what POST PartitionPath takes and every method of it answers.
type partitionBody struct {
	Peers []string `json:"peers"`
}

// handlePartition serves PartitionPath on mux for node (see PartitionPath).
func handlePartition(mux *http.ServeMux, node *durable.Node, log *slog.Logger) {
	log.Warn("fault injection is on (--unsafe-fault-injection): the admin listener can cut this member off from its peers; never in production",
		"path", PartitionPath)
	answer := func(w http.ResponseWriter, err error) {
		var upe *durable.UnknownPeerError
		switch {
		case errors.As(err, &upe):
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		peers, err := node.Partitioned()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(partitionBody{Peers: append([]string{}, peers...)})
	}
	mux.HandleFunc("GET "+PartitionPath, func(w http.ResponseWriter, _ *http.Request) { answer(w, nil) })
	mux.HandleFunc("DELETE "+PartitionPath, func(w http.ResponseWriter, _ *http.Request) {
		log.Warn("fault injection: healed")
		answer(w, node.Heal())
	})
	mux.HandleFunc("POST "+PartitionPath, func(w http.ResponseWriter, r *http.Request) {
		var b partitionBody
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			http.Error(w, "want {\"peers\": [\"id\", ...]}: "+err.Error(), http.StatusBadRequest)
			return
		}
		log.Warn("fault injection: partition", "peers", b.Peers)
		answer(w, node.Partition(b.Peers))
	})
}
