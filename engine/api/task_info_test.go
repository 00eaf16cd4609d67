package api

import (
	"fmt"
	"reflect"
	"testing"
)

// TestTaskInfoArenaGivesDistinctViews checks that views taken from an arena, across several
// blocks, equal the ones allocated alone, and that each is its own: changing one changes no
// other.
func TestTaskInfoArenaGivesDistinctViews(t *testing.T) {
	var a TaskInfoArena
	var views, copies []*TaskInfo
	for i := 0; i < 2*taskInfoBlock+3; i++ {
		spec := &Task{Name: fmt.Sprint("t", i), Namespace: "ns", Job: "j", Status: Running, Node: "n", DeviceIDs: []string{"gpu0"},
			Resources: *NewResource(map[string]float64{"cpu": float64(i)})}
		v := a.NewTaskInfoOf(spec, 7, "ns/j")
		if want := NewTaskInfoOf(spec, 7, "ns/j"); !reflect.DeepEqual(v, want) {
			t.Fatalf("task %d: arena view %+v, want %+v", i, v, want)
		}
		c := a.Clone(v)
		if !reflect.DeepEqual(c, v.Clone()) || c == v {
			t.Fatalf("task %d: arena copy %+v is not a copy of %+v", i, c, v)
		}
		views, copies = append(views, v), append(copies, c)
	}
	for i := range views {
		views[i].Status = Releasing
		copies[i].DeviceIDs[0] = "changed"
	}
	for i := range views {
		if copies[i].Status != Running || views[i].DeviceIDs[0] != "gpu0" || views[i].UID != fmt.Sprint("ns/t", i) {
			t.Fatalf("task %d: views share state: view %+v, copy %+v", i, views[i], copies[i])
		}
	}
}
