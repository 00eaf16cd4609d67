package deviceshare

import (
	"math"

	"github.com/sluice-sched/sluice/engine/api"
)

// deviceMaxScore is what one chosen device scores at most (Volcano's binpackMultiplier and
// spreadMultiplier).
const deviceMaxScore = 100

// score is Volcano's device score: over the devices the task would get on the node, binpack
// adds 100 * (used + requested memory) / memory per device (cores when the device declares no
// memory; a whole device counts as full), spread adds 100 per device nobody holds yet. The sum
// is rounded to an integer and multiplied by deviceshare.ScheduleWeight. Tasks without device
// requests, and nodes that cannot serve them, score 0.
func (p *plugin) score(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
	ws := wantsOf(task)
	if len(ws) == 0 || p.policy == "" {
		return 0, nil
	}
	parts, f := choose(node, ws, p.exclusion(task))
	if f != nil {
		return 0, nil
	}
	s := 0.0
	for _, pt := range parts {
		if d := device(node, pt.device); d != nil {
			s += deviceScore(p.policy, d, pt)
		}
	}
	return math.Floor(s+0.5) * float64(p.weight), nil
}

// deviceScore scores one device the task would take.
func deviceScore(policy string, d *api.DeviceInfo, pt part) float64 {
	switch policy {
	case PolicyBinpack:
		switch {
		case pt.whole:
			return deviceMaxScore
		case d.Memory > 0:
			return deviceMaxScore * (d.UsedMemory + pt.memory) / d.Memory
		case d.Cores > 0:
			return deviceMaxScore * float64(d.UsedCores+pt.cores) / float64(d.Cores)
		}
	case PolicySpread:
		if len(d.Holders) == 0 {
			return deviceMaxScore
		}
	}
	return 0
}
