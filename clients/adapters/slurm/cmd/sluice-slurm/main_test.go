package main

import (
	"io"
	"reflect"
	"testing"

	"github.com/sluice-sched/sluice/clients/adapters/slurm"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--sluice", "sluice:50051", "--cluster", "hpc", "--queue-by", "account",
		"--partitions", "gpu, batch", "--priority-from", "slurm", "--evict", "cancel", "--period", "2s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := slurm.Options{Namespace: "slurm", QueueBy: slurm.QueueByAccount, Partitions: []string{"gpu", "batch"},
		GPUResource: "nvidia.com/gpu", PriorityFrom: slurm.PriorityFromSlurm, EvictMode: slurm.EvictCancel}
	if !reflect.DeepEqual(o.mapping, want) || o.sluice != "sluice:50051" || o.cluster != "hpc" || o.period.Seconds() != 2 {
		t.Errorf("options %+v", o)
	}
	for _, bad := range [][]string{{"--queue-by", "user"}, {"--evict", "suspend"}, {"--priority-from", "qos"}, {"extra"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := newLogger("loud", "text", io.Discard); err == nil {
		t.Error("bad log level accepted")
	}
	if _, err := newLogger("info", "xml", io.Discard); err == nil {
		t.Error("bad log format accepted")
	}
}
