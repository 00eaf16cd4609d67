package api

// Changed is an object written or deleted since an earlier snapshot of a cluster: its key and
// the object as the later snapshot holds it (nil: deleted).
type Changed[T any] struct {
	Key string
	Obj *T
}

// ObjectChanges are the nodes, jobs and tasks changed between two snapshots of a cluster,
// each sorted by key (the order in which snapshots list them). A listed object may be the very
// one the earlier snapshot held (a write taken back, or written twice back to it).
type ObjectChanges struct {
	Nodes []Changed[Node]
	Jobs  []Changed[Job]
	Tasks []Changed[Task]
}
