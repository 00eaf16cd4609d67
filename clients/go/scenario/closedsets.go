package scenario

import (
	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// The scenario format writes closed sets as Kubernetes and Volcano do (`effect: NoSchedule`,
// `mode: hard`); the API takes enums. These turn a name the decoder has already checked
// against the format's list into the API's value; a name it refused (an error is recorded)
// and an absent optional one become UNSPECIFIED.

func taintEffect(name string) sluicev1.TaintEffect {
	e, _ := sluice.ParseTaintEffect(name)
	return e
}

func tolerationOperator(name string) sluicev1.TolerationOperator {
	op, _ := sluice.ParseTolerationOperator(name)
	return op
}

func whenUnsatisfiable(name string) sluicev1.WhenUnsatisfiable {
	w, _ := sluice.ParseWhenUnsatisfiable(name)
	return w
}

func networkTopologyMode(name string) sluicev1.NetworkTopologyMode {
	m, _ := sluice.ParseNetworkTopologyMode(name)
	return m
}
